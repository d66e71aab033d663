//! `sleep`: pass time on the lab's simulated clock (GNU coreutils syntax:
//! several NUMBER[SUFFIX] operands are added; suffixes s, m, h, d).

use super::{quote, usage_error, Dialect, GnuTool, Parsed, COREUTILS};
use crate::commands::{Example, Invocation, Output, Signature};

pub struct Sleep;

static SIGNATURE: Signature = Signature {
    name: "sleep",
    summary: "delay for a specified amount of time (on the lab's clock)",
    usage: "sleep NUMBER[SUFFIX]...",
    flags: &[],
    examples: &[Example { command: "sleep 5", description: "wait five simulated seconds" }],
};

/// The longest a lab lets time pass in one command: about 31 years, so the
/// clock arithmetic never overflows.
const MAX_MS: f64 = 1.0e12;

fn seconds(operand: &str) -> Option<f64> {
    let (number, multiplier) = match operand.chars().last()? {
        's' => (&operand[..operand.len() - 1], 1.0),
        'm' => (&operand[..operand.len() - 1], 60.0),
        'h' => (&operand[..operand.len() - 1], 3600.0),
        'd' => (&operand[..operand.len() - 1], 86_400.0),
        _ => (operand, 1.0),
    };
    let lower = number.to_ascii_lowercase();
    let value = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else {
        // strtod's syntax, without Rust's extras: digits, a point, an exponent.
        if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')) {
            return None;
        }
        number.parse::<f64>().ok()?
    };
    (value >= 0.0 && !value.is_nan()).then_some(value * multiplier)
}

impl GnuTool for Sleep {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, _invocation: &Invocation) -> Output {
        if parsed.operands.is_empty() {
            return usage_error("sleep", &COREUTILS, "missing operand");
        }
        let mut total = 0.0;
        let mut errors = String::new();
        for operand in &parsed.operands {
            match seconds(operand) {
                Some(value) => total += value,
                None => errors.push_str(&format!("sleep: invalid time interval {}\n", quote(operand))),
            }
        }
        if !errors.is_empty() {
            errors.push_str("Try 'sleep --help' for more information.\n");
            return Output::error(errors, 1);
        }
        let duration_ms = (total * 1000.0).min(MAX_MS).round() as u64;
        Output { duration_ms, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn advances_the_clock() {
        assert_eq!(run_on_first_node("sleep 2").duration_ms, 2000);
        assert_eq!(run_on_first_node("sleep 0.5s 1m").duration_ms, 60_500);
        assert_eq!(run_on_first_node("sleep inf").duration_ms, 1_000_000_000_000);
        let out = run_on_first_node("sleep 1y");
        assert_eq!((out.stderr.as_str(), out.status), ("sleep: invalid time interval \u{2018}1y\u{2019}\nTry 'sleep --help' for more information.\n", 1));
        assert_eq!(run_on_first_node("sleep").stderr, "sleep: missing operand\nTry 'sleep --help' for more information.\n");
        assert_eq!(run_on_first_node("sleep -1").stderr, "sleep: invalid option -- '1'\nTry 'sleep --help' for more information.\n");
    }
}
