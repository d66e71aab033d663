//! `[[pods]]`: a lab's workload pods, checked against its cluster and
//! turned into [`LabPod`]s (their manifests, `~/NAME.yaml`, and whether
//! they run when the lab starts). Every problem names the key at fault.

use std::ops::Range;

use super::file::{PodTable, Spanned};
use crate::model::pods::{LabPod, PodSpec, RestartPolicy};
use crate::model::preset::Preset;

/// As many pods as jobs: the trainee's have room under the cluster's quota
/// (`limits::MAX_PODS`).
pub const MAX_PODS: usize = crate::limits::MAX_WORKLOADS;

/// The checked pods; a pod with a problem is reported and left out.
pub fn specs(pods: &[Spanned<PodTable>], hostnames: &[String], preset: &Preset, problem: &mut impl FnMut(Range<usize>, String)) -> Vec<LabPod> {
    if let Some(pod) = pods.get(MAX_PODS) {
        problem(pod.span(), format!("a lab may declare at most {MAX_PODS} pods; this one has {}", pods.len()));
    }
    let mut specs: Vec<LabPod> = Vec::new();
    for pod in pods.iter().take(MAX_PODS) {
        let table = pod.get_ref();
        let name = table.name.get_ref();
        if specs.iter().any(|other| other.spec.name == *name) {
            problem(table.name.span(), format!("pod name `{name}` is used twice"));
        }
        if let Some(spec) = spec(table, hostnames, preset, problem) {
            specs.push(spec);
        }
    }
    specs
}

fn spec(table: &PodTable, hostnames: &[String], preset: &Preset, problem: &mut impl FnMut(Range<usize>, String)) -> Option<LabPod> {
    let mut failed = false;
    let mut report = |span: Range<usize>, message: String| {
        failed = true;
        problem(span, message);
    };
    let name = table.name.get_ref();
    let label = |text: &str| {
        !text.is_empty()
            && text.len() <= 63
            && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !text.starts_with('-')
            && !text.ends_with('-')
    };
    if !label(name) {
        report(table.name.span(), format!("pod name `{name}` must be lower-case letters, digits and -, starting and ending with a letter or digit (Kubernetes' rule for a name); it also names the container and ~/{name}.yaml"));
    }
    if table.image.get_ref().trim().is_empty() || table.image.get_ref().contains(char::is_whitespace) {
        report(table.image.span(), format!("`image` must name a container image, such as nvcr.io/nvidia/pytorch:24.05-py3, not `{}`", table.image.get_ref()));
    }
    let gpus_per_node = preset.gpu_buses.len() as i64;
    let gpus = table.gpus.as_ref().map_or(0, |g| *g.get_ref());
    if let Some(g) = &table.gpus {
        if !(0..=gpus_per_node).contains(g.get_ref()) {
            report(g.span(), format!("`gpus` must be from 0 to {gpus_per_node} (a node's GPUs), not {}", g.get_ref()));
        }
    }
    if let Some(node) = &table.node {
        if !hostnames.contains(node.get_ref()) {
            report(node.span(), format!("`node` must be one of the cluster's nodes ({}), not `{}`", hostnames.join(", "), node.get_ref()));
        }
    }
    let restart_policy = match table.restart.as_ref().map(|r| r.get_ref().as_str()) {
        None | Some("Always") => RestartPolicy::Always,
        Some("OnFailure") => RestartPolicy::OnFailure,
        Some("Never") => RestartPolicy::Never,
        Some(other) => {
            report(
                table.restart.as_ref().map_or(0..0, Spanned::span),
                format!("`restart` must be \"Always\", \"OnFailure\" or \"Never\" (the pod's restartPolicy), not `{other}`"),
            );
            RestartPolicy::Always
        }
    };
    let running = match table.start.as_ref().map(|s| s.get_ref().as_str()) {
        None | Some("running") => true,
        Some("apply") => false,
        Some(other) => {
            report(
                table.start.as_ref().map_or(0..0, Spanned::span),
                format!("`start` must be \"running\" (applied before the lab) or \"apply\" (the trainee applies ~/{name}.yaml), not `{other}`"),
            );
            false
        }
    };
    if failed {
        return None;
    }
    let spec = PodSpec {
        name: name.clone(),
        namespace: "default".to_string(),
        container: name.clone(),
        image: table.image.get_ref().clone(),
        command: table.command.clone(),
        labels: vec![("app".to_string(), name.clone())],
        gpus: gpus as u32,
        node_selector: table.node.as_ref().map(|n| vec![("kubernetes.io/hostname".to_string(), n.get_ref().clone())]).unwrap_or_default(),
        tolerations: Vec::new(),
        node_name: None,
        restart_policy,
    };
    Some(LabPod { spec, running })
}
