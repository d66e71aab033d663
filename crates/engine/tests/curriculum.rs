//! The curriculum's grading: number answers in any unit, entity, task,
//! state and handoff questions, attempts, hint costs, per-choice feedback,
//! and the lab solutions `clusterlab test` runs.

use clusterlab_engine::facts::{Baseline, Fact};
use clusterlab_engine::grading::{parse_number, HandoffRecord};
use clusterlab_engine::lab::authoring::solution;
use clusterlab_engine::lab::authoring::{compile, Compiled};
use clusterlab_engine::lab::{evidence, QuestionKind};
use clusterlab_engine::shell::SessionJson;
use clusterlab_engine::store::{Evidence, LabState, Submitted};
use clusterlab_engine::Session;

#[test]
fn numbers_convert_between_units_of_one_quantity() {
    let gbs = Some("GB/s");
    for written in ["45", "45 GB/s", "45GB/s", "45000 MB/s", "360 Gb/s", "360Gbps", "45,000 MB/s", "45 gb/S"] {
        let value = parse_number(written, gbs).unwrap_or_else(|| panic!("{written}"));
        assert!((value - 45.0).abs() < 1e-9, "{written}: {value}");
    }
    for written in ["381 Gb/sec", "45418 MiB/sec", "45418 MiB/s"] {
        assert!((parse_number(written, Some("Gb/s")).unwrap() - 381.0).abs() < 0.1, "{written}");
    }
    let us = Some("us");
    for written in ["1.2 us", "1.2 \u{b5}s", "1.2 \u{3bc}s", "1.2us", "0.0012 ms", "1200 ns", "1.2e0 us", "12e-1"] {
        let value = parse_number(written, us).unwrap_or_else(|| panic!("{written}"));
        assert!((value - 1.2).abs() < 1e-9, "{written}: {value}");
    }
    // Another quantity, an unknown unit, or one that could be bits or bytes.
    assert_eq!(parse_number("45 ms", gbs), None);
    assert_eq!(parse_number("45 furlongs", gbs), None);
    assert_eq!(parse_number("400 gb/s", Some("Mb/s")), None);
    assert_eq!(parse_number("400 gb/s", Some("Gb/s")), Some(400.0));
    assert_eq!(parse_number("lots", gbs), None);
    assert_eq!(parse_number("1e999", gbs), None);
    assert_eq!(parse_number("5 W", None), None);
    // A count over time, as operators write it.
    let rate = Some("errors/h");
    for written in ["1200", "1200 errors/h", "1200/h", "1200 per hour", "1,200 errors per hour", "20 per minute", "20/min", "1200 an hour"] {
        assert_eq!(parse_number(written, rate), Some(1200.0), "{written}");
    }
    assert_eq!(parse_number("1200 Gb/h", rate), None);
    assert_eq!(parse_number("1200 per fortnight", rate), None);
}

const LAB: &str = r#"
[lab]
id = "curriculum-test"
title = "Curriculum test"
summary = "Every new question type."
pass = 70

[policy]
hint_cost = 1

[cluster]
preset = "hgx-h100"
nodes = ["gpu-001", "gpu-002"]

[vars]
bad_hca = { one_of = ["mlx5_1", "mlx5_6"] }

[[faults]]
kind = "hca-link-degraded"
node = "gpu-002"
hca = "{bad_hca}"
rate = 200
repair = ["reseat-cable"]

[[questions]]
id = "port"
type = "entity"
entity = "hca"
prompt = "Which HCA?"
answer = "gpu-002 {bad_hca}"
points = 2
hints = ["ibstat", "compare the rates"]
attempts = 2

[[questions]]
id = "remote-ibstat"
type = "task"
prompt = "Look at gpu-002's ports."
program = "ibstat"
host = "gpu-002"

[[questions]]
id = "re-measured"
type = "task"
prompt = "Measure again after the repair."
program = "ib_write_bw"
after = { repaired = true, node = "gpu-002" }

