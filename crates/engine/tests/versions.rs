//! Versions drive formats: `scontrol show node` and `sinfo -l` follow the
//! cluster's Slurm release, kubectl its Kubernetes release, and systemctl,
//! journalctl and /etc/os-release the nodes' OS (Ubuntu 22.04, systemd 249,
//! the only OS the model has). Each test quotes the real lines it expects.
//!
//! Sources (facts only; no code was copied):
//! - Slurm: github.com/SchedMD/slurm, `slurm_sprint_node_table` in
//!   src/api/node_info.c at the tags slurm-17-11-13-2, slurm-18-08-9-1,
//!   slurm-19-05-8-1, slurm-20-11-9-1, slurm-21-08-8-2, slurm-22-05-11-1,
//!   slurm-23-02-7-1, slurm-23-11-10-1, slurm-24-05-8-1, slurm-24-11-7-1,
//!   slurm-25-05-3-1 and slurm-25-11-0-1 (field order, line grouping, which
//!   fields each release has, the trailing spaces, `n/s` and `n/a`);
//!   src/sinfo/opts.c at slurm-22-05-11-1 and slurm-23-02-7-1 (`sinfo -l`
//!   gains `reservation:.11`); src/slurmctld/node_mgr.c at slurm-23-11-10-1
//!   (`last_busy` is set when a node registers and when its jobs end).
//! - Real Slurm 23.11 records: index ids 10936318524 (23.11.0, quoted
//!   below), 57604346187 (23.11.6), 9016326212 (23.11.4), 32265390793
//!   (23.11.2); a 23.11.6 one-liner with its double spaces: 58957137319.
//!   Real `sinfo -l` with RESERVATION: 51797240941, 4679219542. The 17.11
//!   layout: ../shared/reference/fabric/slurm_scontrol_show_node_gpu8_idle_drain.txt.
//! - Kubernetes: github.com/kubernetes/kubectl pkg/cmd/version/version.go
//!   at v0.21.14, v0.24.17, v0.27.16, v0.28.15, v0.29.15 (the short form,
//!   `--short` and its deprecation), go.mod at each minor's last tag (the
//!   Kustomize version), pkg/describe/describe.go at v0.29.15 (System
//!   Info); kubernetes/kubernetes pkg/printers/internalversion/printers.go
//!   (`%d (%s ago)` RESTARTS from 1.22; index id 24478792077). Real output:
//!   index ids 13042762763 and 23215648343 (`Client Version: v1.29.x`,
//!   `Kustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3`).
//! - systemd: github.com/systemd/systemd src/systemctl/systemctl-show.c
//!   `print_status_info` at a v249-era commit (0086ef19cb9f; index id
//!   13397137676: `; vendor preset: `, the line order, `Tasks: N (limit:
//!   N)`), src/basic/unit-def.c `unit_active_state_to_glyph` (○ inactive,
//!   × failed). Real Ubuntu 22.04 output: index ids 47593676270 (Loaded
//!   under /lib/systemd/system with `vendor preset: enabled`, Tasks,
//!   Memory, CPU, CGroup), 21298015957 (`(limit: 629145)` on a large
//!   host), 57138120772 (`○ ... inactive (dead) since ...` on 22.04.2),
//!   46682378269 (nvidia-fabricmanager on Ubuntu: no TriggeredBy line);
//!   ../shared/reference/gpu/systemctl-status_nvidia-fabricmanager_failed-sigkill_abridged.txt
//!   (Ubuntu) against ..._h100_active.txt (RHEL 9, systemd 252:
//!   `/usr/lib/...; preset: disabled`, a TriggeredBy path unit). The
//!   journal's line form: ../shared/reference/gpu/journal_nvidia-fabricmanager_*.txt.

mod common;

use clusterlab_engine::model::fault::Fault;
use clusterlab_engine::{load, Session};

/// A two-node hgx-h100 lab with extra `[cluster]` lines, in a session on gpu-001.
fn session(cluster_lines: &str) -> Session {
    let lab = load(&format!(
        "[lab]\nid = \"versions\"\ntitle = \"t\"\nsummary = \"s\"\n\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n{cluster_lines}\n"
    ))
    .unwrap_or_else(|problems| panic!("{problems:?}"));
    Session::new(lab.instantiate(1), "gpu-001")
}

