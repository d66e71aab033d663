//! What the terminal and the cluster show, for `task` and `state`
//! questions: the engine decides whether one is done, never the trainee's
//! typing. The app checks tasks over its transcript and asks the engine's
//! worker which `state` questions the cluster meets; `clusterlab play` and
//! `clusterlab test` do both here.

use serde::Deserialize;

use super::spec::ExpectSpec;
use super::template::Values;
use super::{Expect, Step};
use crate::model::node::ServiceState;
use crate::perf::collective::all_reduce_busbw;
use crate::model::Cluster;
use crate::store::Entry;

/// Whether `step` matches a line typed on `host`. `ssh HOST CMD` counts as
/// CMD run on HOST, as the trainee meant it.
fn step_matches(step: &Step, host: &str, line: &str) -> bool {
    let line = line.trim();
    let (host, line) = remote(host, line);
    step.host.as_deref().is_none_or(|pattern| crate::pattern::matches(pattern, host)) && crate::pattern::matches(&step.command, line)
}

fn remote<'a>(host: &'a str, line: &'a str) -> (&'a str, &'a str) {
    let Some(rest) = line.strip_prefix("ssh ") else { return (host, line) };
    let mut rest = rest.trim_start();
    loop {
        if let Some(option) = rest.strip_prefix('-') {
            // Options that take a value (`-p 22`, `-o X=Y`, `-i key`, `-l user`).
            let (flag, tail) = option.split_at(option.find(' ').unwrap_or(option.len()));
            rest = tail.trim_start();
            if matches!(flag, "p" | "o" | "i" | "l" | "F" | "J") {
                rest = rest.split_once(' ').map_or("", |(_, tail)| tail).trim_start();
            }
            continue;
        }
        break;
    }
    match rest.split_once(' ') {
        Some((target, command)) if !command.trim().is_empty() => {
            (target.rsplit('@').next().unwrap_or(target), command.trim())
        }
        _ => (host, line),
    }
}

/// Whether the transcript shows a `task` done: `ran` (after `after`, when
/// given). Lines that never ran (given up at the prompt) do not count.
pub fn task_done(ran: &Step, after: Option<&Step>, transcript: &[impl AsRef<Entry>]) -> bool {
    let ran_lines = transcript.iter().map(AsRef::as_ref).filter(|entry| entry.stopped != Some(crate::store::Stop::Cancelled));
    let mut waiting_for_after = after.is_some();
    for entry in ran_lines {
        if waiting_for_after {
            waiting_for_after = !after.is_some_and(|after| step_matches(after, &entry.host, &entry.line));
        } else if step_matches(ran, &entry.host, &entry.line) {
            return true;
        }
    }
    false
}

/// The healthy cluster's all_reduce bus bandwidth, worked out once: a
/// large cluster costs a build of every node.
#[derive(Default)]
pub struct Baseline(std::cell::OnceCell<Option<f64>>);

impl Baseline {
    fn busbw(&self, cluster: &Cluster) -> Option<f64> {
        *self.0.get_or_init(|| all_reduce_busbw(&cluster.healthy()))
    }
}

/// Whether the cluster shows every one of `expect`.
pub fn state_met(expect: &[Expect], cluster: &Cluster, baseline: &Baseline) -> bool {
    expect.iter().all(|fact| fact_holds(fact, cluster, baseline))
}

fn fact_holds(fact: &Expect, cluster: &Cluster, baseline: &Baseline) -> bool {
    match fact {
        Expect::Slurm { node, state, reason } => cluster.node(node).is_some_and(|node| {
            // A drained node still running a job is draining, not drained.
            crate::model::node::SlurmShown::of(node).long() == state
                && reason.as_deref().is_none_or(|pattern| {
                    node.scheduler_reason.as_deref().is_some_and(|given| crate::pattern::matches(pattern, given))
                })
        }),
        Expect::Repaired { node } => {
            cluster.injected.iter().filter(|injected| node.as_deref().is_none_or(|node| injected.fault.node() == node)).all(|i| i.repaired)
        }
        Expect::FabricManager { node, active } => {
            cluster.node(node).is_some_and(|node| (node.fabric_manager == ServiceState::Active) == *active)
        }
        Expect::AllReduce { within } => match (all_reduce_busbw(cluster), baseline.busbw(cluster)) {
            (Some(now), Some(healthy)) => now >= healthy * (1.0 - within),
            _ => false,
        },
        // The job's latest run: an earlier one still waiting does not count.
        Expect::JobProgress { job, within } => cluster.workloads.iter().rev().find(|w| w.spec.name == *job).is_some_and(|workload| {
            let now = cluster.now;
            let pace = match workload.segments.last() {
                Some((_, Ok(pace))) => *pace,
                _ => return false,
            };
            let progressing = workload.spec.name == *job && workload.running_at(now) && workload.iteration_at(now) > workload.resumed_from;
            progressing
                && within.is_none_or(|within| {
                    let healthy = crate::perf::training::pace(&cluster.healthy(), &workload.spec, cluster.storage_gb_per_s());
                    healthy.is_ok_and(|healthy| pace.step_ms <= healthy.step_ms * (1.0 + within))
                })
        }),
    }
}

/// A `state` question as the engine's worker reads it from the lab data:
/// its id and what it expects, the rest of the question skipped.
#[derive(Clone, Debug, Deserialize)]
pub struct StateProbe {
    pub id: String,
    #[serde(default)]
    pub expect: Vec<ExpectSpec>,
}

/// The ids of the state questions the cluster meets, with the variant's values.
pub fn states_met(probes: &[StateProbe], values: &Values, cluster: &Cluster, baseline: &Baseline) -> Vec<String> {
    probes
        .iter()
        .filter(|probe| !probe.expect.is_empty())
        .filter(|probe| {
            let expect: Result<Vec<Expect>, _> = probe.expect.iter().map(|spec| spec.resolve(values)).collect();
            expect.is_ok_and(|expect| state_met(&expect, cluster, baseline))
        })
        .map(|probe| probe.id.clone())
        .collect()
}
