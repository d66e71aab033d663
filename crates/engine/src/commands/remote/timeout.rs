//! `timeout DURATION COMMAND...` (GNU coreutils 8.32): runs a program
//! through the invocation's runner and, when it would run past DURATION
//! on the simulated clock, stops it there: status 124 (or the signal's
//! 128+N with `--preserve-status`), the lines it had printed by then (its
//! output is taken to come at an even pace), and what it ran recorded as
//! killed, so that it proves nothing to grading.

use crate::commands::host::kill::signal_name;
use crate::commands::options::{getopt, quote, usage_error, Dialect, Opt};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Timeout;

static SIGNATURE: Signature = Signature {
    name: "timeout",
    summary: "run a command with a time limit",
    usage: "timeout [OPTION] DURATION COMMAND [ARG]...",
    flags: &[
        Flag { short: None, long: Some("preserve-status"), value: None, help: "exit with the same status as COMMAND, even when the command times out" },
        Flag {
            short: None,
            long: Some("foreground"),
            value: None,
            help: "when not running timeout directly from a shell prompt, allow COMMAND to read from the TTY",
        },
        Flag {
            short: Some('k'),
            long: Some("kill-after"),
            value: Some("DURATION"),
            help: "also send a KILL signal if COMMAND is still running this long after the initial signal",
        },
        Flag { short: Some('s'), long: Some("signal"), value: Some("SIGNAL"), help: "specify the signal to be sent on timeout" },
        Flag { short: Some('v'), long: Some("verbose"), value: None, help: "diagnose to stderr any signal sent upon timeout" },
    ],
    examples: &[Example { command: "timeout 30 ib_write_bw -d mlx5_0", description: "a server that gives up after 30 seconds without a client" }],
};

/// timeout's usage errors exit 125, its own failures' status.
const DIALECT: Dialect = Dialect { usage_status: 125, usage_line: None, numeric_option: false, optional_values: &[] };

/// `10`, `2.5s`, `5m`, `1h`, `1d` in milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    let (number, unit) = match text.char_indices().last()? {
        (at, 's') => (&text[..at], 1_000.0),
        (at, 'm') => (&text[..at], 60_000.0),
        (at, 'h') => (&text[..at], 3_600_000.0),
        (at, 'd') => (&text[..at], 86_400_000.0),
        _ => (text, 1_000.0),
    };
    let value: f64 = number.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    // Past a year is as good as no limit.
    Some((value * unit).min(365.0 * 86_400_000.0) as u64)
}

/// The signals timeout knows by name (their names: `kill::signal_name`).
const SIGNALS: [i32; 7] = [1, 2, 3, 9, 10, 12, 15];

fn name_of(number: i32) -> Option<String> {
    SIGNALS.contains(&number).then(|| signal_name(number.unsigned_abs())).flatten()
}

/// A signal by name or number: `TERM`, `SIGKILL`, `9`.
fn signal_number(text: &str) -> Option<i32> {
    if let Ok(number) = text.parse::<i32>() {
        return (1..=64).contains(&number).then_some(number);
    }
    let name = text.strip_prefix("SIG").unwrap_or(text);
    SIGNALS.into_iter().find(|number| name_of(*number).as_deref() == Some(name))
}

