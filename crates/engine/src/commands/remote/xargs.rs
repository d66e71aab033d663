//! `xargs`: builds command lines from standard input and runs them as
//! programs through the invocation's runner (`-n N` items each, `-I STR`
//! one line each with STR replaced, `-r` nothing on empty input). The
//! number of runs is bounded by the launchers' task limit.

use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::limits::MAX_TASKS;

pub struct Xargs;

static SIGNATURE: Signature = Signature {
    name: "xargs",
    summary: "build and execute command lines from standard input",
    usage: "xargs [OPTION]... COMMAND [INITIAL-ARGS]...",
    flags: &[
        Flag { short: Some('n'), long: Some("max-args"), value: Some("MAX-ARGS"), help: "use at most MAX-ARGS arguments per command line" },
        Flag { short: Some('I'), long: None, value: Some("R"), help: "replace R in INITIAL-ARGS with names read from standard input" },
        Flag { short: Some('r'), long: Some("no-run-if-empty"), value: None, help: "if there are no arguments, then do not run COMMAND" },
        Flag { short: Some('t'), long: Some("verbose"), value: None, help: "print commands before executing them" },
    ],
    examples: &[Example { command: "ibv_devices | awk 'NR>2 {print $1}' | xargs -n1 ibstat", description: "ibstat for each device" }],
};

/// Items as xargs splits its input: blanks and newlines separate, quotes group.
fn items(input: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    let mut started = false;
    for c in input.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !current.is_empty() {
                    items.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            (None, c) => current.push(c),
        }
    }
    if started || !current.is_empty() {
        items.push(current);
    }
    items
}

impl Command for Xargs {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let (mut per_run, mut replace, mut skip_empty, mut verbose) = (None::<usize>, None::<String>, false, false);
        let mut at = 0;
        while let Some(arg) = args.get(at).filter(|a| a.starts_with('-') && a.len() > 1) {
            let value = |at: &mut usize, inline: &str| -> Option<String> {
                if inline.is_empty() {
                    *at += 1;
                    args.get(*at).cloned()
                } else {
                    Some(inline.to_string())
                }
            };
            match arg.as_str() {
                "-r" | "--no-run-if-empty" => skip_empty = true,
                "-t" | "--verbose" => verbose = true,
                _ if arg.starts_with("-n") || arg.starts_with("--max-args=") => {
                    let inline = arg.strip_prefix("--max-args=").or_else(|| arg.strip_prefix("-n")).unwrap_or("");
                    match value(&mut at, inline).and_then(|v| v.parse::<usize>().ok()).filter(|n| *n > 0) {
                        Some(n) => per_run = Some(n),
                        None => return Output::error("xargs: value for -n option should be >= 1\n", 1),
                    }
                }
                _ if arg.starts_with("-I") => match value(&mut at, &arg[2..]) {
                    Some(text) => replace = Some(text),
                    None => return Output::error("xargs: option requires an argument -- 'I'\nTry 'xargs --help' for more information.\n", 1),
                },
                _ => return Output::error(format!("{}Try 'xargs --help' for more information.\n", crate::commands::options::unknown("xargs", arg)), 1),
            }
            at += 1;
        }
        let command: Vec<String> = if at < args.len() { args[at..].to_vec() } else { vec!["echo".to_string()] };
        // The command lines to run.
        let runs: Vec<Vec<String>> = match &replace {
            Some(marker) => invocation
                .stdin
                .lines()
                .filter(|line| !line.trim().is_empty())
                .map(|line| command.iter().map(|word| word.replace(marker.as_str(), line.trim())).collect())
                .collect(),
            None => {
                let items = items(invocation.stdin);
                if items.is_empty() {
                    if skip_empty {
                        Vec::new()
                    } else {
                        vec![command.clone()]
                    }
                } else {
                    let size = per_run.unwrap_or(items.len()).max(1);
                    items.chunks(size).map(|chunk| command.iter().cloned().chain(chunk.iter().cloned()).collect()).collect()
                }
            }
        };
        if runs.len() as u64 > MAX_TASKS {
            return Output::error(format!("xargs: a simulated xargs runs a command at most {MAX_TASKS} times\n"), 1);
        }
        let mut output = Output::default();
        let call = invocation.call_on(&invocation.node.hostname, Some(invocation.env));
        for argv in runs {
            if verbose {
                output.stderr.push_str(&format!("{}\n", argv.join(" ")));
            }
            match invocation.runner.run_program(call, &argv) {
                Some(ran) => {
                    let status = output.absorb(ran);
                    if (1..=125).contains(&status) {
                        output.status = 123;
                    } else if status != 0 {
                        output.status = status;
                        break;
                    }
                    if output.stdout.len() > crate::limits::MAX_OUTPUT_BYTES {
                        break;
                    }
                }
                None => {
                    output.stderr.push_str(&format!("xargs: {}: No such file or directory\n", argv[0]));
                    output.status = 127;
                    break;
                }
            }
        }
        output
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn runs_a_command_per_group_of_items() {
        assert_eq!(run_on_first_node("echo a b c | xargs -n 2 echo x").stdout, "x a b\nx c\n");
        assert_eq!(run_on_first_node("echo mlx5_0 | xargs -I{} ibstat {} | grep -c Rate").stdout, "1\n");
        assert_eq!(run_on_first_node("echo \"'a b' c\" | xargs -n1").stdout, "a b\nc\n");
        assert_eq!(run_on_first_node("echo | xargs -r echo ran").stdout, "");
        let missing = run_on_first_node("echo x | xargs nosuch");
        assert_eq!((missing.stderr.as_str(), missing.status), ("xargs: nosuch: No such file or directory\n", 127));
        assert_eq!(run_on_first_node("echo x y | xargs -n1 false").status, 123);
    }
}
