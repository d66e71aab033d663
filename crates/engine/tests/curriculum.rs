//! The curriculum's grading: number answers in any unit, entity, task,
//! state and handoff questions, attempts, hint costs, per-choice feedback,
//! and the lab solutions `clusterlab test` runs.

use clusterlab_engine::grading::{parse_number, HandoffRecord, DONE, NOT_YET};
use clusterlab_engine::lab::authoring::solution::{self, evidence_response};
use clusterlab_engine::lab::authoring::{compile, Compiled};
use clusterlab_engine::lab::QuestionKind;
use clusterlab_engine::store::{Entry, LabState};
use clusterlab_engine::shell::SessionJson;
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
}

const LAB: &str = r#"
[lab]
id = "curriculum-test"
title = "Curriculum test"
summary = "Every new question type."
hint_cost = 1
pass = 70

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
host = "gpu-002"
command = "ibstat*"

[[questions]]
id = "re-measured"
type = "task"
prompt = "Measure again after the repair."
command = "*ib_write_bw*"
after = "dctech *"

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
choices = ["Drain", "Reboot"]
answer = "Drain"
feedback = { Reboot = "Rebooting loses the evidence." }
retry = true

[[questions]]
id = "record"
type = "handoff"
prompt = "Hand over."
fields = ["Scope and owner", "Next action"]
rubric = ["names the node", "names the ticket", "states the next step"]
points = 3

[solution]
steps = ["ssh gpu-002 ibstat", "answer port"]
"#;

fn lab() -> Compiled {
    compile(LAB).unwrap_or_else(|problems| panic!("{problems:?}"))
}

fn session_after(compiled: &Compiled, lines: &[&str]) -> (Session, LabState) {
    let lab = &compiled.lab;
    let mut session = Session::new(lab.instantiate(1), lab.first_host());
    let mut state = LabState::new(lab, "d", 1, SessionJson::of(&session.snapshot()));
    for line in lines {
        let (host, prompt, at) = (session.host().to_string(), session.prompt(), session.now());
        let transcript = session.run(line);
        state.record(Entry::new(&host, &prompt, line, at, transcript), SessionJson::of(&session.snapshot()));
    }
    (session, state)
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
    assert!(!variant.questions[0].grade("gpu-001 mlx5_1").correct);
}

#[test]
fn tasks_follow_the_transcript_ssh_included_and_in_order() {
    let compiled = lab();
    let variant = compiled.lab.variant(1);
    let (remote, measured) = (&variant.questions[1], &variant.questions[2]);
    let (session, state) = session_after(&compiled, &["ibstat", "ib_write_bw -d mlx5_0 gpu-002"]);
    assert_eq!(evidence_response(remote, &session, &state).as_deref(), Some(NOT_YET), "ibstat ran on gpu-001");
    assert_eq!(evidence_response(measured, &session, &state).as_deref(), Some(NOT_YET), "measured before any repair");
    let (session, state) = session_after(&compiled, &["ssh -o BatchMode=yes gpu-002 ibstat mlx5_1", "dctech list", "ib_write_bw gpu-002"]);
    assert_eq!(evidence_response(remote, &session, &state).as_deref(), Some(DONE));
    assert_eq!(evidence_response(measured, &session, &state).as_deref(), Some(DONE));
    let (session, state) = session_after(&compiled, &["ssh gpu-002", "ibstat"]);
    assert_eq!(evidence_response(remote, &session, &state).as_deref(), Some(DONE), "typed at gpu-002's prompt");
}

#[test]
fn state_questions_read_the_cluster() {
    let compiled = lab();
    let variant = compiled.lab.variant(1);
    let bad = variant.values["bad_hca"].clone();
    let (drained, fixed) = (&variant.questions[3], &variant.questions[4]);
    let (session, state) = session_after(&compiled, &["sudo scontrol update nodename=gpu-002 state=drain reason=maintenance"]);
    assert_eq!(evidence_response(drained, &session, &state).as_deref(), Some(NOT_YET), "the reason must match");
    let drain = "sudo scontrol update nodename=gpu-002 state=drain reason=\"slow rail\"";
    let (session, state) = session_after(&compiled, &[drain]);
    assert_eq!(evidence_response(drained, &session, &state).as_deref(), Some(DONE));
    assert_eq!(evidence_response(fixed, &session, &state).as_deref(), Some(NOT_YET), "not repaired, and the collective is slow");
    let reseat = format!("dctech reseat-cable gpu-002 {bad}");
    let (session, state) = session_after(&compiled, &[drain, &reseat]);
    assert_eq!(evidence_response(fixed, &session, &state).as_deref(), Some(DONE));
}

