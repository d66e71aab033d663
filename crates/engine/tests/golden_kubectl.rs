//! Golden test: `kubectl get pods` against the capture
//! ../shared/reference/fabric/kubectl_get_pods_gpu_operator_device_plugin_crashloop_excerpt.txt
//! (GPU Operator 1.x, device-plugin pods in CrashLoopBackOff). Its RESTARTS
//! are plain counts, as before Kubernetes 1.22, so the lab runs 1.21.
//!
//! The capture's cluster has other pods and names, so its layout is
//! compared: the same header after the NAME column (READY 8 wide, STATUS 19
//! when a CrashLoopBackOff row is present, RESTARTS 11, then AGE), NAME as
//! wide as the longest name plus three, rows' cells starting under their
//! headings, the crashing rows' `0/1 CrashLoopBackOff` and the healthy rows'
//! `1/1 Running`, restart counts as plain numbers, and pod-name suffixes of
//! five characters from the same alphabet.

mod common;

use clusterlab_engine::model::fault::Fault;
use clusterlab_engine::{load, Session};

fn columns(header: &str) -> Vec<usize> {
    ["READY", "STATUS", "RESTARTS", "AGE"].iter().map(|h| header.find(h).unwrap()).collect()
}

#[test]
fn get_pods_has_the_captured_layout() {
    let capture = common::reference("fabric", "kubectl_get_pods_gpu_operator_device_plugin_crashloop_excerpt.txt");
    let captured: Vec<&str> = capture.lines().skip(1).collect();
    let lab = load("[lab]\nid = \"golden\"\ntitle = \"t\"\nsummary = \"s\"\n\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\", \"gpu-003\"]\nkubernetes = \"1.21.14\"\n").unwrap();
    let mut cluster = lab.instantiate(1);
    Fault::GpuXid { node: "gpu-002".into(), gpu: 5, xid: 79 }.apply(&mut cluster).unwrap();
    let mut shell = Session::new(cluster, "gpu-001");
    let out = shell.run("kubectl get pods -n gpu-operator").stdout();
    let emulated: Vec<&str> = out.lines().collect();
    for table in [&captured, &emulated] {
        let header = table[0];
        let at = columns(header);
        assert_eq!(&header[at[0]..], "READY   STATUS             RESTARTS   AGE");
        let longest = table[1..].iter().map(|row| row.split(' ').next().unwrap().len()).max().unwrap();
        assert_eq!(at[0], longest + 3, "NAME is as wide as the longest name plus three");
        for row in &table[1..] {
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cells.len(), 5, "{row}");
            for (cell, start) in cells[1..].iter().zip(&at) {
                assert_eq!(row[*start..].split(' ').next(), Some(*cell), "{row}");
            }
            let state = (cells[1], cells[2]);
            assert!(state == ("0/1", "CrashLoopBackOff") || state == ("1/1", "Running"), "{row}");
            assert!(cells[3].parse::<u32>().is_ok());
            let suffix = cells[0].rsplit('-').next().unwrap();
            assert!(suffix.len() == 5 && suffix.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{row}");
        }
    }
    let crashing: Vec<&&str> = emulated.iter().filter(|row| row.contains("CrashLoopBackOff")).collect();
    assert_eq!(crashing.len(), 1);
    assert!(crashing[0].starts_with("nvidia-device-plugin-daemonset-"));
}