fn keys(line: &str) -> Vec<&str> {
    line.split(' ').filter_map(|word| word.split_once('=').map(|(key, _)| key)).collect()
}

/// A real Slurm 23.11.0 record (index id 10936318524); its page dropped the
/// trailing spaces, which the tests below pin from the source instead.
const REAL_23_11: &str = "NodeName=nml-slurm-node1 Arch=x86_64 CoresPerSocket=8
   CPUAlloc=0 CPUEfctv=16 CPUTot=16 CPULoad=0.00
   AvailableFeatures=(null)
   ActiveFeatures=(null)
   Gres=gpu:2(S:0)
   NodeAddr=nml-slurm-node1 NodeHostName=nml-slurm-node1 Version=23.11.0
   OS=Linux 6.2.0-37-generic #38~22.04.1-Ubuntu SMP PREEMPT_DYNAMIC Thu Nov  2 18:01:13 UTC 2
   RealMemory=128681 AllocMem=0 FreeMem=97029 Sockets=1 Boards=1
   State=IDLE ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=debug
   BootTime=2023-12-07T21:50:56 SlurmdStartTime=2023-12-07T21:54:09
   LastBusyTime=2023-12-08T22:51:31 ResumeAfterTime=None
   CfgTRES=cpu=16,mem=128681M,billing=16
   AllocTRES=
   CapWatts=n/a
   CurrentWatts=0 AveWatts=0
   ExtSensorsJoules=n/a ExtSensorsWatts=0 ExtSensorsTemp=n/a
";

#[test]
fn scontrol_show_node_prints_slurm_23_11s_layout_by_default() {
    let mut shell = session("");
    let out = shell.run("scontrol show node gpu-001").stdout();
    let ours: Vec<&str> = out.lines().collect();
    let real: Vec<&str> = REAL_23_11.lines().collect();
    // The same lines, keys and indentation as the real record, then the empty line.
    assert_eq!(ours.len(), real.len() + 1, "{out}");
    assert_eq!(ours.last(), Some(&""));
    for (mine, theirs) in ours.iter().zip(&real) {
        let indent = |line: &str| line.len() - line.trim_start().len();
        assert_eq!(indent(mine), indent(theirs), "{mine:?} vs {theirs:?}");
        if !theirs.trim_start().starts_with("OS=") {
            assert_eq!(keys(mine), keys(theirs), "{mine:?} vs {theirs:?}");
        }
    }
    // Lines as 23.11 prints them; the first, OS and Partitions keep a space.
    assert_eq!(ours[0], "NodeName=gpu-001 Arch=x86_64 CoresPerSocket=56 ");
    assert!(ours[1].starts_with("   CPUAlloc=0 CPUEfctv=224 CPUTot=224 CPULoad="), "{}", ours[1]);
    assert_eq!(ours[5], "   NodeAddr=gpu-001 NodeHostName=gpu-001 Version=23.11.10");
    assert!(ours[6].starts_with("   OS=Linux 5.15.0-1063-nvidia #64-Ubuntu ") && ours[6].ends_with(" 2024 "));
    assert_eq!(ours[9], "   Partitions=gpu ");
    assert_eq!(
        &ours[13..],
        ["   AllocTRES=", "   CapWatts=n/a", "   CurrentWatts=0 AveWatts=0", "   ExtSensorsJoules=n/a ExtSensorsWatts=0 ExtSensorsTemp=n/a", ""]
    );
    for gone in ["CPUErr=", "LowestJoules=", "ConsumedJoules=", "=n/s"] {
        assert!(!out.contains(gone), "{gone} in {out}");
    }
    // No job has run: slurmctld last saw the node idle when slurmd registered.
    let start = ours[10].split("SlurmdStartTime=").nth(1).unwrap();
    assert_eq!(ours[11], format!("   LastBusyTime={start} ResumeAfterTime=None"));
    assert_eq!(shell.run("scontrol version").stdout(), "slurm 23.11.10\n");
}

