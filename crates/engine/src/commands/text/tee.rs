//! `tee`: copy standard input to standard output. A lab has no filesystem,
//! so FILE operands are accepted and nothing is written to them: the output
//! is what the terminal would show, and `tee` answers nothing else.

use super::{Dialect, GnuTool, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Tee;

static SIGNATURE: Signature = Signature {
    name: "tee",
    summary: "read from standard input and write to standard output (files are not kept in a lab)",
    usage: "tee [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('a'), long: Some("append"), value: None, help: "append to the given FILEs, do not overwrite" },
        Flag { short: Some('i'), long: Some("ignore-interrupts"), value: None, help: "ignore interrupt signals" },
        Flag { short: Some('p'), long: None, value: None, help: "diagnose errors writing to non pipes" },
    ],
    examples: &[Example { command: "nvidia-smi -L | tee gpus.txt", description: "show the list (and, on a real host, save it)" }],
};

impl GnuTool for Tee {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    // The options only change how files are written, and none are.
    fn run_parsed(&self, _parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        Output::ok(invocation.stdin)
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
    }
}