[[questions]]
id = "drained"
type = "state"
prompt = "Drain gpu-002."
expect = [{ node = "gpu-002", slurm = "drained", reason = "*rail*" }]

[[questions]]
id = "fixed"
type = "state"
prompt = "Repair it."
expect = [{ repaired = true }, { all_reduce_within = "5%" }]

[[questions]]
id = "first"
type = "choice"
prompt = "First?"
choices = ["Drain", "Reboot", "Wait", "Reseat"]
answer = "Drain"
feedback = { Reboot = "Rebooting loses the evidence." }
retry = true

[[questions]]
id = "record"
type = "handoff"
prompt = "Hand over."
expect = [{ repaired = true }]
fields = [
  "Scope and owner",
  { name = "Fault", states = ["gpu-002", "{bad_hca}"] },
  { name = "Changes", actions = ["drain", "repair"] },
]
rubric = ["names the node", "names the ticket", "states the next step"]
points = 2

[solution]
steps = ["ssh gpu-002 ibstat", "answer port"]
"#;

fn lab() -> Compiled {
    compile(LAB).unwrap_or_else(|problems| panic!("{problems:?}"))
}

fn session_after(compiled: &Compiled, lines: &[&str]) -> (Session, LabState) {
    let lab = &compiled.lab;
    let mut session = lab.session(1);
    let mut state = LabState::new(lab, "d", 1, SessionJson::of(&session.snapshot()));
    for line in lines {
        solution::run_line(&mut session, &mut state, line);
    }
    (session, state)
}

/// What the engine records when the trainee checks the question now.
fn check(compiled: &Compiled, id: &str, lines: &[&str]) -> bool {
    let variant = compiled.lab.variant(1);
    let (session, mut state) = session_after(compiled, lines);
    let question = variant.questions.iter().find(|q| q.id == id).unwrap();
    let met = evidence::met(&variant.questions, &session.cluster, &Default::default());
    matches!(state.submit(question, "check", Evidence { met: &met, now_ms: 0 }), Submitted::Graded(grade) if grade.correct)
}

#[test]
fn entity_questions_pick_from_the_model() {
    let compiled = lab();
    let variant = compiled.lab.variant(1);
    let QuestionKind::Entity { choices, .. } = &variant.questions[0].kind else { panic!() };
    assert_eq!(choices.len(), 16);
    assert_eq!(choices[9], "gpu-002 mlx5_1");
    let bad = &variant.values["bad_hca"];
    assert!(variant.questions[0].grade(&format!("  GPU-002   {bad} ")).correct);
    assert!(variant.questions[0].grade(&format!("gpu-002:{bad}")).correct);
    assert!(!variant.questions[0].grade("gpu-001 mlx5_1").correct);
}

#[test]
fn tasks_follow_what_ran_wherever_it_ran() {
    let compiled = lab();
    for lines in [
        &["ssh -o BatchMode=yes gpu-002 ibstat mlx5_1"][..],
        &["ssh gpu-002", "ibstat"],
        &["pdsh -w gpu-002 ibstat"],
        &["clush -w gpu-[001-002] ibstat"],
        &["for n in gpu-001 gpu-002; do ssh $n ibstat; done"],
        &["bash -c 'ssh gpu-002 ibstat | head -3'"],
        &["f() { ssh $1 ibstat; }; f gpu-002"],
        &["echo gpu-002 | xargs -I{} ssh {} ibstat"],
        &["srun -w gpu-002 ibstat"],
    ] {
        assert!(check(&compiled, "remote-ibstat", lines), "{lines:?}");
    }
    for lines in [&["ibstat"][..], &["echo ssh gpu-002 ibstat"], &["ssh gpu-002 ibstat --bogus"], &["# ssh gpu-002 ibstat"], &["ssh gpu-002 'ibstat mlx5_99'"]]
    {
        assert!(!check(&compiled, "remote-ibstat", lines), "{lines:?}");
    }
}

