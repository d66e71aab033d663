//! Golden tests: the Slurm views against real captures in
//! ../shared/reference/fabric.
//!
//! The sinfo capture's cluster (partitions cpu/gpu/debug, states drng@,
//! maint, fail*, mix) cannot be expressed in the model, which has one `gpu`
//! partition without a time limit and the states idle/alloc/down/drain. So the
//! capture's `gpu` nodes are built with one model state per captured state,
//! and each output row must be the captured row with only the partition
//! name, time limit and state word replaced: same columns, same widths, same
//! counts, the same compressed hostlists.
//!
//! The scontrol capture is a Slurm 17.11 node on another site, so its lab
//! runs 17.11 (`slurm = "17.11"`); its values cannot be reproduced, so its
//! layout is compared: the same lines in the same order with the same `Key=`
//! names, indentation and trailing spaces, except the site's
//! core-specialisation line, which the model does not hold.

mod common;

use clusterlab_engine::model::node::SchedulerState;
use clusterlab_engine::{load, Session};

fn reference(name: &str) -> String {
    common::reference("fabric", name)
}

/// Expands `c[002,004,008-010]` (the capture's hostlists) for the test's lab.
fn expand(list: &str) -> Vec<String> {
    let Some((prefix, rest)) = list.split_once('[') else { return vec![list.to_string()] };
    let inner = rest.trim_end_matches(']');
    let mut names = Vec::new();
    for range in inner.split(',') {
        let (start, end) = range.split_once('-').unwrap_or((range, range));
        let width = start.len();
        for n in start.parse::<u32>().unwrap()..=end.parse::<u32>().unwrap() {
            names.push(format!("{prefix}{n:0width$}"));
        }
    }
    names
}

#[test]
fn sinfo_rows_have_the_captured_layout() {
    let capture = reference("slurm_sinfo_gpu_partition_drng_fail_maint.txt");
    let mut lines = capture.lines();
    let header = lines.next().unwrap();
    // (captured state, model state, reachable, what sinfo prints for it)
    let mapping = [
        ("drng@", SchedulerState::Drained, true, "drain"),
        ("maint", SchedulerState::Idle, true, "idle"),
        ("fail*", SchedulerState::Down, false, "down*"),
        ("mix", SchedulerState::Allocated, true, "alloc"),
    ];
    let gpu_rows: Vec<&str> = lines.filter(|line| line.starts_with("gpu ")).collect();
    assert_eq!(gpu_rows.len(), 4);
    let mut hosts: Vec<(String, SchedulerState, bool)> = Vec::new();
    let mut expected: Vec<String> = Vec::new();
    for row in &gpu_rows {
        let columns: Vec<&str> = row.split_whitespace().collect();
        let (limit, state, list) = (columns[2], columns[4], columns[5]);
        let &(_, model_state, reachable, shown) = mapping.iter().find(|(captured, ..)| *captured == state).unwrap();
        for name in expand(list) {
            hosts.push((name, model_state, reachable));
        }
        let mut line = row.replacen("gpu ", "gpu*", 1);
        line = line.replacen(limit, &format!("{:>10}", "infinite"), 1);
        line = line.replacen(&format!("{state:>6}"), &format!("{shown:>6}"), 1);
        expected.push(line);
    }
    hosts.sort_by(|a, b| a.0.cmp(&b.0));
    let names: Vec<String> = hosts.iter().map(|(name, ..)| format!("\"{name}\"")).collect();
    let lab = load(&format!("[lab]\nid = \"golden\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [{}]\n", names.join(", ")))
        .expect("valid lab");
    let mut cluster = lab.instantiate(1);
    for (name, state, reachable) in &hosts {
        let node = cluster.node_mut(name).unwrap();
        node.scheduler = *state;
        if !*reachable {
            node.hang();
        }
    }
    let mut session = Session::new(cluster, &hosts[0].0);
    let output = session.run("sinfo").stdout();
    let mut output_lines = output.lines();
    assert_eq!(output_lines.next(), Some(header));
    let mut got: Vec<String> = output_lines.map(String::from).collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
}