#[test]
fn last_busy_time_is_when_the_nodes_last_job_ended() {
    let mut shell = session("");
    assert_eq!(shell.run("sbatch -w gpu-002 --wrap='sleep 30'").status, 0);
    shell.run("sleep 60");
    let started = shell.run("sacct -n -X -o Start").stdout();
    let record = shell.run("scontrol show node gpu-002").stdout();
    let busy = record.lines().find_map(|line| line.trim_start().strip_prefix("LastBusyTime=")).unwrap();
    let busy = busy.strip_suffix(" ResumeAfterTime=None").unwrap();
    // The job ran 30 s from its start.
    let seconds = |stamp: &str| {
        let time = stamp.trim().rsplit('T').next().unwrap().to_string();
        let parts: Vec<i64> = time.split(':').map(|p| p.parse().unwrap()).collect();
        parts[0] * 3600 + parts[1] * 60 + parts[2]
    };
    assert_eq!(seconds(busy), seconds(&started) + 30, "{started} {record}");
}

#[test]
fn a_drained_node_has_its_reason_on_a_line_after_the_sensors() {
    let mut shell = session("");
    shell.run("sudo scontrol update NodeName=gpu-002 State=DRAIN Reason=\"xid 79\"");
    let out = shell.run("scontrol show node gpu-002").stdout();
    assert!(out.contains("\n   State=IDLE+DRAIN ThreadsPerCore=2 "), "{out}");
    assert!(out.contains("\n   ExtSensorsJoules=n/a ExtSensorsWatts=0 ExtSensorsTemp=n/a\n   Reason=xid 79 [root@20"), "{out}");
    assert!(out.ends_with("]\n\n"));
}

#[test]
fn scontrol_one_liner_keeps_slurms_double_spaces() {
    // The real 23.11.6 one-liner (index id 58957137319): "CoresPerSocket=24  CPUAlloc=32",
    // "2026  RealMemory=", "Partitions=gpu  BootTime=": a field's own space, then the separator.
    let out = session("").run("scontrol -o show node gpu-001").stdout();
    assert_eq!(out.lines().count(), 1);
    assert!(out.starts_with("NodeName=gpu-001 Arch=x86_64 CoresPerSocket=56  CPUAlloc=0 CPUEfctv=224 CPUTot=224 "), "{out}");
    assert!(out.contains(" 2024  RealMemory=2063937 "));
    assert!(out.contains(" Partitions=gpu  BootTime="));
    assert!(out.ends_with(" CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/a ExtSensorsWatts=0 ExtSensorsTemp=n/a\n"), "{out}");
}

/// `scontrol show node gpu-001` on a lab running this Slurm.
fn record(slurm: &str) -> String {
    session(&format!("slurm = \"{slurm}\"")).run("scontrol show node gpu-001").stdout()
}

#[test]
fn scontrol_show_node_follows_the_configured_slurm_release() {
    // 17.11, as the capture: CPUErr, Lowest/ConsumedJoules, n/s, no space
    // after CoresPerSocket, and (before 21.08) the sensors line always ends
    // its line, so a record without a reason ends in a line of three spaces.
    let old = record("17.11.13");
    assert!(old.starts_with("NodeName=gpu-001 Arch=x86_64 CoresPerSocket=56\n   CPUAlloc=0 CPUErr=0 CPUTot=224 CPULoad="), "{old}");
    assert!(old.contains("\n   NodeAddr=gpu-001 NodeHostName=gpu-001 Version=17.11.13\n"));
    assert!(old.contains("\n   BootTime=") && !old.contains("LastBusyTime") && !old.contains("CPUEfctv"));
    assert!(
        old.ends_with(
            "\n   CapWatts=n/a\n   CurrentWatts=0 LowestJoules=0 ConsumedJoules=0\n   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n   \n\n"
        ),
        "{old}"
    );
    // 18.08: no CPUErr, and the first line keeps its space.
    assert!(record("18.08").starts_with("NodeName=gpu-001 Arch=x86_64 CoresPerSocket=56 \n   CPUAlloc=0 CPUTot=224 CPULoad="));
    // 19.05 replaced the joules with AveWatts.
    assert!(record("19.05.8").contains("\n   CurrentWatts=0 AveWatts=0\n   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n   \n\n"));
    // 21.08: LastBusyTime on its own line, and no dangling line.
    let r21 = record("21.08.8");
    assert!(r21.contains("\n   LastBusyTime=20") && !r21.contains("ResumeAfterTime") && !r21.contains("CPUEfctv"), "{r21}");
    assert!(r21.lines().any(|line| line.starts_with("   LastBusyTime=") && line.len() == "   LastBusyTime=2026-03-09T08:40:00".len()));
    assert!(r21.ends_with("ExtSensorsTemp=n/s\n\n"));
    // 22.05: CPUEfctv.
    assert!(record("22.05").contains("\n   CPUAlloc=0 CPUEfctv=224 CPUTot=224 "));
    // 23.02: ResumeAfterTime, still n/s.
    let r23 = record("23.02.7");
    assert!(r23.contains(" ResumeAfterTime=None\n") && r23.ends_with("\n   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n\n"), "{r23}");
    // 24.05 and 24.11 drop the CapWatts and ExtSensors lines but end the
    // watts line anyway; 25.05 does not.
    let r24 = record("24.05.8");
    assert!(!r24.contains("CapWatts") && !r24.contains("ExtSensors"), "{r24}");
    assert!(r24.ends_with("\n   AllocTRES=\n   CurrentWatts=0 AveWatts=0\n   \n\n"), "{r24}");
    assert!(record("24.11").ends_with("\n   CurrentWatts=0 AveWatts=0\n   \n\n"));
    assert!(record("25.05.3").ends_with("\n   AllocTRES=\n   CurrentWatts=0 AveWatts=0\n\n"));
    assert_eq!(session("slurm = \"24.11.7\"").run("scontrol version").stdout(), "slurm 24.11.7\n");
}

