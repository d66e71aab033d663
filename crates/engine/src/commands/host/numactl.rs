//! `numactl -H` (`--hardware`): one NUMA node per socket, the CPUs of each
//! (`HostSpec::socket_cpus`), memory split evenly with a seeded free share,
//! and the SLIT distances of a two-socket host (10 local, 21 remote).

use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::rng::Rng;

pub struct Numactl;

static SIGNATURE: Signature = Signature {
    name: "numactl",
    summary: "show the NUMA policy and hardware layout",
    usage: "numactl --hardware | --show",
    flags: &[
        Flag { short: Some('H'), long: Some("hardware"), value: None, help: "show inventory of available nodes on the system" },
        Flag { short: Some('s'), long: Some("show"), value: None, help: "show NUMA policy settings of the current process" },
    ],
    examples: &[Example { command: "numactl -H", description: "NUMA nodes, their CPUs, memory and distances" }],
};

/// Expands `0-55,112-167` into CPU numbers.
fn cpus(list: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for range in list.split(',') {
        let (a, b) = range.split_once('-').unwrap_or((range, range));
        if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
            out.extend(a..=b);
        }
    }
    out
}

const USAGE: &str = "usage: numactl [--all | -a] [--interleave= | -i <nodes>] [--preferred= | -p <node>]\n               [--physcpubind= | -C <cpus>] [--cpunodebind= | -N <nodes>]\n               [--membind= | -m <nodes>] [--localalloc | -l] command args ...\n       numactl [--show | -s]\n       numactl [--hardware | -H]\n";

impl Command for Numactl {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut show = None;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => show = flag.short,
                _ => return Output::error(USAGE, 1),
            }
        }
        let host = &invocation.cluster.preset.host;
        let nodes = host.sockets;
        match show {
            Some('H') => {
                let mut rng = Rng::derive(invocation.cluster.seed, &[&invocation.node.hostname, "numa"]);
                let size = host.memory_mib / u64::from(nodes.max(1));
                let mut out = format!("available: {nodes} nodes (0-{})\n", nodes.saturating_sub(1));
                for node in 0..nodes {
                    let list: Vec<String> = cpus(&host.socket_cpus(node)).iter().map(u32::to_string).collect();
                    out += &format!("node {node} cpus: {}\n", list.join(" "));
                    out += &format!("node {node} size: {size} MB\n");
                    out += &format!("node {node} free: {} MB\n", size - size / 30 - rng.range_u64(0, size / 40));
                }
                out += "node distances:\nnode ";
                out += &(0..nodes).map(|n| format!("{n:>3} ")).collect::<String>();
                out.push('\n');
                for a in 0..nodes {
                    out += &format!("{a:>3}: ");
                    out += &(0..nodes).map(|b| format!("{:>3} ", if a == b { 10 } else { 21 })).collect::<String>();
                    out.push('\n');
                }
                Output::ok(out)
            }
            Some(_) => {
                let all = format!("0-{}", host.cpus().saturating_sub(1));
                let list: Vec<String> = cpus(&all).iter().map(u32::to_string).collect();
                let nodes_list: Vec<String> = (0..nodes).map(|n| n.to_string()).collect();
                let n = nodes_list.join(" ");
                Output::ok(format!("policy: default\npreferred node: current\nphyscpubind: {}\ncpubind: {n} \nnodebind: {n} \nmembind: {n} \n", list.join(" ")))
            }
            None => Output::error(USAGE, 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn shows_the_hardware() {
        let out = run_on_first_node("numactl -H").stdout;
        assert!(out.starts_with("available: 2 nodes (0-1)\nnode 0 cpus: 0 1 2 "));
        assert!(out.contains("node 1 size: 1031968 MB\n"));
        assert!(out.ends_with("node distances:\nnode   0   1 \n  0:  10  21 \n  1:  21  10 \n"), "{out}");
        assert_eq!(run_on_first_node("numactl").status, 1);
    }
}
