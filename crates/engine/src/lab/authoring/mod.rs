//! Authoring: lab files as instructors write them (TOML), checked into a
//! [`Lab`]. Only the CLI (and, later, the author page) links this module;
//! the trainee's app gets labs as data.
//!
//! [`compile`] parses strictly (unknown keys are errors, with a "did you
//! mean"), checks every variant of the lab (each fault names hardware the
//! cluster has, each answer is among its choices, every `{var}` is defined)
//! and reports each problem at a line and column. [`check::deep`] adds the
//! slower checks (every fault observable, every reference answer graded
//! correct). The format is documented in docs/authoring.md; its names are a
//! contract.

pub mod adversary;
pub mod build;
pub mod check;
pub mod diagnostic;
pub mod file;
pub mod highlight;
pub mod jobs;
pub mod leaks;
pub mod live;
pub mod markdown;
pub mod pods;
pub mod schema;
pub mod share;
pub mod solution;

use std::collections::BTreeSet;
use std::ops::Range;

use super::spec::{parse_tolerance, AfterSpec, AnswerSpec, ExpectSpec, FaultSpec, HandoffFieldSpec, LinksSpec, QuestionSpec, RunSpec, RUN_STATUSES};
use super::template::{self, Values, Var, VarSpec};
use super::{Lab, Policy, Tolerance, Unresolved, ENTITIES, FABRICS, FAULT_KINDS, LEVELS, MAX_NODES, MAX_REQUIRES, QUESTION_TYPES, STAGES, VARIANTS_CHECKED};
use crate::limits::{MAX_FAULTS, MAX_LAB_BYTES, MAX_QUESTIONS, MAX_VAR_VALUES};
use crate::model::change::{RepairTarget, REPAIR_ACTIONS};
use crate::model::fabric::LinkLayer;
use crate::model::fault;
use crate::model::{preset, Cluster, ClusterConfig};
pub use diagnostic::Diagnostic;
use file::{AfterTable, AnswerValue, ExpectTable, FaultTable, Links, OptionValue, Problem, QuestionTable, RunTable, Scalar, Spanned};

/// Where a table's fields are in the file.
#[derive(Clone, Debug, Default)]
pub struct FieldSpans {
    pub table: Range<usize>,
    pub fields: Vec<(&'static str, Range<usize>)>,
}

impl FieldSpans {
    /// The field's location, or the table's when the field is absent.
    pub fn of(&self, field: &str) -> Range<usize> {
        self.fields.iter().find(|(name, _)| *name == field).map_or(self.table.clone(), |(_, span)| span.clone())
    }
}

/// Where the parts of a lab are in its file, for located problems.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    /// The lab's `id` value.
    pub id: Range<usize>,
    pub briefing: Range<usize>,
    pub faults: Vec<FieldSpans>,
    pub questions: Vec<FieldSpans>,
}

/// A lab that passed [`compile`], with where its parts are in the file.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub lab: Lab,
    pub map: SourceMap,
    /// The lab's `[solution]`, which only `clusterlab test` and the
    /// authoring tools read: it never reaches a trainee's data.
    pub solution: Option<solution::Solution>,
}

impl SourceMap {
    /// Where a part that did not resolve is in the file.
    pub fn locate(&self, unresolved: &Unresolved) -> (Range<usize>, String) {
        match unresolved {
            Unresolved::Briefing(message) => (self.briefing.clone(), message.clone()),
            Unresolved::Fault(at, error) => (self.faults[*at].of(error.field), error.message.clone()),
            Unresolved::Question(at, error) => (self.questions[*at].of(error.field), error.message.clone()),
        }
    }
}

/// Parses and validates a lab file's text: every problem, located.
pub fn load(source: &str) -> Result<Lab, Vec<Diagnostic>> {
    compile(source).map(|compiled| compiled.lab)
}