#[test]
fn a_task_after_a_fact_counts_only_once_the_fact_held() {
    let compiled = lab();
    let bad = compiled.lab.variant(1).values["bad_hca"].clone();
    let drain = "sudo scontrol update nodename=gpu-002 state=drain reason=\"slow rail\"";
    let reseat = format!("dctech reseat-cable gpu-002 {bad}");
    let serve = format!("ssh gpu-002 ib_write_bw -d {bad} &");
    let client = format!("ib_write_bw -d {bad} gpu-002");
    assert!(!check(&compiled, "re-measured", &[&serve, &client]), "measured before any repair");
    assert!(!check(&compiled, "re-measured", &["dctech list", &serve, &client]), "a list of actions repairs nothing");
    assert!(!check(&compiled, "re-measured", &[&serve, &client, drain, &reseat]), "measured before the repair");
    assert!(check(&compiled, "re-measured", &[drain, &reseat, &serve, &client]));
}

#[test]
fn state_questions_read_the_cluster() {
    let compiled = lab();
    let bad = compiled.lab.variant(1).values["bad_hca"].clone();
    assert!(!check(&compiled, "drained", &["sudo scontrol update nodename=gpu-002 state=drain reason=maintenance"]), "the reason must match");
    let drain = "sudo scontrol update nodename=gpu-002 state=drain reason=\"slow rail\"";
    assert!(check(&compiled, "drained", &[drain]));
    assert!(!check(&compiled, "fixed", &[drain]), "not repaired, and the collective is slow");
    let reseat = format!("dctech reseat-cable gpu-002 {bad}");
    assert!(check(&compiled, "fixed", &[drain, &reseat]));
}

#[test]
fn a_deadline_holds_only_while_the_lab_clock_is_within_it() {
    let timed = LAB.replace(
        "expect = [{ node = \"gpu-002\", slurm = \"drained\", reason = \"*rail*\" }]",
        "expect = [{ node = \"gpu-002\", slurm = \"drained\", reason = \"*rail*\" }, { by = \"20m\" }]",
    );
    let compiled = compile(&timed).unwrap_or_else(|problems| panic!("{problems:?}"));
    let drain = "sudo scontrol update nodename=gpu-002 state=drain reason=\"slow rail\"";
    assert!(check(&compiled, "drained", &[drain]), "drained at once, within the deadline");
    assert!(check(&compiled, "drained", &["sleep 1190", drain]), "drained just within it");
    assert!(!check(&compiled, "drained", &["sleep 1260", drain]), "drained after 21 simulated minutes");
    let (late, mut state) = session_after(&compiled, &["sleep 3900"]);
    let observed = Fact::By { seconds: 1200 }.observe(&late.cluster, &Baseline::default());
    assert_eq!((observed.holds, observed.seen.as_str()), (false, "the lab's clock is 1 h 05 min past its start"));
    // The trainee's "Not yet" says the deadline has passed, and nothing else.
    let variant = compiled.lab.variant(1);
    let question = variant.questions.iter().find(|q| q.id == "drained").unwrap();
    let Submitted::Graded(grade) = state.submit(question, "check", Evidence { met: &[], now_ms: 0 }) else { panic!("graded") };
    assert_eq!(
        grade.reading.as_deref(),
        Some("Conditions met: 0 of 2. Not yet: a node's state in Slurm. The deadline, 20 min into the lab, has passed: the clock is 1 h 05 min in.")
    );
    let (_, mut early) = session_after(&compiled, &["sleep 60"]);
    let Submitted::Graded(grade) = early.submit(question, "check", Evidence { met: &["drained/1".to_string()], now_ms: 0 }) else { panic!("graded") };
    // What is not yet met is named by its topic, never by its node.
    assert_eq!(grade.reading.as_deref(), Some("Conditions met: 1 of 2. Not yet: a node's state in Slurm."));
    // A deadline alone states no outcome.
    let alone = LAB.replace("expect = [{ repaired = true }, { all_reduce_within = \"5%\" }]", "expect = [{ by = \"30m\" }]");
    let problems: Vec<String> = compile(&alone).unwrap_err().iter().map(|d| d.message.clone()).collect();
    assert!(problems.iter().any(|p| p.contains("`by` sets a deadline for other facts")), "{problems:#?}");
    let malformed = LAB.replace("expect = [{ repaired = true }, { all_reduce_within = \"5%\" }]", "expect = [{ repaired = true }, { by = \"soon\" }]");
    let problems: Vec<String> = compile(&malformed).unwrap_err().iter().map(|d| d.message.clone()).collect();
    assert!(problems.iter().any(|p| p.contains("`by` must be a time from the lab's start")), "{problems:#?}");
}

