//! `clush -w NODESET CMD` (ClusterShell): `node: line` like pdsh, or with
//! `-b` the outputs gathered, each distinct output once under a header
//! (15 dashes, the folded nodeset and its count, 15 dashes), largest groups
//! first. Hosts that fail say `clush: HOST: exited with exit code N`.

use crate::commands::remote::pdsh::{parse_fanout, prefixed, run_all, FanoutError, Switch};
use crate::commands::scheduler::slurm::hostlist;
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Clush;

static SIGNATURE: Signature = Signature {
    name: "clush",
    summary: "run a command on a cluster, gathering identical outputs",
    usage: "clush [-b] [-N] -w NODESET | -a [-x NODESET] COMMAND...",
    flags: &[
        Flag { short: Some('w'), long: None, value: Some("NODESET"), help: "target these nodes" },
        Flag { short: Some('x'), long: None, value: Some("NODESET"), help: "exclude these nodes" },
        Flag { short: Some('a'), long: Some("all"), value: None, help: "target every node" },
        Flag { short: Some('b'), long: Some("dshbak"), value: None, help: "gather nodes with the same output" },
        Flag { short: Some('B'), long: None, value: None, help: "like -b, with standard error too" },
        Flag { short: Some('N'), long: None, value: None, help: "do not prefix output with the node name" },
    ],
    examples: &[
        Example {
            command: "clush -a -b nvidia-smi --query-gpu=name,ecc.errors.uncorrected.volatile.total --format=csv,noheader",
            description: "group nodes by their GPUs' ECC error counts",
        },
        Example { command: "clush -a -b 'systemctl is-active nvidia-fabricmanager'", description: "which nodes run Fabric Manager" },
    ],
};

const SEP: &str = "---------------";

impl Command for Clush {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut gather, mut with_stderr, mut bare) = (false, false, false);
        let parsed = parse_fanout(invocation.args(), "otufl", |switch| match switch {
            Switch::Letter('b') | Switch::Long("--dshbak") => {
                gather = true;
                true
            }
            Switch::Letter('B') => {
                (gather, with_stderr) = (true, true);
                true
            }
            Switch::Letter('N') => {
                bare = true;
                true
            }
            Switch::Letter('q' | 'v' | 'L' | 'S') => true,
            _ => false,
        });
        let options = match parsed {
            Ok(options) => options,
            Err(FanoutError::MissingValue(letter)) => {
                return Output::error(format!("Usage: clush [options] command\n\nclush: error: -{letter} option requires an argument\n"), 2)
            }
            Err(FanoutError::BadHostlist(value)) => return Output::error(format!("clush: Parse error: invalid nodeset {value}\n"), 1),
            Err(FanoutError::UnknownOption(other)) => {
                return Output::error(format!("Usage: clush [options] command\n\nclush: error: no such option: {other}\n"), 2)
            }
        };
        if options.hosts.is_empty() && !options.all {
            return Output::error("clush: error: no node to run on\n", 1);
        }
        if options.command.is_empty() {
            return Output::error("clush: interactive mode is not emulated: give a command\n", 1);
        }
        let (results, changes, duration_ms) = run_all(invocation, &options);
        let (mut stdout, mut stderr, mut status) = (String::new(), String::new(), 0);
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for result in &results {
            let host = &result.host;
            let (out, err, code) = match &result.reached {
                Ok((out, err, code)) => (out.clone(), err.clone(), *code),
                Err(complaint) => (String::new(), complaint.clone(), 255),
            };
            if gather {
                let text = if with_stderr { format!("{out}{err}") } else { out };
                if !with_stderr {
                    stderr += &prefixed(host, &err);
                }
                if !text.is_empty() {
                    match groups.iter_mut().find(|(t, _)| *t == text) {
                        Some((_, hosts)) => hosts.push(host.clone()),
                        None => groups.push((text, vec![host.clone()])),
                    }
                }
            } else if bare {
                stdout += &out;
                stderr += &err;
            } else {
                stdout += &prefixed(host, &out);
                stderr += &prefixed(host, &err);
            }
            if code != 0 {
                stderr += &format!("clush: {host}: exited with exit code {code}\n");
                status = status.max(code);
            }
        }
        crate::sort::sort_by(&mut groups, |a, b| b.1.len().cmp(&a.1.len()).then_with(|| hostlist::compress(&a.1).cmp(&hostlist::compress(&b.1))));
        for (text, hosts) in groups {
            let count = if hosts.len() > 1 { format!(" ({})", hosts.len()) } else { String::new() };
            stdout += &format!("{SEP}\n{}{count}\n{SEP}\n{text}", hostlist::compress(&hosts));
        }
        Output { stdout, stderr, status, duration_ms, changes, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn gathers_identical_outputs() {
        let out = run_on_first_node("clush -w gpu-[001-002] -b 'nvidia-smi -L | wc -l'");
        assert_eq!(out.stdout, "---------------\ngpu-[001-002] (2)\n---------------\n8\n");
        assert_eq!(run_on_first_node("clush -w gpu-001,gpu-002 hostname").stdout, "gpu-001: gpu-001\ngpu-002: gpu-002\n");
        let mut shell = session();
        shell.cluster.node_mut("gpu-002").unwrap().hang();
        let out = shell.run("clush -a -b hostname");
        assert_eq!(out.stdout(), "---------------\ngpu-001\n---------------\ngpu-001\n");
        assert!(out.stderr().ends_with("clush: gpu-002: exited with exit code 255\n"));
        assert_eq!(out.status, 255);
    }
}