/// Parses and validates a lab file's text into a lab and its source map.
pub fn compile(source: &str) -> Result<Compiled, Vec<Diagnostic>> {
    if source.len() > MAX_LAB_BYTES {
        let message = format!("the lab file is {} bytes; a lab file may have at most {MAX_LAB_BYTES} (1 MiB)", source.len());
        return Err(vec![Diagnostic::at(source, 0, message)]);
    }
    let file = file::parse(source).map_err(|problems| into_diagnostics(source, problems))?;
    let mut problems: Vec<Problem> = Vec::new();
    let mut problem = |span: Range<usize>, message: String| problems.push((span, message));
    if let Some(fault) = file.faults.get(MAX_FAULTS) {
        problem(fault.span(), format!("a lab may declare at most {MAX_FAULTS} faults; this one has {}", file.faults.len()));
    }
    if let Some(question) = file.questions.get(MAX_QUESTIONS) {
        problem(question.span(), format!("a lab may ask at most {MAX_QUESTIONS} questions; this one has {}", file.questions.len()));
    }

    let lab = &file.lab;
    let id = lab.id.get_ref();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        problem(lab.id.span(), format!("lab id `{id}` must use only a-z, 0-9 and -"));
    }
    check_one_of(&lab.level, "level", LEVELS, &mut problem);
    check_one_of(&lab.stage, "stage", STAGES, &mut problem);
    for required in &lab.requires {
        let required_id = required.get_ref();
        if required_id == id {
            problem(required.span(), format!("lab `{id}` cannot require itself"));
        } else if required_id.is_empty() || !required_id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            problem(required.span(), format!("`requires` names lab ids, which use only a-z, 0-9 and -; `{required_id}` is not one"));
        }
    }
    if let Some(extra) = lab.requires.get(MAX_REQUIRES) {
        problem(extra.span(), format!("a lab may require at most {MAX_REQUIRES} others; name the last lab of a chain, not the whole chain"));
    }
    if let Some(pass) = &lab.pass {
        if *pass.get_ref() > 100 {
            problem(pass.span(), format!("`pass` is a percentage of the points, from 0 to 100, not {}", pass.get_ref()));
        }
    }
    if let Some(span) = &lab.hint_cost {
        problem(
            span.clone(),
            "`hint_cost` moved to [policy]: `hint_cost = \"25%\"` (a share of each question's points) or a whole number of points".to_string(),
        );
    }
    if let Some(minutes) = &lab.exam_minutes {
        if !(1..=600).contains(minutes.get_ref()) {
            problem(minutes.span(), format!("`exam_minutes` must be from 1 to 600, not {}", minutes.get_ref()));
        }
    }
    let policy = file.policy.as_ref().map_or_else(Policy::default, |table| policy(table, &mut problem));

    let cluster = &file.cluster;
    let preset_name = cluster.preset.get_ref();
    let preset = preset::find(preset_name);
    if preset.is_none() {
        let hint = suggestion(preset_name, preset::ids());
        problem(cluster.preset.span(), format!("unknown preset `{preset_name}`{hint}; presets are {}", list(preset::ids())));
    }
    check_one_of(&cluster.fabric, "fabric", FABRICS, &mut problem);
    if let (Some(hcas), Some(preset)) = (&cluster.hcas, preset) {
        let n = *hcas.get_ref();
        if n < 1 || n > preset.hca_count() as i64 {
            problem(hcas.span(), format!("`hcas` must be between 1 and {} for {}", preset.hca_count(), preset.id));
        }
    }
    // Layouts are known per release series: a version outside them would print a guess.
    if let Some(slurm) = &cluster.slurm {
        if !crate::model::known_slurm(slurm.get_ref()) {
            let series = list(crate::model::SLURM_RELEASES.iter().copied());
            problem(
                slurm.span(),
                format!("`slurm` must be a Slurm release such as \"{}\": one of {series}, optionally with its maintenance number", crate::model::DEFAULT_SLURM),
            );
        }
    }
    // The slurm-operator's images carry their own Slurm: the lab names it.
    if let Some(on) = cluster.slurm_on_kubernetes.as_ref().filter(|on| *on.get_ref()) {
        let series = cluster.slurm.as_ref().and_then(|s| crate::model::release(s.get_ref()));
        if series != Some(crate::model::slurm_operator::SLURM_SERIES) {
            let (major, minor) = crate::model::slurm_operator::SLURM_SERIES;
            problem(
                on.span(),
                format!("`slurm_on_kubernetes` runs the slurm-operator's images ({}), so `slurm` must name a {major}.{minor} release, such as \"{major}.{minor}.0\"", crate::model::slurm_operator::IMAGE_TAG),
            );
        }
    }
    if let Some(kubernetes) = &cluster.kubernetes {
        if !crate::model::known_kubernetes(kubernetes.get_ref()) {
            let minors = crate::model::KUBERNETES_MINORS;
            let example = crate::model::DEFAULT_KUBERNETES.trim_start_matches('v');
            problem(
                kubernetes.span(),
                format!("`kubernetes` must be a Kubernetes release such as \"{example}\", from 1.{} to 1.{}", minors.start(), minors.end()),
            );
        }
    }
    let hostnames = hostnames(cluster, &mut problem);

    let mut vars = Vec::new();
    for (name, table) in &file.vars {
        if !template::is_var_name(name) {
            problem(table.span(), format!("variable name `{name}` must use only a-z, 0-9 and _, and not start with a digit"));
        }
        let Some(spec) = var_spec(table.get_ref()) else {
            let one_of = table.get_ref().one_of.clone().or_else(|| table.get_ref().records.as_ref().map(|r| vec![Scalar::Integer(0); r.len()]));
            let message = match (&one_of, &table.get_ref().range) {
                (None, Some(range)) => match range[..] {
                    [lo, hi] if lo > hi => format!("`range` must be [lo, hi] with lo <= hi, not [{lo}, {hi}]"),
                    [lo, hi] => match hi.checked_sub(lo).and_then(|span| span.checked_add(1)) {
                        Some(count) if count <= i128::from(MAX_VAR_VALUES) => {
                            format!("`range` values must be whole numbers from {} to {}", i64::MIN, i64::MAX)
                        }
                        Some(count) => format!("`range` holds {count} values; a variable takes at most {MAX_VAR_VALUES}"),
                        None => format!("`range` holds more values than can be counted; a variable takes at most {MAX_VAR_VALUES}"),
                    },
                    _ => format!("`range` must be [lo, hi], two whole numbers; it lists {}", range.len()),
                },
                (Some(values), None) if !values.is_empty() => {
                    format!("`one_of` lists {} values; a variable takes at most {MAX_VAR_VALUES}", values.len())
                }
                (Some(_), None) => "`one_of` must list at least one value".to_string(),
                (Some(_), Some(_)) => "give `one_of` or `range`, not both".to_string(),
                (None, None) => "needs `one_of = [...]` or `range = [lo, hi]`".to_string(),
            };
            let separator = if message.starts_with("needs") { " " } else { ": " };
            problem(table.span(), format!("variable `{name}`{separator}{message}"));
            continue;
        };
        vars.push(Var { name: name.clone(), spec });
    }

    for fault in &file.faults {
        check_fault_fields(fault, &mut problem);
        if let Some(at) = &fault.get_ref().at {
            if crate::model::time::parse_duration(at.get_ref()).is_none() {
                problem(at.span(), format!("`at` must be a time from the lab's start, such as \"10m\" or \"2h\" after it (at most a week) or \"-12m\" before it (at most a day), not `{}`", at.get_ref()));
            }
        }
    }
    if let Some(storage) = &file.cluster.storage_gb_per_s {
        if !(0.05..=1000.0).contains(storage.get_ref()) {
            problem(storage.span(), format!("`storage_gb_per_s` must be from 0.05 to 1000 (GB/s to each node), not {}", storage.get_ref()));
        }
    }
    let jobs = jobs::specs(&file.jobs, &hostnames, preset.unwrap_or(&preset::PRESETS[0]), &mut problem);
    let pods = pods::specs(&file.pods, &hostnames, preset.unwrap_or(&preset::PRESETS[0]), &mut problem);
    for question in &file.questions {
        let Some(expect) = &question.get_ref().expect else { continue };
        for job in expect.get_ref().iter().filter_map(|e| e.job.as_deref()) {
            let declared = file.jobs.iter().any(|j| j.get_ref().name.get_ref() == job);
            if !declared && !job.contains('{') {
                problem(expect.span(), format!("`job` names `{job}`, which is not one of the lab's [[jobs]]"));
            }
        }
        let facts = expect.get_ref();
        if !facts.is_empty() && facts.iter().all(|e| e.by.is_some()) {
            problem(
                expect.span(),
                "`by` sets a deadline for other facts: add the outcome it times, e.g. { job = \"NAME\", step_time_within = \"5%\" }".to_string(),
            );
        }
    }

    let mut question_ids = BTreeSet::new();
    for question in &file.questions {
        let table = question.get_ref();
        let qid = table.id.get_ref();
        if !question_ids.insert(qid.clone()) {
            problem(table.id.span(), format!("question id `{qid}` is used twice"));
        }
        check_question_fields(table, &mut problem);
    }
    if let Some(solution) = &file.solution {
        solution::check_fields(solution.get_ref(), &question_ids, &mut problem);
    }

    // An unknown preset is already reported; check the rest against the first.
    let cluster_is_known = preset.is_some() && problems.is_empty();
    let preset = preset.unwrap_or(&preset::PRESETS[0]);
    let compiled = assemble(file, preset, hostnames, vars, (jobs, pods), policy);
    let apply_faults = cluster_is_known && !compiled.lab.cluster.hostnames.is_empty();
    problems.extend(variant_problems(&compiled, apply_faults));
    if problems.is_empty() {
        Ok(compiled)
    } else {
        Err(into_diagnostics(source, problems))
    }
}

