//! `[[jobs]]`: a lab's training jobs, checked against its cluster and
//! turned into [`WorkloadSpec`]s. Every problem names the key at fault.

use std::ops::Range;

use super::file::{JobTable, Placement, Spanned};
use crate::limits::{MAX_TRAIN_ITERATIONS, MAX_WORKLOADS};
use crate::model::preset::Preset;
use crate::model::workload::{parse_params, Kind, Start, WorkloadSpec};

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
        Some(other) => {
            let span = table.kind.as_ref().map_or(0..0, Spanned::span);
            let why = if other == "inference" { "inference jobs are not modelled yet; " } else { "" };
            report(span, format!("`kind` must be `training` or `fine-tuning`, not `{other}`: {why}see docs/authoring.md, Jobs"));
            Kind::Training
        }
    };
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
    let gpus_per_node = whole(&table.gpus_per_node, "gpus_per_node", gpus, 1, gpus);
    let tensor = whole(&table.tensor, "tensor", 1, 1, 64);
    let pipeline = whole(&table.pipeline, "pipeline", 1, 1, 128);
    let global_batch = whole(&Some(table.global_batch.clone()), "global_batch", 1, 1, 1 << 20);
    let seq_len = whole(&Some(table.seq_len.clone()), "seq_len", 4096, 128, 131_072);
    let loader_workers = whole(&table.loader_workers, "loader_workers", 2, 1, 64);
    let steps = whole(&table.steps, "steps", 100_000, 1, i64::from(MAX_TRAIN_ITERATIONS));
    let checkpoint_every = whole(&table.checkpoint_every, "checkpoint_every", 1_000, 0, i64::from(MAX_TRAIN_ITERATIONS));
    let params_b = parse_params(table.params.get_ref());
    if params_b.is_none() {
        report(table.params.span(), format!("`params` must be a model size such as \"8B\" or \"350M\", not `{}`", table.params.get_ref()));
    }
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
    if global_batch % data != 0 {
        report(table.global_batch.span(), format!("`global_batch` ({global_batch}) must be a multiple of the data-parallel size ({data})"));
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
        dataset: table.dataset.clone().unwrap_or_else(|| format!("/lustre/datasets/{name}/tokens_text_document")),
        loader_workers,
        checkpoint_every,
        steps,
        start,
    })
}
