//! `rdma` (iproute2, as Ubuntu 22.04 ships it): `rdma dev`, `rdma link` and
//! `rdma statistic`, one line per device or port, each field as `name value `
//! (so every line ends in a space). IB ports add their subnet prefix and
//! LIDs; RoCE ports have none. The statistics are the port's hw_counters.

use crate::commands::fabric::ib_common::{base_lid, is_infiniband, sm_lid};
use crate::commands::fabric::roce::RoceCounters;
use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::fabric::{Hca, Port};
use crate::model::Node;

pub struct Rdma;

static SIGNATURE: Signature = Signature {
    name: "rdma",
    summary: "show the RDMA devices, their ports' links and their counters (iproute2)",
    usage: "rdma [ OPTIONS ] OBJECT { COMMAND | help }\nwhere  OBJECT := { dev | link | resource | system | statistic | help }",
    flags: &[],
    examples: &[
        Example { command: "rdma link", description: "every RDMA port: state, physical state and its netdev" },
        Example {
            command: "rdma statistic show link mlx5_0/1",
            description: "one port's RDMA counters: retransmissions, out-of-sequence packets, congestion notifications",
        },
    ],
};

const USAGE: &str = "Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }\n       rdma [ -f[orce] ] -b[atch] filename\nwhere  OBJECT := { dev | link | resource | system | statistic | help }\n       OPTIONS := { -V[ersion] | -d[etails] | -j[son] | -p[retty] | -r[aw]}\n";

fn physical_state(port: &Port) -> &'static str {
    ["NOP", "SLEEP", "POLLING", "DISABLED", "ARMED", "LINK_UP", "LINK_ERROR_RECOVER", "PHY_TEST"].get(port.phys_state.code() as usize).copied().unwrap_or("NOP")
}

fn link_line(hca: &Hca) -> String {
    let port = &hca.port;
    let mut line = format!("link {}/{} ", hca.name, port.number);
    if is_infiniband(port) {
        line += &format!("subnet_prefix fe80:0000:0000:0000 lid {} sm_lid {} lmc {} ", base_lid(port), sm_lid(port), port.lmc);
    }
    line + &format!("state {} physical_state {} netdev {} \n", port.state.kernel_name(), physical_state(port), hca.netdev)
}

/// The ports `DEV[/PORT]` names, or the error rdma gives.
fn ports<'a>(node: &'a Node, name: Option<&str>) -> Result<Vec<&'a Hca>, Output> {
    let Some(name) = name else { return Ok(node.hcas.iter().collect()) };
    let (device, port) = match name.split_once('/') {
        Some((device, port)) => (device, Some(port)),
        None => (name, None),
    };
    match node.hca(device) {
        Some(hca) if port.is_none_or(|p| p == hca.port.number.to_string()) => Ok(vec![hca]),
        _ => Err(Output::error("Wrong device name\n", 1)),
    }
}

impl Command for Rdma {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let node = invocation.node;
        let words: Vec<&str> = invocation.args().iter().map(String::as_str).filter(|w| !matches!(*w, "-d" | "-p" | "-r")).collect();
        if let Some(flag) = words.iter().find(|w| w.starts_with('-')) {
            return Output::error(format!("Unknown option '{flag}'.\n{USAGE}"), 1);
        }
        let Some((&object, rest)) = words.split_first() else { return Output::error(USAGE, 0) };
        let is = |full: &str| full.starts_with(object);
        let (verb, operands) = match rest.split_first() {
            Some((&verb, operands)) => (verb, operands),
            None => ("show", rest),
        };
        if verb == "help" || is("help") {
            return Output::error(USAGE, 0);
        }
        if !matches!(verb, "show" | "list") {
            let kind = if is("dev") {
                "dev"
            } else if is("link") {
                "link"
            } else {
                "statistic"
            };
            return Output::error(format!("Unknown {kind} command '{verb}'.\n"), 1);
        }
        let mut out = String::new();
        if is("dev") {
            let wanted = operands.first().copied();
            if let Some(name) = wanted.filter(|name| node.hca(name).is_none()) {
                return Output::error(format!("Wrong device name - {name}\n"), 1);
            }
            for (index, hca) in node.hcas.iter().enumerate().filter(|(_, hca)| wanted.is_none_or(|name| name == hca.name)) {
                let guid = Hca::guid_colon_form(hca.node_guid);
                out += &format!("{index}: {}: node_type ca fw {} node_guid {guid} sys_image_guid {guid} \n", hca.name, hca.firmware);
            }
        } else if is("link") {
            match ports(node, operands.first().copied()) {
                Ok(hcas) => out = hcas.into_iter().map(link_line).collect(),
                Err(error) => return error,
            }
        } else if is("statistic") {
            let name = match operands {
                [] => None,
                ["link", name] => Some(*name),
                _ => return Output::error(USAGE, 1),
            };
            match ports(node, name) {
                Ok(hcas) => {
                    for hca in hcas {
                        out += &format!("link {}/{} ", hca.name, hca.port.number);
                        let counters = RoceCounters::of(invocation.cluster, node, hca);
                        out += &counters.hw_counters_of(hca).into_iter().map(|(name, value)| format!("{name} {value} ")).collect::<String>();
                        out.push('\n');
                    }
                }
                Err(error) => return error,
            }
        } else {
            return Output::error(format!("Unknown object '{object}'.\n"), 1);
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{roce_session, run_on_first_node};

    #[test]
    fn links_devices_and_counters() {
        let ib = run_on_first_node("rdma link show mlx5_0/1").stdout;
        assert!(ib.starts_with("link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid "), "{ib}");
        assert!(ib.ends_with(" state ACTIVE physical_state LINK_UP netdev ibp24s0 \n"), "{ib}");
        let mut shell = roce_session("");
        let roce = shell.run("rdma link").stdout();
        assert_eq!(roce.lines().count(), 8);
        assert!(roce.starts_with("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev "), "{roce}");
        assert!(shell.run("rdma statistic show link mlx5_3/1").stdout().contains(" np_cnp_sent 0 "));
        assert_eq!(shell.run("rdma link show mlx5_9/1").stderr(), "Wrong device name\n");
        assert!(shell.run("rdma dev").stdout().starts_with("0: mlx5_0: node_type ca fw "));
    }
}
