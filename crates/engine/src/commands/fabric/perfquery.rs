//! `perfquery [-x] [-C CA] [-P PORT] [LID [PORT]]`: an IB port's
//! PortCounters (or PortCountersExtended with `-x`) as infiniband-diags
//! prints them: each label padded with dots to column 33
//! (captures: perfquery_x_edr_switch_*.txt; FACTS.md §4).
//!
//! Without a LID it reads the local port (mlx5_0 port 1, or `-C`/`-P`);
//! with one it finds the port of that LID anywhere in the cluster, or the
//! switch of that LID and the ports named after it (`1`, `1,4,8`, `1-10`;
//! port 0 when none is). Counters a
//! fault drives grow with simulated time (ib_common::counters_now).

use crate::commands::fabric::ib_common::{base_lid, common, counters_now, diag_usage, pid, strtol};
use crate::commands::options::{scan, Arg};
use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::fabric::{Hca, LinkLayer, PortCounters};
use crate::model::switches::Fabric;

pub struct Perfquery;

static SIGNATURE: Signature = Signature {
    name: "perfquery",
    summary: "read an InfiniBand port's performance and error counters",
    usage: "perfquery [options]  [<lid|guid> [[port(s)] [reset_mask]]]",
    flags: &[
        Flag { short: Some('x'), long: Some("extended"), value: None, help: "show extended port counters" },
        Flag { short: Some('X'), long: Some("xmtsl"), value: None, help: "show Xmt SL port counters" },
        Flag { short: Some('S'), long: Some("rcvsl"), value: None, help: "show Rcv SL port counters" },
        Flag { short: Some('D'), long: Some("xmtdisc"), value: None, help: "show Xmt Discard Details" },
        Flag { short: Some('E'), long: Some("rcverr"), value: None, help: "show Rcv Error Details" },
        Flag { short: Some('T'), long: Some("extended_speeds"), value: None, help: "show port extended speeds counters" },
        Flag { short: None, long: Some("oprcvcounters"), value: None, help: "show Rcv Counters per Op code" },
        Flag { short: None, long: Some("flowctlcounters"), value: None, help: "show flow control counters" },
        Flag { short: None, long: Some("vloppackets"), value: None, help: "show packets received per Op code per VL" },
        Flag { short: None, long: Some("vlopdata"), value: None, help: "show data received per Op code per VL" },
        Flag { short: None, long: Some("vlxmitflowctlerrors"), value: None, help: "show flow control update errors per VL" },
        Flag { short: None, long: Some("vlxmitcounters"), value: None, help: "show ticks waiting to transmit counters per VL" },
        Flag { short: None, long: Some("swportvlcong"), value: None, help: "show sw port VL congestion" },
        Flag { short: None, long: Some("rcvcc"), value: None, help: "show Rcv congestion control counters" },
        Flag { short: None, long: Some("slrcvfecn"), value: None, help: "show SL Rcv FECN counters" },
        Flag { short: None, long: Some("slrcvbecn"), value: None, help: "show SL Rcv BECN counters" },
        Flag { short: None, long: Some("xmitcc"), value: None, help: "show Xmit congestion control counters" },
        Flag { short: None, long: Some("vlxmittimecc"), value: None, help: "show VL Xmit Time congestion control counters" },
        Flag { short: Some('c'), long: Some("smplctl"), value: None, help: "show samples control" },
        Flag { short: Some('a'), long: Some("all_ports"), value: None, help: "show aggregated counters" },
        Flag { short: Some('l'), long: Some("loop_ports"), value: None, help: "iterate through each port" },
        Flag { short: Some('r'), long: Some("reset_after_read"), value: None, help: "reset counters after read" },
        Flag { short: Some('R'), long: Some("Reset_only"), value: None, help: "only reset counters" },
        common::CONFIG,
        common::CA,
        common::PORT,
        common::LID,
        common::GUID,
        common::TIMEOUT,
        common::SM_PORT,
        common::M_KEY,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    // One invocation reads one port, so a fault on any HCA of an 8-HCA node
    // is seen only by the example that names that HCA.
    examples: &[
        Example { command: "sudo perfquery", description: "counters of mlx5_0 port 1" },
        Example { command: "sudo perfquery -x", description: "extended (64-bit) counters of mlx5_0 port 1" },
        Example { command: "sudo perfquery -x -C mlx5_1", description: "extended counters of mlx5_1" },
        Example { command: "sudo perfquery -x -C mlx5_2", description: "extended counters of mlx5_2" },
        Example { command: "sudo perfquery -x -C mlx5_3", description: "extended counters of mlx5_3" },
        Example { command: "sudo perfquery -x -C mlx5_4", description: "extended counters of mlx5_4" },
        Example { command: "sudo perfquery -x -C mlx5_5", description: "extended counters of mlx5_5" },
        Example { command: "sudo perfquery -x -C mlx5_6", description: "extended counters of mlx5_6" },
        Example { command: "sudo perfquery -x -C mlx5_7", description: "extended counters of mlx5_7" },
    ],
};

/// ibexit ends the process with -1.
const EXIT_FAILURE: i32 = 255;
const EXIT_USAGE: i32 = 2;
/// PerfMgt ClassPortInfo of a ConnectX HCA port: no AllPortSelect, extended
/// width supported; CapMask2 bit 1: the extended error counters exist.
const HCA_CAP_MASK: u16 = 0x5A00;
/// The port number that selects every port.
const ALL_PORTS: u8 = 0xff;
/// The same for both: the extended error counters exist.
const PMA_CAP_MASK2: u32 = 0x0000002;
/// A Mellanox switch's PMA: AllPortSelect (bit 8) and PortXmitWait
/// (captures: perfquery_x_edr_switch_*.txt).
const SWITCH_CAP_MASK: u16 = 0x5300;

fn usage() -> String {
    diag_usage(
        &SIGNATURE,
        " [<lid|guid> [[port(s)] [reset_mask]]]",
        &[
            "\t\t# read local port's performance counters",
            "32 1\t\t# read performance counters from lid 32, port 1",
            "-x 32 1\t# read extended performance counters from lid 32, port 1",
            "-a 32\t\t# read performance counters from lid 32, all ports",
            "-r 32 1\t# read performance counters and reset",
            "-x -r 32 1\t# read extended performance counters and reset",
            "-R 0x20 1\t# reset performance counters of port 1 only",
            "-x -R 0x20 1\t# reset extended performance counters of port 1 only",
            "-R -a 32\t# reset performance counters of all ports",
            "-R 32 2 0x0fff\t# reset only error counters of port 2",
            "-R 32 2 0xf000\t# reset only non-error counters of port 2",
            "-a 32 1-10\t# read performance counters from lid 32, port 1-10, aggregate output",
            "-l 32 1-10\t# read performance counters from lid 32, port 1-10, output each port",
            "-a 32 1,4,8\t# read performance counters from lid 32, port 1, 4, and 8, aggregate output",
            "-l 32 1,4,8\t# read performance counters from lid 32, port 1, 4, and 8, output each port",
        ],
    )
}

impl Command for Perfquery {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut extended, mut ca, mut ca_port, mut all_ports, mut loop_ports) = (false, None::<String>, 0i64, false, false);
        // Reset after reading (`-r`), or reset without reading (`-R`).
        let (mut reset, mut read) = (false, true);
        let mut positionals = Vec::new();
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('x') => extended = true,
                    Some('a') => all_ports = true,
                    // One port per HCA: iterating them is the plain query.
                    Some('l') => loop_ports = true,
                    Some('r') => reset = true,
                    Some('R') => (reset, read) = (true, false),
                    Some('C') => ca = value,
                    Some('P') => ca_port = strtol(value.as_deref().unwrap_or("")),
                    Some('h') => return Output::error(usage(), EXIT_USAGE),
                    Some('X' | 'S' | 'D' | 'E' | 'T' | 'c') | None => {
                        return Output::error(format!("perfquery: --{} is not emulated; -x, -a, -l, -r and -R are\n", flag.long.unwrap_or_default()), 1)
                    }
                    _ => {}
                },
                Arg::Positional(text) => positionals.push(text),
                other => return Output::error(crate::commands::options::complaint("perfquery", &other) + &usage(), EXIT_USAGE),
            }
        }
        let node = invocation.node;
        let failed = |message: String| Output { stdout: format!("perfquery: iberror: failed: {message}\n"), status: EXIT_FAILURE, ..Output::default() };

        // The source port: MADs go out through a local IB port.
        let source = match &ca {
            Some(name) => node.hca(name),
            None => node.hcas.iter().find(|hca| hca.port.link_layer == LinkLayer::InfiniBand),
        };
        let source = match source {
            // /dev/infiniband/umad* is root's alone (mode 0600): a plain user's open fails as a missing port's does.
            Some(hca) if hca.port.link_layer == LinkLayer::InfiniBand && (ca_port == 0 || ca_port == 1) && is_root(invocation.env) => hca,
            // No umad device for RoCE ports or unknown CAs.
            _ => {
                let name = ca.clone().unwrap_or_else(|| "(null)".to_string());
                let mut output = failed(format!("Failed to open '{name}' port '{ca_port}'"));
                output.stderr = format!("ibwarn: [{}] mad_rpc_open_port: can't open UMAD port ({name}:{ca_port})\n", pid(invocation));
                return output;
            }
        };

        let (target, lid): (&Hca, u16) = match positionals.first() {
            None => (source, base_lid(&source.port)),
            Some(text) => {
                let lid = strtol(text);
                let cluster = invocation.cluster;
                let found = cluster
                    .nodes
                    .iter()
                    .flat_map(|n| n.hcas.iter())
                    .find(|hca| hca.port.link_layer == LinkLayer::InfiniBand && i64::from(hca.port.lid) == lid && hca.port.is_up());
                let fabric = Fabric::of(cluster);
                let switch = fabric.as_ref().and_then(|fabric| fabric.switch_with_lid(lid));
                match (found, switch, fabric) {
                    (Some(hca), _, _) if source.port.is_up() => (hca, hca.port.lid),
                    (None, Some(switch), Some(fabric)) if source.port.is_up() => {
                        let query = SwitchQuery { extended, all_ports, loop_ports, reset, read };
                        return query.run(invocation, &fabric, switch, positionals.get(1).map(String::as_str));
                    }
                    _ => {
                        let mut output = failed("classportinfo query".to_string());
                        output.stderr = format!("ibwarn: [{}] mad_rpc: _do_madrpc failed; dport (Lid {lid})\n", pid(invocation));
                        output.duration_ms = 1_000;
                        return output;
                    }
                }
            }
        };
        if let Some(port) = positionals.get(1) {
            if strtol(port) != i64::from(target.port.number) {
                let mut output = failed(if extended { "perfextquery" } else { "perfquery" }.to_string());
                output.stderr = format!("ibwarn: [{}] mad_rpc: _do_madrpc failed; dport (Lid {lid})\n", pid(invocation));
                return output;
            }
        }
        let counters = counters_now(invocation.cluster, &target.port);
        // The HCA has no AllPortSelect (CapMask bit 8): perfquery adds its
        // ports up itself and reports them as port 255.
        let port = if all_ports { ALL_PORTS } else { target.port.number };
        let text = match (read, extended) {
            (false, _) => String::new(),
            (true, true) => extended_counters(lid, port, HCA_CAP_MASK, &counters),
            (true, false) => counters_32(lid, port, HCA_CAP_MASK, &counters),
        };
        let warning = if all_ports && read {
            format!("ibwarn: [{}] main: Emulating AllPortSelect by iterating through all ports\n", pid(invocation))
        } else {
            String::new()
        };
        let mut output = Output { duration_ms: 15, stderr: warning, ..Output::ok(text) };
        if reset {
            if let Some(owner) = invocation.cluster.node_with_port(target.port.guid) {
                output.changes.push(Change::ResetPortCounters { node: owner.hostname.clone(), hca: target.name.clone() });
            }
        }
        output
    }
}

