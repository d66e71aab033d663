//! `uptime`: time since `Node::booted_at`, one logged-in user, and load
//! averages seeded per node (higher while the node runs a job).

use crate::commands::options::gnu_complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::node::SchedulerState;
use crate::model::{Cluster, Node};
use crate::rng::Rng;

pub struct Uptime;

static SIGNATURE: Signature = Signature {
    name: "uptime",
    summary: "tell how long the system has been running",
    usage: "uptime [options]",
    flags: &[
        Flag { short: Some('p'), long: Some("pretty"), value: None, help: "show uptime in pretty format" },
        Flag { short: Some('s'), long: Some("since"), value: None, help: "system up since" },
    ],
    examples: &[Example { command: "uptime", description: "when the node last rebooted, and its load" }],
};

/// The 1, 5 and 15 minute load averages, in hundredths.
pub fn load_averages(cluster: &Cluster, node: &Node) -> [u64; 3] {
    // A job's ranks and their data loaders keep the run queue full.
    load_averages_when(cluster, node, node.busy || node.scheduler == SchedulerState::Allocated)
}

/// The load averages of `node` with a job on it (`running`) or without.
pub fn load_averages_when(cluster: &Cluster, node: &Node, running: bool) -> [u64; 3] {
    let mut rng = Rng::derive(cluster.seed, &[&node.hostname, "load"]);
    let (base, spread) = if running { (9000, 3000) } else { (5, 80) };
    [rng.range_u64(base, base + spread), rng.range_u64(base, base + spread), rng.range_u64(base, base + spread)]
}

impl Command for Uptime {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut pretty, mut since) = (false, false);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) if flag.short == Some('p') => pretty = true,
                Arg::Flag(..) => since = true,
                Arg::Positional(_) => {
                    return Output::error("\nUsage:\n uptime [options]\n", 1);
                }
                other => return gnu_complaint("uptime", &other, 1),
            }
        }
        let (cluster, node) = (invocation.cluster, invocation.node);
        if since {
            return Output::ok(format!("{}\n", super::date::strftime("%Y-%m-%d %H:%M:%S", node.booted_at)));
        }
        let up = (cluster.now - node.booted_at).max(0);
        let (days, hours, minutes) = (up / 86_400, up % 86_400 / 3600, up % 3600 / 60);
        let plural = |n: i64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        if pretty {
            let mut parts = Vec::new();
            if days >= 7 {
                parts.push(plural(days / 7, "week"));
            }
            if days % 7 > 0 {
                parts.push(plural(days % 7, "day"));
            }
            if hours > 0 {
                parts.push(plural(hours, "hour"));
            }
            if minutes > 0 || parts.is_empty() {
                parts.push(plural(minutes, "minute"));
            }
            return Output::ok(format!("up {}\n", parts.join(", ")));
        }
        let mut out = format!(" {} up ", super::date::strftime("%H:%M:%S", cluster.now));
        if days > 0 {
            out += &format!("{}, ", plural(days, "day"));
        }
        if hours > 0 {
            out += &format!("{hours:2}:{minutes:02}, ");
        } else {
            out += &format!("{minutes} min, ");
        }
        let load = load_averages(cluster, node);
        let l = |v: u64| format!("{}.{:02}", v / 100, v % 100);
        out += &format!(" 1 user,  load average: {}, {}, {}\n", l(load[0]), l(load[1]), l(load[2]));
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn reads_like_procps() {
        let out = run_on_first_node("uptime").stdout;
        assert!(out.starts_with(' ') && out.contains(" days, ") && out.contains(",  1 user,  load average: 0."), "{out}");
        assert!(run_on_first_node("uptime -p").stdout.starts_with("up "));
        assert_eq!(run_on_first_node("uptime -s").stdout.len(), 20);
        assert_eq!(run_on_first_node("uptime -x").status, 1);
    }
}