#[test]
fn attempts_locks_hint_costs_and_feedback() {
    let compiled = lab();
    let variant = compiled.lab.variant(1);
    let (port, first) = (&variant.questions[0], &variant.questions[5]);
    let (_, mut state) = session_after(&compiled, &[]);
    state.show_hint("port");
    assert!(!state.answer(port, "gpu-001 mlx5_0").unwrap().correct);
    let right = format!("gpu-002 {}", variant.values["bad_hca"]);
    let grade = state.answer(port, &right).unwrap();
    assert!(grade.correct);
    assert_eq!((grade.points, grade.possible), (1, 2), "one hint cost one point");
    assert_eq!(state.answer(port, "gpu-001 mlx5_0"), None, "a correct answer is locked");
    // Two attempts allowed: a second wrong one ends it.
    let (_, mut other) = session_after(&compiled, &[]);
    assert!(other.answer(port, "gpu-001 mlx5_0").is_some() && other.answer(port, "gpu-001 mlx5_2").is_some());
    assert_eq!(other.answer(port, &right), None, "no attempts left");
    // Per-choice feedback, and `retry` lets a right answer change.
    let grade = state.answer(first, "Reboot").unwrap();
    assert_eq!(grade.feedback.map(|doc| format!("{doc:?}").contains("loses the evidence")), Some(true));
    assert!(state.answer(first, "Drain").unwrap().correct);
    assert!(state.answer(first, "Reboot").is_some(), "retry = true keeps it open");
}

#[test]
fn handoff_records_earn_partial_credit_once_written() {
    let compiled = lab();
    let question = &compiled.lab.variant(1).questions[6];
    let record = |fields: &[&str], checked: &[usize]| {
        HandoffRecord { fields: fields.iter().map(|f| f.to_string()).collect(), checked: checked.to_vec() }.to_response()
    };
    let grade = question.grade(&record(&["gpu-002, me", "resume after burn-in"], &[0, 2]));
    assert_eq!((grade.correct, grade.points), (false, 2));
    let grade = question.grade(&record(&["gpu-002, me", "resume after burn-in"], &[0, 1, 2, 2, 9]));
    assert_eq!((grade.correct, grade.points), (true, 3));
    assert_eq!(question.grade(&record(&["gpu-002, me", " "], &[0, 1, 2])).points, 0, "every field must be written");
    assert_eq!(question.grade("not json").points, 0);
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
    assert!(!by_id("drained").correct, "the steps never drained the node");
    let wrong = solution::run_wrong(&compiled, &solution, seeds[0]);
    assert!(wrong.outcomes.iter().all(|o| o.points == 0 && !o.correct), "{:?}", wrong.outcomes);
}

#[test]
fn new_fields_are_checked_where_they_are_written() {
    let bad = LAB
        .replace("entity = \"hca\"", "entity = \"rack\"")
        .replace("command = \"ibstat*\"", "answer = \"x\"\ncommand = \"ibstat*\"")
        .replace("slurm = \"drained\"", "slurm = \"sleepy\"")
        .replace("attempts = 2", "attempts = 0")
        .replace("pass = 70", "pass = 170")
        .replace("steps = [", "answers = { nope = \"1\" }\nsteps = [");
    let problems: Vec<String> = compile(&bad).unwrap_err().iter().map(|d| d.message.clone()).collect();
    for expected in [
        "unknown entity `rack`",
        "a task question takes no `answer`",
        "`slurm` must be one of idle, allocated, draining, drained, down, not `sleepy`",
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
    let question = &compiled.lab.variant(1).questions[0];
    let (session, state) = session_after(&compiled, &["sudo nvidia-smi -r -i 2"]);
    assert_eq!(evidence_response(question, &session, &state).as_deref(), Some(NOT_YET), "another GPU's reset repairs nothing");
    let (session, state) = session_after(&compiled, &["sudo nvidia-smi -r -i 3"]);
    assert_eq!(evidence_response(question, &session, &state).as_deref(), Some(NOT_YET), "Fabric Manager is still down");
    let (session, state) = session_after(&compiled, &["sudo nvidia-smi -r -i 3", "sudo systemctl restart nvidia-fabricmanager"]);
    assert_eq!(evidence_response(question, &session, &state).as_deref(), Some(DONE));
}
