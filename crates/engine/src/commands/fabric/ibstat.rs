//! `ibstat`: the state of the node's RDMA devices and their ports, as
//! infiniband-diags prints it (FACTS.md §4). `ibstat`, `ibstat CA [PORT]`,
//! `-l` (names), `-s` (no ports), `-p` (port GUIDs).

use crate::commands::fabric::ib_common::{
    base_lid, capability_mask, common, diag_usage, hardware_version, pid, port_guid, sm_lid, strtol, sysfs_order, system_image_guid, Link,
};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::Hca;

pub struct Ibstat;

static SIGNATURE: Signature = Signature {
    name: "ibstat",
    summary: "show the state, rate, LIDs and GUIDs of the node's InfiniBand/RoCE devices and ports",
    usage: "ibstat [options] <ca_name> [portnum]",
    flags: &[
        Flag { short: Some('l'), long: Some("list_of_cas"), value: None, help: "list all IB devices" },
        Flag { short: Some('s'), long: Some("short"), value: None, help: "short output" },
        Flag { short: Some('p'), long: Some("port_list"), value: None, help: "show port list" },
        common::CONFIG,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[
        Example { command: "ibstat", description: "every HCA and port: state, physical state, rate, LIDs, link layer" },
        Example { command: "ibstat -l", description: "the names of the RDMA devices" },
        Example { command: "ibstat mlx5_0 1", description: "port 1 of mlx5_0 only" },
    ],
};

const USAGE_ARGUMENTS: &str = "<ca_name> [portnum]";
const USAGE_EXAMPLES: &[&str] = &["-l       # list all IB devices", "mthca0 2 # stat port 2 of 'mthca0'"];
/// The process exits with -1 after ibpanic.
const EXIT_PANIC: i32 = 255;
const EXIT_USAGE: i32 = 2;

fn usage() -> String {
    diag_usage(&SIGNATURE, USAGE_ARGUMENTS, USAGE_EXAMPLES)
}

impl Command for Ibstat {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut list_only, mut short, mut port_list) = (false, false, false);
        let mut positionals = Vec::new();
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => match flag.short {
                    Some('l') => list_only = true,
                    Some('s') => short = true,
                    Some('p') => port_list = true,
                    Some('h') => return Output::error(usage(), EXIT_USAGE),
                    _ => {}
                },
                Arg::Positional(text) => positionals.push(text),
                other => return Output::error(crate::commands::options::complaint("ibstat", &other) + &usage(), EXIT_USAGE),
            }
        }
        let node = invocation.node;
        let hcas: Vec<&Hca> = match positionals.first() {
            None => sysfs_order(node),
            Some(name) => match node.hca(name) {
                Some(hca) => vec![hca],
                None => return panic(invocation, name),
            },
        };
        let port = positionals.get(1).map(|text| strtol(text));
        let mut out = String::new();
        if port_list {
            for hca in &hcas {
                let guid = port_guid(&hca.port);
                if guid != 0 {
                    out += &format!("0x{guid:016x}\n");
                }
            }
            return Output::ok(out);
        }
        for hca in hcas {
            if list_only {
                out += &format!("{}\n", hca.name);
                continue;
            }
            match port {
                Some(number) if !short => {
                    if number != i64::from(hca.port.number) {
                        let warning = format!("ibwarn: [{}] ca_stat: CA: '{}' has no port number {number} - max (1)\n", pid(invocation), hca.name);
                        let mut output = panic(invocation, &hca.name);
                        output.stdout = out;
                        output.stderr = warning + &output.stderr;
                        return output;
                    }
                    out += &format!("CA: '{}'\n", hca.name);
                    out += &port_block(hca, "", "");
                }
                _ => {
                    out += &ca_block(hca);
                    if !short {
                        out += &port_block(hca, "\t", "\t\t");
                    }
                }
            }
        }
        Output { duration_ms: 10, ..Output::ok(out) }
    }
}

/// What ibstat prints when it cannot read a device (capture:
/// ibstat_a100_azure_hdr_ibpanic_missing_mlx5_8.txt). The `No such file or
/// directory` is the errno left by the failed sysfs read.
fn panic(invocation: &Invocation, name: &str) -> Output {
    Output::error(format!("ibpanic: [{}] main: stat of IB device '{name}' failed: No such file or directory\n", pid(invocation)), EXIT_PANIC)
}

