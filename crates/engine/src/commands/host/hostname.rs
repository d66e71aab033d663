//! `hostname` (net-tools 2.10): the node's name and, with `-I`/`-i`, its
//! addresses as `ip addr` lists them (`ip::interfaces`). The nodes have no
//! DNS domain: `/etc/hosts` names them short.

use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Hostname;

static SIGNATURE: Signature = Signature {
    name: "hostname",
    summary: "show the system's host name",
    usage: "hostname [-s|-f|-d|-i|-I|-A]",
    flags: &[
        Flag { short: Some('s'), long: Some("short"), value: None, help: "short host name" },
        Flag { short: Some('f'), long: Some("fqdn"), value: None, help: "long host name (FQDN)" },
        Flag { short: Some('d'), long: Some("domain"), value: None, help: "DNS domain name" },
        Flag { short: Some('i'), long: Some("ip-address"), value: None, help: "addresses for the host name" },
        Flag { short: Some('I'), long: Some("all-ip-addresses"), value: None, help: "all addresses for the host" },
        Flag { short: Some('A'), long: Some("all-fqdns"), value: None, help: "all long host names (FQDNs)" },
    ],
    examples: &[Example { command: "hostname", description: "which node this shell is on" }],
};

impl Command for Hostname {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut shown = 's';
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => shown = flag.short.unwrap_or('s'),
                Arg::Unknown(flag) => return Output::error(format!("{}Usage: {}\n", crate::commands::options::unknown("hostname", &flag), SIGNATURE.usage), 1),
                Arg::Positional(_) | Arg::MissingValue(_) => return Output::error("hostname: you must be root to change the host name\n", 1),
            }
        }
        let hostname = &invocation.node.hostname;
        let addresses = || -> Vec<String> {
            let interfaces = super::ip::interfaces(invocation.node);
            let global = interfaces.into_iter().filter(|iface| !iface.loopback && iface.up);
            global.flat_map(|iface| iface.addrs).filter_map(|addr| addr.split('/').next().map(str::to_string)).collect()
        };
        Output::ok(match shown {
            'd' => "\n".to_string(),
            'i' => format!("{}\n", crate::model::network::frontend_ip(hostname)),
            // Each address followed by a space, as net-tools prints them.
            'I' => format!("{}\n", addresses().iter().map(|addr| format!("{addr} ")).collect::<String>()),
            'A' => format!("{hostname} \n"),
            _ => format!("{hostname}\n"),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn prints_the_node_name() {
        assert_eq!(run_on_first_node("hostname").stdout, "gpu-001\n");
        assert_eq!(run_on_first_node("hostname -s").stdout, "gpu-001\n");
        assert_eq!(run_on_first_node("hostname -I").stdout, "10.1.0.2 \n");
        assert_eq!(run_on_first_node("hostname -i").stdout, "10.1.0.2\n");
        let out = run_on_first_node("hostname newname");
        assert_eq!(out.status, 1);
    }
}
