//! `head`: the first lines or bytes of standard input (GNU coreutils).

use std::ops::Range;

use super::{quote, Dialect, GnuTool, Opt, Parsed};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

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

/// The part of `text` that `range` picks, given how many lines or bytes the
/// text has and the count asked for (both sides of head and tail count alike).
pub fn keep_range(text: &str, amount: Amount, range: impl Fn(usize, usize) -> Range<usize>) -> String {
    match amount {
        Amount::Lines(count) => {
            let pieces: Vec<&str> = text.split_inclusive('\n').collect();
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            pieces[range(pieces.len(), count)].concat()
        }
        Amount::Bytes(count) => {
            let bytes = text.as_bytes();
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            String::from_utf8_lossy(&bytes[range(bytes.len(), count)]).into_owned()
        }
    }
}

/// Input operands: each `-` (or none) reads standard input once.
fn for_each_input(name: &str, operands: &[String], invocation: &Invocation, mut emit: impl FnMut(&str, &str, &mut String)) -> (String, String, i32) {
    let stdin = invocation.stdin;
    let inputs: Vec<String> = if operands.is_empty() { vec!["-".into()] } else { operands.to_vec() };
    let (mut stdout, mut stderr, mut status) = (String::new(), String::new(), 0);
    let mut stdin_used = false;
    for input in &inputs {
        if input != "-" {
            match super::read_file(invocation, input) {
                Ok(text) => emit(input, &text, &mut stdout),
                Err("Is a directory") => {
                    stderr.push_str(&format!("{name}: error reading '{input}': Is a directory\n"));
                    status = 1;
                }
                Err(reason) => {
                    stderr.push_str(&format!("{name}: cannot open '{input}' for reading: {reason}\n"));
                    status = 1;
                }
            }
            continue;
        }
        let text = if stdin_used { "" } else { stdin };
        stdin_used = true;
        emit("standard input", text, &mut stdout);
    }
    (stdout, stderr, status)
}

/// Runs head or tail, which differ only in which part of each input they
/// keep. `sign` is the prefix that changes a count's meaning (head `-N`:
/// all but the last N; tail `+N`: from the Nth on); the other sign is
/// accepted and means nothing. `part` cuts one input, told whether the count
/// carried `sign`.
pub fn run_part(name: &str, parsed: &Parsed, invocation: &Invocation, sign: char, part: fn(&str, Amount, bool) -> String) -> Output {
    let mut amount = Amount::Lines(10);
    let mut signed = false;
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
                // `-q` and its long-only twin `--silent`.
                Some('q') | None => {
                    headers = Some(false);
                    continue;
                }
                _ => continue,
            },
        };
        let (has_sign, digits) = match value.strip_prefix(sign) {
            Some(rest) => (true, rest),
            None => (false, value.strip_prefix(['+', '-']).unwrap_or(&value)),
        };
        let Some(count) = parse_count(digits) else {
            let what = if bytes { "bytes" } else { "lines" };
            return Output::error(format!("{name}: invalid number of {what}: {}\n", quote(&value)), 1);
        };
        signed = has_sign;
        amount = if bytes { Amount::Bytes(count) } else { Amount::Lines(count) };
    }
    let show_headers = headers.unwrap_or(parsed.operands.len() > 1);
    let mut first = true;
    let (stdout, stderr, status) = for_each_input(name, &parsed.operands, invocation, |input, text, out| {
        if show_headers {
            if !first {
                out.push('\n');
            }
            out.push_str(&format!("==> {input} <==\n"));
        }
        first = false;
        out.push_str(&part(text, amount, signed));
    });
    Output { stdout, stderr, status, duration_ms: 0, ..Output::default() }
}

impl GnuTool for Head {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &DIALECT;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        run_part("head", &parsed, invocation, '-', head)
    }
}

fn head(text: &str, amount: Amount, all_but_last: bool) -> String {
    keep_range(text, amount, |len, count| {
        let keep = if all_but_last { len.saturating_sub(count) } else { count.min(len) };
        0..keep
    })
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