/// ` (with bad_node = "gpu-002")`, to say which variant failed.
pub(crate) fn describe(values: &Values) -> String {
    if values.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = values.iter().map(|(k, v)| format!("{k} = \"{v}\"")).collect();
    format!(" (with {})", pairs.join(", "))
}

/// Every problem any checked variant has, at its location in the file.
/// Faults are tried on the cluster only when it is known to be right.
fn variant_problems(compiled: &Compiled, apply_faults: bool) -> Vec<Problem> {
    let lab = &compiled.lab;
    let mut problems = Vec::new();
    // Faults change only their own node: build the cluster once and try
    // each variant's faults on a copy of the nodes they name.
    let world = apply_faults.then(|| Cluster::build(&lab.cluster, 0));
    for values in template::all_values(&lab.vars, &lab.id, VARIANTS_CHECKED) {
        let (faults, _, unresolved) = lab.resolve(&values);
        problems.extend(unresolved.iter().map(|u| compiled.map.locate(u)));
        let Some(world) = &world else { continue };
        // Faults resolve in order; those that did not are reported above.
        let resolved_at: Vec<usize> = (0..lab.faults.len()).filter(|at| !unresolved.iter().any(|u| matches!(u, Unresolved::Fault(f, _) if f == at))).collect();
        let named: Vec<&str> = faults.iter().map(fault::Fault::node).collect();
        let mut cluster = world.subset(&named);
        for (fault, at) in faults.iter().zip(resolved_at) {
            let applied =
                if world.node(fault.node()).is_none() { Err(fault::no_such_node(fault.node(), &lab.cluster.hostnames)) } else { fault.apply(&mut cluster) };
            if let Err(error) = applied {
                let span = compiled.map.faults[at].of(error.field);
                problems.push((span, format!("fault `{}`: {}{}", fault.kind(), error.message, describe(&values))));
            }
        }
    }
    problems
}

/// Numbers and strings alike as the text a template field holds.
fn scalar(value: &Spanned<Scalar>) -> String {
    value.get_ref().as_text()
}

