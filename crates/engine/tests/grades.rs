//! Grades that certify skill, on the shipped labs: the gaming sequences a
//! trainee tried score nothing the outcome did not earn, and the right ways
//! operators work are credited.

use clusterlab_engine::grading::HandoffRecord;
use clusterlab_engine::lab::authoring::{compile, solution, Compiled};
use clusterlab_engine::lab::evidence;
use clusterlab_engine::shell::SessionJson;
use clusterlab_engine::store::{Evidence, LabState, Submitted};
use clusterlab_engine::Session;

fn lab(name: &str) -> Compiled {
    let path = format!("{}/../../labs/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    compile(&std::fs::read_to_string(path).expect("a shipped lab")).unwrap_or_else(|problems| panic!("{problems:?}"))
}

/// Runs `lines` (with the variant's `{var}`s) in a fresh session of `seed`.
fn after(compiled: &Compiled, seed: u64, lines: &[&str]) -> (Session, LabState) {
    let values = compiled.lab.values(seed);
    let mut session = compiled.lab.session(seed);
    let mut state = LabState::new(&compiled.lab, "d", seed, SessionJson::of(&session.snapshot()));
    for line in lines {
        let line = clusterlab_engine::lab::template::substitute(line, &values).expect("known variables");
        solution::run_line(&mut session, &mut state, &line);
    }
    (session, state)
}

/// The points `response` earns for question `id` after `lines`.
fn points(compiled: &Compiled, seed: u64, lines: &[&str], id: &str, response: &str) -> u32 {
    let variant = compiled.lab.variant(seed);
    let (session, mut state) = after(compiled, seed, lines);
    let question = variant.questions.iter().find(|q| q.id == id).unwrap_or_else(|| panic!("no question {id}"));
    let met = evidence::met(&variant.questions, &session.cluster, &Default::default());
    match state.submit(question, response, Evidence { met: &met, now_ms: 0 }) {
        Submitted::Graded(grade) => grade.points,
        _ => 0,
    }
}

fn done(compiled: &Compiled, seed: u64, lines: &[&str], id: &str) -> bool {
    points(compiled, seed, lines, id, "check") > 0
}

#[test]
fn a_health_check_earns_nothing_for_fixes_that_failed() {
    let lab = lab("node-health-check");
    let drain = "sudo scontrol update nodename={bad_node} state=drain reason=\"row remap pending\"";
    // A reset without -i (refused on an NVSwitch system), a diagnostic that
    // still prints its Error, and a resume Slurm rejects.
    let gaming = [drain, "ssh {bad_node} sudo nvidia-smi -r", "ssh {bad_node} dcgmi diag -r 2", "sudo scontrol update nodename=gpu-[001-002] state=resume"];
    for seed in 1..=4 {
        for id in ["remap-applied", "diag-rerun", "resumed"] {
            assert!(!done(&lab, seed, &gaming, id), "seed {seed}: {id} earned by a failed fix");
        }
        assert!(done(&lab, seed, &gaming, "drained") || !done(&lab, seed, &gaming[..1], "drained"));
    }
    // The fix done right, on the bad node through ssh, and `undrain` to resume.
    let right = [
        drain,
        "ssh {bad_node} 'sudo systemctl stop dcgm-exporter nvidia-dcgm; sudo nvidia-smi -r -i {bad_gpu}; sudo systemctl start nvidia-dcgm dcgm-exporter'",
        "ssh {bad_node} dcgmi diag -r 2",
        "sudo scontrol update nodename={bad_node} state=undrain",
    ];
    for seed in 1..=4 {
        for id in ["remap-applied", "diag-rerun", "resumed"] {
            assert!(done(&lab, seed, &right, id), "seed {seed}: {id} not credited");
        }
    }
}

#[test]
fn a_list_of_repairs_proves_no_fix() {
    // Each prove-the-fix task, after `dctech list` and a re-run, with nothing repaired.
    for (name, task, rerun) in [
        ("rdma-every-rail", "rail-retested", "ssh {bad_node} ib_write_bw -d {bad_hca} &\nib_write_bw -d {bad_hca} {bad_node}"),
        ("lost-gpu", "proved", "nvidia-smi"),
        ("handover", "recheck", "ssh {bad_node} perfquery -C {bad_hca}"),
        ("slow-rail", "repeat-the-comparison", "srun -N2 --ntasks-per-node=8 all_reduce_perf -b 1G -e 1G -g 1"),
        ("nccl-baseline", "rerun-node", "ssh {bad_node} all_reduce_perf -b 1G -e 1G -g 8"),
    ] {
        let lab = lab(name);
        let mut lines = vec!["dctech list"];
        lines.extend(rerun.split('\n'));
        for seed in 1..=3 {
            assert!(!done(&lab, seed, &lines, task), "{name} seed {seed}: `{task}` earned by dctech list");
        }
    }
}

#[test]
fn a_handoff_of_placeholders_scores_nothing() {
    let lab = lab("handover");
    let solution = lab.solution.clone().expect("handover has a solution");
    for seed in solution::seeds(&lab) {
        let variant = lab.lab.variant(seed);
        let question = variant.questions.iter().find(|q| q.id == "handoff").unwrap();
        let clusterlab_engine::lab::QuestionKind::Handoff { fields, rubric, .. } = &question.kind else { panic!() };
        let placeholders = HandoffRecord { fields: vec!["x".into(); fields.len()], checked: (0..rubric.len()).collect(), ..Default::default() };
        // Before anything is run, and after the fix.
        assert_eq!(points(&lab, seed, &[], "handoff", &placeholders.to_response()), 0);
        let run = solution::run(&lab, &solution, seed);
        let lines: Vec<&str> = run.state.transcript.iter().map(|entry| entry.line.as_str()).collect();
        let (session, mut state) = {
            let mut session = lab.lab.session(seed);
            let mut state = LabState::new(&lab.lab, "d", seed, SessionJson::of(&session.snapshot()));
            for line in &lines {
                solution::run_line(&mut session, &mut state, line);
            }
            (session, state)
        };
        let met = evidence::met(&variant.questions, &session.cluster, &Default::default());
        let Submitted::Graded(grade) = state.submit(question, &placeholders.to_response(), Evidence { met: &met, now_ms: 0 }) else { panic!() };
        assert_eq!(grade.points, 0, "seed {seed}: {grade:?}");
    }
}

#[test]
fn the_ways_operators_work_are_credited() {
    let first = lab("first-look");
    for lines in [
        &["pdsh -w gpu-002 nvidia-smi -L"][..],
        &["clush -w gpu-002 nvidia-smi -L"],
        &["for n in gpu-001 gpu-002; do ssh $n nvidia-smi -L; done"],
        &["ssh gpu-002 nvidia-smi --list-gpus"],
    ] {
        assert!(done(&first, 1, lines, "listed-gpus"), "{lines:?}");
    }
    let prepare = lab("prepare-job");
    for seed in 1..=3 {
        let values = prepare.lab.values(seed);
        let list = format!("{},{},{}", values["drained.up1"], values["drained.up2"], values["drained.up3"]);
        for line in [
            "srun -N 3 --ntasks-per-node=8 all_reduce_perf -b 1G -e 1G -g 1".to_string(),
            "srun -N3 --ntasks-per-node=8 all_reduce_perf -b 1G -e 1G -g 1".to_string(),
            "srun --nodes=3 --ntasks-per-node=8 all_reduce_perf -b 1G -e 1G -g 1".to_string(),
            format!("srun -w {list} --ntasks-per-node=8 all_reduce_perf -b 1G -e 1G -g 1"),
            format!("mpirun -H {} all_reduce_perf -b 1G -e 1G -g 1", list.split(',').map(|h| format!("{h}:8")).collect::<Vec<_>>().join(",")),
        ] {
            assert!(done(&prepare, seed, &[&line], "ran-available-nodes"), "seed {seed}: {line}");
        }
        assert!(!done(&prepare, seed, &["srun -N2 --ntasks-per-node=8 all_reduce_perf -b 1G -e 1G -g 1"], "ran-available-nodes"));
    }
    let baseline = lab("nccl-baseline");
    let fix = ["sudo scontrol update nodename={bad_node} state=drain reason=nvlink", "dctech reseat-gpu {bad_node} {bad_gpu}"];
    // The node is still drained: Slurm places nothing there, so the re-run goes over ssh or pdsh.
    for rerun in ["ssh {bad_node} all_reduce_perf -b 1G -e 1G -g 8", "pdsh -w {bad_node} all_reduce_perf -b 1G -e 1G -g 8"] {
        let mut lines = fix.to_vec();
        lines.push(rerun);
        let repaired = done(&baseline, 1, &fix, "links-back");
        assert_eq!(done(&baseline, 1, &lines, "rerun-node"), repaired, "{rerun}");
    }
}

#[test]
fn answers_read_in_the_forms_operators_write() {
    let health = lab("node-health-check");
    for seed in 1..=4 {
        let values = health.lab.values(seed);
        let (node, gpu) = (values["bad_node"].clone(), values["bad_gpu"].clone());
        let bus = ["04", "23", "43", "64", "84", "a3", "c3", "e4"][gpu.parse::<usize>().unwrap()];
        for form in [format!("{node}:{gpu}"), format!("{node} GPU{gpu}"), format!("GPU {gpu} on {node}"), format!("00000000:{}:00.0", bus.to_uppercase())] {
            // The bus id names the GPU on either node: with two nodes it is asked again, never wrong.
            let earned = points(&health, seed, &[], "which-gpu", &form);
            assert!(earned == 2 || form.starts_with("0000"), "seed {seed}: {form} earned {earned}");
        }
    }
    let lost = lab("lost-gpu");
    for seed in 1..=4 {
        let xid = lost.lab.values(seed)["incident.xid"].clone();
        assert_eq!(points(&lost, seed, &[], "xid", &format!("Xid {xid}")), 1, "seed {seed}");
    }
}

#[test]
fn a_maintenance_stop_is_judged_by_the_work_it_lost() {
    let lab = lab("maintenance-window");
    let next_save = "n=$(grep -c 'successfully saved checkpoint' ~/slurm-*.out); while [ $(grep -c 'successfully saved checkpoint' ~/slurm-*.out) -le $n ]; do sleep 10; done";
    // Cancelled halfway to the next checkpoint: about 250 iterations to train again.
    assert!(!done(&lab, 1, &[next_save, "sleep 150", "scancel -n llama3-8b", "sleep 5"], "stopped-well"));
    // Still running: nothing stopped yet, nothing to judge.
    assert!(!done(&lab, 1, &[next_save], "stopped-well"));
    // Stopped right after a save.
    assert!(done(&lab, 1, &[next_save, "scancel -n llama3-8b", "sleep 5"], "stopped-well"));
}

#[test]
fn a_restart_is_judged_by_its_time_from_the_stop_to_the_first_new_step() {
    let lab = lab("drill-job-died");
    let reset = [
        "sudo scontrol update nodename={bad_node} state=drain reason=\"Xid 119\"",
        "ssh {bad_node} 'sudo systemctl stop dcgm-exporter nvidia-dcgm; sudo nvidia-smi -r -i {bad_gpu}; sudo systemctl start nvidia-dcgm dcgm-exporter'",
        "sudo scontrol update nodename={bad_node} state=resume",
    ];
    for seed in 1..=3 {
        // Stopped and not relaunched: nothing trains again, however soon.
        assert!(!done(&lab, seed, &reset, "restart-time"), "seed {seed}");
        // Relaunched but still in its setup: not training again yet.
        let mut relaunched = reset.to_vec();
        relaunched.push("sbatch ~/llama3-8b.sbatch");
        assert!(!done(&lab, seed, &relaunched, "restart-time"), "seed {seed}: before its first step");
        // Its first step within minutes of the stop.
        relaunched.push("sleep 240");
        assert!(done(&lab, seed, &relaunched, "restart-time"), "seed {seed}");
        // Resubmitted before the fix: it fails in its setup (the GPU still
        // awaits a reset) and did not train again, however soon it started.
        assert!(!done(&lab, seed, &["sbatch ~/llama3-8b.sbatch", "sleep 240"], "restart-time"), "seed {seed}: a failed setup");
        // The same fix after half an hour of waiting: trained again, too late.
        let mut late = vec!["sleep 1800"];
        late.extend(relaunched.iter().copied());
        assert!(!done(&lab, seed, &late, "restart-time"), "seed {seed}: late");
    }
}
