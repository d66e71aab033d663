//! What the terminal and the cluster show, for `task` and `state`
//! questions: the engine decides whether one is done, never the trainee's
//! typing. A task is judged on the executions the engine recorded (what
//! ran, where, how it ended, what held when it started); a state question
//! on the cluster's facts ([`crate::facts`]).

use serde::Deserialize;

use super::spec::{AfterSpec, ExpectSpec};
use super::template::Values;
use super::{After, Fact, OptionMatch, RunMatch, StatusMatch};
use crate::commands::execution::Execution;
pub use crate::facts::Baseline;
use crate::facts::{Observed, Watch};
use crate::model::Cluster;

/// The id under which a task's `after` fact is watched.
pub fn after_id(question: &str) -> String {
    format!("{question}/after")
}

/// The id under which a task's output pattern is watched.
pub fn output_id(question: &str) -> String {
    format!("{question}/output")
}

/// What the worker reports for the `at`th fact of a state question that
/// holds while the question as a whole does not yet.
pub fn condition_id(question: &str, at: usize) -> String {
    format!("{question}/{at}")
}

/// Whether `execution` is the run `wanted` describes, the hosts aside
/// (checked by the caller, over one or several runs).
fn run_matches(wanted: &RunMatch, execution: &Execution, question: &str) -> bool {
    let status = match wanted.status {
        StatusMatch::Success => execution.status == 0,
        // A failure of its own: Ctrl-C (130) stops a program, it does not fail it.
        StatusMatch::Failure => execution.status != 0 && execution.status != 130,
        StatusMatch::Any => true,
    };
    let options = wanted.options.iter().all(|(name, matcher)| match (matcher, execution.option(name)) {
        (OptionMatch::Present, found) => found.is_some(),
        (OptionMatch::Absent, found) => found.is_none(),
        (OptionMatch::Value(pattern), Some(Some(value))) => crate::pattern::matches(pattern, value),
        (OptionMatch::Value(_), _) => false,
    });
    let mut operands = execution.operands.iter();
    let operands_ok = wanted.operands.iter().all(|pattern| operands.any(|operand| crate::pattern::matches(pattern, operand)));
    let span = wanted.span.is_none_or(|span| execution.ran_on().len() >= span as usize);
    let output = wanted.output.is_none() || execution.matched.contains(&output_id(question));
    execution.program == wanted.program && status && options && operands_ok && span && output
}

fn host_matches(wanted: &RunMatch, execution: &Execution) -> bool {
    wanted.host.as_deref().is_none_or(|pattern| execution.ran_on().iter().any(|host| crate::pattern::matches(pattern, host)))
}

/// What a task check found: whether it is done, and the trainee's runs of
/// the program that did not count (for "how it was read").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskReading {
    pub done: bool,
    /// The last few runs of the program that did not count, in words.
    pub tried: Vec<String>,
}

/// Whether `executions` (in the order they started, lines that never ran
/// left out) show the task `question` done: `run` (after `after`).
pub fn task_done<'e>(question: &str, run: &RunMatch, after: Option<&After>, executions: impl IntoIterator<Item = &'e Execution>) -> TaskReading {
    let executions: Vec<&Execution> = executions.into_iter().collect();
    let start = match after {
        Some(After::Run(first)) => match executions.iter().position(|e| run_matches(first, e, question) && host_matches(first, e) && covers(first, &[e])) {
            Some(at) => at + 1,
            None => executions.len(),
        },
        _ => 0,
    };
    let after_fact = |execution: &Execution| match after {
        Some(After::Fact(_)) => execution.held.contains(&after_id(question)),
        _ => true,
    };
    let counted: Vec<&Execution> =
        executions[start..].iter().copied().filter(|e| run_matches(run, e, question) && host_matches(run, e) && after_fact(e)).collect();
    let done = !counted.is_empty() && covers(run, &counted);
    let mut tried: Vec<String> = executions
        .iter()
        .filter(|e| e.program == run.program && !counted.iter().any(|c| std::ptr::eq(*c, **e)))
        .map(|e| {
            let hosts = e.ran_on().join(",");
            let ended = match e.status {
                0 => "succeeded".to_string(),
                status => format!("exited {status}"),
            };
            format!("`{}` on {hosts} {ended}", e.display())
        })
        .collect();
    let keep = tried.len().saturating_sub(3);
    tried.drain(..keep);
    TaskReading { done, tried }
}

/// Whether the runs together reached every host the task names.
fn covers(run: &RunMatch, executions: &[&Execution]) -> bool {
    run.hosts.iter().all(|host| executions.iter().any(|e| e.ran_on().contains(&host.as_str())))
}

/// Whether the cluster shows every one of `expect`, and what it shows.
pub fn state_observed(expect: &[Fact], cluster: &Cluster, baseline: &Baseline) -> Vec<(Fact, Observed)> {
    expect.iter().map(|fact| (fact.clone(), fact.observe(cluster, baseline))).collect()
}

/// Whether the cluster shows every one of `expect`.
pub fn state_met(expect: &[Fact], cluster: &Cluster, baseline: &Baseline) -> bool {
    expect.iter().all(|fact| fact.holds(cluster, baseline))
}

