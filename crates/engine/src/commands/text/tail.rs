//! `tail`: the last lines or bytes of standard input, or everything from
//! line N with `-n +N` (GNU coreutils). `-f` has nothing to follow on a pipe.

use super::head::{keep_range, run_part, Amount};
use super::{Dialect, GnuTool, Parsed};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Tail;

static SIGNATURE: Signature = Signature {
    name: "tail",
    summary: "output the last part of files",
    usage: "tail [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('n'), long: Some("lines"), value: Some("[+]NUM"), help: "output the last NUM lines; with +NUM, from line NUM on" },
        Flag { short: Some('c'), long: Some("bytes"), value: Some("[+]NUM"), help: "output the last NUM bytes; with +NUM, from byte NUM on" },
        Flag { short: Some('f'), long: Some("follow"), value: None, help: "output appended data as the file grows (nothing to follow on a pipe)" },
        Flag { short: Some('F'), long: None, value: None, help: "same as --follow=name --retry" },
        Flag { short: Some('q'), long: Some("quiet"), value: None, help: "never output headers giving file names" },
        Flag { short: None, long: Some("silent"), value: None, help: "same as --quiet" },
        Flag { short: Some('v'), long: Some("verbose"), value: None, help: "always output headers giving file names" },
    ],
    examples: &[
        Example { command: "nvidia-smi | tail -n 5", description: "the process table's end" },
        Example { command: "nvidia-smi -L | tail -n +2", description: "every GPU but the first" },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 1, usage_line: None, numeric_option: true, optional_values: &[] };

impl GnuTool for Tail {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &DIALECT;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        run_part("tail", &parsed, invocation, '+', tail)
    }
}

fn tail(text: &str, amount: Amount, from_start: bool) -> String {
    keep_range(text, amount, |len, count| {
        // `+N` starts at line (or byte) N, 1-based; `+0` is the same as `+1`.
        let skip = if from_start { count.saturating_sub(1) } else { len.saturating_sub(count) };
        skip.min(len)..len
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn last_lines_and_from_line() {
        assert_eq!(run_on_first_node("echo -e '1\\n2\\n3' | tail -n 2").stdout, "2\n3\n");
        assert_eq!(run_on_first_node("echo -e '1\\n2\\n3' | tail -1").stdout, "3\n");
        assert_eq!(run_on_first_node("echo -e '1\\n2\\n3' | tail -n +2").stdout, "2\n3\n");
        assert_eq!(run_on_first_node("echo -n -e '1\\n2\\n3' | tail -n 1").stdout, "3");
        assert_eq!(run_on_first_node("echo -n 12 | tail -c 1").stdout, "2");
        let out = run_on_first_node("echo | tail -c x");
        assert_eq!((out.stderr.as_str(), out.status), ("tail: invalid number of bytes: \u{2018}x\u{2019}\n", 1));
    }
}