impl Command for Timeout {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        // Options end at the duration: what follows is the command's.
        let args = invocation.args();
        let mut options_end = 0;
        while let Some(arg) = args.get(options_end) {
            if arg == "--" {
                options_end += 1;
                break;
            }
            if !arg.starts_with('-') || arg == "-" {
                break;
            }
            options_end += if matches!(arg.as_str(), "-k" | "-s" | "--kill-after" | "--signal") { 2 } else { 1 };
        }
        let options_end = options_end.min(args.len());
        let parsed = match getopt(&SIGNATURE, &DIALECT, &args[..options_end]) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let mut operands = parsed.operands.clone();
        operands.extend(args[options_end..].iter().cloned());
        let mut signal = 15;
        let mut preserve = false;
        let mut verbose = false;
        for opt in &parsed.options {
            let Opt::Flag(flag, value) = opt else { continue };
            match (flag.long, value) {
                (Some("signal"), Some(value)) => match signal_number(value) {
                    Some(number) => signal = number,
                    None => return usage_error("timeout", &DIALECT, &format!("{value}: invalid signal")),
                },
                (Some("kill-after"), Some(value)) if duration_ms(value).is_none() => {
                    return usage_error("timeout", &DIALECT, &format!("invalid time interval {}", quote(value)));
                }
                (Some("preserve-status"), _) => preserve = true,
                (Some("verbose"), _) => verbose = true,
                _ => {}
            }
        }
        let Some(limit) = operands.first() else {
            return usage_error("timeout", &DIALECT, "missing operand");
        };
        let Some(limit_ms) = duration_ms(limit) else {
            return usage_error("timeout", &DIALECT, &format!("invalid time interval {}", quote(limit)));
        };
        let Some(name) = operands.get(1) else {
            return usage_error("timeout", &DIALECT, &format!("missing operand after {}", quote(limit)));
        };
        let mark = invocation.runner.executions().len();
        // The program it starts reads what it was given.
        let call = crate::commands::Call { stdin: invocation.stdin, ..invocation.call_on(&invocation.node.hostname, Some(invocation.env)) };
        let Some(mut ran) = invocation.runner.run_program(call, &operands[1..]) else {
            return Output::error(format!("timeout: failed to run command {}: No such file or directory\n", quote(name)), 127);
        };
        // A limit of 0 disables the timeout.
        if limit_ms == 0 || ran.duration_ms <= limit_ms {
            return ran;
        }
        invocation.runner.executions().terminate(mark);
        let lines = ran.stdout.split_inclusive('\n').count() as u64;
        let kept = (lines * limit_ms / ran.duration_ms.max(1)) as usize;
        ran.stdout = ran.stdout.split_inclusive('\n').take(kept).collect();
        ran.duration_ms = limit_ms;
        ran.status = if preserve { 128 + signal } else { 124 };
        if verbose {
            let shown = name_of(signal).unwrap_or_else(|| signal.to_string());
            ran.stderr += &format!("timeout: sending signal {shown} to command {}\n", quote(name));
        }
        ran
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn stops_what_runs_too_long() {
        let out = run_on_first_node("timeout 5 sleep 30");
        assert_eq!((out.status, out.duration_ms), (124, 5_000));
        let out = run_on_first_node("timeout 1m sleep 30");
        assert_eq!((out.status, out.duration_ms), (0, 30_000));
        assert_eq!(run_on_first_node("timeout --preserve-status 5 sleep 30").status, 143);
        assert_eq!(run_on_first_node("timeout -s KILL --preserve-status 5 sleep 30").status, 137);
        assert_eq!(run_on_first_node("timeout -v 5 sleep 30").stderr, "timeout: sending signal TERM to command \u{2018}sleep\u{2019}\n");
        assert_eq!(run_on_first_node("timeout 0 sleep 30").status, 0);
        assert_eq!(run_on_first_node("timeout 5 hostname").stdout, "gpu-001\n");
    }

    #[test]
    fn errors_as_coreutils_words_them() {
        let out = run_on_first_node("timeout");
        assert_eq!((out.stderr.as_str(), out.status), ("timeout: missing operand\nTry 'timeout --help' for more information.\n", 125));
        let out = run_on_first_node("timeout x sleep 1");
        assert_eq!((out.stderr.as_str(), out.status), ("timeout: invalid time interval \u{2018}x\u{2019}\nTry 'timeout --help' for more information.\n", 125));
        let out = run_on_first_node("timeout 5 nosuch");
        assert_eq!((out.stderr.as_str(), out.status), ("timeout: failed to run command \u{2018}nosuch\u{2019}: No such file or directory\n", 127));
        assert_eq!(run_on_first_node("timeout 5").status, 125);
        assert_eq!(run_on_first_node("timeout -s NOPE 5 sleep 1").status, 125);
    }
}