/// A query to a switch's PMA: its ports are the fabric's
/// (`Fabric::port_counters`), from port 0 (the enhanced management port)
/// to the last; it has AllPortSelect, so port 255 is the switch's own sum.
struct SwitchQuery {
    extended: bool,
    all_ports: bool,
    loop_ports: bool,
    reset: bool,
    read: bool,
}

impl SwitchQuery {
    fn run(&self, invocation: &Invocation, fabric: &Fabric, index: usize, ports: Option<&str>) -> Output {
        let cluster = invocation.cluster;
        let switch = &fabric.switches[index];
        let lid = switch.lid;
        let failed = |what: &str| Output {
            stdout: format!("perfquery: iberror: failed: {what}\n"),
            stderr: format!("ibwarn: [{}] mad_rpc: _do_madrpc failed; dport (Lid {lid})\n", pid(invocation)),
            status: EXIT_FAILURE,
            duration_ms: 1_000,
            ..Output::default()
        };
        // A list (`1,4,8`), a range (`1-10`) or one port; 0 when none is given.
        let mut listed: Vec<i64> = match ports {
            Some(text) if text.contains(',') => text.split(',').map(strtol).collect(),
            Some(text) if text.contains('-') => {
                let (low, high) = text.split_once('-').map(|(a, b)| (strtol(a), strtol(b))).unwrap_or((0, 0));
                if low >= high {
                    // Found while reading the arguments: no MAD went out.
                    return Output { stderr: String::new(), duration_ms: 0, ..failed("max port must be greater than min port in range") };
                }
                (low..=high.min(low + 255)).collect()
            }
            Some(text) => vec![strtol(text)],
            None => vec![if self.all_ports { i64::from(ALL_PORTS) } else { 0 }],
        };
        // With -l, port 255 means each port in turn.
        if self.loop_ports && listed == [i64::from(ALL_PORTS)] {
            listed = (0..=switch.ports as i64).collect();
        }
        let count = |port: i64| -> Option<PortCounters> {
            match port {
                255 => Some((1..=switch.ports).map(|p| fabric.port_counters(cluster, index, p)).fold(PortCounters::default(), PortCounters::saturating_add)),
                0.. if port as usize <= switch.ports => Some(fabric.port_counters(cluster, index, port as usize)),
                _ => None,
            }
        };
        let mut text = String::new();
        let mut sum = PortCounters::default();
        let aggregate = self.all_ports && !self.loop_ports && listed.len() > 1;
        for &port in &listed {
            let Some(counters) = count(port) else {
                return failed(if self.extended { "perfextquery" } else { "perfquery" });
            };
            if aggregate {
                sum = sum.saturating_add(counters);
            } else if self.read {
                text += &self.dump(lid, port as u8, &counters);
            }
        }
        if aggregate && self.read {
            text += &self.dump(lid, ALL_PORTS, &sum);
        }
        let mut output = Output { duration_ms: 15 * listed.len() as u64, ..Output::ok(text) };
        if self.reset {
            let every = |port: i64| if port == i64::from(ALL_PORTS) { (1..=switch.ports).collect() } else { vec![port as usize] };
            output.changes = fabric.clear_ports(cluster, index, listed.iter().flat_map(|&p| every(p)));
        }
        output
    }

