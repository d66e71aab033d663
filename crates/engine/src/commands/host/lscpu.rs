//! `lscpu`: the preset's host CPUs (`HostSpec`) in util-linux 2.37's
//! layout: sockets, cores, threads, model name and the NUMA nodes with
//! their CPU lists (one node per socket). Family, stepping and caches are
//! not in the model and left out.

use crate::commands::options::gnu_complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Lscpu;

static SIGNATURE: Signature = Signature {
    name: "lscpu",
    summary: "display information about the CPU architecture",
    usage: "lscpu [options]",
    flags: &[Flag { short: Some('e'), long: Some("extended"), value: None, help: "print out an extended readable format (accepted)" }],
    examples: &[Example { command: "lscpu", description: "CPU model, sockets, cores and NUMA layout" }],
};

impl Command for Lscpu {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(..) => {}
                Arg::Positional(_) => return Output::error("lscpu: bad usage\nTry 'lscpu --help' for more information.\n", 1),
                other => return gnu_complaint("lscpu", &other, 1),
            }
        }
        let host = &invocation.cluster.preset.host;
        let vendor = if host.cpu_model.starts_with("AMD") { "AuthenticAMD" } else { "GenuineIntel" };
        let mut rows: Vec<(&str, String)> = vec![
            ("Architecture:", "x86_64".into()),
            ("  CPU op-mode(s):", "32-bit, 64-bit".into()),
            ("  Byte Order:", "Little Endian".into()),
            ("CPU(s):", host.cpus().to_string()),
            ("  On-line CPU(s) list:", format!("0-{}", host.cpus().saturating_sub(1))),
            ("Vendor ID:", vendor.into()),
            ("  Model name:", host.cpu_model.into()),
            ("    Thread(s) per core:", host.threads_per_core.to_string()),
            ("    Core(s) per socket:", host.cores_per_socket.to_string()),
            ("    Socket(s):", host.sockets.to_string()),
            ("NUMA:", String::new()),
            ("  NUMA node(s):", host.sockets.to_string()),
        ];
        let names: Vec<String> = (0..host.sockets).map(|s| format!("  NUMA node{s} CPU(s):")).collect();
        for (socket, name) in names.iter().enumerate() {
            rows.push((name, host.socket_cpus(socket as u32)));
        }
        let out: String = rows.iter().map(|(key, value)| format!("{key:<25}{value}\n")).collect();
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn shows_the_presets_host() {
        let out = run_on_first_node("lscpu").stdout;
        assert!(out.starts_with("Architecture:            x86_64\n"));
        assert!(out.contains("\n  Model name:            Intel(R) Xeon(R) Platinum 8480C\n"));
        assert!(out.contains("\n  NUMA node1 CPU(s):     56-111,168-223\n"));
        assert_eq!(run_on_first_node("lscpu -Q").status, 1);
    }

    #[test]
    fn proc_cpuinfo_tells_the_same_cpus() {
        assert_eq!(run_on_first_node("grep -c ^processor /proc/cpuinfo").stdout, run_on_first_node("nproc").stdout);
        let first = run_on_first_node("head -28 /proc/cpuinfo").stdout;
        assert!(
            first.starts_with(
                "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\nstepping\t: 8\n"
            ),
            "{first}"
        );
        assert!(
            first.contains("\ncpu cores\t: 56\n") && first.ends_with("address sizes\t: 46 bits physical, 57 bits virtual\npower management:\n\n"),
            "{first}"
        );
        // CPU 56 is the second socket's first core; CPU 112 the first core's hyperthread.
        let second_socket = run_on_first_node("grep -A11 '^processor.: 56$' /proc/cpuinfo").stdout;
        assert!(second_socket.contains("physical id\t: 1\n") && second_socket.contains("core id\t\t: 0\n"), "{second_socket}");
        assert!(run_on_first_node("grep -A14 '^processor.: 112$' /proc/cpuinfo").stdout.contains("apicid\t\t: 1\n"));
    }
}
