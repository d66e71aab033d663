//! The deeper authoring checks, run for every checked variant:
//! - each fault is observable: some command, run on the fault's node, prints
//!   something different from the same cluster without that fault;
//! - each question's reference answer grades as correct.
//!
//! The probe commands are the examples each command declares, so a new tool
//! widens what counts as observable without touching this file.

use std::collections::BTreeSet;

use super::template::{self, Values};
use super::{Diagnostic, Lab, VARIANTS_CHECKED};
use crate::commands;
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

/// What every probe prints on `host`, and on every node's view of `host`
/// (cluster-wide tools such as `sinfo` run from the first node).
fn observe(cluster: &Cluster, host: &str, probes: &[&str]) -> Vec<String> {
    let mut hosts: Vec<&str> = vec![host];
    if let Some(first) = cluster.nodes.first() {
        if first.hostname != host {
            hosts.push(&first.hostname);
        }
    }
    hosts
        .iter()
        .flat_map(|host| {
            probes.iter().map(move |line| {
                let mut session = Session::new(cluster.clone(), host);
                session.run(line).text()
            })
        })
        .collect()
}

/// Problems the deeper checks find, located at the fault or question.
pub fn deep(lab: &Lab, source: &str) -> Vec<Diagnostic> {
    let probes = probes();
    let mut found: BTreeSet<(usize, String)> = BTreeSet::new();
    for values in template::all_values(&lab.vars, &lab.id, VARIANTS_CHECKED) {
        let (faults, questions, _) = lab.resolve(&values);
        for (at, fault) in faults.iter().enumerate() {
            let without: Vec<_> = faults.iter().enumerate().filter(|(i, _)| *i != at).map(|(_, f)| f.clone()).collect();
            let seed = 1;
            let with_fault = observe(&lab.cluster_for(&faults, seed), fault.node(), &probes);
            let without_fault = observe(&lab.cluster_for(&without, seed), fault.node(), &probes);
            if with_fault == without_fault {
                let span = lab.faults[at].span();
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
        for (question, table) in questions.iter().zip(&lab.questions) {
            if !question.grade(question.reference_answer().as_str()).correct {
                found.insert((
                    table.span().start,
                    format!("question `{}`: its reference answer does not grade as correct{}", question.id, describe(&values)),
                ));
            }
        }
    }
    found.into_iter().map(|(at, message)| Diagnostic::at(source, at, message)).collect()
}

fn describe(values: &Values) -> String {
    super::describe(values)
}