#[test]
fn attempts_locks_hint_costs_and_feedback() {
    let compiled = lab();
    let variant = compiled.lab.variant(1);
    let (port, first) = (&variant.questions[0], &variant.questions[5]);
    let none = Evidence::default();
    let graded = |submitted: Submitted| match submitted {
        Submitted::Graded(grade) => Some(grade),
        _ => None,
    };
    let (_, mut state) = session_after(&compiled, &[]);
    state.show_hint("port");
    let right = format!("gpu-002 {}", variant.values["bad_hca"]);
    let grade = graded(state.submit(port, &right, none)).unwrap();
    assert!(grade.correct);
    assert_eq!((grade.points, grade.possible), (1, 2), "one hint cost one point");
    assert!(matches!(state.submit(port, "gpu-001 mlx5_0", none), Submitted::Closed(_)), "a correct answer is locked");
    // Two attempts allowed: a second wrong one ends it; a right one after a wrong one earns half.
    let (_, mut other) = session_after(&compiled, &[]);
    assert!(!graded(other.submit(port, "gpu-001 mlx5_0", none)).unwrap().correct);
    assert_eq!(graded(other.submit(port, &right, none)).unwrap().points, 1, "the second attempt keeps half");
    let (_, mut other) = session_after(&compiled, &[]);
    assert!(graded(other.submit(port, "gpu-001 mlx5_0", none)).is_some() && graded(other.submit(port, "gpu-001 mlx5_2", none)).is_some());
    assert!(matches!(other.submit(port, &right, none), Submitted::Closed(_)), "no attempts left");
    // An answer the engine cannot read uses no attempt.
    let (_, mut unclear) = session_after(&compiled, &[]);
    assert!(matches!(unclear.submit(port, "mlx5_9", none), Submitted::Unclear(_)));
    assert!(matches!(unclear.submit(port, "the slow one", none), Submitted::Unclear(_)));
    assert!(unclear.answers.is_empty());
    // Per-choice feedback, and `retry` lets a right answer change.
    let grade = graded(state.submit(first, "Reboot", none)).unwrap();
    assert_eq!(grade.feedback.map(|doc| format!("{doc:?}").contains("loses the evidence")), Some(true));
    assert!(graded(state.submit(first, "Drain", none)).unwrap().correct);
}

