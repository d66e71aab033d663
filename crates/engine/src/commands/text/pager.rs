//! `less` and `more`: their text, marked as a pager's (`Output::pager`).
//! On the app's terminal the text is paged (the terminal's pager view);
//! piped, redirected or run through `ssh` they print it, as the real tools
//! do when their output is not a terminal.

use super::{read_file, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Pager, Signature};

pub struct Less;
pub struct More;

static LESS: Signature = Signature {
    name: "less",
    summary: "view a file or output a screen at a time (q quits, / searches)",
    usage: "less [options] [file...]",
    flags: &[
        Flag { short: Some('F'), long: Some("quit-if-one-screen"), value: None, help: "Quit if entire file fits on first screen." },
        Flag { short: Some('R'), long: Some("RAW-CONTROL-CHARS"), value: None, help: "Output \"raw\" control characters." },
        Flag { short: Some('X'), long: Some("no-init"), value: None, help: "Don't use termcap init/deinit strings." },
        Flag { short: Some('S'), long: Some("chop-long-lines"), value: None, help: "Chop (truncate) long lines rather than wrapping." },
        Flag { short: Some('i'), long: Some("ignore-case"), value: None, help: "Ignore case in searches that do not contain uppercase." },
    ],
    examples: &[
        Example { command: "nvidia-smi -q | less", description: "read the full GPU report a screen at a time" },
        Example { command: "less /var/log/syslog", description: "page through the node's log; /Xid searches, q quits" },
    ],
};

static MORE: Signature = Signature {
    name: "more",
    summary: "file perusal filter for crt viewing (space pages, q quits)",
    usage: "more [options] <file>...",
    flags: &[],
    examples: &[Example { command: "sudo dmesg | more", description: "the kernel log a screen at a time" }],
};

impl GnuTool for Less {
    const SIGNATURE: &'static Signature = &LESS;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let quit_if_one_screen = parsed.options.iter().any(|option| matches!(option, Opt::Flag(flag, _) if flag.short == Some('F')));
        let mut output = Output { pager: Some(Pager::Less { quit_if_one_screen, at_end: false }), ..Output::default() };
        if parsed.operands.is_empty() {
            if invocation.stdin.is_empty() {
                return Output::error("Missing filename (\"less --help\" for help)\n", 1);
            }
            output.stdout = invocation.stdin.to_string();
            return output;
        }
        for operand in &parsed.operands {
            match read_file(invocation, operand) {
                Ok(text) => output.stdout.push_str(&text),
                Err("Is a directory") => {
                    output.stderr.push_str(&format!("{operand} is a directory\n"));
                    output.status = 1;
                }
                Err(reason) => {
                    output.stderr.push_str(&format!("{operand}: {reason}\n"));
                    output.status = 1;
                }
            }
        }
        output
    }
}

impl GnuTool for More {
    const SIGNATURE: &'static Signature = &MORE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let mut output = Output { pager: Some(Pager::More), ..Output::default() };
        if parsed.operands.is_empty() {
            if invocation.stdin.is_empty() {
                return Output::error("more: bad usage\nTry 'more --help' for more information.\n", 1);
            }
            output.stdout = invocation.stdin.to_string();
            return output;
        }
        let several = parsed.operands.len() > 1;
        for operand in &parsed.operands {
            match read_file(invocation, operand) {
                Ok(text) => {
                    if several {
                        output.stdout.push_str(&format!("::::::::::::::\n{operand}\n::::::::::::::\n"));
                    }
                    output.stdout.push_str(&text);
                }
                Err("Is a directory") => output.stdout.push_str(&format!("\n*** {operand}: directory ***\n\n")),
                Err(reason) => {
                    output.stderr.push_str(&format!("more: cannot open {operand}: {reason}\n"));
                    output.status = 1;
                }
            }
        }
        output
    }
}
