//! `dcgmi dmon -e FIELDS [-i GPUS] [-c N] [-d MS]`: DCGM's field monitor,
//! one row per GPU per sample, laid out as DCGM 3.3's DeviceMonitor does:
//! `#Entity` and `ID` headers padded to 10, each field's column its
//! format width plus 6, cells left-aligned with 2 spaces after, trailing
//! spaces kept; doubles with three decimals, blank values `N/A`; the two
//! header lines again after the 15th sample and every 14 after.
//!
//! Values come from the model at each sample's instant. The profiling
//! fields (1001-1005) follow the job on the GPU: while it computes, the
//! tensor cores are busy for the share of the step that is compute; while
//! it waits on the network or on a lost peer, the graphics engine stays
//! active (NCCL's kernels are resident: `GPUTL` and nvidia-smi's
//! utilization stay near 100%) but SMs and tensor cores idle. That split is
//! this model's, not a capture's. Without `-c` the real tool runs until
//! Ctrl-C; this one prints 10 samples. The parse error for a missing `-e`
//! is TCLAP's form, unverified.

use crate::commands::sampling::Sampling;
use crate::commands::{Invocation, Output};
use crate::model::{Cluster, Gpu, GpuHealth};
use crate::rng::Rng;

/// (field id, short name, unit, column format width, is a double).
const FIELDS: &[(u32, &str, &str, usize, bool)] = &[
    (100, "SMCLK", "", 5, false),
    (101, "MMCLK", "", 5, false),
    (150, "TMPTR", " C", 5, false),
    (155, "POWER", " W", 10, true),
    (203, "GPUTL", "", 10, false),
    (204, "MCUTL", "", 10, false),
    (252, "FBUSD", "", 10, false),
    (1001, "GRACT", "", 5, true),
    (1002, "SMACT", "", 5, true),
    (1003, "SMOCC", "", 5, true),
    (1004, "TENSO", "", 5, true),
    (1005, "DRAMA", "", 5, true),
    (1009, "PCITX", "", 20, false),
    (1010, "PCIRX", "", 20, false),
    (1011, "NVLTX", "", 20, false),
    (1012, "NVLRX", "", 20, false),
];

const ENTITY_WIDTH: usize = 10;
const PADDING: usize = 2;

type Field = (u32, &'static str, &'static str, usize, bool);

fn cell(text: &str, width: usize) -> String {
    let text = if text.chars().count() > width { format!("{}...", text.chars().take(width.saturating_sub(3)).collect::<String>()) } else { text.to_string() };
    format!("{text:<w$}", w = width + PADDING)
}

fn header(fields: &[Field]) -> String {
    let mut names = format!("{:<ENTITY_WIDTH$}", "#Entity");
    let mut units = format!("{:<ENTITY_WIDTH$}", "ID");
    for (_, name, unit, width, _) in fields {
        names += &cell(name, width + 6);
        units += &cell(unit, width + 6);
    }
    format!("{names}\n{units}\n")
}

/// What the GPU's job does with it: (computing share, waiting on a lost
/// peer), or None when no job holds it.
fn activity(cluster: &Cluster, host: &str, gpu: &Gpu) -> Option<(f64, bool)> {
    let workload = cluster.workload_on(host, gpu.index)?;
    match workload.segments.last() {
        Some((_, Ok(pace))) => Some((pace.compute_ms / pace.step_ms.max(1e-9), false)),
        _ => Some((0.0, true)),
    }
}

fn value(cluster: &Cluster, host: &str, gpu: &Gpu, id: u32, rng: &mut Rng) -> String {
    if gpu.health == GpuHealth::Unresponsive {
        return "N/A".to_string();
    }
    let jitter = |rng: &mut Rng, spread: f64| 1.0 + (rng.unit_f64() - 0.5) * spread;
    let job = activity(cluster, host, gpu);
    let share = job.map_or(0.0, |(share, _)| share);
    let fraction = |busy: f64, rng: &mut Rng| format!("{:.3}", (busy * jitter(rng, 0.04)).clamp(0.0, 1.0));
    match id {
        100 => gpu.sm_clock_mhz.to_string(),
        101 => gpu.mem_clock_mhz.to_string(),
        150 => gpu.temperature_c.to_string(),
        155 => format!("{:.3}", f64::from(gpu.power_draw_w) * jitter(rng, 0.01)),
        203 => gpu.utilization_pct.to_string(),
        204 => gpu.memory_utilization_pct.to_string(),
        252 => gpu.memory_used_mib.to_string(),
        1001 => fraction(if job.is_some() { 0.985 } else { 0.0 }, rng),
        1002 => fraction(if job.is_some() { 0.9 * share + 0.06 } else { 0.0 }, rng),
        1003 => fraction(if job.is_some() { 0.42 * share + 0.03 } else { 0.0 }, rng),
        1004 => fraction(0.68 * share, rng),
        1005 => fraction(0.34 * share + if job.is_some() { 0.02 } else { 0.0 }, rng),
        // Bytes per second: a rank's gradients through its rail's HCA over
        // PCIe, and through NVLink to the node's other GPUs.
        1009..=1012 => {
            let Some(workload) = cluster.workload_on(host, gpu.index) else { return "0".to_string() };
            let Some((_, Ok(pace))) = workload.segments.last() else { return "0".to_string() };
            let spec = &workload.spec;
            // Through its rail's HCA: the node's rail traffic over its GPUs' rails.
            let per_step = if id <= 1010 {
                spec.rail_bytes_per_step(cluster.node(host).map_or(1, |node| node.hcas.len()))
            } else {
                2.0 * spec.gradient_bytes() * f64::from(spec.gpus_per_node.saturating_sub(1)) / f64::from(spec.gpus_per_node.max(1))
            };
            format!("{}", (per_step / (pace.step_ms / 1e3) * jitter(rng, 0.02)) as u64)
        }
        _ => "N/A".to_string(),
    }
}

