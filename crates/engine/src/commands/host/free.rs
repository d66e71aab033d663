//! `free`: memory from the preset (`HostSpec::memory_mib`), with a seeded
//! share used by the OS and page cache; DGX nodes run without swap. Layout
//! of procps-ng 3.3.16 and later (`%-9s` label, `%11s` columns).

use crate::commands::options::gnu_complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::node::SchedulerState;
use crate::rng::Rng;

pub struct Free;

static SIGNATURE: Signature = Signature {
    name: "free",
    summary: "display amount of free and used memory in the system",
    usage: "free [options]",
    flags: &[
        Flag { short: Some('b'), long: Some("bytes"), value: None, help: "show output in bytes" },
        Flag { short: Some('k'), long: Some("kibi"), value: None, help: "show output in kibibytes" },
        Flag { short: Some('m'), long: Some("mebi"), value: None, help: "show output in mebibytes" },
        Flag { short: Some('g'), long: Some("gibi"), value: None, help: "show output in gibibytes" },
        Flag { short: Some('h'), long: Some("human"), value: None, help: "show human-readable output" },
        Flag { short: Some('t'), long: Some("total"), value: None, help: "show total for RAM + swap" },
        Flag { short: Some('w'), long: Some("wide"), value: None, help: "wide output (accepted)" },
    ],
    examples: &[Example { command: "free -g", description: "host memory in GiB" }],
};

/// Human form as procps scales it: `2.0Ti`, `21Gi`, `512Mi`, `0B`.
pub fn human(kib: u64) -> String {
    if kib == 0 {
        return "0B".to_string();
    }
    let mut value = kib as f64;
    for unit in ["Ki", "Mi", "Gi", "Ti", "Pi"] {
        if value < 1024.0 || unit == "Pi" {
            return if value < 10.0 { format!("{value:.1}{unit}") } else { format!("{}{unit}", value.round() as u64) };
        }
        value /= 1024.0;
    }
    String::new()
}

/// The node's memory in KiB, as `free` shows it and `/proc/meminfo` holds
/// it: `cache` is buffers, page cache and reclaimable slab together.
pub struct Memory {
    pub total: u64,
    pub used: u64,
    pub free: u64,
    pub shared: u64,
    pub cache: u64,
    pub available: u64,
}

/// A seeded share used by the OS and page cache, a third more under a job.
pub fn memory(cluster: &crate::model::Cluster, node: &crate::model::Node) -> Memory {
    let total = cluster.preset.host.memory_mib * 1024;
    let mut rng = Rng::derive(cluster.seed, &[&node.hostname, "memory"]);
    let busy = node.busy || node.scheduler == SchedulerState::Allocated;
    let used = total / if busy { 3 } else { 60 } + rng.range_u64(0, total / 100);
    let shared = rng.range_u64(20_000, 90_000);
    let cache = total / 40 + rng.range_u64(0, total / 50);
    let free = total - used - cache;
    Memory { total, used, free, shared, cache, available: free + cache - shared }
}

impl Command for Free {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut unit, mut total) = ('k', false);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => match flag.short {
                    Some('t') => total = true,
                    Some('w') => {}
                    Some(letter) => unit = letter,
                    None => {}
                },
                Arg::Positional(word) => return Output::error(format!("free: extra operand '{word}'\nTry 'free --help' for more information.\n"), 1),
                other => return gnu_complaint("free", &other, 1),
            }
        }
        let Memory { total: total_kib, used, free, shared, cache, available } = memory(invocation.cluster, invocation.node);
        let show = |kib: u64| match unit {
            'h' => human(kib),
            'b' => (kib * 1024).to_string(),
            'm' => (kib / 1024).to_string(),
            'g' => (kib / 1024 / 1024).to_string(),
            _ => kib.to_string(),
        };
        let row = |label: &str, values: &[u64]| {
            let cells: Vec<String> = values.iter().map(|v| format!("{:>11}", show(*v))).collect();
            format!("{label:<9}{}\n", cells.join(" "))
        };
        let mut out = String::from("               total        used        free      shared  buff/cache   available\n");
        out += &row("Mem:", &[total_kib, used, free, shared, cache, available]);
        out += &row("Swap:", &[0, 0, 0]);
        if total {
            out += &row("Total:", &[total_kib, used, free]);
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::human;
    use crate::testing::run_on_first_node;

    #[test]
    fn proc_meminfo_holds_the_same_numbers() {
        let free = run_on_first_node("free -k").stdout;
        let mem: Vec<&str> = free.lines().nth(1).expect("the Mem: row").split_whitespace().collect();
        let meminfo = run_on_first_node("cat /proc/meminfo").stdout;
        let field = |name: &str| meminfo.lines().find_map(|line| line.strip_prefix(name)).map(|rest| rest.trim_end_matches(" kB").trim().to_string());
        assert_eq!(field("MemTotal:").as_deref(), Some(mem[1]));
        assert_eq!(field("MemFree:").as_deref(), Some(mem[3]));
        assert_eq!(field("Shmem:").as_deref(), Some(mem[4]));
        assert_eq!(field("MemAvailable:").as_deref(), Some(mem[6]));
        assert!(meminfo.contains("\nSwapTotal:             0 kB\n"), "{meminfo}");
    }

    #[test]
    fn reads_like_procps() {
        assert_eq!((human(0), human(2_063_937 * 1024), human(512 * 1024)), ("0B".into(), "2.0Ti".into(), "512Mi".into()));
        let out = run_on_first_node("free -g").stdout;
        let mem = out.lines().nth(1).unwrap();
        assert!(mem.starts_with("Mem:            2015 "), "{out}");
        assert_eq!(out.lines().nth(2), Some("Swap:              0           0           0"));
        assert!(run_on_first_node("free -h").stdout.contains("Mem:           2.0Ti"));
        assert_eq!(run_on_first_node("free -q").status, 1);
    }
}
