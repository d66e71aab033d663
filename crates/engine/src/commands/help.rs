//! Help text generated from the commands' declarations: the list of emulated
//! commands (bash's `help` builtin prints it) and one command's page (`help
//! CMD`, `CMD --help` for tools whose real help is not emulated, `man`).

use super::{all, Signature};

/// Two spaces between a column and the next, whatever the longest entry.
const GUTTER: usize = 2;

/// `  NAME  summary` lines, the names padded to the longest one.
fn columns<'a>(rows: impl Iterator<Item = (String, &'a str)> + Clone) -> String {
    let width = rows.clone().map(|(left, _)| left.chars().count()).max().unwrap_or(0) + GUTTER;
    rows.map(|(left, right)| format!("  {left:<width$}{right}\n")).collect()
}

/// Every emulated command with its summary.
pub fn overview() -> String {
    let mut out = String::from("ClusterLab: a simulated cluster. Nothing you type runs on real hardware.\n");
    out += "These commands are emulated here:\n\n";
    out += &columns(all().iter().map(|command| (command.signature().name.to_string(), command.signature().summary)));
    out
}

/// A manual-style page generated from a command's declaration.
pub fn describe(signature: &Signature) -> String {
    let mut out = format!("{} - {}\n\nUsage: {}\n", signature.name, signature.summary, signature.usage);
    if !signature.flags.is_empty() {
        out += "\nOptions:\n";
        out += &columns(signature.flags.iter().map(|flag| (flag.display(), flag.help)));
    }
    if !signature.examples.is_empty() {
        out += "\nExamples:\n";
        out += &columns(signature.examples.iter().map(|example| (example.command.to_string(), example.description)));
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
            let name = command.signature().name;
            // Every name is followed by at least two spaces, never glued to its summary.
            assert!(out.stdout.contains(&format!("  {name}  ")), "{name}");
        }
        assert!(out.stdout.contains("simulated"));
    }

    #[test]
    fn describes_one_command() {
        let out = run_on_first_node("help nvidia-smi");
        assert!(out.stdout.contains("-L, --list-gpus"));
        assert!(out.stdout.contains("Examples:"));
        assert_eq!(run_on_first_node("help nosuch").status, 1);
        let flags = run_on_first_node("help all_reduce_perf").stdout;
        assert!(flags.contains("--parallel_init=0/1  "), "{flags}");
    }
}
