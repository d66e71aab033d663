//! Criterion benchmarks of the collective model and the nccl-tests output:
//! all_reduce_perf -b 8 -e 16G across 2 and 1,024 nodes (16 and 8,192 ranks).

use clusterlab_engine::{load, Session};
use criterion::{criterion_group, criterion_main, Criterion};

fn lab(nodes: usize) -> clusterlab_engine::model::Cluster {
    let names: Vec<String> = (1..=nodes).map(|i| format!("\"gpu-{i:04}\"")).collect();
    let text = format!("[lab]\nid = \"bench\"\ntitle = \"t\"\nsummary = \"s\"\n\n[cluster]\npreset = \"hgx-h100\"\nnodes = [{}]\n", names.join(", "));
    load(&text).expect("valid lab").instantiate(1)
}

fn collectives(c: &mut Criterion) {
    for nodes in [2, 1024] {
        let cluster = lab(nodes);
        let line = format!("srun -N{nodes} --ntasks-per-node=8 all_reduce_perf -b 8 -e 16G -f 2");
        c.bench_function(&format!("all_reduce_perf {nodes} nodes"), |b| b.iter(|| Session::new(cluster.clone(), "gpu-0001").run(&line).status));
    }
}

criterion_group!(benches, collectives);
criterion_main!(benches);