/// Builds the lab and its source map from the parsed file, once its parts
/// are known good (or reported).
fn assemble(
    file: file::LabFile,
    preset: &'static preset::Preset,
    hostnames: Vec<String>,
    vars: Vec<Var>,
    (jobs, pods): (Vec<crate::model::workload::WorkloadSpec>, Vec<crate::model::pods::LabPod>),
    policy: Policy,
) -> Compiled {
    let cluster = file.cluster;
    let fabric = match cluster.fabric.as_ref().map(|f| f.get_ref().as_str()) {
        Some("roce") => LinkLayer::Ethernet,
        _ => LinkLayer::InfiniBand,
    };
    let solution = file.solution.map(|table| solution::Solution::from_table(table.into_inner()));
    let lab_table = file.lab;
    let mut map = SourceMap { id: lab_table.id.span(), briefing: lab_table.briefing.as_ref().map_or(0..0, Spanned::span), ..SourceMap::default() };
    let faults = file
        .faults
        .iter()
        .map(|table| {
            map.faults.push(FieldSpans { table: table.span(), fields: present_fields(table.get_ref()) });
            fault_spec(table.get_ref())
        })
        .collect();
    let questions = file
        .questions
        .iter()
        .map(|table| {
            map.questions.push(question_spans(table));
            question_spec(table.get_ref())
        })
        .collect();
    let lab = Lab {
        id: lab_table.id.into_inner(),
        title: lab_table.title,
        summary: lab_table.summary,
        briefing: lab_table.briefing.map(|b| markdown::parse(b.get_ref())).unwrap_or_default(),
        level: lab_table.level.map(Spanned::into_inner),
        minutes: lab_table.minutes,
        stage: lab_table.stage.map(Spanned::into_inner),
        tags: lab_table.tags,
        requires: lab_table.requires.into_iter().map(Spanned::into_inner).collect(),
        pass: lab_table.pass.map(Spanned::into_inner),
        policy,
        exam_minutes: lab_table.exam_minutes.map(Spanned::into_inner),
        cluster: ClusterConfig {
            driver: cluster.driver,
            cuda: cluster.cuda,
            nccl: cluster.nccl,
            dcgm: cluster.dcgm,
            fabric,
            hcas: cluster.hcas.map(|h| *h.get_ref() as usize),
            persistence: cluster.persistence.unwrap_or(true),
            slurm: cluster.slurm.map(Spanned::into_inner),
            kubernetes: cluster.kubernetes.map(Spanned::into_inner),
            storage_gb_per_s: cluster.storage_gb_per_s.map(Spanned::into_inner),
            slurm_on_kubernetes: cluster.slurm_on_kubernetes.is_some_and(|on| *on.get_ref()),
            ..ClusterConfig::new(preset, hostnames)
        },
        vars,
        faults,
        jobs: Lab::jobs_data(&jobs),
        pods: Lab::pods_data(&pods),
        questions,
    };
    Compiled { lab, map, solution }
}

fn fault_spec(table: &FaultTable) -> FaultSpec {
    let text = |value: &Option<Spanned<String>>| value.as_ref().map(|v| v.get_ref().clone());
    let number = |value: &Option<Spanned<Scalar>>| value.as_ref().map(scalar);
    FaultSpec {
        kind: table.kind.get_ref().clone(),
        node: text(&table.node),
        gpu: number(&table.gpu),
        hca: text(&table.hca),
        xid: number(&table.xid),
        count: number(&table.count),
        gen: number(&table.gen),
        width: number(&table.width),
        rate: number(&table.rate),
        mtu: number(&table.mtu),
        watts: number(&table.watts),
        links: table.links.as_ref().map(|links| match links.get_ref() {
            Links::Count(n) => LinksSpec::Count(n.as_text()),
            Links::List(list) => LinksSpec::List(list.iter().map(Scalar::as_text).collect()),
        }),
        state: text(&table.state),
        reason: text(&table.reason),
        installed: text(&table.installed),
        service: text(&table.service),
        repair: table.repair.as_ref().map(|r| r.get_ref().clone()).unwrap_or_default(),
        at: text(&table.at),
    }
}

fn question_spec(table: &QuestionTable) -> QuestionSpec {
    QuestionSpec {
        id: table.id.get_ref().clone(),
        kind: table.kind.get_ref().clone(),
        prompt: markdown::parse(table.prompt.get_ref()),
        choices: table.choices.as_ref().map(|c| c.get_ref().clone()).unwrap_or_default(),
        answer: table.answer.as_ref().map(|answer| match answer.get_ref() {
            AnswerValue::Number(n) => AnswerSpec::Number(*n),
            AnswerValue::Text(text) => AnswerSpec::Text(text.clone()),
            AnswerValue::List(items) => AnswerSpec::List(items.clone()),
        }),
        entity: table.entity.as_ref().map(|e| e.get_ref().clone()),
        run: table.run.as_ref().filter(|run| run.get_ref().program.is_some()).map(|run| run_spec(run.get_ref())),
        after: table.after.as_ref().map(|after| match after.get_ref() {
            AfterTable::Run(run) => AfterSpec::Run(run_spec(run)),
            AfterTable::Fact(fact) => AfterSpec::Fact(expect_spec(fact)),
        }),
        expect: table.expect.as_ref().map(|expect| expect.get_ref().iter().map(expect_spec).collect()).unwrap_or_default(),
        fields: table
            .fields
            .iter()
            .map(|f| HandoffFieldSpec {
                name: f.name.clone(),
                states: f.states.clone(),
                numbers: f.numbers.clone(),
                actions: f.actions.clone(),
                review: f.review,
            })
            .collect(),
        rubric: table.rubric.clone(),
        attempts: table.attempts.as_ref().map(|a| *a.get_ref()),
        retry: table.retry.unwrap_or(false),
        feedback: table
            .feedback
            .as_ref()
            .map(|f| f.get_ref().iter().map(|(response, why)| (response.clone(), markdown::parse(why))).collect())
            .unwrap_or_default(),
        accept: table.accept.clone(),
        tolerance: table.tolerance.as_ref().map(|t| t.get_ref().clone()),
        unit: table.unit.clone(),
        points: table.points.unwrap_or(1),
        hints: table.hints.iter().map(|hint| markdown::parse(hint)).collect(),
        explanation: markdown::parse(&table.explanation),
        leak_waiver: table.leak_waiver.as_ref().map(|w| w.get_ref().clone()),
    }
}

