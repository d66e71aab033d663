//! `ibqueryerrors`: the fabric-wide sweep of port error counters, as
//! infiniband-diags prints it: for each node with a counter above its
//! threshold (0 unless the threshold file, `/etc/infiniband-diags/
//! error_thresholds` or `--threshold-file`, sets one), `Errors for
//! "NODE"` and one `   GUID 0x... port N: [Counter == value]` line per
//! port, then the summary. It exits 1 when a port has errors.
//!
//! The HCAs' counters are the model's (`ib_common::counters_now`), the
//! switch ports' follow the HCAs cabled to them (`Fabric::port_counters`),
//! so a bad cable is named at both ends. A switch answers AllPortSelect:
//! the sweep reads its sum first (`port ALL`) and each port only when the
//! sum has errors. Counters print in their PortCounters form, each stopping
//! at its field's maximum (`[SymbolErrorCounter == 250]`), as the captured
//! sweeps show them.

use crate::commands::fabric::ib_common::{common, counters_now, diag_usage, open_umad_port};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::fabric::{LinkLayer, PortCounters};
use crate::model::switches::Fabric;

pub struct Ibqueryerrors;

static SIGNATURE: Signature = Signature {
    name: "ibqueryerrors",
    summary: "sweep the InfiniBand fabric for ports whose error counters are above their thresholds",
    usage: "ibqueryerrors [options]",
    flags: &[
        Flag { short: Some('s'), long: Some("suppress"), value: Some("<err1,err2,...>"), help: "suppress errors listed" },
        Flag { short: Some('c'), long: Some("suppress-common"), value: None, help: "suppress some of the common counters" },
        Flag { short: None, long: Some("switch"), value: None, help: "print data for switches only" },
        Flag { short: None, long: Some("ca"), value: None, help: "print data for CA's only" },
        Flag { short: Some('k'), long: Some("clear-errors"), value: None, help: "Clear error counters after read" },
        Flag { short: Some('K'), long: Some("clear-counts"), value: None, help: "Clear data counters after read" },
        Flag {
            short: None,
            long: Some("threshold-file"),
            value: Some("<val>"),
            help: "specify an alternate threshold file, default: /etc/infiniband-diags/error_thresholds",
        },
        common::CONFIG,
        common::CA,
        common::PORT,
        common::TIMEOUT,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[
        Example { command: "sudo ibqueryerrors", description: "every port of the fabric with an error counter above 0" },
        Example { command: "sudo ibqueryerrors -s PortXmitWait", description: "the same, leaving out congestion waits" },
    ],
};

fn usage() -> String {
    diag_usage(&SIGNATURE, "", &[])
}

/// The error counters the sweep reads, in the order it prints them, each
/// at most its PortCounters field's maximum.
fn errors(counters: &PortCounters) -> [(&'static str, u64); 7] {
    let capped = |value: u64, bits: u32| value.min((1u64 << bits) - 1);
    [
        ("SymbolErrorCounter", capped(counters.symbol_errors, 16)),
        ("LinkErrorRecoveryCounter", capped(counters.link_error_recovery, 8)),
        ("LinkDownedCounter", capped(counters.link_downed, 8)),
        ("PortRcvErrors", capped(counters.rcv_errors, 16)),
        ("PortRcvRemotePhysicalErrors", capped(counters.rcv_remote_physical_errors, 16)),
        ("PortXmitDiscards", capped(counters.xmit_discards, 16)),
        ("PortXmitWait", capped(counters.xmit_wait, 32)),
    ]
}

/// Where the sweep reads its thresholds unless told otherwise.
pub const THRESHOLD_FILE: &str = "/etc/infiniband-diags/error_thresholds";

/// The counters a threshold file may name, in PortCountersExtended's order.
pub const THRESHOLD_NAMES: [&str; 13] = [
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
    "PortXmitWait",
];

/// A threshold file's `NAME=VALUE` lines (blank lines and `#` comments
/// skipped, unknown names ignored, values read as strtoul reads them), and
/// the summary's `Thresholds: [NAME = VALUE]...` line; None without a file
/// (the summary then prints glibc's `(null)`, as the real one does).
fn thresholds(text: Option<&str>) -> (Vec<(&'static str, u64)>, String) {
    let Some(text) = text else { return (Vec::new(), "(null)".to_string()) };
    let mut set: Vec<(&'static str, u64)> = Vec::new();
    let mut line = "Thresholds: ".to_string();
    for entry in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (name, value) = entry.split_once('=').unwrap_or((entry, ""));
        if let Some(known) = THRESHOLD_NAMES.iter().find(|known| **known == name) {
            let value = u64::try_from(super::ib_common::strtol(value)).unwrap_or(0);
            set.retain(|(n, _)| n != known);
            set.push((known, value));
            line += &format!("[{name} = {value}]");
        }
    }
    (set, line)
}

/// ` [Counter == value]` for each counter above its threshold (0 unless
/// set) and not suppressed.
fn above_threshold(counters: &PortCounters, suppressed: &[String], thresholds: &[(&str, u64)]) -> String {
    let limit = |name: &str| thresholds.iter().find(|(n, _)| *n == name).map_or(0, |(_, at)| *at);
    errors(counters)
        .iter()
        .filter(|(name, value)| *value > limit(name) && !suppressed.iter().any(|s| s == name))
        .map(|(name, value)| format!(" [{name} == {value}]"))
        .collect()
}

impl Command for Ibqueryerrors {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut suppressed, mut ca, mut threshold_file) = (Vec::new(), None, THRESHOLD_FILE.to_string());
        let (mut switches_only, mut cas_only, mut clear) = (false, false, false);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match (flag.short, flag.long) {
                    (Some('s'), _) => suppressed.extend(value.unwrap_or_default().split(',').map(str::to_string)),
                    (Some('c'), _) => suppressed.push("PortRcvSwitchRelayErrors".to_string()),
                    (_, Some("switch")) => switches_only = true,
                    (_, Some("ca")) => cas_only = true,
                    (Some('k' | 'K'), _) => clear = true,
                    (Some('C'), _) => ca = value,
                    (_, Some("threshold-file")) => threshold_file = value.unwrap_or_default(),
                    (Some('h'), _) => return Output::error(usage(), 2),
                    _ => {}
                },
                other => return Output::error(crate::commands::options::complaint("ibqueryerrors", &other) + &usage(), 2),
            }
        }
        if let Err(refused) = open_umad_port(invocation, "ibqueryerrors", ca.as_deref()) {
            return refused;
        }
        let cluster = invocation.cluster;
        let Some(fabric) = Fabric::of(cluster) else { return Output::default() };
        let view = crate::commands::files::View::for_command(invocation);
        let (thresholds, threshold_line) = thresholds(view.read(&threshold_file).ok().as_deref());
        let (print_switches, print_cas) = if switches_only || cas_only { (switches_only, cas_only) } else { (true, true) };
        let (mut nodes, mut bad_nodes, mut ports, mut bad_ports) = (0, 0, 0, 0);
        let mut out = String::new();
        let mut changes = Vec::new();
        if print_switches {
            for (index, switch) in fabric.switches.iter().enumerate() {
                nodes += 1;
                let each: Vec<PortCounters> = (0..=switch.ports + 1).map(|port| fabric.port_counters(cluster, index, port)).collect();
                let all = each.iter().fold(PortCounters::default(), |sum, counters| sum.saturating_add(*counters));
                if clear {
                    changes.extend(fabric.clear_ports(cluster, index, 1..=switch.ports));
                }
                let found = above_threshold(&all, &suppressed, &thresholds);
                if found.is_empty() {
                    // The sum is clean: one query checked them all.
                    ports += switch.ports + 1;
                    continue;
                }
                bad_nodes += 1;
                out += &format!("Errors for 0x{:x} \"{}\"\n   GUID 0x{:x} port ALL:{found}\n", switch.guid, switch.name, switch.guid);
                for (port, counters) in each.iter().enumerate() {
                    ports += 1;
                    let found = above_threshold(counters, &suppressed, &thresholds);
                    if !found.is_empty() {
                        bad_ports += 1;
                        out += &format!("   GUID 0x{:x} port {port}:{found}\n", switch.guid);
                    }
                }
            }
        }
        if print_cas {
            // The discovery finds the HCAs whose link is up.
            for node in cluster.nodes.iter().filter(|node| node.up(cluster.now)) {
                for hca in node.hcas.iter().filter(|hca| hca.port.link_layer == LinkLayer::InfiniBand && hca.port.is_up()) {
                    nodes += 1;
                    ports += 1;
                    let found = above_threshold(&counters_now(cluster, &hca.port), &suppressed, &thresholds);
                    if clear {
                        changes.push(Change::ResetPortCounters { node: node.hostname.clone(), hca: hca.name.clone() });
                    }
                    if found.is_empty() {
                        continue;
                    }
                    bad_nodes += 1;
                    bad_ports += 1;
                    out += &format!("Errors for \"{} {}\"\n   GUID 0x{:x} port {}:{found}\n", node.hostname, hca.name, hca.port.guid, hca.port.number);
                }
            }
        }
        out += &format!("\n## Summary: {nodes} nodes checked, {bad_nodes} bad nodes found\n");
        out += &format!("##          {ports} ports checked, {bad_ports} ports have errors beyond threshold\n");
        out += &format!("## {threshold_line}\n");
        out += &format!("## Suppressed:{}\n", suppressed.iter().map(|name| format!(" {name}")).collect::<String>());
        Output { stdout: out, status: i32::from(bad_ports > 0), duration_ms: 500 + 6 * cluster.nodes.len() as u64, changes, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::{cluster, run_on_first_node, shell};

    #[test]
    fn a_clean_fabric_sweeps_clean_and_a_bad_port_is_named() {
        let clean = run_on_first_node("sudo ibqueryerrors");
        assert_eq!(clean.status, 0);
        assert_eq!(
            clean.stdout,
            "\n## Summary: 28 nodes checked, 0 bad nodes found\n##          796 ports checked, 0 ports have errors beyond threshold\n## Thresholds: \n## Suppressed:\n"
        );
        let mut cluster = cluster();
        Fault::HcaSymbolErrors { node: "gpu-002".into(), hca: "mlx5_3".into(), count: 1000 }.apply(&mut cluster).unwrap();
        let mut shell = shell(cluster);
        let out = shell.run("sudo ibqueryerrors");
        assert_eq!(out.status, 1);
        let text = out.stdout();
        // A switch with errors has each of its ports 0-65 checked (66, one
        // more than the clean sum counts). The cable errs at both ends: the leaf port gpu-002's mlx5_3 plugs
        // into (rail 3, port 2) counts a share of the HCA's symbol errors.
        let leaf = text.lines().next().unwrap();
        assert!(leaf.starts_with("Errors for 0x") && leaf.ends_with(" \"MF0;leaf-rail3:MQM9700/U1\""), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains(" port ALL: [SymbolErrorCounter == ") && lines[2].contains(" port 2: [SymbolErrorCounter == "), "{text}");
        assert_eq!(lines[1].split_once(':').unwrap().1, lines[2].split_once(':').unwrap().1);
        assert!(text.contains("Errors for \"gpu-002 mlx5_3\"\n   GUID 0x"), "{text}");
        assert!(text.contains(" port 1: [SymbolErrorCounter == 1000] [LinkErrorRecoveryCounter == 2]\n"), "{text}");
        assert!(text.contains("2 bad nodes found\n##          797 ports checked, 2 ports have errors beyond threshold\n"), "{text}");
        // Clearing the HCA's counters leaves the switch's evidence.
        // gpu-002 mlx5_3 is LID 111 (100 + 8 HCAs + 3).
        shell.run("sudo perfquery -R 111 1");
        assert!(!shell.run("sudo ibqueryerrors").stdout().contains("gpu-002"));
        assert!(shell.run("sudo ibqueryerrors --switch").stdout().contains(" port 2: [SymbolErrorCounter == "));
        // Suppressing what it found leaves a clean sweep; -k clears them.
        assert_eq!(shell.run("sudo ibqueryerrors -s SymbolErrorCounter,LinkErrorRecoveryCounter").status, 0);
        shell.run("sudo ibqueryerrors -k");
        assert_eq!(shell.run("sudo ibqueryerrors").status, 0);
        assert_eq!(shell.run("ibqueryerrors").status, 255);
    }

    #[test]
    fn a_threshold_file_raises_the_bar() {
        let mut cluster = cluster();
        Fault::HcaSymbolErrors { node: "gpu-002".into(), hca: "mlx5_3".into(), count: 7 }.apply(&mut cluster).unwrap();
        let mut shell = shell(cluster);
        assert_eq!(shell.run("sudo ibqueryerrors").status, 1);
        shell.run("printf '# mine\\nSymbolErrorCounter=0x10\\nLinkErrorRecoveryCounter=5\\nBogus=1\\n' > ~/thresholds");
        let quiet = shell.run("sudo ibqueryerrors --threshold-file /home/user/thresholds");
        assert_eq!(quiet.status, 0, "{}", quiet.stdout());
        assert!(quiet.stdout().contains("\n## Thresholds: [SymbolErrorCounter = 16][LinkErrorRecoveryCounter = 5]\n"), "{}", quiet.stdout());
        // No such file: glibc prints the missing string as (null).
        assert!(shell.run("sudo ibqueryerrors --threshold-file /nowhere").stdout().contains("\n## (null)\n"));
        assert!(shell.run("cat /etc/infiniband-diags/error_thresholds").stdout().contains("\n#SymbolErrorCounter=10\n"));
    }
}
