//! `ibstatus [devname[:port]]...`: the infiniband-diags shell script that
//! prints each port's sysfs files (FACTS.md §4, ibstatus_a100_azure_hdr_8x200.txt).

use crate::commands::fabric::ib_common::{default_gid, sysfs_order};
use crate::commands::files::port_file;
use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::fabric::Hca;

pub struct Ibstatus;

static SIGNATURE: Signature = Signature {
    name: "ibstatus",
    summary: "show each InfiniBand port's GID, LIDs, state, physical state, rate and link layer",
    usage: "ibstatus [-h] [devname[:portnum]]",
    flags: &[],
    examples: &[
        Example { command: "ibstatus", description: "every port of every device" },
        Example { command: "ibstatus mlx5_0:1", description: "port 1 of mlx5_0" },
    ],
};

const EXIT_FATAL: i32 = 255;

impl Command for Ibstatus {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        if args.first().map(String::as_str) == Some("-h") {
            return Output { status: EXIT_FATAL, ..Output::ok(usage()) };
        }
        let node = invocation.node;
        let mut out = String::new();
        if args.is_empty() {
            for hca in sysfs_order(node) {
                out += &port_status(&hca.name, &hca.port.number.to_string(), Some(hca));
            }
            return Output::ok(out);
        }
        for arg in args {
            // The script splits on the first and last `:` with sed.
            let device = arg.split(':').next().unwrap_or("");
            let port = arg.rsplit(':').next().unwrap_or("");
            let Some(hca) = node.hca(device) else {
                out += &format!("Fatal error:  device '{device}': sys files not found (/sys/class/infiniband/{device}/ports)\n");
                return Output { status: EXIT_FATAL, ..Output::ok(out) };
            };
            if port == device {
                out += &port_status(device, &hca.port.number.to_string(), Some(hca));
            } else {
                let exists = port == hca.port.number.to_string();
                out += &port_status(device, port, exists.then_some(hca));
            }
        }
        Output::ok(out)
    }
}

fn usage() -> String {
    "Usage:  ibstatus  [-h] [devname[:portnum]]\n\t-h:\tthis help screen\n\tExamples:\n\t\tibstatus mthca1\t\t# shows status of all ports of 'mthca1'\n\t\tibstatus mthca0:2\t# shows status port number 2 of 'mthca0'\n\t\tibstatus\t\t# default: shows status of all 'mthca0' ports\n".to_string()
}

/// One port's block, read from the port's sysfs files as the real script
/// reads them; every file reads `unknown` for a port that does not exist.
fn port_status(device: &str, port: &str, hca: Option<&Hca>) -> String {
    let value = |read: &dyn Fn(&Hca) -> String| hca.map_or("unknown".to_string(), read);
    let file = |name: &str| value(&|hca| port_file(hca, name).unwrap_or_default().trim_end().to_string());
    let mut out = format!("Infiniband device '{device}' port {port} status:\n");
    out += &format!("\tdefault gid:\t {}\n", value(&|hca| default_gid(&hca.port).unwrap_or_else(|| "unknown".into())));
    out += &format!("\tbase lid:\t {}\n", file("lid"));
    out += &format!("\tsm lid:\t\t {}\n", file("sm_lid"));
    out += &format!("\tstate:\t\t {}\n", file("state"));
    out += &format!("\tphys state:\t {}\n", file("phys_state"));
    out += &format!("\trate:\t\t {}\n", file("rate"));
    out += &format!("\tlink_layer:\t {}\n", hca.map_or("IB".to_string(), |_| file("link_layer")));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn healthy_ports_are_active_ndr() {
        let out = run_on_first_node("ibstatus mlx5_0").stdout;
        assert!(out.starts_with("Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:a088:c203:"), "{out}");
        assert!(out.contains("\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 400 Gb/sec (4X NDR)\n\tlink_layer:\t InfiniBand\n\n"));
        assert_eq!(run_on_first_node("ibstatus").stdout.matches("status:\n").count(), 8);
    }

    #[test]
    fn missing_device_and_port() {
        let missing = run_on_first_node("ibstatus mlx5_9");
        assert_eq!(missing.status, 255);
        assert_eq!(missing.stdout, "Fatal error:  device 'mlx5_9': sys files not found (/sys/class/infiniband/mlx5_9/ports)\n");
        let port = run_on_first_node("ibstatus mlx5_0:2").stdout;
        assert!(port.contains("\tbase lid:\t unknown\n") && port.contains("\tlink_layer:\t IB\n"));
    }
}
