//! The text utilities trainees pipe tool output into (GNU coreutils, grep,
//! a subset of awk), and what they share: GNU getopt behaviour and error
//! messages, and line splitting.
//!
//! File operands are read from the node's file view (`commands::files`).

pub mod awk;
pub mod basename;
pub mod cat;
pub mod column;
pub mod cut;
pub mod diff;
pub mod du;
pub mod echo;
pub mod escapes;
pub mod find;
pub mod grep;
pub mod head;
pub mod ls;
pub mod pager;
pub mod printf;
pub mod regex;
pub mod sed;
pub mod seq;
pub mod sleep;
pub mod sort;
pub mod stat;
pub mod tail;
pub mod tee;
pub mod tr;
pub mod truth;
pub mod uniq;
pub mod wc;
pub mod yes;

use super::options::{getopt, Dialect, Parsed};
use super::{Command, Invocation, Output, Signature};

// The option handling text tools share is in `options`; re-exported for them.
pub use super::options::{no_such_file, quote, usage_error, Opt, COREUTILS};

/// A tool whose command line is parsed as GNU getopt does: a bad one, or
/// `--help`, is answered before the tool itself runs.
pub trait GnuTool: Sync {
    const SIGNATURE: &'static Signature;
    const DIALECT: &'static Dialect;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output;
}

impl<T: GnuTool> Command for T {
    fn signature(&self) -> &'static Signature {
        T::SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        match getopt(T::SIGNATURE, T::DIALECT, invocation.args()) {
            Ok(parsed) => self.run_parsed(parsed, invocation),
            Err(output) => output,
        }
    }
}

/// The lines of a text without their newlines; a last line without a
/// newline is still a line, as in GNU tools.
pub fn lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    lines
}

/// Joins lines, each ending with a newline (GNU tools add the missing last one).
pub fn join_lines<S: AsRef<str>>(lines: &[S]) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(line.as_ref());
        out.push('\n');
    }
    out
}

/// The text of a file operand on the node the tool runs on, relative paths
/// from the shell's working directory; the reason when there is none.
pub fn read_file<'a>(invocation: &Invocation<'a>, operand: &str) -> Result<std::borrow::Cow<'a, str>, &'static str> {
    super::files::View::for_command(invocation).read(operand)
}

/// A file operand list: `-` (or none) is standard input, anything else a
/// file on the node. Returns the text to process and the error messages.
pub fn read_inputs(name: &str, operands: &[String], invocation: &Invocation) -> (String, String) {
    let stdin = invocation.stdin;
    if operands.is_empty() {
        return (stdin.to_string(), String::new());
    }
    let mut text = String::new();
    let mut errors = String::new();
    let mut stdin_used = false;
    for operand in operands {
        if operand == "-" {
            if !stdin_used {
                text.push_str(stdin);
                stdin_used = true;
            }
        } else {
            match read_file(invocation, operand) {
                Ok(file) => text.push_str(&file),
                Err(reason) => errors.push_str(&format!("{name}: {operand}: {reason}\n")),
            }
        }
    }
    (text, errors)
}

/// What the text tools' unit tests share.
#[cfg(test)]
pub mod test_support {
    use crate::commands::Output;
    use crate::testing::run_on_first_node;

    /// Pipes INPUT into `TOOL ARGS` on a lab node. The lab shell has no
    /// printf, so INPUT goes through `echo -e` and its `\n` escapes end lines.
    pub fn echo_into(tool: &str, input: &str, args: &str) -> Output {
        run_on_first_node(&format!("echo -e '{input}' | {tool} {args}"))
    }

    /// Standard output then standard error, as a terminal shows them.
    pub fn shown(output: Output) -> String {
        output.stdout + &output.stderr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_like_gnu() {
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("a\nb"), ["a", "b"]);
        assert_eq!(lines("a\n\n"), ["a", ""]);
    }
}
