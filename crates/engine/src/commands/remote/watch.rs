//! `watch [-n SECS] [-t] COMMAND...` (procps-ng): runs COMMAND (its words
//! joined, as watch hands them to `sh -c`) through the invocation's runner on
//! this node, with watch's environment, and shows its refreshes (the sampling
//! rule of `commands::sampling`: one at once, one per interval after), each after
//! the clear-screen sequence, under procps' title line: `Every 2.0s: CMD`
//! on the left and `host: date` on the right of an 80-column terminal, then
//! an empty line. The terminal streams the refreshes over the simulated
//! interval; the trainee's Ctrl-C ends it. Each refresh sees the clock
//! advanced by the interval and what earlier refreshes changed; all of it
//! is returned for the shell to apply.

use crate::commands::sampling::Sampling;
use crate::commands::{options, Call, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::time::ctime;

pub struct Watch;

static SIGNATURE: Signature = Signature {
    name: "watch",
    summary: "run a command repeatedly, showing its output full-screen",
    usage: "watch [-n SECONDS] [-t] COMMAND...",
    flags: &[
        Flag { short: Some('n'), long: Some("interval"), value: Some("SECONDS"), help: "seconds between updates (default 2)" },
        Flag { short: Some('t'), long: Some("no-title"), value: None, help: "hide the title line" },
        Flag { short: Some('d'), long: Some("differences"), value: None, help: "highlight changes (accepted)" },
    ],
    examples: &[Example { command: "watch -n 1 nvidia-smi", description: "refresh nvidia-smi every second" }],
};

const COLUMNS: usize = 80;

/// A complaint line, then procps' usage screen.
fn usage(complaint: String) -> Output {
    Output::error(format!("{complaint}\nUsage:\n watch [options] command\n"), 1)
}

impl Command for Watch {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let (mut tenths, mut title, mut at) = (20u64, true, 0);
        while let Some(arg) = args.get(at).filter(|a| a.starts_with('-') && a.len() > 1) {
            at += 1;
            let value = match arg.as_str() {
                "--" => break,
                "-t" | "--no-title" => {
                    title = false;
                    continue;
                }
                "-d" | "--differences" | "-c" | "--color" | "-x" | "--exec" | "-b" | "--beep" | "-p" | "--precise" => continue,
                "-n" | "--interval" => match args.get(at) {
                    Some(v) => {
                        at += 1;
                        v.clone()
                    }
                    None => {
                        let (short, long) = if arg == "-n" { (Some('n'), None) } else { (None, Some("interval")) };
                        return usage(options::requires_argument("watch", short, long));
                    }
                },
                other if other.starts_with("--interval=") => other[11..].to_string(),
                other if other.starts_with("-n") => other[2..].to_string(),
                other => return usage(options::unknown("watch", other)),
            };
            match value.parse::<f64>() {
                // procps clamps the interval to at least 0.1 s.
                Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => tenths = ((seconds * 10.0).round() as u64).clamp(1, 864_000),
                _ => return Output::error(format!("watch: failed to parse argument: '{value}'\n"), 1),
            }
        }
        let line = args[at.min(args.len())..].join(" ");
        if line.is_empty() {
            return usage("watch: no command given\n".to_string());
        }
        let host = &invocation.node.hostname;
        // Each refresh sees the clock moved on and what earlier ones changed.
        let mut out = Output::default();
        let sampling = Sampling { interval_ms: tenths * 100, count: None };
        out.duration_ms = sampling.run(invocation.cluster, |_, now, view| {
            let call = Call { cluster: view, host, env: Some(invocation.env), stdin: "" };
            let result = invocation.runner.run_line(call, &line);
            for change in &result.changes {
                view.apply_change(change, now);
            }
            out.changes.extend(result.changes);
            out.stdout += crate::commands::host::clear::CLEAR_SEQUENCE.trim_end_matches("\x1b[3J");
            if title {
                let left = format!("Every {}.{}s: {line}", tenths / 10, tenths % 10);
                let right = format!("{host}: {}", ctime(now));
                let room = COLUMNS.saturating_sub(right.len() + 1);
                let left: String = if left.len() > room { left.chars().take(room.saturating_sub(3)).collect::<String>() + "..." } else { left };
                out.stdout += &format!("{left}{}{right}\n\n", " ".repeat(COLUMNS.saturating_sub(left.chars().count() + right.len()).max(1)));
            }
            out.stdout += &result.stdout;
            out.stdout += &result.stderr;
            // Past the line's output bound nothing more would be shown: stop
            // refreshing, so watches nested in watches stay bounded in work.
            out.stdout.len() < crate::limits::MAX_OUTPUT_BYTES
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn refreshes_under_a_title() {
        let out = run_on_first_node("watch -n 1 hostname");
        let screens: Vec<&str> = out.stdout.split("\x1b[H\x1b[2J").skip(1).collect();
        assert_eq!(screens.len(), 10);
        assert!(screens[0].starts_with("Every 1.0s: hostname"));
        let title = screens[0].lines().next().unwrap();
        assert_eq!(title.len(), 80);
        assert!(title.contains("   gpu-001: ") && screens[0].ends_with("\n\ngpu-001\n"), "{:?}", screens[0]);
        assert_eq!(out.duration_ms, 10_000);
        assert_eq!(run_on_first_node("watch -t hostname").stdout.matches("\x1b[H\x1b[2Jgpu-001\n").count(), 10);
        assert_eq!(run_on_first_node("watch").status, 1);
        assert_eq!(run_on_first_node("watch -n x hostname").stderr, "watch: failed to parse argument: 'x'\n");
        assert_eq!(run_on_first_node("watch -q ls").status, 1);
        assert!(run_on_first_node("watch 'nvidia-smi -L | wc -l'").stdout.ends_with("\n8\n"));
    }
}