#[test]
fn handoff_records_are_graded_on_facts_not_self_ticks() {
    let compiled = lab();
    let variant = compiled.lab.variant(1);
    let bad = variant.values["bad_hca"].clone();
    let question = &variant.questions[6];
    let submit = |lines: &[&str], fields: &[&str]| {
        let (session, mut state) = session_after(&compiled, lines);
        let met = evidence::met(&variant.questions, &session.cluster, &Default::default());
        let record = HandoffRecord { fields: fields.iter().map(|f| f.to_string()).collect(), checked: vec![0, 1, 2], ..Default::default() };
        match state.submit(question, &record.to_response(), Evidence { met: &met, now_ms: 0 }) {
            Submitted::Graded(grade) => grade,
            other => panic!("{other:?}"),
        }
    };
    let drain = "sudo scontrol update nodename=gpu-002 state=drain reason=\"slow rail\"";
    let reseat = format!("dctech reseat-cable gpu-002 {bad}");
    let fault = format!("gpu-002 {bad} trained at 200 Gb/s");
    let grade = submit(&[drain, &reseat], &["me", &fault, "drained it; the technician reseated the cable"]);
    assert_eq!((grade.correct, grade.points), (true, 2), "{grade:?}");
    assert_eq!(grade.review, ["Scope and owner"]);
    // Ticking the whole rubric earns nothing; placeholders neither.
    assert_eq!(submit(&[drain, &reseat], &["x", "x", "x"]).points, 0);
    // Before the incident is closed, nothing.
    assert_eq!(submit(&[drain], &["me", &fault, "drained it; the technician reseated the cable"]).points, 0);
    // A claimed action that did not happen.
    let claimed = submit(&[drain, &reseat], &["me", &fault, "drained, reseated the cable, then a reset of the GPU"]);
    assert!(!claimed.correct);
}

#[test]
fn a_solution_runs_answers_in_place_and_a_wrong_diagnosis_scores_nothing() {
    let compiled = lab();
    let solution = compiled.solution.clone().expect("the lab has a solution");
    let seeds = solution::seeds(&compiled);
    assert_eq!(seeds.len(), 2, "two variants: {seeds:?}");
    let run = solution::run(&compiled, &solution, seeds[0]);
    let by_id = |id: &str| run.outcomes.iter().find(|o| o.question == id).unwrap().clone();
    assert!(by_id("port").correct && by_id("remote-ibstat").correct);
    let drained = by_id("drained");
    assert!(!drained.correct, "the steps never drained the node");
    assert!(
        drained.why.as_deref().is_some_and(|why| why.contains("expected gpu-002 drained in Slurm") && why.contains("observed: gpu-002 is idle")),
        "{drained:?}"
    );
    let wrong = solution::run_wrong(&compiled, &solution, seeds[0]);
    assert!(wrong.outcomes.iter().all(|o| o.points == 0 && !o.correct), "{:?}", wrong.outcomes);
}

#[test]
fn a_fault_still_to_strike_is_not_repaired() {
    let later = LAB.replace("rate = 200\nrepair", "rate = 200\nat = \"30m\"\nrepair");
    let compiled = compile(&later).unwrap_or_else(|problems| panic!("{problems:?}"));
    let bad = compiled.lab.variant(1).values["bad_hca"].clone();
    let (before, _) = session_after(&compiled, &[]);
    let observed = Fact::Repaired { node: None }.observe(&before.cluster, &Baseline::default());
    assert!(!observed.holds && observed.seen.ends_with("(still to strike)"), "{observed:?}");
    let reseat = format!("dctech reseat-cable gpu-002 {bad}");
    let (after, _) = session_after(&compiled, &["sleep 1800", "sudo scontrol update nodename=gpu-002 state=drain reason=rail", &reseat]);
    assert!(Fact::Repaired { node: None }.holds(&after.cluster, &Baseline::default()));
}

