//! `pdsh -w HOSTLIST CMD`: runs CMD on each target in a login shell there
//! (through the invocation's runner, over the whole cluster), prefixing every line with
//! `host: ` as pdsh does. Hosts answer in hostlist order (deterministic, where
//! pdsh prints in arrival order). A host that is down or unknown gets ssh's
//! complaint and `pdsh@HOST: TARGET: ssh exited with exit code 255`. What
//! the commands change (a restart, say) is returned for the shell to apply.
//! `clush.rs` shares the fan-out.

use std::collections::BTreeSet;

use crate::commands::scheduler::slurm::hostlist;
use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::change::Change;

pub struct Pdsh;

static SIGNATURE: Signature = Signature {
    name: "pdsh",
    summary: "run a command on many nodes in parallel",
    usage: "pdsh [-S] [-N] -w HOSTLIST | -a [-x HOSTLIST] COMMAND...",
    flags: &[
        crate::commands::Flag { short: Some('w'), long: None, value: Some("HOSTLIST"), help: "target these hosts, e.g. gpu-[001-004]" },
        crate::commands::Flag { short: Some('x'), long: None, value: Some("HOSTLIST"), help: "exclude these hosts" },
        crate::commands::Flag { short: Some('a'), long: None, value: None, help: "target every node of the cluster" },
        crate::commands::Flag { short: Some('S'), long: None, value: None, help: "return the largest of the remote commands' exit statuses" },
        crate::commands::Flag { short: Some('N'), long: None, value: None, help: "do not prefix output with the host name" },
    ],
    examples: &[
        Example { command: "pdsh -a nvidia-smi -L | sort", description: "the GPUs every node sees" },
        Example { command: "pdsh -a 'systemctl is-active nvidia-fabricmanager'", description: "Fabric Manager on every node" },
    ],
};

/// What one host answered.
pub struct HostResult {
    pub host: String,
    /// None when ssh could not reach the host: its complaint instead.
    pub reached: Result<(String, String, i32), String>,
}

/// Options shared by pdsh and clush.
#[derive(Default)]
pub struct Fanout {
    pub hosts: Vec<String>,
    pub exclude: Vec<String>,
    pub all: bool,
    pub command: Vec<String>,
}

/// Why a fan-out command line was refused; each tool words it its own way.
pub enum FanoutError {
    MissingValue(char),
    BadHostlist(String),
    /// The option as written: `-z` or `--zzz`.
    UnknownOption(String),
}

/// A switch of the tool's own: a letter (`-b`) or a long word (`--dshbak`).
pub enum Switch<'a> {
    Letter(char),
    Long(&'a str),
}

/// Reads `-w LIST`, `-x LIST`, `-a`/`--all`, the value options in
/// `takes_value` and the tool's own switches (`switch` answers whether it
/// knows one), up to the first operand, where the command starts.
pub fn parse_fanout(args: &[String], takes_value: &str, mut switch: impl FnMut(Switch) -> bool) -> Result<Fanout, FanoutError> {
    let mut options = Fanout::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if !arg.starts_with('-') || arg == "-" {
            options.command.push(arg.clone());
            options.command.extend(args.by_ref().cloned());
            break;
        }
        if arg.starts_with("--") {
            if arg == "--all" {
                options.all = true;
            } else if !switch(Switch::Long(arg)) {
                return Err(FanoutError::UnknownOption(arg.clone()));
            }
            continue;
        }
        let mut letters = arg[1..].chars();
        while let Some(letter) = letters.next() {
            if letter == 'a' {
                options.all = true;
            } else if letter == 'w' || letter == 'x' || takes_value.contains(letter) {
                let rest: String = letters.by_ref().collect();
                let value = if rest.is_empty() { args.next().cloned() } else { Some(rest) };
                let value = value.ok_or(FanoutError::MissingValue(letter))?;
                if letter == 'w' || letter == 'x' {
                    let names = expand(&value).ok_or(FanoutError::BadHostlist(value))?;
                    if letter == 'w' {
                        options.hosts.extend(names)
                    } else {
                        options.exclude.extend(names)
                    }
                }
            } else if !switch(Switch::Letter(letter)) {
                return Err(FanoutError::UnknownOption(format!("-{letter}")));
            }
        }
    }
    Ok(options)
}