fn expect_spec(e: &ExpectTable) -> ExpectSpec {
    let mut map = std::collections::BTreeMap::new();
    let mut put = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            map.insert(key.to_string(), value);
        }
    };
    let flag = |value: Option<bool>| value.map(|b| b.to_string());
    put("node", e.node.clone());
    put("slurm", e.slurm.clone());
    put("reason", e.reason.clone());
    put("in_service", flag(e.in_service));
    put("repaired", flag(e.repaired));
    put("gpu", e.gpu.as_ref().map(Scalar::as_text));
    put("healthy", flag(e.healthy));
    put("diag", e.diag.as_ref().map(Scalar::as_text));
    put("hca", e.hca.clone());
    put("link_up", flag(e.link_up));
    put("rate", e.rate.as_ref().map(Scalar::as_text));
    put("pcie_full", flag(e.pcie_full));
    put("service", e.service.clone());
    put("active", flag(e.active));
    put("fabric_manager", e.fabric_manager.clone());
    put("all_reduce_within", e.all_reduce_within.clone());
    put("job", e.job.clone());
    put("step_time_within", e.step_time_within.clone());
    put("lost_iterations_at_most", e.lost_iterations_at_most.as_ref().map(Scalar::as_text));
    put("restarted_within", e.restarted_within.clone());
    put("context_at_least", e.context_at_least.as_ref().map(Scalar::as_text));
    put("by", e.by.clone());
    put("alert", e.alert.clone());
    put("pod", e.pod.clone());
    put("kubernetes", e.kubernetes.clone());
    put("running", flag(e.running));
    ExpectSpec(map)
}

/// The canonical name of option `name` (a letter or a long name) of
/// `program`, as recorded executions name it: its long name when declared.
fn canonical_option(program: &str, name: &str) -> Option<(String, bool)> {
    let command = crate::commands::find(program)?;
    let name = name.trim_start_matches('-');
    let flag = command.signature().flags.iter().find(|flag| flag.long == Some(name) || (name.chars().count() == 1 && flag.short == name.chars().next()))?;
    let canonical = flag.long.map_or_else(|| flag.short.map(String::from).unwrap_or_default(), str::to_string);
    Some((canonical, flag.value.is_some()))
}

/// A task's run as lab data, its options named canonically.
fn run_spec(run: &RunTable) -> RunSpec {
    let program = run.program.as_ref().map(|p| p.get_ref().clone()).unwrap_or_default();
    RunSpec {
        options: run
            .options
            .iter()
            .map(|(name, value)| {
                let name = canonical_option(&program, name.get_ref()).map_or_else(|| name.get_ref().clone(), |(canonical, _)| canonical);
                match value {
                    OptionValue::Present(present) => (name, None, *present),
                    OptionValue::Value(pattern) => (name, Some(pattern.clone()), true),
                }
            })
            .collect(),
        program,
        operands: run.operands.clone(),
        host: run.host.clone(),
        hosts: run.hosts.clone(),
        span: run.span.as_ref().map(scalar),
        status: run.status.as_ref().map(|s| s.get_ref().clone()),
        output: run.output.clone(),
    }
}

/// `[policy]`, with each value checked.
fn policy(table: &Spanned<file::PolicyTable>, problem: &mut impl FnMut(Range<usize>, String)) -> Policy {
    let table = table.get_ref();
    let mut policy = Policy::default();
    for (value, into) in [(&table.attempts, &mut policy.attempts), (&table.number_attempts, &mut policy.number_attempts)] {
        if let Some(value) = value {
            match *value.get_ref() {
                0 => problem(value.span(), "attempts must be at least 1".to_string()),
                n => *into = n,
            }
        }
    }
    if let Some(credit) = &table.retry_credit {
        match parse_tolerance(credit.get_ref()) {
            Some(Tolerance::Relative(share)) if share <= 1.0 => policy.retry_credit = (share * 100.0).round() as u32,
            _ => problem(credit.span(), format!("`retry_credit` must be a percentage from 0% to 100%, not `{}`", credit.get_ref())),
        }
    }
    if let Some(cost) = &table.hint_cost {
        let text = cost.get_ref().as_text();
        match (cost.get_ref(), parse_tolerance(&text)) {
            (Scalar::Integer(points), _) if *points >= 0 && *points <= i64::from(u32::MAX) => policy.hint_cost_points = Some(*points as u32),
            (Scalar::Text(_), Some(Tolerance::Relative(share))) if share <= 1.0 => policy.hint_cost_percent = (share * 100.0).round() as u32,
            _ => problem(cost.span(), format!("`hint_cost` must be a percentage such as \"25%\" or a whole number of points, not `{text}`")),
        }
    }
    policy
}

