//! `ibdev2netdev`: which network interface each RDMA port is bound to and
//! whether it is up (capture: ibdev2netdev_dgx_10hca_ib_2down.txt).

use crate::commands::fabric::ib_common::sysfs_order;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::PortState;

pub struct Ibdev2netdev;

static SIGNATURE: Signature = Signature {
    name: "ibdev2netdev",
    summary: "map RDMA devices and ports to their network interfaces, with link state",
    usage: "ibdev2netdev",
    flags: &[Flag { short: Some('h'), long: Some("help"), value: None, help: "show this help" }],
    examples: &[Example { command: "ibdev2netdev", description: "every HCA port, its interface and (Up) or (Down)" }],
};

impl Command for Ibdev2netdev {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        if scan(&SIGNATURE, invocation.args()).iter().any(|arg| matches!(arg, Arg::Flag(..))) {
            return Output::ok("Usage: ibdev2netdev [-v] [-h]\n");
        }
        let mut out = String::new();
        for hca in sysfs_order(invocation.node) {
            // The interface has carrier only when the port is Active.
            let up = if hca.port.state == PortState::Active { "Up" } else { "Down" };
            out += &format!("{} port {} ==> {} ({up})\n", hca.name, hca.port.number, hca.netdev);
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    #[test]
    fn healthy_ports_are_up() {
        let out = run_on_first_node("ibdev2netdev").stdout;
        assert!(out.starts_with("mlx5_0 port 1 ==> ibp24s0 (Up)\nmlx5_1 port 1 ==> ibp64s0 (Up)\n"), "{out}");
        assert_eq!(out.lines().count(), 8);
    }

    #[test]
    fn a_down_port_is_down() {
        let mut cluster = cluster();
        Fault::HcaPortDown { node: "gpu-001".into(), hca: "mlx5_4".into(), state: PortDown::Down }.apply(&mut cluster).unwrap();
        let out = shell(cluster).run("ibdev2netdev").stdout();
        assert!(out.contains("mlx5_4 port 1 ==> ibp154s0 (Down)\n"), "{out}");
    }
}