    fn dump(&self, lid: u16, port: u8, counters: &PortCounters) -> String {
        if self.extended {
            extended_counters(lid, port, SWITCH_CAP_MASK, counters)
        } else {
            counters_32(lid, port, SWITCH_CAP_MASK, counters)
        }
    }
}

/// `Label:....value`, the label and dots filling 33 columns.
fn line(label: &str, value: impl std::fmt::Display) -> String {
    format!("{:.<33}{value}\n", format!("{label}:"))
}

/// PortCounters fields are narrow and stop at their maximum instead of wrapping.
fn capped(value: u64, bits: u32) -> u64 {
    value.min((1u64 << bits) - 1)
}

fn counters_32(lid: u16, port: u8, cap_mask: u16, c: &PortCounters) -> String {
    let mut out = format!("# Port counters: Lid {lid} port {port} (CapMask: 0x{cap_mask:02X})\n");
    out += &line("PortSelect", port);
    out += &line("CounterSelect", "0x0000");
    out += &line("SymbolErrorCounter", capped(c.symbol_errors, 16));
    out += &line("LinkErrorRecoveryCounter", capped(c.link_error_recovery, 8));
    out += &line("LinkDownedCounter", capped(c.link_downed, 8));
    out += &line("PortRcvErrors", capped(c.rcv_errors, 16));
    out += &line("PortRcvRemotePhysicalErrors", capped(c.rcv_remote_physical_errors, 16));
    out += &line("PortRcvSwitchRelayErrors", 0);
    out += &line("PortXmitDiscards", capped(c.xmit_discards, 16));
    out += &line("PortXmitConstraintErrors", 0);
    out += &line("PortRcvConstraintErrors", 0);
    out += &line("CounterSelect2", "0x00");
    out += &line("LocalLinkIntegrityErrors", 0);
    out += &line("ExcessiveBufferOverrunErrors", 0);
    out += &line("QP1Dropped", 0);
    out += &line("VL15Dropped", 0);
    out += &line("PortXmitData", capped(c.xmit_data, 32));
    out += &line("PortRcvData", capped(c.rcv_data, 32));
    out += &line("PortXmitPkts", capped(c.xmit_pkts, 32));
    out += &line("PortRcvPkts", capped(c.rcv_pkts, 32));
    out += &line("PortXmitWait", capped(c.xmit_wait, 32));
    out
}