fn question_spans(table: &Spanned<QuestionTable>) -> FieldSpans {
    let question = table.get_ref();
    // Problems in a field with no location of its own point at the answer,
    // or the type when there is no answer.
    let fallback = question.answer.as_ref().map_or(question.kind.span(), Spanned::span);
    let mut fields = vec![("id", question.id.span()), ("type", question.kind.span()), ("prompt", question.prompt.span()), ("answer", fallback.clone())];
    for (field, span) in [
        ("entity", question.entity.as_ref().map(Spanned::span)),
        ("program", question.run.as_ref().and_then(|run| run.get_ref().program.as_ref()).map(Spanned::span)),
        ("after", question.after.as_ref().map(Spanned::span)),
        ("expect", question.expect.as_ref().map(Spanned::span)),
        ("feedback", question.feedback.as_ref().map(Spanned::span)),
    ] {
        if let Some(span) = span {
            fields.push((field, span));
        }
    }
    if let Some(choices) = &question.choices {
        fields.push(("choices", choices.span()));
    }
    if let Some(tolerance) = &question.tolerance {
        fields.push(("tolerance", tolerance.span()));
    }
    // Hints, accepted answers and the explanation carry no location of their
    // own in the parsed file: problems in them point at the answer.
    let program = question.run.as_ref().and_then(|run| run.get_ref().program.as_ref()).map_or(fallback.clone(), Spanned::span);
    fields.push(("program", program));
    for field in ["hints", "accept", "explanation", "after", "fields", "rubric"] {
        fields.push((field, fallback.clone()));
    }
    FieldSpans { table: table.span(), fields }
}

/// `count = N` names the nodes gpu-001 .. gpu-N (four digits past 999, so
/// the names sort).
fn counted_hostnames(n: u32) -> Vec<String> {
    let width = n.to_string().len().max(3);
    (1..=n).map(|i| format!("gpu-{i:0width$}")).collect()
}

fn var_spec(table: &file::VarTable) -> Option<VarSpec> {
    if let (Some(records), None) = (&table.records, &table.range) {
        return (!records.is_empty() && records.len() as u64 <= MAX_VAR_VALUES).then(|| VarSpec::Records(records.clone()));
    }
    match (&table.one_of, &table.range) {
        (Some(values), None) if !values.is_empty() && values.len() as u64 <= MAX_VAR_VALUES => {
            Some(VarSpec::OneOf(values.iter().map(Scalar::as_text).collect()))
        }
        (None, Some(range)) => match range[..] {
            [lo, hi] if hi.checked_sub(lo).is_some_and(|span| (0..i128::from(MAX_VAR_VALUES)).contains(&span)) => {
                Some(VarSpec::Range(i64::try_from(lo).ok()?, i64::try_from(hi).ok()?))
            }
            _ => None,
        },
        _ => None,
    }
}

fn hostnames(cluster: &file::ClusterTable, problem: &mut impl FnMut(Range<usize>, String)) -> Vec<String> {
    match (&cluster.nodes, &cluster.count) {
        (Some(_), Some(count)) => {
            problem(count.span(), "give either `nodes` or `count`, not both".to_string());
            Vec::new()
        }
        (None, None) => {
            problem(cluster.preset.span(), "the cluster needs `nodes = [\"gpu-001\", ...]` or `count = N`".to_string());
            Vec::new()
        }
        (None, Some(count)) => {
            let n = *count.get_ref();
            if n < 1 || n > i64::from(MAX_NODES) {
                problem(count.span(), format!("`count` must be between 1 and {MAX_NODES}"));
                return Vec::new();
            }
            counted_hostnames(n as u32)
        }
        (Some(nodes), None) => {
            if nodes.is_empty() {
                problem(cluster.preset.span(), "`nodes` must name at least one node".to_string());
            }
            if nodes.len() > MAX_NODES as usize {
                problem(cluster.preset.span(), format!("at most {MAX_NODES} nodes"));
            }
            let mut seen = BTreeSet::new();
            for node in nodes {
                let name = node.get_ref();
                if !is_hostname(name) {
                    problem(node.span(), format!("`{name}` is not a valid hostname (letters, digits, - and .)"));
                } else if !seen.insert(name.clone()) {
                    problem(node.span(), format!("node `{name}` is listed twice"));
                }
            }
            nodes.iter().map(|node| node.get_ref().clone()).collect()
        }
    }
}

/// Which fields a fault table has, by name.
fn present_fields(fault: &FaultTable) -> Vec<(&'static str, Range<usize>)> {
    let mut fields = vec![("kind", fault.kind.span())];
    macro_rules! field {
        ($name:ident) => {
            if let Some(value) = &fault.$name {
                fields.push((stringify!($name), value.span()));
            }
        };
    }
    field!(node);
    field!(gpu);
    field!(hca);
    field!(xid);
    field!(count);
    field!(gen);
    field!(width);
    field!(rate);
    field!(mtu);
    field!(watts);
    field!(links);
    field!(state);
    field!(reason);
    field!(installed);
    field!(service);
    field!(repair);
    field!(at);
    fields
}

