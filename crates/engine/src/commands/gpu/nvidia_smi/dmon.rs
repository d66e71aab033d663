//! `nvidia-smi dmon`: one line per GPU per sample (FACTS.md §6). Two `#`
//! header lines, then right-aligned fields (index 5 wide, each metric 6 wide
//! after a space) and one trailing space on every line.
//!
//! Metric groups (`-s`, default `puc`) print in a fixed order whatever order
//! they are given in: p (power, temperatures), u (utilization), c (clocks),
//! v (violations), m (frame buffer, BAR1, CC protected memory), e (ECC, PCIe
//! replays), t (PCIe throughput). p, u, c and m are pinned by a capture; the
//! v, e and t column names are [K] (unverified).

use super::{invalid_arguments, reachable, select, EXIT_NOT_FOUND};
use crate::commands::options::{scan, Arg};
use crate::commands::sampling::Sampling;
use crate::commands::{Flag, Invocation, Output, Signature};
use crate::model::{Gpu, GpuHealth};
use crate::rng::Rng;

static DMON: Signature = Signature {
    name: "nvidia-smi dmon",
    summary: "device monitoring: one line per GPU per sample",
    usage: "nvidia-smi dmon [options]",
    flags: &[
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Display help information." },
        Flag { short: Some('i'), long: Some("id"), value: Some("ID"), help: "Monitor these GPUs (comma separated)." },
        Flag { short: Some('c'), long: Some("count"), value: Some("N"), help: "Stop after N samples." },
        Flag { short: Some('d'), long: Some("delay"), value: Some("SEC"), help: "Seconds between samples (default 1)." },
        Flag { short: Some('s'), long: Some("select"), value: Some("METRICS"), help: "Metric groups: p u c v m e t (default puc)." },
    ],
    examples: &[],
};

/// (group letter, [(name, unit)]).
const GROUPS: &[(char, &[(&str, &str)])] = &[
    ('p', &[("pwr", "W"), ("gtemp", "C"), ("mtemp", "C")]),
    ('u', &[("sm", "%"), ("mem", "%"), ("enc", "%"), ("dec", "%"), ("jpg", "%"), ("ofa", "%")]),
    ('c', &[("mclk", "MHz"), ("pclk", "MHz")]),
    ('v', &[("pviol", "%"), ("tviol", "bool")]),
    ('m', &[("fb", "MB"), ("bar1", "MB"), ("ccpm", "MB")]),
    ('e', &[("sbecc", "errs"), ("dbecc", "errs"), ("pci", "errs")]),
    ('t', &[("rxpci", "MB/s"), ("txpci", "MB/s")]),
];

fn line(first: &str, fields: &[String]) -> String {
    let mut out = format!("{first:>5}");
    for field in fields {
        out += &format!(" {field:>6}");
    }
    out + " \n"
}

/// One metric of one sample. Idle readings vary by a watt or a percent
/// between samples, drawn from the seed.
fn value(gpu: &Gpu, name: &str, rng: &mut Rng) -> String {
    if gpu.health == GpuHealth::Unresponsive {
        return "-".to_string();
    }
    let jitter = |base: u64, spread: u64, rng: &mut Rng| base + rng.range_u64(0, spread);
    match name {
        "pwr" => jitter(u64::from(gpu.power_draw_w), 2, rng).to_string(),
        "gtemp" => gpu.temperature_c.to_string(),
        "mtemp" => gpu.memory_temperature_c.to_string(),
        "sm" => gpu.utilization_pct.to_string(),
        "mem" => gpu.memory_utilization_pct.to_string(),
        "mclk" => gpu.mem_clock_mhz.to_string(),
        "pclk" => gpu.sm_clock_mhz.to_string(),
        "pviol" => u8::from(gpu.throttle_reasons & 0x84 != 0).to_string(),
        "tviol" => u8::from(gpu.throttle_reasons & 0x60 != 0).to_string(),
        "fb" => gpu.memory_used_mib.to_string(),
        "sbecc" => gpu.ecc.volatile_corrected.to_string(),
        "dbecc" => gpu.ecc.volatile_uncorrected.to_string(),
        // The model keeps no BAR1 usage, CC memory, PCIe replays or traffic.
        _ => "0".to_string(),
    }
}

pub fn run(invocation: &Invocation) -> Output {
    let args = invocation.args().get(1..).unwrap_or(&[]);
    let (mut ids, mut count, mut delay, mut select_groups) = (None, None, 1u64, "puc".to_string());
    for arg in scan(&DMON, args) {
        match arg {
            Arg::Flag(flag, value) => match (flag.long, value) {
                (Some("help"), _) => return Output::ok(help()),
                (Some("id"), value) => ids = value,
                (Some("count"), Some(n)) => match n.parse::<u64>() {
                    Ok(n) if n > 0 => count = Some(n),
                    _ => return invalid_arguments(),
                },
                (Some("delay"), Some(n)) => match n.parse::<u64>() {
                    Ok(n) if n > 0 => delay = n.min(3600),
                    _ => return invalid_arguments(),
                },
                (Some("select"), Some(s)) if !s.is_empty() && s.chars().all(|c| GROUPS.iter().any(|g| g.0 == c)) => select_groups = s,
                _ => return invalid_arguments(),
            },
            Arg::Positional(_) | Arg::Unknown(_) | Arg::MissingValue(_) => return invalid_arguments(),
        }
    }
    let Some(selected) = select(invocation.node, ids.as_deref()) else {
        return Output::ok("No devices were found\n").with_status(EXIT_NOT_FOUND);
    };
    let (gpus, stderr) = reachable(&selected);
    let metrics: Vec<(&str, &str)> =
        GROUPS.iter().filter(|(letter, _)| select_groups.contains(*letter)).flat_map(|(_, metrics)| metrics.iter().copied()).collect();
    let names: Vec<String> = metrics.iter().map(|(name, _)| name.to_string()).collect();
    let units: Vec<String> = metrics.iter().map(|(_, unit)| unit.to_string()).collect();
    let mut out = line("# gpu", &names) + &line("# Idx", &units);
    // Each sample reads the model at its own instant: a job that starts,
    // stalls or ends, or a fault that strikes, shows from that sample on.
    let cluster = invocation.cluster;
    let host = &invocation.node.hostname;
    let indices: Vec<u32> = gpus.iter().map(|gpu| gpu.index).collect();
    let sampling = Sampling { interval_ms: delay * 1000, count };
    let duration_ms = sampling.run(cluster, |_, at, view| {
        let Some(node) = view.node(host) else { return false };
        for gpu in node.gpus.iter().filter(|gpu| indices.contains(&gpu.index) && gpu.is_visible()) {
            let mut rng = Rng::derive(cluster.seed, &[host, "dmon", &gpu.index.to_string(), &at.to_string()]);
            let fields: Vec<String> = metrics.iter().map(|(name, _)| value(gpu, name, &mut rng)).collect();
            out += &line(&gpu.index.to_string(), &fields);
        }
        true
    });
    Output { stdout: out, stderr, status: 0, duration_ms, ..Output::default() }
}

fn help() -> String {
    let mut out = String::from("\n    dmon -- Device monitoring.\n\n    Usage: nvidia-smi dmon [options]\n\n    Options include:\n");
    for flag in DMON.flags {
        out += &format!("    [{}]: {}\n", flag.display(), flag.help);
    }
    out
}