/// Runs the command on each host; returns the results, the changes and
/// the longest duration.
pub fn run_all(invocation: &Invocation, options: &Fanout) -> (Vec<HostResult>, Vec<Change>, u64) {
    let cluster = invocation.cluster;
    let mut hosts: Vec<String> = if options.all { cluster.nodes.iter().map(|n| n.hostname.clone()).collect() } else { options.hosts.clone() };
    let excluded: BTreeSet<&String> = options.exclude.iter().collect();
    hosts.retain(|h| !excluded.contains(h));
    let mut seen = BTreeSet::new();
    hosts.retain(|h| seen.insert(h.clone()));
    let line = options.command.join(" ");
    let (mut results, mut changes, mut longest) = (Vec::new(), Vec::new(), 0);
    for host in hosts {
        let reached = match cluster.node(&host) {
            None => Err(format!("ssh: Could not resolve hostname {host}: Name or service not known\n")),
            Some(node) if !node.up(cluster.now) => Err(format!("ssh: connect to host {host} port 22: No route to host\n")),
            Some(_) => {
                let output = invocation.runner.run_line(invocation.call_on(&host, None), &line);
                changes.extend(output.changes);
                longest = longest.max(output.duration_ms);
                Ok((output.stdout, output.stderr, output.status))
            }
        };
        results.push(HostResult { host, reached });
    }
    (results, changes, longest + 300)
}

/// Expands a `-w` value (comma-separated hostlists) or answers with None.
pub fn expand(list: &str) -> Option<Vec<String>> {
    hostlist::expand(list).filter(|names| names.iter().all(|n| !n.is_empty()))
}

/// Prefixes each line of `text` with `host: `.
pub fn prefixed(host: &str, text: &str) -> String {
    text.lines().map(|line| format!("{host}: {line}\n")).collect()
}

impl Command for Pdsh {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let me = &invocation.node.hostname;
        let (mut largest, mut bare) = (false, false);
        let parsed = parse_fanout(invocation.args(), "Rftul", |switch| match switch {
            Switch::Letter('S') => {
                largest = true;
                true
            }
            Switch::Letter('N') => {
                bare = true;
                true
            }
            _ => false,
        });
        let options = match parsed {
            Ok(options) => options,
            Err(FanoutError::MissingValue(letter)) => {
                return Output::error(crate::commands::options::requires_argument(&format!("pdsh@{me}"), Some(letter), None), 1)
            }
            Err(FanoutError::BadHostlist(value)) => return Output::error(format!("pdsh@{me}: invalid hostlist: {value}\n"), 1),
            Err(FanoutError::UnknownOption(other)) => {
                let letter = other.trim_start_matches('-').chars().next().unwrap_or('-');
                let complaint = crate::commands::options::invalid(&format!("pdsh@{me}"), letter);
                return Output::error(format!("{complaint}Usage: pdsh [-options] command ...\n"), 1);
            }
        };
        if options.hosts.is_empty() && !options.all {
            return Output::error(format!("pdsh@{me}: no remote hosts specified\n"), 1);
        }
        if options.command.is_empty() {
            // Interactive mode needs a terminal the lab does not give pdsh.
            return Output::error(format!("pdsh@{me}: interactive mode is not emulated: give a command\n"), 1);
        }
        let (results, changes, duration_ms) = run_all(invocation, &options);
        let (mut stdout, mut stderr, mut status) = (String::new(), String::new(), 0);
        for result in &results {
            let host = &result.host;
            let shown = |text: &str| if bare { text.to_string() } else { prefixed(host, text) };
            match &result.reached {
                Ok((out, err, code)) => {
                    stdout += &shown(out);
                    stderr += &shown(err);
                    if *code != 0 {
                        stderr += &format!("pdsh@{me}: {host}: ssh exited with exit code {code}\n");
                    }
                    if largest {
                        status = status.max(*code);
                    }
                }
                Err(complaint) => {
                    stderr += &prefixed(host, complaint);
                    stderr += &format!("pdsh@{me}: {host}: ssh exited with exit code 255\n");
                    status = if largest { 255 } else { status.max(1) };
                }
            }
        }
        Output { stdout, stderr, status, duration_ms, changes, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn fans_out_with_prefixes() {
        let out = run_on_first_node("pdsh -w gpu-[001-002] hostname");
        assert_eq!(out.stdout, "gpu-001: gpu-001\ngpu-002: gpu-002\n");
        assert_eq!(run_on_first_node("pdsh -w gpu-002 'nvidia-smi -L | wc -l'").stdout, "gpu-002: 8\n");
        let mut shell = session();
        shell.cluster.node_mut("gpu-002").unwrap().hang();
        let out = shell.run("pdsh -a hostname");
        assert_eq!(out.stdout(), "gpu-001: gpu-001\n");
        assert_eq!(out.stderr(), "gpu-002: ssh: connect to host gpu-002 port 22: No route to host\npdsh@gpu-001: gpu-002: ssh exited with exit code 255\n");
        assert_eq!(run_on_first_node("pdsh hostname").status, 1);
        assert_eq!(run_on_first_node("pdsh -w gpu-[1-").status, 1);
    }
}
