//! `hostname`: the node's name.

use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Hostname;

static SIGNATURE: Signature = Signature {
    name: "hostname",
    summary: "show the system's host name",
    usage: "hostname [-s|-f]",
    flags: &[
        Flag { short: Some('s'), long: Some("short"), value: None, help: "short host name" },
        Flag { short: Some('f'), long: Some("fqdn"), value: None, help: "long host name (FQDN)" },
    ],
    examples: &[Example { command: "hostname", description: "which node this shell is on" }],
};

impl Command for Hostname {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(..) => {}
                Arg::Unknown(flag) => return Output::error(format!("{}Usage: hostname [-s|-f]\n", crate::commands::options::unknown("hostname", &flag)), 1),
                Arg::Positional(_) | Arg::MissingValue(_) => return Output::error("hostname: you must be root to change the host name\n", 1),
            }
        }
        Output::ok(format!("{}\n", invocation.node.hostname))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn prints_the_node_name() {
        assert_eq!(run_on_first_node("hostname").stdout, "gpu-001\n");
        assert_eq!(run_on_first_node("hostname -s").stdout, "gpu-001\n");
        let out = run_on_first_node("hostname newname");
        assert_eq!(out.status, 1);
    }
}
