//! `nproc` (GNU coreutils 8.32): the CPUs this process may use, from the
//! preset's host (`HostSpec::cpus`, as `lscpu` counts them).

use crate::commands::options::{getopt_without_operands, quote, Opt, COREUTILS};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Nproc;

static SIGNATURE: Signature = Signature {
    name: "nproc",
    summary: "print the number of processing units available",
    usage: "nproc [OPTION]...",
    flags: &[
        Flag { short: None, long: Some("all"), value: None, help: "print the number of installed processors" },
        Flag { short: None, long: Some("ignore"), value: Some("N"), help: "if possible, exclude N processing units" },
    ],
    examples: &[Example { command: "nproc", description: "how many CPUs the node has" }],
};

impl Command for Nproc {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let parsed = match getopt_without_operands(&SIGNATURE, &COREUTILS, invocation.args()) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let mut ignore: u64 = 0;
        for opt in &parsed.options {
            if let Opt::Flag(flag, Some(value)) = opt {
                if flag.long == Some("ignore") {
                    match value.parse() {
                        Ok(number) => ignore = number,
                        Err(_) => return Output::error(format!("nproc: invalid number: {}\n", quote(value)), 1),
                    }
                }
            }
        }
        let cpus = u64::from(invocation.cluster.preset.host.cpus());
        Output::ok(format!("{}\n", cpus.saturating_sub(ignore).max(1)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn counts_the_hosts_cpus() {
        assert_eq!(run_on_first_node("nproc").stdout, "224\n");
        assert_eq!(run_on_first_node("nproc --ignore=24").stdout, "200\n");
        assert_eq!(run_on_first_node("nproc --ignore=9999").stdout, "1\n");
        assert_eq!(run_on_first_node("nproc --ignore=x").stderr, "nproc: invalid number: \u{2018}x\u{2019}\n");
    }
}