fn check_fault_fields(fault: &Spanned<FaultTable>, problem: &mut impl FnMut(Range<usize>, String)) {
    let table = fault.get_ref();
    let kind = table.kind.get_ref();
    // A kind from a variable is checked in each variant, as it resolves.
    if kind.contains('{') {
        return;
    }
    let Some((_, required, optional)) = FAULT_KINDS.iter().find(|(name, _, _)| name == kind) else {
        let hint = suggestion(kind, FAULT_KINDS.iter().map(|(name, _, _)| *name));
        let kinds: Vec<String> = FAULT_KINDS.iter().map(|(name, _, _)| format!("`{name}`")).collect();
        problem(table.kind.span(), format!("unknown fault kind `{kind}`{hint}; the kinds are {} (docs/authoring.md, Faults)", kinds.join(", ")));
        return;
    };
    let present = present_fields(table);
    if let Some(repair) = &table.repair {
        let target = match kind.as_str() {
            k if k.starts_with("hca-") => Some(RepairTarget::Hca),
            k if k.starts_with("gpu-") || k == "nvlink-down" => Some(RepairTarget::Gpu),
            "node-down" => Some(RepairTarget::Node),
            _ => None,
        };
        for action in repair.get_ref() {
            let fits = REPAIR_ACTIONS.iter().find(|(name, _)| name == action).map(|(_, t)| Some(*t) == target);
            let names = || REPAIR_ACTIONS.iter().filter(|(_, t)| Some(*t) == target).map(|(name, _)| *name);
            match fits {
                Some(true) => {}
                _ if target.is_none() => problem(repair.span(), format!("a `{kind}` fault is repaired from the terminal, not by hands-on `repair`")),
                Some(false) => problem(repair.span(), format!("`{action}` does not repair a `{kind}` fault; use one of {}", list(names()))),
                None => {
                    let hint = suggestion(action, names());
                    problem(repair.span(), format!("unknown repair action `{action}`{hint}; for a `{kind}` fault: {}", list(names())))
                }
            }
        }
    }
    // A count written out is checked here, with its bound; one from a
    // variable is checked in each variant.
    if let Some(count) = &table.count {
        let written = count.get_ref().as_text();
        if let Ok(n) = written.trim().parse::<i128>() {
            if n < 1 {
                problem(count.span(), format!("`count` must be at least 1, not {n}"));
            } else if n > i128::from(u64::MAX) {
                problem(count.span(), format!("`count` must be at most {}", u64::MAX));
            }
        }
    }
    for field in *required {
        if !present.iter().any(|(name, _)| name == field) {
            problem(fault.span(), format!("a `{kind}` fault needs `{field}`"));
        }
    }
    for (name, span) in &present {
        if !required.contains(name) && !optional.contains(name) && !matches!(*name, "repair" | "kind" | "at") {
            let takes: Vec<&str> = required.iter().chain(optional.iter()).copied().collect();
            problem(span.clone(), format!("`{name}` does not apply to a `{kind}` fault; it takes {}", list(takes)));
        }
    }
}

/// A task's program and options, against what the program declares.
fn check_run(qid: &str, run: &RunTable, problem: &mut dyn FnMut(Range<usize>, String)) {
    let Some(program) = &run.program else { return };
    let name = program.get_ref();
    if crate::commands::find(name).is_none() {
        let message = if name.contains('{') {
            format!("question `{qid}`: `program` names the program itself, not a variable: options and operands may hold `{{var}}`s")
        } else {
            format!("question `{qid}`: `{name}` is not a program this simulation runs")
        };
        problem(program.span(), message);
        return;
    }
    for (option, value) in &run.options {
        match (canonical_option(name, option.get_ref()), value) {
            (None, _) => problem(option.span(), format!("question `{qid}`: `{name}` has no option `{}`", option.get_ref())),
            (Some((_, false)), OptionValue::Value(pattern)) => problem(
                option.span(),
                format!("question `{qid}`: `{name}`'s `{}` takes no value: write `{} = true`, not a pattern `{pattern}`", option.get_ref(), option.get_ref()),
            ),
            _ => {}
        }
    }
}