#[test]
fn scontrol_show_node_has_the_captured_layout() {
    let capture = reference("slurm_scontrol_show_node_gpu8_idle_drain.txt");
    let captured: Vec<&str> = capture
        .lines()
        .skip(1) // the `$ scontrol show node ...` prompt line
        .filter(|line| !line.trim_start().starts_with("CoreSpecCount="))
        .collect();
    let lab = load(
        "[lab]\nid = \"golden\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\nslurm = \"17.11\"\n\n[[faults]]\nkind = \"node-drain\"\nnode = \"gpu-002\"\nreason = \"node-switch\"\n",
    )
    .expect("valid lab");
    let mut session = Session::new(lab.instantiate(1), "gpu-001");
    let output = session.run("scontrol show node gpu-002").stdout();
    let ours: Vec<&str> = output.lines().collect();
    // Each record ends with an empty line.
    assert_eq!(ours.last(), Some(&""));
    let ours = &ours[..ours.len() - 1];
    assert_eq!(ours.len(), captured.len(), "{output}");
    let keys = |line: &str| -> Vec<String> { line.split(' ').filter_map(|word| word.split_once('=').map(|(key, _)| key.to_string())).collect() };
    for (mine, theirs) in ours.iter().zip(&captured) {
        let indent = |line: &str| line.len() - line.trim_start().len();
        assert_eq!(indent(mine), indent(theirs), "{mine:?} vs {theirs:?}");
        assert_eq!(mine.ends_with(' '), theirs.ends_with(' '), "{mine:?} vs {theirs:?}");
        if theirs.trim_start().starts_with("OS=") {
            assert!(mine.trim_start().starts_with("OS="));
            continue;
        }
        assert_eq!(keys(mine), keys(theirs), "{mine:?} vs {theirs:?}");
    }
    // The values the capture shows for a drained 8-GPU node.
    assert!(output.contains("\n   Gres=gpu:8\n"));
    assert!(output.contains("\n   State=IDLE+DRAIN ThreadsPerCore="));
    assert!(output.contains(",gres/gpu=8\n"));
    let reason = output.lines().find(|line| line.trim_start().starts_with("Reason=")).unwrap();
    let stamp = reason.trim_start().strip_prefix("Reason=node-switch [root@").and_then(|rest| rest.strip_suffix(']'));
    let stamp = stamp.unwrap_or_else(|| panic!("{reason}"));
    assert_eq!(stamp.len(), "2018-11-23T12:49:03".len());
    assert_eq!(stamp.as_bytes()[10], b'T');
}

#[test]
fn faults_change_the_slurm_views() {
    let lab = load(
        "[lab]\nid = \"golden\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\", \"gpu-003\", \"gpu-004\", \"gpu-006\"]\n\n[[faults]]\nkind = \"node-down\"\nnode = \"gpu-003\"\n\n[[faults]]\nkind = \"node-drain\"\nnode = \"gpu-006\"\nreason = \"xid 79\"\n",
    )
    .expect("valid lab");
    let mut session = Session::new(lab.instantiate(1), "gpu-001");
    assert_eq!(
        session.run("sinfo").stdout(),
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n\
         gpu*         up   infinite      3   idle gpu-[001-002,004]\n\
         gpu*         up   infinite      1  down* gpu-003\n\
         gpu*         up   infinite      1  drain gpu-006\n"
    );
    let reasons = session.run("sinfo -R").stdout();
    let lines: Vec<&str> = reasons.lines().collect();
    assert_eq!(lines[0], "REASON               USER      TIMESTAMP           NODELIST");
    assert!(lines[1].starts_with("Not responding       root      20"), "{reasons}");
    assert!(lines[1].ends_with(" gpu-003"));
    assert!(lines[2].starts_with("xid 79               root      20"));
    let node = session.run("scontrol show node gpu-003").stdout();
    assert!(node.contains("State=DOWN+NOT_RESPONDING "), "{node}");
    assert!(node.contains("Reason=Not responding [root@"));
    assert_eq!(session.run("sinfo -t drain -h").stdout(), "gpu*         up   infinite      1  drain gpu-006\n");
}
