//! `help`: the list of emulated commands, or one command's declaration.

use super::{all, find, Command, Example, Invocation, Output, Signature};

pub struct Help;

static SIGNATURE: Signature = Signature {
    name: "help",
    summary: "list the commands this lab emulates, or describe one",
    usage: "help [COMMAND]",
    flags: &[],
    examples: &[
        Example { command: "help", description: "list every emulated command" },
        Example { command: "help nvidia-smi", description: "flags and examples of one command" },
    ],
};

impl Command for Help {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        match invocation.args().first() {
            None => Output::ok(overview()),
            Some(name) => match find(name) {
                Some(command) => Output::ok(describe(command.signature())),
                None => Output::error(format!("-bash: help: no help topics match `{name}'.\n"), 1),
            },
        }
    }
}

fn overview() -> String {
    let mut out = String::from("ClusterLab: a simulated cluster. Nothing you type runs on real hardware.\n");
    out += "These commands are emulated here:\n\n";
    for command in all() {
        let signature = command.signature();
        out += &format!("  {:<14}{}\n", signature.name, signature.summary);
    }
    out += &format!("\nShell builtins: {}.\n", crate::shell::BUILTINS.join(", "));
    out += "Type 'help COMMAND' for its flags and examples.\n";
    out
}

/// A manual-style page generated from a command's declaration.
pub fn describe(signature: &Signature) -> String {
    let mut out = format!("{} - {}\n\nUsage: {}\n", signature.name, signature.summary, signature.usage);
    if !signature.flags.is_empty() {
        out += "\nOptions:\n";
        for flag in signature.flags {
            out += &format!("  {:<22}{}\n", flag.display(), flag.help);
        }
    }
    if !signature.examples.is_empty() {
        out += "\nExamples:\n";
        for example in signature.examples {
            out += &format!("  {:<22}{}\n", example.command, example.description);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn lists_every_command_from_its_declaration() {
        let out = run_on_first_node("help");
        for command in super::all() {
            assert!(out.stdout.contains(command.signature().name));
        }
        assert!(out.stdout.contains("simulated"));
    }

    #[test]
    fn describes_one_command() {
        let out = run_on_first_node("help nvidia-smi");
        assert!(out.stdout.contains("-L, --list-gpus"));
        assert!(out.stdout.contains("Examples:"));
        assert_eq!(run_on_first_node("help nosuch").status, 1);
    }
}
