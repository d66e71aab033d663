//! The deeper authoring checks, run for every checked variant:
//! - each fault is observable: some command, run on the fault's node, prints
//!   something different from the same cluster without that fault;
//! - each question's reference answer grades as correct;
//! - no answer shows before its question is answered, and no state
//!   question expects facts that cannot hold together ([`super::leaks`]).
//!
//! The probe commands are the examples each command declares, so a new tool
//! widens what counts as observable without touching this file.

use std::collections::BTreeSet;

use super::{describe, Compiled, Diagnostic};
use crate::commands;
use crate::lab::{template, VARIANTS_CHECKED};
use crate::model::fault::Fault;
use crate::model::Cluster;
use crate::shell::Session;

/// Examples that reboot a node: run as probes, they would rebuild it in
/// both clusters alike and hide what later probes would show.
const REBOOTS: &[&str] = &["reboot", "shutdown -r", "power cycle"];

/// Every probe command line: the examples of every emulated command that
/// only look.
pub fn probes() -> Vec<&'static str> {
    let examples = commands::all().iter().flat_map(|command| command.signature().examples.iter().map(|e| e.command));
    let mut lines: Vec<&'static str> = examples.filter(|line| !REBOOTS.iter().any(|word| line.contains(word))).collect();
    crate::sort::sort(&mut lines);
    lines.dedup();
    lines
}

/// Whether some probe prints differently on the two clusters, on `host` or,
/// for cluster-wide views such as `sinfo`, on the first node. Both run the
/// same sequence of commands in step, and the first difference ends it
/// (most faults show in the first few probes).
fn shows_difference(with: &Cluster, without: &Cluster, host: &str, probes: &[&str]) -> bool {
    let mut hosts: Vec<&str> = vec![host];
    if let Some(first) = with.nodes.first() {
        if first.hostname != host {
            hosts.push(&first.hostname);
        }
    }
    hosts.into_iter().any(|host| {
        let (mut a, mut b) = (Session::new(with.clone(), host), Session::new(without.clone(), host));
        probes.iter().any(|line| a.run(line).text() != b.run(line).text())
    })
}

/// Problems the deeper checks find, located at the fault or question.
pub fn deep(compiled: &Compiled, source: &str) -> Vec<Diagnostic> {
    let lab = &compiled.lab;
    let probes = probes();
    let seed = 1;
    // Faults change only their own node: compare copies of the nodes the
    // variant's faults name, plus the first node, not the whole cluster.
    let world = lab.cluster_for(&[], seed);
    let mut found: BTreeSet<(usize, usize, String)> = BTreeSet::new();
    for values in template::all_values(&lab.vars, &lab.id, VARIANTS_CHECKED) {
        let (faults, questions, _) = lab.resolve(&values);
        let mut hosts: Vec<&str> = faults.iter().map(|fault| fault.node()).collect();
        hosts.extend(world.nodes.first().map(|node| node.hostname.as_str()));
        let base = world.subset(&hosts);
        for (at, fault) in faults.iter().enumerate() {
            let span = compiled.map.faults[at].table.clone();
            // A link flaps again and again: its flaps at different times are not repeats.
            let flaps_apart = |first: usize| matches!(fault, Fault::HcaLinkFlap { .. }) && lab.faults[first].at != lab.faults[at].at;
            if let Some(first) = faults[..at].iter().position(|earlier| earlier == fault).filter(|first| !flaps_apart(*first)) {
                let line = Diagnostic::at(source, compiled.map.faults[first].table.start, "").line;
                let message = format!("fault `{}` on {} repeats the fault at line {line}; remove one{}", fault.kind(), fault.node(), describe(&values));
                found.insert((span.start, span.end, message));
                continue;
            }
            // Without the fault means without its repeats too (reported
            // above): a copy left in would hide the first one's effect.
            let mut with_fault = base.clone();
            let mut without_fault = base.clone();
            for each in &faults {
                let _ = each.apply(&mut with_fault);
                if each != fault {
                    let _ = each.apply(&mut without_fault);
                }
            }
            if !shows_difference(&with_fault, &without_fault, fault.node(), &probes) {
                found.insert((
                    span.start,
                    span.end,
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
                    spans.table.end,
                    format!("question `{}`: its reference answer does not grade as correct{}", question.id, describe(&values)),
                ));
            }
        }
    }
    for contradiction in super::leaks::contradictions(lab) {
        let span = compiled.map.questions[contradiction.question].table.clone();
        found.insert((span.start, span.end, format!("{}; drop one of the facts, or ask for them in separate questions", contradiction.message)));
    }
    for leak in super::leaks::leaks(lab) {
        let span = compiled.map.questions[leak.question].table.clone();
        found.insert((span.start, span.end, format!("{}; reword it, or give the question a `leak_waiver` saying why this is no leak", leak.message)));
    }
    found.into_iter().map(|(start, end, message)| Diagnostic::spanning(source, start..end, message)).collect()
}
