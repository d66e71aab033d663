//! `tail`: the last lines or bytes of standard input, or everything from
//! line N with `-n +N` (GNU coreutils). `-f` has nothing to follow on a pipe.

use super::head::{for_each_input, line_pieces, parse_count, Amount};
use super::{getopt, quote, Dialect, Opt};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

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

impl Command for Tail {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let parsed = match getopt(&SIGNATURE, &DIALECT, invocation.args()) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let mut amount = Amount::Lines(10);
        let mut from_start = false;
        let mut headers: Option<bool> = None;
        for option in &parsed.options {
            let (value, bytes) = match option {
                Opt::Number(digits) => (digits.clone(), false),
                Opt::Flag(flag, value) => match flag.short {
                    Some('n') => (value.clone().unwrap_or_default(), false),
                    Some('c') => (value.clone().unwrap_or_default(), true),
                    Some('v') => {
                        headers = Some(true);
                        continue;
                    }
                    Some('q') | None => {
                        headers = Some(false);
                        continue;
                    }
                    _ => continue,
                },
            };
            let (plus, digits) = match value.strip_prefix('+') {
                Some(rest) => (true, rest),
                None => (false, value.strip_prefix('-').unwrap_or(&value)),
            };
            let Some(count) = parse_count(digits) else {
                let what = if bytes { "bytes" } else { "lines" };
                return Output::error(format!("tail: invalid number of {what}: {}\n", quote(&value)), 1);
            };
            from_start = plus;
            amount = if bytes { Amount::Bytes(count) } else { Amount::Lines(count) };
        }
        let show_headers = headers.unwrap_or(parsed.operands.len() > 1);
        let mut first = true;
        let (stdout, stderr, status) =
            for_each_input("tail", &parsed.operands, invocation.stdin, |name, text, out| {
                if show_headers {
                    if !first {
                        out.push('\n');
                    }
                    out.push_str(&format!("==> {name} <==\n"));
                }
                first = false;
                out.push_str(&tail(text, amount, from_start));
            });
        Output { stdout, stderr, status, duration_ms: 0 }
    }
}

fn tail(text: &str, amount: Amount, from_start: bool) -> String {
    match amount {
        Amount::Lines(count) => {
            let pieces = line_pieces(text);
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            // `+N` starts at line N (1-based); `+0` is the same as `+1`.
            let skip = if from_start { count.saturating_sub(1) } else { pieces.len().saturating_sub(count) };
            pieces[skip.min(pieces.len())..].concat()
        }
        Amount::Bytes(count) => {
            let bytes = text.as_bytes();
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            let skip = if from_start { count.saturating_sub(1) } else { bytes.len().saturating_sub(count) };
            String::from_utf8_lossy(&bytes[skip.min(bytes.len())..]).into_owned()
        }
    }
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
