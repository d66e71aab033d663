//! `[[jobs]]`: a lab's training jobs, checked against its cluster and
//! turned into [`WorkloadSpec`]s. Every problem names the key at fault.

use std::ops::Range;

use super::file::{JobTable, Placement, Spanned};
use crate::limits::{MAX_TRAIN_ITERATIONS, MAX_WORKLOADS};
use crate::model::preset::Preset;
use crate::model::workload::{parse_params, Kind, Load, Start, WorkloadSpec};

/// The checked jobs; a job with a problem is reported and left out.
pub fn specs(jobs: &[Spanned<JobTable>], hostnames: &[String], preset: &Preset, problem: &mut impl FnMut(Range<usize>, String)) -> Vec<WorkloadSpec> {
    if let Some(job) = jobs.get(MAX_WORKLOADS) {
        problem(job.span(), format!("a lab may declare at most {MAX_WORKLOADS} jobs; this one has {}", jobs.len()));
    }
    let mut names: Vec<&str> = Vec::new();
    let mut specs = Vec::new();
    for job in jobs.iter().take(MAX_WORKLOADS) {
        let table = job.get_ref();
        let name = table.name.get_ref();
        if names.contains(&name.as_str()) {
            problem(table.name.span(), format!("job name `{name}` is used twice"));
        }
        names.push(name);
        if let Some(spec) = spec(table, hostnames, preset, problem) {
            // Jobs have their nodes exclusively: two running at once cannot share one.
            let clash = specs.iter().find(|other: &&WorkloadSpec| {
                other.start == Start::Running && spec.start == Start::Running && other.nodes.iter().any(|n| spec.nodes.contains(n))
            });
            if let Some(other) = clash {
                problem(
                    job.span(),
                    format!("job `{name}` runs on a node of job `{}`, which also runs when the lab starts; jobs have their nodes to themselves", other.name),
                );
            }
            specs.push(spec);
        }
    }
    specs
}