fn extended_counters(lid: u16, port: u8, cap_mask: u16, c: &PortCounters) -> String {
    let mut out = format!("# Port extended counters: Lid {lid} port {port} (CapMask: 0x{cap_mask:02X} CapMask2: 0x{PMA_CAP_MASK2:07X})\n");
    out += &line("PortSelect", port);
    out += &line("CounterSelect", "0x0000");
    out += &line("PortXmitData", c.xmit_data);
    out += &line("PortRcvData", c.rcv_data);
    out += &line("PortXmitPkts", c.xmit_pkts);
    out += &line("PortRcvPkts", c.rcv_pkts);
    // The model counts packets, not their kind: all unicast.
    out += &line("PortUnicastXmitPkts", c.xmit_pkts);
    out += &line("PortUnicastRcvPkts", c.rcv_pkts);
    out += &line("PortMulticastXmitPkts", 0);
    out += &line("PortMulticastRcvPkts", 0);
    out += &line("CounterSelect2", "0x00000000");
    out += &line("SymbolErrorCounter", c.symbol_errors);
    out += &line("LinkErrorRecoveryCounter", c.link_error_recovery);
    out += &line("LinkDownedCounter", c.link_downed);
    out += &line("PortRcvErrors", c.rcv_errors);
    out += &line("PortRcvRemotePhysicalErrors", c.rcv_remote_physical_errors);
    out += &line("PortRcvSwitchRelayErrors", 0);
    out += &line("PortXmitDiscards", c.xmit_discards);
    out += &line("PortXmitConstraintErrors", 0);
    out += &line("PortRcvConstraintErrors", 0);
    out += &line("LocalLinkIntegrityErrors", 0);
    out += &line("ExcessiveBufferOverrunErrors", 0);
    out += &line("VL15Dropped", 0);
    out += &line("PortXmitWait", c.xmit_wait);
    out += &line("QP1Dropped", 0);
    out
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    fn value(output: &str, label: &str) -> u64 {
        let line = output.lines().find(|line| line.starts_with(&format!("{label}:"))).unwrap();
        line.trim_start_matches(|c: char| c != '.').trim_start_matches('.').parse().unwrap()
    }

    #[test]
    fn a_plain_user_cannot_open_the_umad_port() {
        let out = run_on_first_node("perfquery -C mlx5_0 -P 1");
        assert_eq!(out.status, 255);
        assert!(out.stderr.ends_with("mad_rpc_open_port: can't open UMAD port (mlx5_0:1)\n"), "{}", out.stderr);
        assert_eq!(out.stdout, "perfquery: iberror: failed: Failed to open 'mlx5_0' port '1'\n");
        assert_eq!(run_on_first_node("sudo perfquery -C mlx5_0 -P 1").status, 0);
    }

    #[test]
    fn all_ports_adds_up_the_hcas_one_port_as_port_255() {
        let out = run_on_first_node("sudo perfquery -a 108");
        assert_eq!(out.status, 0, "{}", out.stderr);
        assert!(out.stdout.starts_with("# Port counters: Lid 108 port 255 (CapMask: 0x5A00)\nPortSelect:......................255\n"), "{}", out.stdout);
        assert!(out.stderr.ends_with("] main: Emulating AllPortSelect by iterating through all ports\n"), "{}", out.stderr);
        assert_eq!(run_on_first_node("sudo perfquery -l 108").stdout, run_on_first_node("sudo perfquery 108").stdout);
        let refused = run_on_first_node("sudo perfquery -X 108");
        assert_eq!((refused.status, refused.stderr.as_str()), (1, "perfquery: --xmtsl is not emulated; -x, -a, -l, -r and -R are\n"));
        assert!(run_on_first_node("sudo perfquery -h").stderr.contains("\n  --all_ports, -a         show aggregated counters\n"));
    }

    #[test]
    fn healthy_port_has_clean_counters() {
        let out = run_on_first_node("sudo perfquery -x").stdout;
        assert!(
            out.starts_with("# Port extended counters: Lid 100 port 1 (CapMask: 0x5A00 CapMask2: 0x0000002)\nPortSelect:......................1\n"),
            "{out}"
        );
        assert_eq!(value(&out, "SymbolErrorCounter"), 0);
        assert_eq!(out.lines().count(), 26);
        let short = run_on_first_node("sudo perfquery").stdout;
        assert!(short.starts_with("# Port counters: Lid 100 port 1 (CapMask: 0x5A00)\n"));
        assert_eq!(short.lines().count(), 22);
    }

    #[test]
    fn lid_lookup_reaches_other_nodes_and_unknown_lids_fail() {
        // gpu-002's mlx5_0 has LID 108 (100 + 8 HCAs per node).
        let out = run_on_first_node("sudo perfquery -x 108 1");
        assert_eq!(out.status, 0);
        assert!(out.stdout.starts_with("# Port extended counters: Lid 108 port 1 "));
        let missing = run_on_first_node("sudo perfquery 999 1");
        assert_eq!(missing.status, 255);
        assert_eq!(missing.stdout, "perfquery: iberror: failed: classportinfo query\n");
        assert_eq!(run_on_first_node("sudo perfquery -C mlx5_9").status, 255);
        assert_eq!(run_on_first_node("sudo perfquery --bogus").status, 2);
    }

    #[test]
    fn a_switch_lid_reads_its_ports_and_their_sum() {
        let mut cluster = cluster();
        Fault::HcaSymbolErrors { node: "gpu-002".into(), hca: "mlx5_0".into(), count: 2_000 }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        // leaf-rail0 (LID 5 behind the spines): gpu-002's mlx5_0 is on its port 2.
        let leaf = session.run("sudo perfquery -x 5 2").stdout();
        assert!(leaf.starts_with("# Port extended counters: Lid 5 port 2 (CapMask: 0x5300 CapMask2: 0x0000002)\n"), "{leaf}");
        let errors = value(&leaf, "SymbolErrorCounter");
        assert!((600..=2_000).contains(&errors), "{leaf}");
        // No port: port 0, the switch's own; -a: the switch adds its ports up itself.
        assert!(session.run("sudo perfquery 5").stdout().starts_with("# Port counters: Lid 5 port 0 (CapMask: 0x5300)\n"));
        let all = session.run("sudo perfquery -a 5");
        assert_eq!((all.stderr(), value(&all.stdout(), "SymbolErrorCounter")), (String::new(), errors));
        let listed = session.run("sudo perfquery -a 5 1,2").stdout();
        assert!(listed.starts_with("# Port counters: Lid 5 port 255 ") && value(&listed, "SymbolErrorCounter") == errors, "{listed}");
        assert_eq!(session.run("sudo perfquery -l 5 1-3").stdout().matches("# Port counters: Lid 5 port ").count(), 3);
        let backwards = session.run("sudo perfquery 5 3-1");
        assert_eq!((backwards.status, backwards.stdout()), (255, "perfquery: iberror: failed: max port must be greater than min port in range\n".to_string()));
        assert_eq!(session.run("sudo perfquery 5 99").status, 255);
        // Each end clears on its own.
        session.run("sudo perfquery -R 5 2");
        assert_eq!(value(&session.run("sudo perfquery 5 2").stdout(), "SymbolErrorCounter"), 0);
        assert_eq!(value(&session.run("sudo perfquery 108 1").stdout(), "SymbolErrorCounter"), 2_000);
    }

    #[test]
    fn a_reboot_restarts_the_hca_counters_and_the_switch_counts_the_drop() {
        let mut cluster = cluster();
        cluster.inject(Fault::HcaSymbolErrors { node: "gpu-001".into(), hca: "mlx5_0".into(), count: 2_000 }, vec!["replace-cable".into()]).unwrap();
        let mut session = shell(cluster);
        let before = value(&session.run("sudo perfquery 5 1").stdout(), "SymbolErrorCounter");
        session.run("sudo reboot");
        session.run("sleep 600");
        let hca = session.run("sudo perfquery -C mlx5_0").stdout();
        assert!(value(&hca, "SymbolErrorCounter") < 1_000, "{hca}");
        assert_eq!(value(&hca, "LinkDownedCounter"), 0);
        let leaf = session.run("sudo perfquery 5 1").stdout();
        assert!(value(&leaf, "SymbolErrorCounter") >= before, "{leaf}");
        assert_eq!(value(&leaf, "LinkDownedCounter"), 1);
    }

    #[test]
    fn symbol_errors_show_and_rise_with_time() {
        let mut cluster = cluster();
        Fault::HcaSymbolErrors { node: "gpu-001".into(), hca: "mlx5_6".into(), count: 24_000 }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        let first = value(&session.run("sudo perfquery -x -C mlx5_6").stdout(), "SymbolErrorCounter");
        assert_eq!(first, 24_000);
        // 16-bit PortCounters cap at 65535.
        session.run("sleep 10800");
        let later = session.run("sudo perfquery -x -C mlx5_6").stdout();
        assert_eq!(value(&later, "SymbolErrorCounter"), 24_000 + 3 * 1_000);
        assert_eq!(value(&session.run("sudo perfquery -C mlx5_0").stdout(), "SymbolErrorCounter"), 0);
    }
}
