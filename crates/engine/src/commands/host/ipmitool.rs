//! `ipmitool` (1.8.18): a node's BMC, out of band. `chassis power
//! status|cycle|reset|on` and `chassis status`, against the local BMC
//! (`/dev/ipmi0`, root only) or a node's BMC over the network (`-I lanplus
//! -H NODE-bmc -U USER -P PASSWORD`, the names and addresses `/etc/hosts`
//! lists). A power cycle or reset is a cold reboot
//! ([`Change::Reboot`] with `power_cycle`): it revives a node that hangs,
//! which no command on the node can reach.

use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::network;
use crate::model::Node;

pub struct Ipmitool;

static SIGNATURE: Signature = Signature {
    name: "ipmitool",
    summary: "control a node's BMC: chassis power status, cycle and reset",
    usage: "ipmitool [-I lanplus -H BMC -U USER -P PASSWORD] chassis power status|cycle|reset|on | chassis status",
    flags: &[
        Flag { short: Some('I'), long: None, value: Some("INTERFACE"), help: "interface: open (the local BMC), lan or lanplus" },
        Flag { short: Some('H'), long: None, value: Some("ADDRESS"), help: "the remote BMC's name or address, e.g. gpu-002-bmc" },
        Flag { short: Some('U'), long: None, value: Some("USER"), help: "remote session user name" },
        Flag { short: Some('P'), long: None, value: Some("PASSWORD"), help: "remote session password" },
        Flag { short: Some('E'), long: None, value: None, help: "read the password from IPMI_PASSWORD" },
    ],
    examples: &[
        Example { command: "ipmitool -I lanplus -H gpu-002-bmc -U admin -P admin chassis power status", description: "whether a node is powered" },
        Example { command: "ipmitool -I lanplus -H gpu-002-bmc -U admin -P admin chassis power cycle", description: "power-cycle a node that hangs" },
    ],
};

/// What ipmitool answers a `chassis power` it does not know.
const POWER_USAGE: &str = "chassis power Commands: status, on, off, cycle, reset, diag, soft\n";

const NO_SESSION: &str = "Error: Unable to establish IPMI v2 / RMCP+ session\n";

/// `chassis status`, a powered node's.
const CHASSIS_STATUS: &str = "System Power         : on\nPower Overload       : false\nPower Interlock      : inactive\nMain Power Fault     : false\nPower Control Fault  : false\nPower Restore Policy : always-off\nLast Power Event     : \nChassis Intrusion    : inactive\nFront-Panel Lockout  : inactive\nDrive Fault          : false\nCooling/Fan Fault    : false\n";