fn spec(table: &JobTable, hostnames: &[String], preset: &Preset, problem: &mut impl FnMut(Range<usize>, String)) -> Option<WorkloadSpec> {
    let mut failed = false;
    let mut report = |span: Range<usize>, message: String| {
        failed = true;
        problem(span, message);
    };
    let name = table.name.get_ref();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        report(table.name.span(), format!("job name `{name}` must use only letters, digits, -, _ and . (it names the job's script and log)"));
    }
    let kind = match table.kind.as_ref().map(|k| k.get_ref().as_str()) {
        None | Some("training") => Kind::Training,
        Some("fine-tuning") => Kind::FineTuning,
        Some("serving") => Kind::Serving,
        Some(other) => {
            let span = table.kind.as_ref().map_or(0..0, Spanned::span);
            let why = if other == "inference" { "an inference server is `serving`; " } else { "" };
            report(span, format!("`kind` must be `training`, `fine-tuning` or `serving`, not `{other}`: {why}see docs/authoring.md, Jobs"));
            Kind::Training
        }
    };
    let serving = kind == Kind::Serving;
    // Each kind's own keys, refused on the other.
    let training_keys = [
        ("global_batch", table.global_batch.as_ref().map(Spanned::span)),
        ("steps", table.steps.as_ref().map(Spanned::span)),
        ("checkpoint_every", table.checkpoint_every.as_ref().map(Spanned::span)),
        ("loader_workers", table.loader_workers.as_ref().map(Spanned::span)),
        ("data", table.data.as_ref().map(Spanned::span)),
        ("pipeline", table.pipeline.as_ref().map(Spanned::span)),
    ];
    let serving_keys = [
        ("request_rate", table.request_rate.as_ref().map(Spanned::span)),
        ("prompt_tokens", table.prompt_tokens.as_ref().map(Spanned::span)),
        ("output_tokens", table.output_tokens.as_ref().map(Spanned::span)),
        ("max_num_seqs", table.max_num_seqs.as_ref().map(Spanned::span)),
    ];
    let (foreign, kind_name) = if serving { (&training_keys[..], "training and fine-tuning") } else { (&serving_keys[..], "serving") };
    for (key, span) in foreign {
        if let Some(span) = span {
            report(
                span.clone(),
                format!("`{key}` is for {kind_name} jobs; this job's `kind` is `{}`", table.kind.as_ref().map_or("training", |k| k.get_ref().as_str())),
            );
        }
    }
    let nodes: Vec<String> = match table.nodes.as_ref().map(|n| (n.span(), n.get_ref())) {
        None => hostnames.to_vec(),
        Some((span, Placement::Count(n))) => {
            if *n < 1 || *n as usize > hostnames.len() {
                report(span, format!("`nodes` must be from 1 to the cluster's {} nodes, not {n}", hostnames.len()));
            }
            hostnames.iter().take((*n).clamp(0, hostnames.len() as i64) as usize).cloned().collect()
        }
        Some((span, Placement::Hosts(hosts))) => {
            for host in hosts {
                if !hostnames.contains(host) {
                    report(span.clone(), format!("`nodes` names `{host}`, which is not one of the cluster's nodes"));
                }
            }
            if hosts.is_empty() {
                report(span.clone(), "`nodes` must name at least one node".to_string());
            }
            if let Some(twice) = hosts.iter().enumerate().find_map(|(at, host)| hosts[..at].contains(host).then_some(host)) {
                report(span, format!("`nodes` names `{twice}` twice"));
            }
            hosts.clone()
        }
    };
    let gpus = preset.gpu_buses.len() as i64;
    let mut whole = |value: &Option<Spanned<i64>>, key: &str, default: i64, lo: i64, hi: i64| -> u32 {
        match value {
            None => default as u32,
            Some(v) if (lo..=hi).contains(v.get_ref()) => *v.get_ref() as u32,
            Some(v) => {
                report(v.span(), format!("`{key}` must be from {lo} to {hi}, not {}", v.get_ref()));
                default as u32
            }
        }
    };
    let tensor = whole(&table.tensor, "tensor", 1, 1, 64);
    // A server's tensor-parallel workers are its GPUs.
    let gpus_per_node = whole(&table.gpus_per_node, "gpus_per_node", if serving { i64::from(tensor).min(gpus) } else { gpus }, 1, gpus);
    let pipeline = whole(&table.pipeline, "pipeline", 1, 1, 128);
    let global_batch = whole(&table.global_batch, "global_batch", 1, 1, 1 << 20);
    let seq_len = whole(&table.seq_len, "seq_len", 8192, 128, 131_072);
    let prompt_tokens = whole(&table.prompt_tokens, "prompt_tokens", 1_000, 1, 131_072);
    let output_tokens = whole(&table.output_tokens, "output_tokens", 200, 1, 131_072);
    let max_num_seqs = whole(&table.max_num_seqs, "max_num_seqs", 256, 1, 4_096);
    let loader_workers = whole(&table.loader_workers, "loader_workers", 2, 1, 64);
    let steps = whole(&table.steps, "steps", 100_000, 1, i64::from(MAX_TRAIN_ITERATIONS));
    let checkpoint_every = whole(&table.checkpoint_every, "checkpoint_every", 1_000, 0, i64::from(MAX_TRAIN_ITERATIONS));
    let params_b = parse_params(table.params.get_ref());
    if params_b.is_none() {
        report(table.params.span(), format!("`params` must be a model size such as \"8B\" or \"350M\", not `{}`", table.params.get_ref()));
    }
    let load = if serving {
        if nodes.len() != 1 {
            let span = table.nodes.as_ref().map_or(table.name.span(), Spanned::span);
            report(span, format!("a server runs on one node (its tensor-parallel workers share the node's NVLink), not {}", nodes.len()));
        }
        if gpus_per_node != tensor {
            let span = table.gpus_per_node.as_ref().map_or(table.name.span(), Spanned::span);
            report(span, format!("a server's `gpus_per_node` is its `tensor` parallelism ({tensor}), not {gpus_per_node}"));
        }
        if prompt_tokens + output_tokens > seq_len {
            let span = table.seq_len.as_ref().or(table.prompt_tokens.as_ref()).map_or(table.name.span(), Spanned::span);
            report(
                span,
                format!(
                    "a request's prompt and output ({prompt_tokens} + {output_tokens} tokens) must fit in `seq_len` ({seq_len}), the server's --max-model-len"
                ),
            );
        }
        let rate = match &table.request_rate {
            None => {
                report(table.name.span(), "a serving job needs `request_rate`, the requests that reach it each second".to_string());
                0.0
            }
            Some(rate) if (0.0..=10_000.0).contains(rate.get_ref()) => *rate.get_ref(),
            Some(rate) => {
                report(rate.span(), format!("`request_rate` must be from 0 to 10000 requests a second, not {}", rate.get_ref()));
                0.0
            }
        };
        Some(Load { requests_per_s: rate, prompt_tokens, output_tokens, max_num_seqs, memory_permille: 900 })
    } else {
        None
    };
    let world = gpus_per_node * nodes.len() as u32;
    let model_parallel = tensor * pipeline;
    if world % model_parallel != 0 {
        let span = table.tensor.as_ref().or(table.pipeline.as_ref()).map_or(table.name.span(), Spanned::span);
        report(span, format!("tensor x pipeline ({tensor} x {pipeline}) must divide the job's {world} GPUs"));
    }
    let data = (world / model_parallel.max(1)).max(1);
    if let Some(given) = &table.data {
        if *given.get_ref() != i64::from(data) {
            report(given.span(), format!("`data` must be GPUs / (tensor x pipeline) = {world} / {model_parallel} = {data}, not {}", given.get_ref()));
        }
    }
    if global_batch % data != 0 && !serving {
        report(
            table.global_batch.as_ref().map_or(table.name.span(), Spanned::span),
            format!("`global_batch` ({global_batch}) must be a multiple of the data-parallel size ({data})"),
        );
    }
    match table.launch.as_ref().map(|l| (l.span(), l.get_ref().as_str())) {
        None | Some((_, "slurm")) => {}
        Some((span, "kubernetes")) => report(span, "`launch = \"kubernetes\"` is not modelled yet; use \"slurm\"".to_string()),
        Some((span, other)) => report(span, format!("`launch` must be \"slurm\", not `{other}`")),
    }
    let start = match table.start.as_ref().map(|s| (s.span(), s.get_ref().as_str())) {
        None | Some((_, "running")) => Start::Running,
        Some((_, "launch")) => Start::Launch,
        Some((span, other)) => {
            report(span, format!("`start` must be \"running\" (running when the lab starts) or \"launch\" (the trainee submits it), not `{other}`"));
            Start::Running
        }
    };
    if failed {
        return None;
    }
    Some(WorkloadSpec {
        name: name.clone(),
        kind,
        nodes,
        gpus_per_node,
        params: table.params.get_ref().clone(),
        params_b: params_b?,
        tensor,
        pipeline,
        global_batch,
        seq_len,
        dataset: match (&table.dataset, serving) {
            (Some(dataset), _) => dataset.clone(),
            (None, true) => format!("/lustre/models/{}", served_model(params_b?)),
            (None, false) => format!("/lustre/datasets/{name}/tokens_text_document"),
        },
        loader_workers,
        checkpoint_every: if serving { 0 } else { checkpoint_every },
        steps: if serving { 0 } else { steps },
        start,
        load,
    })
}

/// The instruct model a server of this size serves when the lab does not
/// name one: Llama 3.1's sizes by their released names.
fn served_model(params_b: f64) -> String {
    match crate::model::workload::pace::llama3_size(params_b) {
        Some(size) => format!("Llama-3.1-{size}B-Instruct"),
        None => format!("llm-{params_b}b-instruct"),
    }
}
