//! The deeper authoring checks, run for every checked variant:
//! - each fault is observable: some command, run on the fault's node, prints
//!   something different from the same cluster without that fault;
//! - each question's reference answer grades as correct.
//!
//! The probe commands are the examples each command declares, so a new tool
//! widens what counts as observable without touching this file.

use std::collections::BTreeSet;

use super::{describe, Compiled, Diagnostic};
use crate::commands;
use crate::lab::{template, VARIANTS_CHECKED};
use crate::model::Cluster;
use crate::shell::Session;

/// Every probe command line: the examples of every emulated command.
pub fn probes() -> Vec<&'static str> {
    let mut lines: Vec<&'static str> =
        commands::all().iter().flat_map(|command| command.signature().examples.iter().map(|e| e.command)).collect();
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// What every probe prints on `host` and, for cluster-wide views such as
/// `sinfo`, on the first node. One shell per host runs the probes in turn,
/// so both clusters compared see the same sequence of commands.
fn observe(cluster: &Cluster, host: &str, probes: &[&str]) -> Vec<String> {
    let mut hosts: Vec<&str> = vec![host];
    if let Some(first) = cluster.nodes.first() {
        if first.hostname != host {
            hosts.push(&first.hostname);
        }
    }
    let mut seen = Vec::new();
    for host in hosts {
        let mut session = Session::new(cluster.clone(), host);
        seen.extend(probes.iter().map(|line| session.run(line).text()));
    }
    seen
}

/// Problems the deeper checks find, located at the fault or question.
pub fn deep(compiled: &Compiled, source: &str) -> Vec<Diagnostic> {
    let lab = &compiled.lab;
    let probes = probes();
    let seed = 1;
    // Faults change only their own node: compare copies of the nodes the
    // variant's faults name, plus the first node, not the whole cluster.
    let world = lab.cluster_for(&[], seed);
    let mut found: BTreeSet<(usize, String)> = BTreeSet::new();
    for values in template::all_values(&lab.vars, &lab.id, VARIANTS_CHECKED) {
        let (faults, questions, _) = lab.resolve(&values);
        let mut hosts: Vec<&str> = faults.iter().map(|fault| fault.node()).collect();
        hosts.extend(world.nodes.first().map(|node| node.hostname.as_str()));
        let base = world.subset(&hosts);
        for (at, fault) in faults.iter().enumerate() {
            let mut with_fault = base.clone();
            let mut without_fault = base.clone();
            for (other, each) in faults.iter().enumerate() {
                let _ = each.apply(&mut with_fault);
                if other != at {
                    let _ = each.apply(&mut without_fault);
                }
            }
            if observe(&with_fault, fault.node(), &probes) == observe(&without_fault, fault.node(), &probes) {
                let span = compiled.map.faults[at].table.clone();
                found.insert((
                    span.start,
                    format!(
                        "fault `{}` on {} is not observable: none of the emulated commands shows a difference{}",
                        fault.kind(),
                        fault.node(),
                        describe(&values)
                    ),
                ));
            }
        }
        for (question, spans) in questions.iter().zip(&compiled.map.questions) {
            if !question.grade(question.reference_answer().as_str()).correct {
                found.insert((
                    spans.table.start,
                    format!("question `{}`: its reference answer does not grade as correct{}", question.id, describe(&values)),
                ));
            }
        }
    }
    found.into_iter().map(|(at, message)| Diagnostic::at(source, at, message)).collect()
}
