//! `netplan apply|generate|get`: the node's network configuration
//! (`model::network::NETPLAN_FILE`), which every boot applies. `apply`
//! sets each interface to the MTU the file gives it now (root only, as it
//! rewrites networkd's configuration); `get` prints the file's settings.
//! What the file sets is what survives a reboot; `ip link set` does not.

use crate::commands::{is_root, Command, Example, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::network::configured_mtus;

pub struct Netplan;

static SIGNATURE: Signature = Signature {
    name: "netplan",
    summary: "apply the node's network configuration",
    usage: "netplan [--debug] COMMAND\n\nAvailable commands: help, apply, generate, get",
    flags: &[],
    examples: &[
        Example { command: "cat /etc/netplan/01-netcfg.yaml", description: "the configuration every boot applies" },
        Example { command: "sudo netplan apply", description: "apply the configuration now" },
    ],
};

const USAGE: &str = "usage: /usr/sbin/netplan  [-h] [--debug]  ...\n\nNetwork configuration in YAML\n\noptions:\n  -h, --help  show this help message and exit\n  --debug     Enable debug messages\n\nAvailable commands:\n  \n    help      Show this help message\n    apply     Apply current netplan config to running system\n    generate  Generate backend specific configuration files from /etc/netplan/*.yaml\n    get       Get a setting by specifying a nested key like \"ethernets.eth0.addresses\", or \"all\"\n";

impl Command for Netplan {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let words: Vec<&str> = invocation.args().iter().map(String::as_str).filter(|w| *w != "--debug").collect();
        let node = invocation.node;
        match words.first().copied() {
            None | Some("help" | "-h" | "--help") => Output::ok(USAGE),
            Some("generate") if is_root(invocation.env) => Output::default(),
            Some("apply") if is_root(invocation.env) => {
                let current = crate::commands::host::ip::interfaces(node);
                let changes = configured_mtus(invocation.cluster, node)
                    .into_iter()
                    .filter(|(name, mtu)| current.iter().any(|iface| iface.name == *name && iface.mtu != *mtu))
                    .map(|(netdev, mtu)| Change::SetNetdevMtu { node: node.hostname.clone(), netdev, mtu })
                    .collect();
                Output { changes, duration_ms: 2_000, ..Output::default() }
            }
            Some("apply" | "generate") => {
                Output::error(format!("PermissionError: [Errno 13] Permission denied: '{}'\n", crate::model::network::NETPLAN_FILE), 1)
            }
            Some("get") => {
                let mtus = configured_mtus(invocation.cluster, node);
                let out: String = mtus.iter().map(|(name, mtu)| format!("{name}:\n  mtu: {mtu}\n")).collect();
                Output::ok(out)
            }
            Some(other) => {
                Output::error(format!("{USAGE}netplan: error: argument : invalid choice: '{other}' (choose from 'help', 'apply', 'generate', 'get')\n"), 2)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::roce_session;

    #[test]
    fn a_runtime_mtu_is_lost_at_boot_and_netplan_keeps_it() {
        let mut shell = roce_session("[[faults]]\nkind = \"hca-mtu\"\nnode = \"gpu-001\"\nhca = \"mlx5_2\"\nmtu = 1024\n");
        let netdev = shell.cluster.nodes[0].hcas[2].netdev.clone();
        let show = format!("ip link show {netdev}");
        // Fixed at runtime only: the fault is repaired until the next boot.
        shell.run(&format!("sudo ip link set dev {netdev} mtu 9000"));
        assert!(shell.cluster.injected.iter().all(|injected| injected.repaired));
        shell.run("sudo reboot");
        shell.run("sleep 600");
        let after = shell.run(&show).stdout();
        assert!(after.contains(" mtu 1500 "), "the installed netplan gives it 1500: {after}");
        assert!(!shell.cluster.injected.iter().all(|injected| injected.repaired));
        // Fixed in netplan and applied: it stays fixed through a boot.
        let plan = crate::model::network::NETPLAN_FILE;
        assert_eq!(shell.run(&format!("sed -i 's/mtu: 1500/mtu: 9000/' {plan}")).status, 4, "only root may edit it");
        assert_eq!(shell.run(&format!("sudo sed -i 's/mtu: 1500/mtu: 9000/' {plan}")).status, 0);
        assert_eq!(shell.run("netplan apply").status, 1);
        assert_eq!(shell.run("sudo netplan apply").status, 0);
        assert!(shell.run(&show).stdout().contains(" mtu 9000 "));
        assert!(shell.cluster.injected.iter().all(|injected| injected.repaired));
        shell.run("sudo reboot");
        shell.run("sleep 600");
        assert!(shell.run(&show).stdout().contains(" mtu 9000 "));
        assert!(shell.cluster.injected.iter().all(|injected| injected.repaired));
    }
}