#[test]
fn sinfo_follows_the_configured_slurm_release() {
    // The default layout is the same in every release (src/sinfo/opts.c).
    for slurm in ["17.11", "23.11.10"] {
        assert_eq!(
            session(&format!("slurm = \"{slurm}\"")).run("sinfo").stdout(),
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ngpu*         up   infinite      2   idle gpu-[001-002]\n"
        );
    }
    // `-l` shows the (empty) reservation from 23.02, as in index ids 51797240941 and 4679219542:
    // "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE RESERVATION NODELIST"
    // "debug*       up   infinite 1-infinite   no       NO        all      1        idle             rocky-...".
    let long = session("").run("sinfo -l").stdout();
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(lines[1], "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE RESERVATION NODELIST");
    assert_eq!(lines[2], "gpu*         up   infinite 1-infinite   no       NO        all      2        idle             gpu-[001-002]");
    let older = session("slurm = \"22.05.11\"").run("sinfo -l").stdout();
    let lines: Vec<&str> = older.lines().collect();
    assert_eq!(lines[1], "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST");
    assert_eq!(lines[2], "gpu*         up   infinite 1-infinite   no       NO        all      2        idle gpu-[001-002]");
}

#[test]
fn kubernetes_reports_one_modern_release() {
    let mut shell = session("");
    let nodes = shell.run("kubectl get nodes").stdout();
    assert!(nodes.starts_with("NAME      STATUS   ROLES    AGE   "), "{nodes}");
    assert!(nodes.lines().skip(1).all(|line| line.ends_with("   v1.29.15")), "{nodes}");
    // The OS image is the nodes' os-release PRETTY_NAME.
    let wide = shell.run("kubectl get nodes -o wide").stdout();
    assert!(
        wide.lines().nth(1).unwrap().ends_with("   v1.29.15   10.1.0.2      <none>        Ubuntu 22.04.5 LTS   5.15.0-1063-nvidia   containerd://1.7.12"),
        "{wide}"
    );
    assert_eq!(shell.run("grep PRETTY_NAME /etc/os-release").stdout(), "PRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\n");
    let describe = shell.run("kubectl describe node gpu-001").stdout();
    for line in ["  OS Image:                   Ubuntu 22.04.5 LTS\n", "  Kubelet Version:            v1.29.15\n", "  Kube-Proxy Version:         v1.29.15\n"] {
        assert!(describe.contains(line), "{line:?} in {describe}");
    }
    // kubectl 1.29's version: the short form, with the Kustomize it embeds.
    assert_eq!(
        shell.run("kubectl version").stdout(),
        "Client Version: v1.29.15\nKustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3\nServer Version: v1.29.15\n"
    );
    assert_eq!(shell.run("kubectl version --client").stdout(), "Client Version: v1.29.15\nKustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3\n");
    // --short went in 1.28.
    let short = shell.run("kubectl version --short");
    assert_eq!((short.stderr().as_str(), short.status), ("error: unknown flag: --short\nSee 'kubectl version --help' for usage.\n", 1));
    assert_eq!(shell.run("kubectl get nodes --client").status, 1);
}