impl Command for Ipmitool {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let (mut bmc, mut password) = (None::<&str>, None::<&str>);
        let mut at = 0;
        while let Some(arg) = args.get(at).filter(|arg| arg.starts_with('-')) {
            let value = args.get(at + 1).map(String::as_str);
            match arg.as_str() {
                "-H" => bmc = value,
                "-P" => password = value,
                "-E" => password = invocation.env.get("IPMI_PASSWORD").map(String::as_str),
                "-I" | "-U" => {}
                other => return Output::error(format!("ipmitool: invalid option -- '{}'\n", other.trim_start_matches('-')), 1),
            }
            if matches!(arg.as_str(), "-H" | "-P" | "-I" | "-U") {
                if value.is_none() {
                    return Output::error(format!("ipmitool: option requires an argument -- '{}'\n", arg.trim_start_matches('-')), 1);
                }
                at += 1;
            }
            at += 1;
        }
        let words: Vec<&str> = args[at..].iter().map(String::as_str).collect();
        if words.is_empty() {
            return Output::error("No command provided!\nCommands:\n\tchassis           Get chassis status and set power state\n\tpower             Shortcut to chassis power commands\n", 1);
        }
        let node: &Node = match bmc {
            None if !is_root(invocation.env) => {
                return Output::error("Could not open device at /dev/ipmi0 or /dev/ipmi/0 or /dev/ipmidev/0: Permission denied\n", 1);
            }
            None => invocation.node,
            Some(address) => {
                let found =
                    invocation.cluster.nodes.iter().find(|node| network::bmc_name(&node.hostname) == address || network::bmc_ip(&node.hostname) == address);
                match (found, password.filter(|p| !p.is_empty())) {
                    (Some(node), Some(_)) => node,
                    (None, _) if !address.chars().all(|c| c.is_ascii_digit() || c == '.') => {
                        return Output::error(format!("Address lookup for {address} failed\n{NO_SESSION}"), 1);
                    }
                    _ => return Output::error(NO_SESSION, 1),
                }
            }
        };
        let power = match words.as_slice() {
            ["chassis", "status"] => return Output::ok(CHASSIS_STATUS),
            ["chassis", "power", action] | ["power", action] => *action,
            ["chassis", "power"] | ["power"] => {
                return Output::error(POWER_USAGE, 1);
            }
            [other, ..] => return Output::error(format!("Invalid command: {other}\n"), 1),
            [] => unreachable!("checked above"),
        };
        let reboot = |word: &str| Output {
            stdout: format!("Chassis Power Control: {word}\n"),
            changes: vec![Change::Reboot { node: node.hostname.clone(), power_cycle: true, by_slurm: false }],
            ..Output::default()
        };
        match power {
            "status" => Output::ok("Chassis Power is on\n"),
            "on" => Output::ok("Chassis Power Control: Up/On\n"),
            "cycle" => reboot("Cycle"),
            "reset" => reboot("Reset"),
            // A node left off would need the data centre to bring it back.
            "off" | "soft" | "diag" => Output::error("ipmitool: this lab keeps nodes powered: use 'chassis power cycle' or 'reset'\n", 1),
            _ => Output::error(POWER_USAGE, 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::{cluster, run_on_first_node, shell};

    const BMC: &str = "ipmitool -I lanplus -H gpu-002-bmc -U admin -P admin";

    #[test]
    fn answers_for_the_bmc_it_reaches() {
        assert_eq!(run_on_first_node(&format!("{BMC} chassis power status")).stdout, "Chassis Power is on\n");
        assert!(run_on_first_node(&format!("{BMC} chassis status")).stdout.starts_with("System Power         : on\n"));
        assert_eq!(run_on_first_node("ipmitool -I lanplus -H gpu-002-bmc -U admin chassis power status").stderr, super::NO_SESSION);
        assert_eq!(
            run_on_first_node("ipmitool -H nosuch-bmc -P x power status").stderr,
            format!("Address lookup for nosuch-bmc failed\n{}", super::NO_SESSION)
        );
        assert!(run_on_first_node("ipmitool chassis power status").stderr.ends_with("Permission denied\n"));
        assert_eq!(run_on_first_node("sudo ipmitool power status").stdout, "Chassis Power is on\n");
        assert!(run_on_first_node("grep bmc /etc/hosts").stdout.contains("10.2.0.3 gpu-002-bmc\n"));
    }

    #[test]
    fn a_power_cycle_revives_a_hung_node() {
        let mut cluster = cluster();
        cluster.inject(Fault::NodeDown { node: "gpu-002".into(), reason: "Not responding".into() }, Vec::new()).expect("the fault applies");
        let mut shell = shell(cluster);
        assert_eq!(shell.run("ssh gpu-002 true").status, 255);
        assert_eq!(shell.run(&format!("{BMC} chassis power cycle")).stdout(), "Chassis Power Control: Cycle\n");
        assert_eq!(shell.run("ssh gpu-002 true").status, 255);
        shell.run("sleep 300");
        assert_eq!(shell.run("ssh gpu-002 hostname").stdout(), "gpu-002\n");
        // Slurm keeps the node down until an operator resumes it.
        assert!(shell.run("sinfo -N -h -n gpu-002").stdout().contains("down"));
    }
}
