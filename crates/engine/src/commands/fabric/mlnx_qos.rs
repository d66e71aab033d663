//! `mlnx_qos -i NETDEV [--pfc LIST]`: a RoCE port's QoS as MLNX_OFED's tool
//! prints it: trust by DSCP (DSCP 26 on priority 3), the receive buffers,
//! which priorities PFC protects, and the traffic classes. `--pfc` (root)
//! sets the PFC priorities, then prints the configuration.

use crate::commands::options::{scan, Arg};
use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::fabric::LinkLayer;

pub struct MlnxQos;

static SIGNATURE: Signature = Signature {
    name: "mlnx_qos",
    summary: "show or set a RoCE port's QoS: trust, PFC priorities, traffic classes",
    usage: "mlnx_qos -i <interface> [options]",
    flags: &[
        Flag { short: Some('i'), long: Some("interface"), value: Some("INTF"), help: "Interface name" },
        Flag { short: Some('f'), long: Some("pfc"), value: Some("LIST"), help: "Set priority flow control for each priority. LIST is comma separated value for each priority starting from 0 to 7. Example: 0,0,0,0,1,1,1,1 enable PFC on TC4-7" },
        Flag { short: None, long: Some("trust"), value: Some("TRUST"), help: "set priority trust state to pcp or dscp" },
        Flag { short: Some('a'), long: None, value: None, help: "Show all interface's TCs" },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "show this help message and exit" },
    ],
    examples: &[
        Example { command: "for dev in $(ibdev2netdev | awk '{print $5}'); do echo $dev; sudo mlnx_qos -i $dev | grep -A2 PFC; done", description: "which priorities PFC protects on every RoCE port" },
        Example { command: "sudo mlnx_qos -i enp24s0np0 --pfc 0,0,0,1,0,0,0,0", description: "PFC on priority 3 (RoCE's) only" },
    ],
};

fn usage() -> String {
    "Usage: mlnx_qos -i <interface> [options]\n".to_string()
}

/// The configuration as mlnx_qos prints it, for PFC on `pfc`'s priorities.
fn render(pfc: u8) -> String {
    let mut out = String::from("DCBX mode: OS controlled\nPriority trust state: dscp\ndscp2prio mapping:\n");
    for prio in 0..8u32 {
        let dscps: String = (0..8u32).rev().map(|d| format!("{:02},", prio * 8 + d)).collect();
        out += &format!("\tprio:{prio} dscp:{dscps}\n");
    }
    out += "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016\nCable len: 7\nPFC configuration:\n";
    out += "\tpriority    0   1   2   3   4   5   6   7\n\tenabled     ";
    out += &(0..8).map(|p| format!("{}   ", (pfc >> p) & 1)).collect::<String>();
    out += "\n\tbuffer      0   0   0   1   0   0   0   0   \n";
    // The default priority-to-TC map: priority 0 on TC 1, 1 on TC 0.
    for tc in 0..8u32 {
        let prio = match tc {
            0 => 1,
            1 => 0,
            other => other,
        };
        out += &format!("tc: {tc} ratelimit: unlimited, tsa: vendor\n\t priority:  {prio}\n");
    }
    out
}

impl Command for MlnxQos {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut interface, mut pfc) = (None, None);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match (flag.short, flag.long) {
                    (Some('i'), _) => interface = value,
                    (Some('f'), _) => pfc = value,
                    (Some('h'), _) => return Output::ok(usage()),
                    _ => {}
                },
                Arg::Positional(_) => {}
                other => {
                    return Output::error(format!("{}mlnx_qos: error: {}\n", usage(), crate::commands::options::complaint("mlnx_qos", &other).trim_end()), 2)
                }
            }
        }
        let Some(interface) = interface else {
            return Output::error(format!("{}mlnx_qos: error: the following arguments are required: -i/--interface\n", usage()), 2);
        };
        let node = invocation.node;
        let Some(hca) = node.hcas.iter().find(|hca| hca.netdev == interface) else {
            return Output::error(format!("Netlink error: interface {interface} not found\n"), 1);
        };
        if hca.port.link_layer != LinkLayer::Ethernet {
            return Output::error(format!("Netlink error: {interface} is not an Ethernet device (DCB not supported)\n"), 1);
        }
        if !is_root(invocation.env) {
            return Output::error("Netlink error: Operation not permitted\n", 1);
        }
        let Some(list) = pfc else { return Output::ok(render(hca.port.pfc_enabled)) };
        let values: Vec<&str> = list.split(',').collect();
        if values.len() != 8 || values.iter().any(|v| !matches!(*v, "0" | "1")) {
            return Output::error("Error: PFC list must be 8 values of 0 or 1, one per priority\n", 1);
        }
        let enabled = values.iter().enumerate().fold(0u8, |bits, (prio, v)| if *v == "1" { bits | (1 << prio) } else { bits });
        let mut out = Output::ok(render(enabled));
        out.changes.push(Change::SetPfc { node: node.hostname.clone(), netdev: interface, enabled });
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::roce_session;

    #[test]
    fn pfc_shows_and_sets_per_priority() {
        let mut shell = roce_session("[[faults]]\nkind = \"hca-pfc-off\"\nnode = \"gpu-001\"\nhca = \"mlx5_2\"\n");
        let netdev = shell.cluster.nodes[0].hcas[2].netdev.clone();
        let healthy = shell.cluster.nodes[0].hcas[1].netdev.clone();
        assert!(shell.run(&format!("sudo mlnx_qos -i {healthy}")).stdout().contains("\tenabled     0   0   0   1   0   0   0   0   \n"));
        assert!(shell.run(&format!("sudo mlnx_qos -i {netdev}")).stdout().contains("\tenabled     0   0   0   0   0   0   0   0   \n"));
        assert_eq!(shell.run(&format!("mlnx_qos -i {netdev} --pfc 0,0,0,1,0,0,0,0")).status, 1);
        assert_eq!(shell.run(&format!("sudo mlnx_qos -i {netdev} --pfc 0,0,0,1,0,0,0,0")).status, 0);
        assert!(shell.cluster.nodes[0].hcas[2].port.lossless());
        assert!(shell.cluster.injected.iter().all(|injected| injected.repaired));
    }
}