/// What the engine's worker reads of a question from the lab data: its id,
/// and what a `state` or `task` question watches; the rest is skipped.
#[derive(Clone, Debug, Deserialize)]
pub struct QuestionProbe {
    pub id: String,
    #[serde(default)]
    pub expect: Vec<ExpectSpec>,
    #[serde(default)]
    pub after: Option<AfterSpec>,
    #[serde(default)]
    pub run: Option<RunProbe>,
}

/// A task's run, as far as the worker watches it.
#[derive(Clone, Debug, Deserialize)]
pub struct RunProbe {
    #[serde(default)]
    pub program: String,
    #[serde(default)]
    pub output: Option<String>,
}

/// The ids of the state questions the cluster meets, with the variant's values.
pub fn states_met(probes: &[QuestionProbe], values: &Values, cluster: &Cluster, baseline: &Baseline) -> Vec<String> {
    let mut met = Vec::new();
    for probe in probes.iter().filter(|probe| !probe.expect.is_empty()) {
        let Ok(expect) = probe.expect.iter().map(|spec| spec.resolve(values)).collect::<Result<Vec<Fact>, _>>() else { continue };
        report_state(&probe.id, &expect, cluster, baseline, &mut met);
    }
    met
}

/// A state question met (its id), or which of its conditions hold already,
/// so that a "Not yet" can say which do not.
fn report_state(id: &str, expect: &[Fact], cluster: &Cluster, baseline: &Baseline, met: &mut Vec<String>) {
    let holding: Vec<usize> = expect.iter().enumerate().filter(|(_, fact)| fact.holds(cluster, baseline)).map(|(at, _)| at).collect();
    if holding.len() == expect.len() {
        met.push(id.to_string());
    } else {
        met.extend(holding.into_iter().map(|at| condition_id(id, at)));
    }
}

/// What a session of this variant watches as programs run: each task's
/// `after` fact and output pattern, by [`after_id`] and [`output_id`].
pub fn watch(probes: &[QuestionProbe], values: &Values) -> Watch {
    let mut facts = Vec::new();
    let mut outputs = Vec::new();
    for probe in probes {
        if let Some(Ok(super::After::Fact(fact))) = probe.after.as_ref().map(|after| after.resolve(values)) {
            let program = probe.run.as_ref().map_or_else(String::new, |run| super::template::substitute(&run.program, values).unwrap_or_default());
            facts.push((after_id(&probe.id), fact, program));
        }
        if let Some(pattern) = probe.run.as_ref().and_then(|run| run.output.as_ref()) {
            if let Ok(pattern) = super::template::substitute(pattern, values) {
                outputs.push((output_id(&probe.id), pattern));
            }
        }
    }
    Watch::new(facts, outputs)
}

/// The actions the executions show taken, by the names a handoff claims
/// them with (`drain`, `resume`, `reset`, `repair`, `restart`, `cancel`,
/// `relaunch`): each a program that succeeded.
pub fn actions_taken<'e>(executions: impl IntoIterator<Item = &'e Execution>) -> Vec<String> {
    let mut taken: Vec<String> = Vec::new();
    for execution in executions.into_iter().filter(|e| e.status == 0) {
        let operand = |wanted: &[&str]| {
            execution.operands.iter().any(|operand| {
                let operand = operand.to_ascii_lowercase();
                wanted.iter().any(|w| operand == *w || operand.starts_with(&format!("state={w}")))
            })
        };
        let first = execution.operands.first().map(|word| word.to_ascii_lowercase());
        let first = first.as_deref();
        let action = match execution.program.as_str() {
            "scontrol" if first == Some("update") && operand(&["drain"]) => Some("drain"),
            "scontrol" if first == Some("update") && operand(&["resume", "undrain", "idle"]) => Some("resume"),
            "nvidia-smi" if execution.option("gpu-reset").is_some() => Some("reset"),
            "dctech" if first.is_some_and(|action| crate::model::change::REPAIR_ACTIONS.iter().any(|(name, _)| *name == action)) => Some("repair"),
            "systemctl" if matches!(first, Some("restart" | "start")) => Some("restart"),
            // A job named, a script (or --wrap) submitted: not `--help`.
            "scancel" if !execution.operands.is_empty() => Some("cancel"),
            "sbatch" if first.is_some() || execution.option("wrap").is_some() => Some("relaunch"),
            _ => None,
        };
        if let Some(action) = action.filter(|a| !taken.iter().any(|t| t == a)) {
            taken.push(action.to_string());
        }
    }
    taken
}

/// The ids of the questions whose facts the cluster shows: state questions
/// met, handoffs whose incident is closed. What the worker reports as
/// `met`, worked out from resolved questions (the CLI's sessions).
pub fn met(questions: &[super::Question], cluster: &Cluster, baseline: &Baseline) -> Vec<String> {
    let mut met = Vec::new();
    for question in questions {
        match &question.kind {
            super::QuestionKind::State { expect } => report_state(&question.id, expect, cluster, baseline, &mut met),
            super::QuestionKind::Handoff { closed_when, .. } if !closed_when.is_empty() && state_met(closed_when, cluster, baseline) => {
                met.push(question.id.clone());
            }
            _ => {}
        }
    }
    met
}