#[test]
fn restarts_show_their_age_from_kubernetes_1_22() {
    // The crashing device plugin's RESTARTS cell, under its heading.
    let restarts = |kubernetes: &str| {
        let mut shell = session(&format!("kubernetes = \"{kubernetes}\""));
        Fault::GpuXid { node: "gpu-002".into(), gpu: 3, xid: 79 }.apply(&mut shell.cluster).unwrap();
        let pods = shell.run("kubectl get pods -n gpu-operator").stdout();
        let header = pods.lines().next().unwrap();
        let (from, to) = (header.find("RESTARTS").unwrap(), header.find("AGE").unwrap());
        let row = pods.lines().find(|line| line.contains("   0/1     CrashLoopBackOff   ")).unwrap();
        row[from..to].trim_end().to_string()
    };
    // 1.29: "12 (3m17s ago)" (printers.go: the count and the last termination's age).
    let cell = restarts("1.29.15");
    let (count, ago) = cell.split_once(" (").unwrap_or_else(|| panic!("{cell}"));
    assert!(count.parse::<u32>().is_ok() && ago.ends_with(" ago)"), "{cell}");
    assert!(ago.trim_end_matches(" ago)").chars().all(|c| c.is_ascii_alphanumeric()), "{cell}");
    // 1.21, as the capture: a plain count.
    let cell = restarts("1.21.14");
    assert!(cell.parse::<u32>().is_ok(), "{cell}");
}

#[test]
fn kubectl_follows_the_configured_kubernetes_release() {
    let mut old = session("kubernetes = \"1.21.14\"");
    assert!(old.run("kubectl get nodes").stdout().lines().skip(1).all(|line| line.ends_with("   v1.21.14")));
    let short = old.run("kubectl version --short");
    assert_eq!((short.stdout().as_str(), short.stderr().as_str()), ("Client Version: v1.21.14\nServer Version: v1.21.14\n", ""));
    // 1.24 to 1.27 print the Kustomize line and warn that --short is deprecated.
    let mut v127 = session("kubernetes = \"v1.27.16\"");
    let short = v127.run("kubectl version --short");
    assert_eq!(short.stdout(), "Client Version: v1.27.16\nKustomize Version: v5.0.1\nServer Version: v1.27.16\n");
    assert_eq!(short.stderr(), "Flag --short has been deprecated, and will be removed in the future. The --short output will become the default.\n");
}

#[test]
fn lab_files_name_only_releases_with_known_layouts() {
    let bad = |line: &str| {
        let problems = load(&format!("[lab]\nid = \"v\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\ncount = 1\n{line}\n")).unwrap_err();
        problems.iter().map(|problem| problem.message.clone()).collect::<Vec<_>>().join("\n")
    };
    for good in ["slurm = \"23.11\"", "slurm = \"17.11.13\"", "slurm = \"25.11.0\"", "kubernetes = \"1.30.0\"", "kubernetes = \"v1.21.14\""] {
        assert!(load(&format!("[lab]\nid = \"v\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\ncount = 1\n{good}\n")).is_ok(), "{good}");
    }
    for wrong in ["slurm = \"23.12\"", "slurm = \"16.05.1\"", "slurm = \"23.11.x\"", "slurm = \"23\""] {
        assert!(bad(wrong).starts_with("`slurm` must be a Slurm release such as \"23.11.10\": one of `17.11`, `18.08`"), "{wrong}: {}", bad(wrong));
    }
    for wrong in ["kubernetes = \"1.31.0\"", "kubernetes = \"1.20.15\"", "kubernetes = \"2.29.0\"", "kubernetes = \"1.29\""] {
        assert_eq!(bad(wrong), "`kubernetes` must be a Kubernetes release such as \"1.29.15\", from 1.21 to 1.30", "{wrong}");
    }
    // The schema says the same.
    let schema: serde_json::Value = serde_json::from_str(&clusterlab_engine::lab::authoring::schema::json_schema()).unwrap();
    let cluster = &schema["properties"]["cluster"]["properties"];
    assert_eq!(
        cluster["slurm"]["pattern"],
        "^(17\\.11|18\\.08|19\\.05|20\\.02|20\\.11|21\\.08|22\\.05|23\\.02|23\\.11|24\\.05|24\\.11|25\\.05|25\\.11)(\\.[0-9]+)?$"
    );
    assert_eq!(cluster["kubernetes"]["pattern"], "^v?1\\.(21|22|23|24|25|26|27|28|29|30)\\.[0-9]+$");
}

