//! `env` and `printenv` (GNU coreutils). The session keeps its environment
//! sorted by name (a `BTreeMap`), so both print `NAME=value` lines in name
//! order, where a real process prints them in the order it inherited them.
//! `env [-i] [-u NAME] [NAME=VALUE]... COMMAND` runs COMMAND with that
//! environment, as `sudo` runs one.

use std::collections::BTreeMap;

use crate::commands::{options, Command, Example, Flag, Invocation, Output, Signature};

pub struct Env;
pub struct Printenv;

static ENV: Signature = Signature {
    name: "env",
    summary: "print the environment, or run a command in a changed one",
    usage: "env [-i] [-0] [-u NAME]... [NAME=VALUE]... [COMMAND [ARG]...]",
    flags: &[
        Flag { short: Some('i'), long: Some("ignore-environment"), value: None, help: "start with an empty environment" },
        Flag { short: Some('u'), long: Some("unset"), value: Some("NAME"), help: "remove NAME from the environment" },
        Flag { short: Some('0'), long: Some("null"), value: None, help: "end each line with NUL, not newline" },
    ],
    examples: &[Example { command: "env | grep -i nccl", description: "NCCL settings in this shell" }],
};

static PRINTENV: Signature = Signature {
    name: "printenv",
    summary: "print all or part of the environment",
    usage: "printenv [-0] [VARIABLE]...",
    flags: &[Flag { short: Some('0'), long: Some("null"), value: None, help: "end each line with NUL, not newline" }],
    examples: &[Example { command: "printenv PATH", description: "one variable's value" }],
};

fn listing(env: &BTreeMap<String, String>, end: char) -> String {
    // EUID is the shell's, never exported.
    env.iter().filter(|(k, _)| k.as_str() != crate::commands::EUID).map(|(k, v)| format!("{k}={v}{end}")).collect()
}

/// getopt's complaint, then GNU's hint.
fn bad(name: &str, complaint: String, status: i32) -> Output {
    Output::error(format!("{complaint}Try '{name} --help' for more information.\n"), status)
}

impl Command for Env {
    fn signature(&self) -> &'static Signature {
        &ENV
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut env = invocation.env.clone();
        let mut end = '\n';
        let args = invocation.args();
        let mut at = 0;
        // Options stop at the first operand, as env's getopt ("+") does.
        while let Some(arg) = args.get(at).filter(|a| a.starts_with('-') && a.len() > 1) {
            at += 1;
            match arg.as_str() {
                "--" => break,
                "-i" | "--ignore-environment" => env.clear(),
                "-0" | "--null" => end = '\0',
                "-u" | "--unset" => match args.get(at) {
                    Some(name) => {
                        env.remove(name);
                        at += 1;
                    }
                    None => {
                        let (short, long) = if arg == "-u" { (Some('u'), None) } else { (None, Some("unset")) };
                        return bad("env", options::requires_argument("env", short, long), 125);
                    }
                },
                other if other.starts_with("--unset=") => {
                    env.remove(&other[8..]);
                }
                other if other.starts_with("-u") => {
                    env.remove(&other[2..]);
                }
                other => return bad("env", options::unknown("env", other), 125),
            }
        }
        while let Some((name, value)) = args.get(at).and_then(|a| a.split_once('=')) {
            env.insert(name.to_string(), value.to_string());
            at += 1;
        }
        let Some(program) = args.get(at) else {
            return Output::ok(listing(&env, end));
        };
        // The program it starts reads what it was given.
        let call = crate::commands::Call { stdin: invocation.stdin, ..invocation.call_on(&invocation.node.hostname, Some(&env)) };
        invocation
            .runner
            .run_program(call, &args[at..])
            .unwrap_or_else(|| Output::error(format!("env: \u{2018}{program}\u{2019}: No such file or directory\n"), 127))
    }
}

impl Command for Printenv {
    fn signature(&self) -> &'static Signature {
        &PRINTENV
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut end = '\n';
        let mut names = Vec::new();
        for arg in invocation.args() {
            match arg.as_str() {
                "-0" | "--null" => end = '\0',
                flag if flag.starts_with('-') && flag.len() > 1 => return bad("printenv", options::unknown("printenv", flag), 2),
                name => names.push(name),
            }
        }
        if names.is_empty() {
            return Output::ok(listing(invocation.env, end));
        }
        let mut out = Output::default();
        for name in names {
            match invocation.env.get(name).filter(|_| !name.contains('=')) {
                Some(value) => out.stdout += &format!("{value}{end}"),
                None => out.status = 1,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn prints_and_changes_the_environment() {
        let out = run_on_first_node("env");
        assert!(out.stdout.starts_with("HOME=/home/user\nHOSTNAME=gpu-001\n"), "{}", out.stdout);
        let mut shell = session();
        shell.run("export NCCL_DEBUG=INFO");
        assert!(shell.run("env").stdout().contains("\nNCCL_DEBUG=INFO\n"));
        assert_eq!(shell.run("printenv NCCL_DEBUG USER").stdout(), "INFO\nuser\n");
        assert_eq!(shell.run("printenv NOPE").status, 1);
        assert_eq!(shell.run("env -i A=1 B=2").stdout(), "A=1\nB=2\n");
        assert_eq!(shell.run("env -u USER A=1 printenv A USER").stdout(), "1\n");
        assert_eq!(shell.run("env -i A=1 env").stdout(), "A=1\n");
        assert_eq!(shell.run("env nosuch").stderr(), "env: \u{2018}nosuch\u{2019}: No such file or directory\n");
        assert_eq!(shell.run("env -z").status, 125);
        assert_eq!(shell.run("printenv -z").status, 2);
        assert_eq!(shell.run("env -u").status, 125);
    }
}
