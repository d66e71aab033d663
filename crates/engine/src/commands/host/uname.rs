//! `uname` (GNU coreutils 8.32): the kernel the node image runs
//! (`model::node::KERNEL_RELEASE`, the same release `dmesg` and
//! `/proc/version` show).

use crate::commands::options::{getopt_without_operands, Opt, COREUTILS};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::node::{KERNEL_RELEASE, KERNEL_VERSION};

pub struct Uname;

static SIGNATURE: Signature = Signature {
    name: "uname",
    summary: "print system information",
    usage: "uname [OPTION]...",
    flags: &[
        Flag { short: Some('a'), long: Some("all"), value: None, help: "print all information" },
        Flag { short: Some('s'), long: Some("kernel-name"), value: None, help: "print the kernel name" },
        Flag { short: Some('n'), long: Some("nodename"), value: None, help: "print the network node hostname" },
        Flag { short: Some('r'), long: Some("kernel-release"), value: None, help: "print the kernel release" },
        Flag { short: Some('v'), long: Some("kernel-version"), value: None, help: "print the kernel version" },
        Flag { short: Some('m'), long: Some("machine"), value: None, help: "print the machine hardware name" },
        Flag { short: Some('p'), long: Some("processor"), value: None, help: "print the processor type" },
        Flag { short: Some('i'), long: Some("hardware-platform"), value: None, help: "print the hardware platform" },
        Flag { short: Some('o'), long: Some("operating-system"), value: None, help: "print the operating system" },
    ],
    examples: &[Example { command: "uname -r", description: "the running kernel's release" }],
};

impl Command for Uname {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let parsed = match getopt_without_operands(&SIGNATURE, &COREUTILS, invocation.args()) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let fields = [
            ('s', "Linux"),
            ('n', invocation.node.hostname.as_str()),
            ('r', KERNEL_RELEASE),
            ('v', KERNEL_VERSION),
            ('m', "x86_64"),
            ('p', "x86_64"),
            ('i', "x86_64"),
            ('o', "GNU/Linux"),
        ];
        let asked: Vec<char> = parsed.options.iter().filter_map(|opt| if let Opt::Flag(flag, _) = opt { flag.short } else { None }).collect();
        let all = asked.contains(&'a');
        let chosen: Vec<&str> =
            fields.iter().filter(|(letter, _)| all || asked.contains(letter) || (asked.is_empty() && *letter == 's')).map(|(_, value)| *value).collect();
        Output::ok(format!("{}\n", chosen.join(" ")))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn prints_the_fields_in_their_order() {
        assert_eq!(run_on_first_node("uname").stdout, "Linux\n");
        assert_eq!(run_on_first_node("uname -r").stdout, "5.15.0-1063-nvidia\n");
        assert_eq!(
            run_on_first_node("uname -a").stdout,
            "Linux gpu-001 5.15.0-1063-nvidia #64-Ubuntu SMP Fri Aug  9 17:13:45 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux\n"
        );
        assert_eq!(run_on_first_node("uname -rn").stdout, "gpu-001 5.15.0-1063-nvidia\n");
        assert_eq!(run_on_first_node("uname -x").status, 1);
    }
}
