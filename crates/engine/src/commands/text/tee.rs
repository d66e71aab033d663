//! `tee`: copy standard input to standard output and to each FILE, in the
//! node's file system (where the trainee may write: home and /tmp).

use super::{Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::files::View;
use crate::commands::{Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;

pub struct Tee;

static SIGNATURE: Signature = Signature {
    name: "tee",
    summary: "read from standard input and write to standard output and files",
    usage: "tee [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('a'), long: Some("append"), value: None, help: "append to the given FILEs, do not overwrite" },
        Flag { short: Some('i'), long: Some("ignore-interrupts"), value: None, help: "ignore interrupt signals" },
        Flag { short: Some('p'), long: None, value: None, help: "diagnose errors writing to non pipes" },
    ],
    examples: &[Example { command: "nvidia-smi -L | tee gpus.txt", description: "show the list and save it in gpus.txt" }],
};

impl GnuTool for Tee {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let append = parsed.options.iter().any(|option| matches!(option, Opt::Flag(flag, _) if flag.short == Some('a')));
        let view = View::for_command(invocation);
        let mut output = Output::ok(invocation.stdin);
        for operand in &parsed.operands {
            if operand == "/dev/null" {
                continue;
            }
            let path = view.resolve(operand);
            if view.is_attribute(&path) {
                let written = if crate::commands::is_root(invocation.env) {
                    view.attribute_write(&path, invocation.stdin).unwrap_or(Err("Permission denied"))
                } else {
                    Err("Permission denied")
                };
                match written {
                    Ok(change) => output.changes.push(change),
                    Err(reason) => {
                        output.stderr.push_str(&format!("tee: {operand}: {reason}\n"));
                        output.status = 1;
                    }
                }
                continue;
            }
            let checked = view.check_writable(&path).and_then(|()| view.check_room(&path, invocation.stdin.len(), append));
            match checked {
                Ok(()) => output.changes.push(Change::WriteFile { node: invocation.node.hostname.clone(), path, text: invocation.stdin.to_string(), append }),
                Err(reason) => {
                    output.stderr.push_str(&format!("tee: {operand}: {reason}\n"));
                    output.status = 1;
                }
            }
        }
        output
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn copies_stdin() {
        let out = run_on_first_node("echo hi | tee out.txt");
        assert_eq!((out.stdout.as_str(), out.status), ("hi\n", 0));
        assert_eq!(run_on_first_node("tee -z").status, 1);
        let denied = run_on_first_node("echo hi | tee /etc/passwd");
        assert_eq!((denied.stderr.as_str(), denied.status), ("tee: /etc/passwd: Permission denied\n", 1));
    }

    #[test]
    fn files_written_are_read_back() {
        let mut shell = crate::testing::session();
        let out = shell.run("nvidia-smi -L | tee gpus.txt | wc -l; wc -l < gpus.txt; echo more | tee -a gpus.txt >/dev/null; tail -n 1 ~/gpus.txt");
        assert_eq!(out.stdout(), "8\n8\nmore\n");
    }
}