#[test]
fn systemctl_status_is_ubuntu_22_04s() {
    // The Ubuntu capture's Loaded line, and Ubuntu's task limit on a large host.
    let ubuntu = common::reference("gpu", "systemctl-status_nvidia-fabricmanager_failed-sigkill_abridged.txt");
    let mut shell = session("");
    let out = shell.run("systemctl status nvidia-fabricmanager").stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "● nvidia-fabricmanager.service - NVIDIA fabric manager service");
    assert_eq!(lines[1], "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)");
    assert_eq!(lines[1], ubuntu.lines().nth(1).unwrap());
    assert!(lines[2].starts_with("     Active: active (running) since ") && lines[2].ends_with(" ago"), "{}", lines[2]);
    assert!(
        lines[3].starts_with("    Process: ")
            && lines[3].ends_with(" ExecStart=/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg (code=exited, status=0/SUCCESS)")
    );
    assert!(lines[4].starts_with("   Main PID: ") && lines[4].ends_with(" (nv-fabricmanage)"));
    assert_eq!(lines[5], "      Tasks: 18 (limit: 629145)");
    assert!(lines[6].starts_with("     Memory: ") && lines[7].starts_with("        CPU: "));
    assert_eq!(lines[8], "     CGroup: /system.slice/nvidia-fabricmanager.service");
    assert!(!out.contains("TriggeredBy:") && !out.contains("/usr/lib/systemd") && !out.contains("; preset:"), "{out}");
    // The failed form, as the capture.
    let mut failed = session("");
    Fault::FabricManagerDown { node: "gpu-001".into() }.apply(&mut failed.cluster).unwrap();
    let out = failed.run("systemctl status nvidia-fabricmanager").stdout();
    assert!(out.starts_with("× nvidia-fabricmanager.service - NVIDIA fabric manager service\n     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)\n     Active: failed (Result: signal) since "), "{out}");
    // Stopped: systemd 249's white circle and since when (index id 57138120772).
    shell.run("sudo systemctl stop nvidia-fabricmanager");
    let out = shell.run("systemctl status nvidia-fabricmanager").stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "○ nvidia-fabricmanager.service - NVIDIA fabric manager service");
    assert!(lines[2].starts_with("     Active: inactive (dead) since ") && lines[2].contains(" UTC; "), "{out}");
}

#[test]
fn journal_lines_and_os_release_are_ubuntus() {
    // The journal's short form, the same in systemd 249 and 252:
    // "Nov 05 13:55:26 node1 systemd[1]: Starting NVIDIA fabric manager service..."
    let mut shell = session("");
    let journal = shell.run("journalctl -u nvidia-fabricmanager --no-pager").stdout();
    let first = journal.lines().next().unwrap();
    let (stamp, rest) = first.split_at("Feb 04 12:13:35".len());
    assert!(stamp.as_bytes()[3] == b' ' && stamp.as_bytes()[6] == b' ' && stamp[7..].split(':').count() == 3, "{first}");
    assert_eq!(rest, " gpu-001 systemd[1]: Starting NVIDIA fabric manager service...");
    assert_eq!(
        shell.run("cat /etc/os-release").stdout(),
        "PRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nVERSION=\"22.04.5 LTS (Jammy Jellyfish)\"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\nHOME_URL=\"https://www.ubuntu.com/\"\nSUPPORT_URL=\"https://help.ubuntu.com/\"\nBUG_REPORT_URL=\"https://bugs.launchpad.net/ubuntu/\"\nPRIVACY_POLICY_URL=\"https://www.ubuntu.com/legal/terms-and-policies/privacy-policy\"\nUBUNTU_CODENAME=jammy\n"
    );
}