fn check_question_fields(table: &QuestionTable, problem: &mut impl FnMut(Range<usize>, String)) {
    let qid = table.id.get_ref();
    let kind = table.kind.get_ref().as_str();
    if !QUESTION_TYPES.contains(&kind) {
        let hint = suggestion(kind, QUESTION_TYPES.iter().copied());
        problem(table.kind.span(), format!("unknown question type `{kind}`{hint}; types are {}", list(QUESTION_TYPES.iter().copied())));
        return;
    }
    let done_by_doing = matches!(kind, "task" | "state" | "handoff");
    if let (true, Some(answer)) = (done_by_doing, &table.answer) {
        let how = if kind == "handoff" { "the trainee writes the record" } else { "what the trainee does decides it" };
        problem(answer.span(), format!("question `{qid}`: a {kind} question takes no `answer`: {how}"));
    }
    // Fields that belong to one type only.
    let only = |field: &str, present: bool, owner: &str, problem: &mut dyn FnMut(Range<usize>, String)| {
        if present && kind != owner {
            problem(table.kind.span(), format!("question `{qid}`: `{field}` applies to {owner} questions only"));
        }
    };
    only("entity", table.entity.is_some(), "entity", problem);
    for (span, key) in &table.retired {
        let message = match *key {
            "command" => "tasks are judged on what ran, not on the typed text: instead of `command`, name the `program` and, as needed, its `options`, `operands` and `host` (docs/authoring.md, Tasks)",
            _ => "`after_host` went with the text patterns: `after` is now a table, an execution ({ program = \"...\", host = \"...\" }) or a fact ({ repaired = true, node = \"...\" })",
        };
        problem(span.clone(), format!("question `{qid}`: {message}"));
    }
    if let Some(run) = &table.run {
        only("program", true, "task", problem);
        let run = run.get_ref();
        check_run(qid, run, problem);
        if let Some(status) = &run.status {
            if !RUN_STATUSES.contains(&status.get_ref().as_str()) {
                problem(status.span(), format!("question `{qid}`: `status` must be one of {}", list(RUN_STATUSES.iter().copied())));
            }
        }
    }
    only("after", table.after.is_some(), "task", problem);
    if let Some(AfterTable::Run(run)) = table.after.as_ref().map(Spanned::get_ref) {
        check_run(qid, run, problem);
    }
    if kind != "state" && kind != "handoff" && table.expect.is_some() {
        problem(table.kind.span(), format!("question `{qid}`: `expect` applies to state questions (and to handoffs, as the facts that close the incident)"));
    }
    only("fields", !table.fields.is_empty(), "handoff", problem);
    only("rubric", !table.rubric.is_empty(), "handoff", problem);
    match kind {
        "entity" => match &table.entity {
            None => problem(table.kind.span(), format!("question `{qid}`: an entity question needs `entity`, one of {}", list(ENTITIES.iter().copied()))),
            Some(entity) if !ENTITIES.contains(&entity.get_ref().as_str()) => {
                let hint = suggestion(entity.get_ref(), ENTITIES.iter().copied());
                problem(
                    entity.span(),
                    format!("question `{qid}`: unknown entity `{}`{hint}; entities are {}", entity.get_ref(), list(ENTITIES.iter().copied())),
                );
            }
            Some(_) => {}
        },
        "task" if table.run.as_ref().is_none_or(|run| run.get_ref().program.is_none()) && table.retired.is_empty() => {
            problem(table.kind.span(), format!("question `{qid}`: a task question needs `program`, the program that must run, e.g. \"ib_write_bw\""))
        }
        "state" if table.expect.as_ref().is_none_or(|e| e.get_ref().is_empty()) => {
            problem(table.kind.span(), format!("question `{qid}`: a state question needs `expect`, e.g. [{{ node = \"gpu-001\", slurm = \"drained\" }}]"))
        }
        _ => {}
    }
    if let Some(attempts) = &table.attempts {
        if *attempts.get_ref() == 0 {
            problem(attempts.span(), format!("question `{qid}`: `attempts` must be at least 1 (leave it out for no limit)"));
        }
    }
    let needs_choices = matches!(kind, "choice" | "multi");
    match &table.choices {
        Some(choices) if !needs_choices && kind != "order" => problem(choices.span(), format!("question `{qid}`: a {kind} question takes no `choices`")),
        Some(choices) if kind == "order" => {
            problem(choices.span(), format!("question `{qid}`: an order question lists its items, in the right order, as `answer`"))
        }
        Some(choices) if choices.get_ref().len() < 2 => problem(choices.span(), format!("question `{qid}`: `choices` needs at least two entries")),
        Some(choices) => {
            let unique: BTreeSet<&String> = choices.get_ref().iter().collect();
            if unique.len() != choices.get_ref().len() {
                problem(choices.span(), format!("question `{qid}`: `choices` lists an entry twice"));
            }
        }
        None if needs_choices => problem(table.kind.span(), format!("question `{qid}`: a {kind} question needs `choices`")),
        None => {}
    }
    if kind != "number" {
        if let Some(tolerance) = &table.tolerance {
            problem(tolerance.span(), format!("question `{qid}`: `tolerance` applies to number questions only"));
        }
    }
    let Some(answer) = &table.answer else { return };
    if kind == "order" {
        if let AnswerValue::List(items) = answer.get_ref() {
            if items.len() < 2 {
                problem(answer.span(), format!("question `{qid}`: an order question needs at least two items"));
            }
        }
    }
    if let AnswerValue::Text(text) = answer.get_ref() {
        if text.trim().is_empty() {
            problem(answer.span(), format!("question `{qid}`: the answer must not be empty"));
        }
    }
}

fn into_diagnostics(source: &str, mut problems: Vec<Problem>) -> Vec<Diagnostic> {
    // Stable sort: where a structural check and a variant check report the
    // same place, the structural message (found first) is kept.
    crate::sort::sort_by_key(&mut problems, |(span, _)| span.start);
    problems.dedup_by_key(|(span, _)| span.start);
    problems.into_iter().map(|(span, message)| Diagnostic::spanning(source, span, message)).collect()
}

fn check_one_of(value: &Option<Spanned<String>>, key: &str, allowed: &[&str], problem: &mut impl FnMut(Range<usize>, String)) {
    if let Some(value) = value {
        let text = value.get_ref();
        if !allowed.contains(&text.as_str()) {
            let hint = suggestion(text, allowed.iter().copied());
            problem(value.span(), format!("unknown {key} `{text}`{hint}; it is one of {}", list(allowed.iter().copied())));
        }
    }
}

fn is_hostname(name: &str) -> bool {
    !name.is_empty() && name.len() <= 63 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.') && !name.starts_with('-')
}

fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    items.into_iter().map(|item| format!("`{item}`")).collect::<Vec<_>>().join(", ")
}

fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    diagnostic::did_you_mean(word, candidates).map_or(String::new(), |close| format!(" (did you mean `{close}`?)"))
}
