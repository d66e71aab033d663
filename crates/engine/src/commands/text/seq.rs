//! `seq`: numbers from FIRST to LAST by INCREMENT, as GNU prints integers
//! (and decimals with the widest operand's precision). The count is bounded
//! by the line's output limit: `seq 1e18` stops where the output stops.

use super::{quote, usage_error, Dialect, Opt, COREUTILS};
use crate::commands::options::getopt;
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::limits::MAX_OUTPUT_BYTES;

pub struct Seq;

static SIGNATURE: Signature = Signature {
    name: "seq",
    summary: "print a sequence of numbers",
    usage: "seq [OPTION]... LAST\n  or:  seq [OPTION]... FIRST LAST\n  or:  seq [OPTION]... FIRST INCREMENT LAST",
    flags: &[
        Flag { short: Some('s'), long: Some("separator"), value: Some("STRING"), help: "use STRING to separate numbers (default: \\n)" },
        Flag { short: Some('w'), long: Some("equal-width"), value: None, help: "equalize width by padding with leading zeroes" },
    ],
    examples: &[Example { command: "for i in $(seq 0 7); do nvidia-smi -i $i -L; done", description: "loop over the GPUs" }],
};

/// Digits after the point in an operand as written.
fn precision(text: &str) -> usize {
    text.split_once('.').map_or(0, |(_, fraction)| fraction.len())
}

/// Negative numbers are operands, not options (`seq 10 -1 1`): GNU's seq
/// reads them so; they reach getopt after `--`.
fn arguments(args: &[String]) -> Vec<String> {
    let is_number = |arg: &str| arg.strip_prefix('-').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'));
    let (mut options, mut operands) = (Vec::new(), Vec::new());
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if is_number(arg) || !arg.starts_with('-') || arg == "-" {
            operands.push(arg.clone());
        } else if arg == "--" {
            operands.extend(args.by_ref().cloned());
        } else {
            options.push(arg.clone());
            if arg == "-s" || arg == "--separator" {
                options.extend(args.next().cloned());
            }
        }
    }
    options.push("--".to_string());
    options.extend(operands);
    options
}

const DIALECT: Dialect = COREUTILS;

impl Command for Seq {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = arguments(invocation.args());
        let parsed = match getopt(&SIGNATURE, &DIALECT, &args) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let mut separator = "\n".to_string();
        let mut equal_width = false;
        for option in &parsed.options {
            if let Opt::Flag(flag, value) = option {
                match flag.short {
                    Some('s') => separator = value.clone().unwrap_or_default(),
                    Some('w') => equal_width = true,
                    _ => {}
                }
            }
        }
        let operands = &parsed.operands;
        if operands.is_empty() {
            return usage_error("seq", &COREUTILS, "missing operand");
        }
        if operands.len() > 3 {
            return usage_error("seq", &COREUTILS, &format!("extra operand {}", quote(&operands[3])));
        }
        let mut numbers = Vec::new();
        for operand in operands {
            match operand.parse::<f64>() {
                Ok(n) if n.is_finite() => numbers.push(n),
                _ => return usage_error("seq", &COREUTILS, &format!("invalid floating point argument: {}", quote(operand))),
            }
        }
        let (first, step, last) = match numbers[..] {
            [last] => (1.0, 1.0, last),
            [first, last] => (first, 1.0, last),
            [first, step, last] => (first, step, last),
            _ => unreachable!("one to three operands"),
        };
        if step == 0.0 {
            return usage_error("seq", &COREUTILS, &format!("invalid Zero increment value: {}", quote(&operands[1])));
        }
        let digits = operands.iter().map(|o| precision(o)).max().unwrap_or(0);
        let width = if equal_width { [first, last].iter().map(|n| format!("{n:.digits$}").len()).max().unwrap_or(0) } else { 0 };
        let mut out = String::new();
        let mut index = 0u64;
        loop {
            let value = first + step * index as f64;
            if (step > 0.0 && value > last + 1e-9) || (step < 0.0 && value < last - 1e-9) || out.len() > MAX_OUTPUT_BYTES {
                break;
            }
            if index > 0 {
                out.push_str(&separator);
            }
            let text = format!("{value:.digits$}");
            match text.strip_prefix('-') {
                Some(digits_only) if equal_width => out.push_str(&format!("-{digits_only:0>w$}", w = width - 1)),
                _ => out.push_str(&format!("{text:0>width$}")),
            }
            index += 1;
        }
        if index > 0 {
            out.push('\n');
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn sequences_like_gnu() {
        assert_eq!(run_on_first_node("seq 3").stdout, "1\n2\n3\n");
        assert_eq!(run_on_first_node("seq 0 2 6").stdout, "0\n2\n4\n6\n");
        assert_eq!(run_on_first_node("seq -s, 3 -1 1").stdout, "3,2,1\n");
        assert_eq!(run_on_first_node("seq -w 8 10").stdout, "08\n09\n10\n");
        assert_eq!(run_on_first_node("seq 0.5 1.5").stdout, "0.5\n1.5\n");
        assert_eq!(run_on_first_node("seq 5 1").stdout, "");
        let out = run_on_first_node("seq x");
        assert_eq!((out.stderr.lines().next(), out.status), (Some("seq: invalid floating point argument: ‘x’"), 1));
        // A huge count stops at the output limit instead of running on.
        assert!(run_on_first_node("seq 1000000000000").stdout.len() <= crate::limits::MAX_OUTPUT_BYTES + 16);
    }
}
