//! `head`: the first lines or bytes of standard input (GNU coreutils).

use super::{getopt, quote, Dialect, Opt};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Head;

static SIGNATURE: Signature = Signature {
    name: "head",
    summary: "output the first part of files",
    usage: "head [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('n'), long: Some("lines"), value: Some("[-]NUM"), help: "print the first NUM lines; with -NUM, all but the last NUM" },
        Flag { short: Some('c'), long: Some("bytes"), value: Some("[-]NUM"), help: "print the first NUM bytes; with -NUM, all but the last NUM" },
        Flag { short: Some('q'), long: Some("quiet"), value: None, help: "never print headers giving file names" },
        Flag { short: None, long: Some("silent"), value: None, help: "same as --quiet" },
        Flag { short: Some('v'), long: Some("verbose"), value: None, help: "always print headers giving file names" },
    ],
    examples: &[
        Example { command: "nvidia-smi | head -n 12", description: "the header and the first GPU" },
        Example { command: "nvidia-smi -q | head -5", description: "the first five lines" },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 1, usage_line: None, numeric_option: true, optional_values: &[] };

/// How much of the input to keep, counted from the front or the back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    Lines(u64),
    Bytes(u64),
}

/// A GNU count: digits with an optional multiplier suffix (b, K, KB, M, ...).
pub fn parse_count(text: &str) -> Option<u64> {
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    if digits.is_empty() {
        return None;
    }
    let multiplier: u64 = match suffix {
        "" => 1,
        "b" => 512,
        "kB" | "KB" => 1000,
        "K" | "KiB" => 1024,
        "MB" => 1000_u64.pow(2),
        "M" | "MiB" => 1024_u64.pow(2),
        "GB" => 1000_u64.pow(3),
        "G" | "GiB" => 1024_u64.pow(3),
        _ => return None,
    };
    // GNU saturates huge counts instead of failing.
    Some(digits.parse::<u64>().unwrap_or(u64::MAX).saturating_mul(multiplier))
}

/// The pieces of `text`, each line with its newline.
pub fn line_pieces(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Input operands: each `-` (or none) reads standard input once.
pub fn for_each_input(
    name: &str,
    operands: &[String],
    stdin: &str,
    mut emit: impl FnMut(&str, &str, &mut String),
) -> (String, String, i32) {
    let inputs: Vec<String> = if operands.is_empty() { vec!["-".into()] } else { operands.to_vec() };
    let (mut stdout, mut stderr, mut status) = (String::new(), String::new(), 0);
    let mut stdin_used = false;
    for input in &inputs {
        if input != "-" {
            stderr.push_str(&format!("{name}: cannot open '{input}' for reading: No such file or directory\n"));
            status = 1;
            continue;
        }
        let text = if stdin_used { "" } else { stdin };
        stdin_used = true;
        emit("standard input", text, &mut stdout);
    }
    (stdout, stderr, status)
}

impl Command for Head {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let parsed = match getopt(&SIGNATURE, &DIALECT, invocation.args()) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let mut amount = Amount::Lines(10);
        let mut all_but_last = false;
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
                    _ => {
                        headers = Some(false);
                        continue;
                    }
                },
            };
            let (negative, digits) = match value.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, value.strip_prefix('+').unwrap_or(&value)),
            };
            let Some(count) = parse_count(digits) else {
                let what = if bytes { "bytes" } else { "lines" };
                return Output::error(format!("head: invalid number of {what}: {}\n", quote(&value)), 1);
            };
            all_but_last = negative;
            amount = if bytes { Amount::Bytes(count) } else { Amount::Lines(count) };
        }
        let show_headers = headers.unwrap_or(parsed.operands.len() > 1);
        let mut first = true;
        let (stdout, stderr, status) =
            for_each_input("head", &parsed.operands, invocation.stdin, |name, text, out| {
                if show_headers {
                    if !first {
                        out.push('\n');
                    }
                    out.push_str(&format!("==> {name} <==\n"));
                }
                first = false;
                out.push_str(&head(text, amount, all_but_last));
            });
        Output { stdout, stderr, status, duration_ms: 0 }
    }
}

fn head(text: &str, amount: Amount, all_but_last: bool) -> String {
    match amount {
        Amount::Lines(count) => {
            let pieces = line_pieces(text);
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            let keep = if all_but_last { pieces.len().saturating_sub(count) } else { count.min(pieces.len()) };
            pieces[..keep].concat()
        }
        Amount::Bytes(count) => {
            let bytes = text.as_bytes();
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            let keep = if all_but_last { bytes.len().saturating_sub(count) } else { count.min(bytes.len()) };
            String::from_utf8_lossy(&bytes[..keep]).into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn first_lines_and_bytes() {
        assert_eq!(run_on_first_node("echo -e 'a\\nb\\nc' | head -n 2").stdout, "a\nb\n");
        assert_eq!(run_on_first_node("echo -e 'a\\nb\\nc' | head -1").stdout, "a\n");
        assert_eq!(run_on_first_node("echo -e 'a\\nb\\nc' | head -n -1").stdout, "a\nb\n");
        assert_eq!(run_on_first_node("echo abc | head -c 2").stdout, "ab");
        assert_eq!(run_on_first_node("echo abc | head -c -2").stdout, "ab");
        let out = run_on_first_node("echo | head -n x");
        assert_eq!((out.stderr.as_str(), out.status), ("head: invalid number of lines: \u{2018}x\u{2019}\n", 1));
        let out = run_on_first_node("echo | head nofile");
        assert_eq!(out.stderr, "head: cannot open 'nofile' for reading: No such file or directory\n");
    }
}