#[test]
fn alternatives_must_earn_full_marks_and_mistakes_little() {
    let with_paths = format!(
        "{LAB}\n[[solution.alternatives]]\nname = \"From gpu-002's shell\"\nsteps = [\"ssh gpu-002\", \"ibstat\", \"answer port\"]\n\n[[solution.mistakes]]\nname = \"Blames mlx5_0\"\nat_most = \"10%\"\nanswers = {{ port = \"gpu-002 mlx5_0\" }}\n"
    );
    let compiled = compile(&with_paths).unwrap_or_else(|problems| panic!("{problems:?}"));
    let solution = compiled.solution.clone().expect("a solution");
    assert_eq!(solution.alternatives.len(), 1);
    assert_eq!((solution.mistakes[0].name.as_str(), solution.mistakes[0].at_most), ("Blames mlx5_0", 0.1));
    let alternative = solution::run_path(&compiled, &solution.alternatives[0], 1);
    assert!(alternative.outcomes.iter().any(|o| o.question == "port" && o.correct), "{:?}", alternative.outcomes);
    let mistake = solution::run_path(&compiled, &solution.mistakes[0], 1);
    assert!(mistake.outcomes.iter().any(|o| o.question == "port" && !o.correct));

    let bad = with_paths.replace("at_most = \"10%\"", "at_most = \"lots\"").replace("port = \"gpu-002 mlx5_0\"", "prot = \"gpu-002 mlx5_0\"");
    let problems: Vec<String> = compile(&bad).unwrap_err().iter().map(|d| d.message.clone()).collect();
    for expected in ["`at_most` must be a percentage below 100%", "`prot` is not a question of this lab"] {
        assert!(problems.iter().any(|p| p.contains(expected)), "{expected} not in {problems:#?}");
    }
    let unknown = with_paths.replace("name = \"From gpu-002's shell\"", "why = 1");
    let problems: Vec<String> = compile(&unknown).unwrap_err().iter().map(|d| d.message.clone()).collect();
    assert!(problems.iter().any(|p| p.contains("unknown key `why`; expected one of `name`, `steps`, `answers`")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.contains("missing key `name` in [[solution.alternatives]]")), "{problems:#?}");
}

#[test]
fn new_fields_are_checked_where_they_are_written() {
    let bad = LAB
        .replace("entity = \"hca\"", "entity = \"rack\"")
        .replace("program = \"ibstat\"", "answer = \"x\"\nprogram = \"ibstat\"")
        .replace("program = \"ib_write_bw\"", "command = \"*ib_write_bw*\"")
        .replace("slurm = \"drained\"", "slurm = \"sleepy\"")
        .replace("attempts = 2", "attempts = 0")
        .replace("pass = 70", "pass = 170")
        .replace("steps = [", "answers = { nope = \"1\" }\nsteps = [");
    let problems: Vec<String> = compile(&bad).unwrap_err().iter().map(|d| d.message.clone()).collect();
    for expected in [
        "unknown entity `rack`",
        "a task question takes no `answer`",
        "tasks are judged on what ran, not on the typed text",
        "`slurm` must be one of idle, allocated, draining, drained, down (or several joined by `|`), not `sleepy`",
        "`attempts` must be at least 1",
        "`pass` is a percentage",
        "`nope` is not a question of this lab",
    ] {
        assert!(problems.iter().any(|p| p.contains(expected)), "{expected} not in {problems:#?}");
    }
}

#[test]
fn a_gpu_reset_and_a_fabric_manager_restart_repair_what_they_clear() {
    let source = r#"
[lab]
id = "reset-repairs"
title = "t"
summary = "s"

[cluster]
preset = "hgx-h100"
nodes = ["gpu-001"]

[[faults]]
kind = "gpu-row-remap-pending"
node = "gpu-001"
gpu = 3

[[faults]]
kind = "fabric-manager-down"
node = "gpu-001"

[[questions]]
id = "fixed"
type = "state"
prompt = "Fix both."
expect = [{ repaired = true }, { node = "gpu-001", fabric_manager = "active" }]
"#;
    let compiled = compile(source).unwrap_or_else(|problems| panic!("{problems:?}"));
    assert!(!check(&compiled, "fixed", &["sudo systemctl stop dcgm-exporter nvidia-dcgm", "sudo nvidia-smi -r -i 2"]), "another GPU's reset repairs nothing");
    assert!(!check(&compiled, "fixed", &["sudo systemctl stop dcgm-exporter nvidia-dcgm", "sudo nvidia-smi -r -i 3"]), "Fabric Manager is still down");
    assert!(check(
        &compiled,
        "fixed",
        &["sudo systemctl stop dcgm-exporter nvidia-dcgm", "sudo nvidia-smi -r -i 3", "sudo systemctl restart nvidia-fabricmanager"]
    ));
}
