//! Scripted operator sessions: find a faulty node, drain it, repair what a
//! command can repair, resume it, and check that every view agrees and that
//! `Session::changes()` records what was done.

use clusterlab_engine::model::change::Change;
use clusterlab_engine::model::node::SchedulerState;
use clusterlab_engine::{load, Session};

const LAB: &str = r#"
[lab]
id = "remediation"
title = "t"
summary = "s"

[cluster]
preset = "hgx-h100"
nodes = ["gpu-001", "gpu-002", "gpu-003", "gpu-004"]

[[faults]]
kind = "gpu-xid"
node = "gpu-002"
gpu = 3
xid = 119

[[faults]]
kind = "fabric-manager-down"
node = "gpu-002"

[[faults]]
kind = "node-down"
node = "gpu-004"
"#;

fn session() -> Session {
    Session::new(load(LAB).expect("valid lab").instantiate(7), "gpu-001")
}

#[test]
fn drain_repair_resume() {
    let mut shell = session();
    // Find it: Slurm still schedules on gpu-002; Fabric Manager is down there.
    assert!(shell.run("sinfo").stdout().contains("      3   idle gpu-[001-003]\n"));
    let fm = shell.run("clush -w gpu-[001-003] -b systemctl is-active nvidia-fabricmanager");
    assert_eq!(fm.stdout(), "---------------\ngpu-[001,003] (2)\n---------------\nactive\n---------------\ngpu-002\n---------------\nfailed\n");
    assert!(fm.stderr().contains("clush: gpu-002: exited with exit code 3\n"));
    let xid = shell.run("pdsh -w gpu-002 'sudo dmesg | grep Xid'").stdout();
    assert!(xid.starts_with("gpu-002: ") && xid.contains("): 119, "), "{xid}");

    // Drain it (a reason is required).
    assert_eq!(shell.run("sudo scontrol update NodeName=gpu-002 State=DRAIN").status, 1);
    assert_eq!(shell.run("sudo scontrol update NodeName=gpu-002 State=DRAIN Reason=\"Xid 119 GSP timeout\"").status, 0);
    let reasons = shell.run("sinfo -R").stdout();
    assert!(reasons.lines().nth(1).is_some_and(|l| l.starts_with("Xid 119 GSP timeout  root ") && l.ends_with(" gpu-002")), "{reasons}");

    // Repair: Fabric Manager cannot start while GPU 3 does not answer.
    assert_eq!(shell.run("ssh gpu-002").status, 0);
    assert_eq!(shell.run("sudo systemctl restart nvidia-fabricmanager").status, 1);
    // DCGM holds the GPUs: stopped for the reset, started again after.
    assert_eq!(shell.run("sudo nvidia-smi -r -i 3").status, 255);
    shell.run("sudo systemctl stop dcgm-exporter nvidia-dcgm");
    let reset = shell.run("sudo nvidia-smi -r -i 3");
    assert_eq!(reset.status, 0, "{}", reset.text());
    assert_eq!(shell.run("sudo systemctl restart nvidia-fabricmanager").status, 0);
    assert_eq!(shell.run("systemctl is-active nvidia-fabricmanager").stdout(), "active\n");
    assert!(!shell.run("nvidia-smi").stdout().contains("ERR!"));
    shell.run("exit");

    // Resume, and every view shows the healthy node.
    assert_eq!(shell.run("sudo scontrol update NodeName=gpu-002 State=RESUME").status, 0);
    assert!(shell.run("sinfo").stdout().contains("      3   idle gpu-[001-003]\n"));
    assert!(shell.run("scontrol show node gpu-002").stdout().contains("\n   State=IDLE ThreadsPerCore="));
    assert_eq!(
        shell.run("clush -w gpu-[001-003] -b systemctl is-active nvidia-fabricmanager").stdout(),
        "---------------\ngpu-[001-003] (3)\n---------------\nactive\n"
    );

    let changes: Vec<String> = shell
        .changes()
        .iter()
        .map(|(_, change)| match change {
            Change::SetScheduler { node, state, .. } => format!("scheduler {node} {state:?}"),
            Change::ResetGpu { node, gpu } => format!("reset {node} {gpu}"),
            Change::RestartFabricManager { node } => format!("fabricmanager {node}"),
            Change::SetUnit { node, unit, state } => format!("{unit} {node} {state:?}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        changes,
        [
            "scheduler gpu-002 Drained",
            "fabricmanager gpu-002",
            "dcgm-exporter.service gpu-002 Inactive",
            "nvidia-dcgm.service gpu-002 Inactive",
            "reset gpu-002 3",
            "fabricmanager gpu-002",
            "scheduler gpu-002 Idle"
        ]
    );
}

#[test]
fn an_unreachable_node_stays_down() {
    let mut shell = session();
    let ping = shell.run("ping -c 1 gpu-004");
    assert_eq!(ping.status, 1);
    assert!(ping.stdout().contains("Destination Host Unreachable"));
    let pdsh = shell.run("pdsh -w gpu-[003-004] uptime -p");
    assert!(pdsh.stdout().starts_with("gpu-003: up "));
    assert!(pdsh.stderr().ends_with("pdsh@gpu-001: gpu-004: ssh exited with exit code 255\n"));
    assert_eq!(shell.run("sudo scontrol update NodeName=gpu-004 State=RESUME").status, 0);
    assert!(shell.run("sinfo -N").stdout().contains("gpu-004       1 gpu*      down*"));
    assert_eq!(shell.cluster.node("gpu-004").unwrap().scheduler, SchedulerState::Down);
    // Fan-out changes come back to the shell.
    shell.run("sudo scontrol update NodeName=gpu-003 State=DRAIN Reason=test");
    assert_eq!(shell.run("pdsh -w gpu-003 sudo scontrol update NodeName=gpu-003 State=RESUME").status, 0);
    assert_eq!(shell.cluster.node("gpu-003").unwrap().scheduler, SchedulerState::Idle);
}

mod common;

/// A drain made with `scontrol update` reads like the captured drained node:
/// `State=IDLE+DRAIN` and `Reason=TEXT [root@TIMESTAMP]`.
#[test]
fn a_drain_reads_like_the_capture() {
    let capture = common::reference("fabric", "slurm_scontrol_show_node_gpu8_idle_drain.txt");
    let field = |text: &str, key: &str| -> String {
        let line = text.lines().find(|l| l.trim_start().starts_with(key)).unwrap_or_default().to_string();
        line.split_whitespace().next().unwrap_or_default().to_string()
    };
    let mut shell = session();
    shell.run("sudo scontrol update NodeName=gpu-003 State=DRAIN Reason=node-switch");
    let ours = shell.run("scontrol show node gpu-003").stdout();
    assert_eq!(field(&ours, "State="), field(&capture, "State="));
    let reason = |text: &str| text.lines().find(|l| l.trim_start().starts_with("Reason=")).unwrap_or_default().to_string();
    let (mine, theirs) = (reason(&ours), reason(&capture));
    assert_eq!(mine.len(), theirs.len(), "{mine:?} vs {theirs:?}");
    assert_eq!(mine[..mine.len() - 21], theirs[..theirs.len() - 21]);
}

/// The host tools' and fan-out tools' examples are probes: they must run
/// cleanly on a healthy node.
#[test]
fn examples_run_on_a_healthy_node() {
    for name in ["clush", "date", "df", "free", "ip", "lscpu", "man", "numactl", "pdsh", "ping", "uptime", "systemctl", "scontrol"] {
        let command = clusterlab_engine::commands::find(name).expect(name);
        for example in command.signature().examples {
            let healthy = &LAB[..LAB.find("[[faults]]").unwrap()];
            let out = Session::new(load(healthy).unwrap().instantiate(7), "gpu-001").run(&example.command.replace("-a ", "-w gpu-[001-003] "));
            assert_eq!((out.status, out.stderr()), (0, String::new()), "{}", example.command);
            assert!(!out.stdout().is_empty(), "{}", example.command);
        }
    }
}