fn ca_block(hca: &Hca) -> String {
    format!(
        "CA '{}'\n\tCA type: {}\n\tNumber of ports: 1\n\tFirmware version: {}\n\tHardware version: {}\n\tNode GUID: 0x{:016x}\n\tSystem image GUID: 0x{:016x}\n",
        hca.name,
        hca.ca_type,
        hca.firmware,
        hardware_version(hca),
        hca.node_guid,
        system_image_guid(hca)
    )
}

/// The port's lines; inside a CA block the header is indented once and the
/// fields twice, alone (`ibstat CA PORT`) nothing is indented.
fn port_block(hca: &Hca, header_indent: &str, indent: &str) -> String {
    let port = &hca.port;
    let mut out = format!("{header_indent}Port {}:\n", port.number);
    let mut field = |label: &str, value: String| out += &format!("{indent}{label}: {value}\n");
    field("State", port.state.label().to_string());
    field("Physical state", port.phys_state.label().to_string());
    field("Rate", Link::of(hca).ibstat_rate());
    field("Base lid", base_lid(port).to_string());
    field("LMC", port.lmc.to_string());
    field("SM lid", sm_lid(port).to_string());
    field("Capability mask", format!("0x{:08x}", capability_mask(port)));
    field("Port GUID", format!("0x{:016x}", port_guid(port)));
    field("Link layer", port.link_layer.label().to_string());
    out
}

#[cfg(test)]
mod tests {
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell, Shell};

    fn faulted(fault: Fault) -> Shell {
        let mut cluster = cluster();
        fault.apply(&mut cluster).unwrap();
        shell(cluster)
    }

    #[test]
    fn healthy_node_lists_eight_active_ndr_ports() {
        let output = run_on_first_node("ibstat");
        assert_eq!(output.status, 0);
        assert_eq!(output.stdout.matches("\t\tState: Active\n").count(), 8);
        assert_eq!(output.stdout.matches("\t\tRate: 400\n").count(), 8);
        assert!(output.stdout.starts_with("CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n"));
    }

    #[test]
    fn list_and_short_and_single_port() {
        let list = run_on_first_node("ibstat -l");
        assert_eq!(list.stdout, "mlx5_0\nmlx5_1\nmlx5_2\nmlx5_3\nmlx5_4\nmlx5_5\nmlx5_6\nmlx5_7\n");
        let short = run_on_first_node("ibstat -s mlx5_3");
        assert!(short.stdout.starts_with("CA 'mlx5_3'\n") && !short.stdout.contains("Port 1"));
        let port = run_on_first_node("ibstat mlx5_0 1");
        assert!(port.stdout.starts_with("CA: 'mlx5_0'\nPort 1:\nState: Active\nPhysical state: LinkUp\nRate: 400\n"));
    }

    #[test]
    fn missing_device_and_port_panic_with_255() {
        let missing = run_on_first_node("ibstat mlx5_9");
        assert_eq!(missing.status, 255);
        assert!(missing.stderr.starts_with("ibpanic: ["));
        assert!(missing.stderr.ends_with("] main: stat of IB device 'mlx5_9' failed: No such file or directory\n"));
        let port = run_on_first_node("ibstat mlx5_0 2");
        assert_eq!(port.status, 255);
        assert!(port.stderr.contains("ca_stat: CA: 'mlx5_0' has no port number 2 - max (1)\n"));
    }

    #[test]
    fn bad_flags_print_usage_and_exit_2() {
        let output = run_on_first_node("ibstat -q");
        assert_eq!(output.status, 2);
        assert!(output.stderr.starts_with("ibstat: invalid option -- 'q'\n\nUsage: ibstat [options] <ca_name> [portnum]\n"));
    }

    #[test]
    fn port_down_shows_the_placeholder_rate() {
        let mut session = faulted(Fault::HcaPortDown { node: "gpu-001".into(), hca: "mlx5_3".into(), state: PortDown::Disabled });
        let out = session.run("ibstat mlx5_3 1").stdout();
        assert!(out.contains("State: Down\nPhysical state: Disabled\nRate: 40\nBase lid: 65535\n"), "{out}");
        let mut session = faulted(Fault::HcaPortDown { node: "gpu-001".into(), hca: "mlx5_3".into(), state: PortDown::Polling });
        assert!(session.run("ibstat").stdout().contains("\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 40\n"));
    }

    #[test]
    fn degraded_link_shows_the_lower_rate() {
        let mut session = faulted(Fault::HcaLinkDegraded { node: "gpu-001".into(), hca: "mlx5_2".into(), rate: Some(200), width: None });
        assert!(session.run("ibstat mlx5_2").stdout().contains("\t\tRate: 200\n"));
    }
}