pub fn run(invocation: &Invocation) -> Output {
    let args = invocation.args();
    let (mut fields_arg, mut ids, mut count, mut delay_ms) = (None, None, None, 1000u64);
    let mut at = 1;
    while at < args.len() {
        let (name, inline) = match args[at].split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_string(), Some(value.to_string())),
            _ => (args[at].clone(), None),
        };
        let mut value = || {
            inline.clone().or_else(|| {
                at += 1;
                args.get(at).cloned()
            })
        };
        match name.as_str() {
            "-e" | "--field-id" => fields_arg = value(),
            "-i" | "--entity-id" | "--gpu-id" => ids = value(),
            "-c" | "--count" => match value().and_then(|v| v.parse::<u64>().ok()) {
                Some(n) => count = Some(n),
                None => return parse_error("count"),
            },
            "-d" | "--delay" => match value().and_then(|v| v.parse::<u64>().ok()).filter(|ms| *ms >= 1) {
                Some(ms) => delay_ms = ms.min(3_600_000),
                None => return parse_error("delay"),
            },
            _ => return parse_error(name.trim_start_matches('-')),
        }
        at += 1;
    }
    let Some(fields_arg) = fields_arg else {
        return Output::error("PARSE ERROR:  \n             Required argument missing: field-id\n", 255);
    };
    if !fields_arg.starts_with(|c: char| c.is_ascii_digit()) {
        return Output::error("Error: Invalid value for arg field-id.\nAn error occurred trying to parse the command line.\n", 255);
    }
    let mut fields: Vec<Field> = Vec::new();
    for token in fields_arg.split(',') {
        let Ok(id) = token.trim().parse::<u32>() else {
            return Output::error(format!("Error: Expected numerical fieldId. Got '{token}' instead.\n"), 255);
        };
        match FIELDS.iter().find(|field| field.0 == id) {
            Some(field) => fields.push(*field),
            None => return Output::error(format!("Error: Got invalid field ID. '{id}'. See dcgm_fields.h for a list of valid field IDs.\n"), 255),
        }
    }
    let host = invocation.node.hostname.clone();
    let wanted: Option<Vec<u32>> = match ids.as_deref() {
        None | Some("-1") => None,
        Some(list) => match list.split(',').map(|id| id.trim().parse::<u32>().ok()).collect() {
            Some(list) => Some(list),
            None => return Output::error(format!("Error: Invalid entity id '{list}'.\n"), 255),
        },
    };
    let mut out = header(&fields);
    // `-c 0` is dcgmi's "until interrupted".
    let sampling = Sampling { interval_ms: delay_ms, count: count.filter(|n| *n > 0) };
    let duration_ms = sampling.run(invocation.cluster, |sample, now, view| {
        if sample >= 15 && (sample - 15) % 14 == 0 {
            out += &header(&fields);
        }
        let Some(node) = view.node(&host) else { return false };
        for gpu in node.gpus.iter().filter(|gpu| gpu.is_visible() && wanted.as_ref().is_none_or(|w| w.contains(&gpu.index))) {
            let mut rng = Rng::derive(view.seed, &[&host, "dcgmi dmon", &gpu.index.to_string(), &sample.to_string(), &now.to_string()]);
            out += &format!("{:<ENTITY_WIDTH$}", format!("GPU {}", gpu.index));
            for (id, _, _, width, _) in &fields {
                out += &cell(&value(view, &host, gpu, *id, &mut rng), width + 6);
            }
            out.push('\n');
        }
        true
    });
    Output { stdout: out, duration_ms, ..Output::default() }
}

fn parse_error(argument: &str) -> Output {
    Output::error(format!("PARSE ERROR: Argument: {argument}\n             Couldn't find match for argument\n"), 255)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_follow_the_field_widths() {
        let fields: Vec<Field> = [155, 203].iter().map(|id| *FIELDS.iter().find(|f| f.0 == *id).unwrap()).collect();
        let text = header(&fields);
        assert_eq!(text, "#Entity   POWER             GPUTL             \nID         W                                  \n");
        assert!(text.lines().all(|line| line.len() == 46));
    }
}
