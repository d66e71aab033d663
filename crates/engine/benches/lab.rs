//! Load, validate and instantiate a lab of 8 and of 1,024 nodes, with
//! variants and faults, as `clusterlab check` and a trainee's first page
//! load do.

use clusterlab_engine::lab::authoring::{check, compile};
use clusterlab_engine::{load, Lab};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn lab_source(nodes: u32) -> String {
    let width = nodes.to_string().len().max(3);
    let candidates: Vec<String> = [1, nodes / 2, nodes].iter().map(|n| format!("\"gpu-{:0width$}\"", (*n).max(1))).collect();
    format!(
        r#"[lab]
id = "bench"
title = "Benchmark"
summary = "A lab for benchmarks."

[cluster]
preset = "hgx-h100"
count = {nodes}

[vars]
bad_node = {{ one_of = [{candidates}] }}
bad_hca = {{ one_of = ["mlx5_1", "mlx5_5"] }}
bad_gpu = {{ range = [0, 7] }}

[[faults]]
kind = "hca-link-degraded"
node = "{{bad_node}}"
hca = "{{bad_hca}}"
rate = 200

[[faults]]
kind = "gpu-xid"
node = "{{bad_node}}"
gpu = "{{bad_gpu}}"
xid = 79

[[questions]]
id = "node"
type = "text"
prompt = "Which node?"
answer = "{{bad_node}}"
"#,
        candidates = candidates.join(", ")
    )
}

fn lab_benchmarks(c: &mut Criterion) {
    let mut group = c.benchmark_group("lab");
    group.sample_size(10);
    for nodes in [8u32, 1024] {
        let source = lab_source(nodes);
        group.bench_with_input(BenchmarkId::new("load", nodes), &source, |b, source| b.iter(|| load(source).expect("valid")));
        let compiled = compile(&source).expect("valid");
        group.bench_with_input(BenchmarkId::new("deep_check", nodes), &compiled, |b, compiled| b.iter(|| assert!(check::deep(compiled, &source).is_empty())));
        let lab = &compiled.lab;
        let data = lab.to_json();
        // What the app does when a lab page opens: read the lab's data, build the cluster.
        group.bench_with_input(BenchmarkId::new("read_data", nodes), &data, |b, data| b.iter(|| Lab::from_json(data).expect("valid")));
        group.bench_with_input(BenchmarkId::new("instantiate", nodes), lab, |b, lab| b.iter(|| lab.instantiate(7)));
    }
    group.finish();
}

criterion_group!(benches, lab_benchmarks);
criterion_main!(benches);
