//! Slurm on Kubernetes (issue 30, point 8): slurmd runs in a pod on each
//! node under SchedMD's slurm-operator, and a node is in both schedulers.
//!
//! What the operator does is taken from its source (SlinkyProject/
//! slurm-operator at v1.2.1): `syncCordon` in
//! internal/controller/nodeset/nodeset_sync.go drains a cordoned node's
//! Slurm node with `Node (N) was cordoned, Pod (NS/P) must be cordoned`,
//! undrains it on uncordon, and leaves alone a reason without its prefix
//! `slurm-operator: ` (slurmcontrol.go); the slurmd container's preStop
//! hook sets the node down with `slurm-operator: Pod is terminating`
//! (internal/builder/workerbuilder/worker_app.go). The pods' names follow
//! the chart's defaults (docs/installation.md): `slurm-controller-0`,
//! `slurm-restapi-…`, and DaemonSet-mode workers `slurm-worker-slinky-xxxxx`.

use clusterlab_engine::lab::evidence::Baseline;
use clusterlab_engine::lab::Setup;
use clusterlab_engine::{load, Session};

const LAB: &str = "[lab]\nid = \"s\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\nslurm = \"25.11.0\"\nslurm_on_kubernetes = true\n";

fn session(extra: &str) -> Session {
    let lab = load(&format!("{LAB}{extra}")).expect("the lab loads");
    Session::new(lab.instantiate(0), "gpu-001")
}

/// `sinfo`'s state and `scontrol`'s reason of `node`.
fn slurm(session: &mut Session, node: &str) -> (String, String) {
    let state = session.run(&format!("sinfo -h -n {node} -o %T")).stdout().trim().to_string();
    let shown = session.run(&format!("scontrol show node {node}")).stdout();
    // `Reason=TEXT [USER@TIME]`: the text, checked with its user.
    let reason = shown.lines().find_map(|l| l.trim().strip_prefix("Reason=")).unwrap_or("");
    let (reason, user) = reason.rsplit_once(" [").map_or((reason, ""), |(text, by)| (text, by.split('@').next().unwrap_or("")));
    let expected_user = if reason.starts_with("slurm-operator: Node") { "slurm" } else { "root" };
    assert!(reason.is_empty() || user == expected_user, "{reason} set by {user}");
    let reason = reason.to_string();
    (state, reason)
}

fn worker_pod(session: &mut Session, node: &str) -> String {
    let out = session.run("kubectl get pods -n slurm -o wide").stdout();
    let row = out.lines().find(|l| l.starts_with("slurm-worker-slinky-") && l.contains(node)).unwrap_or_else(|| panic!("no slurmd pod on {node}:\n{out}"));
    row.split_whitespace().next().unwrap_or_default().to_string()
}

#[test]
fn the_slurm_cluster_runs_in_pods() {
    let mut s = session("");
    let out = s.run("kubectl get pods -n slurm").stdout();
    let rows: Vec<&str> = out.lines().collect();
    assert!(rows[0].starts_with("NAME ") && rows[0].contains("READY   STATUS    RESTARTS   AGE"), "{out}");
    assert!(rows.iter().any(|r| r.starts_with("slurm-controller-0 ") && r.contains(" 2/2 ") && r.contains("Running")), "{out}");
    assert!(rows.iter().any(|r| r.starts_with("slurm-restapi-") && r.contains(" 1/1 ")), "{out}");
    let workers: Vec<&&str> = rows.iter().filter(|r| r.starts_with("slurm-worker-slinky-")).collect();
    assert_eq!(workers.len(), 2, "{out}");
    for worker in workers {
        let name = worker.split_whitespace().next().unwrap_or_default();
        assert_eq!(name.len(), "slurm-worker-slinky-".len() + 5, "{name}");
        assert!(worker.contains(" 2/2 "), "{worker}");
    }
    // kubectl names the container it chose of several (the log sidecar is an init container).
    assert_eq!(s.run("kubectl logs -n slurm slurm-controller-0").stderr(), "Defaulted container \"slurmctld\" out of: slurmctld, logfile (init)\n");
    let operator = s.run("kubectl get pods -n slinky").stdout();
    assert!(operator.lines().any(|l| l.starts_with("slurm-operator-webhook-")), "{operator}");
    let namespaces = s.run("kubectl get namespaces -o name").stdout();
    assert!(namespaces.contains("namespace/slinky\n") && namespaces.contains("namespace/slurm\n"), "{namespaces}");
    // A cluster without the operator has neither.
    let lab = load(&LAB.replace("slurm_on_kubernetes = true\n", "")).expect("loads");
    let mut plain = Session::new(lab.instantiate(0), "gpu-001");
    assert!(plain.run("kubectl get pods -n slurm").stderr().contains("No resources found in slurm namespace."));
}

#[test]
fn a_cordon_drains_the_slurm_node_and_an_uncordon_undrains_it() {
    let mut s = session("");
    let pod = worker_pod(&mut s, "gpu-002");
    assert_eq!(s.run("kubectl cordon gpu-002").stdout(), "node/gpu-002 cordoned\n");
    let (state, reason) = slurm(&mut s, "gpu-002");
    assert_eq!(state, "drained");
    assert_eq!(reason, format!("slurm-operator: Node (gpu-002) was cordoned, Pod (slurm/{pod}) must be cordoned"));
    // Resumed in Slurm alone, the operator drains it again.
    s.run("sudo scontrol update nodename=gpu-002 state=resume");
    assert_eq!(slurm(&mut s, "gpu-002"), ("drained".to_string(), reason));
    s.run("kubectl uncordon gpu-002");
    assert_eq!(slurm(&mut s, "gpu-002").0, "idle");
}

#[test]
fn a_reason_an_operator_set_is_left_alone() {
    let mut s = session("");
    s.run("sudo scontrol update nodename=gpu-002 state=drain reason=\"xid 79 gpu 3\"");
    s.run("kubectl cordon gpu-002");
    assert_eq!(slurm(&mut s, "gpu-002"), ("drained".to_string(), "xid 79 gpu 3".to_string()));
    // The uncordon does not undrain what the operator did not drain.
    s.run("kubectl uncordon gpu-002");
    assert_eq!(slurm(&mut s, "gpu-002"), ("drained".to_string(), "xid 79 gpu 3".to_string()));
    s.run("sudo scontrol update nodename=gpu-002 state=resume");
    assert_eq!(slurm(&mut s, "gpu-002").0, "idle");
}

#[test]
fn a_lab_can_start_with_a_node_cordoned_and_drained() {
    let mut s =
        session("[[faults]]\nkind = \"node-drain\"\nnode = \"gpu-002\"\nreason = \"RMA 4471\"\n[[faults]]\nkind = \"node-cordon\"\nnode = \"gpu-002\"\n");
    assert!(s.run("kubectl get nodes").stdout().contains("Ready,SchedulingDisabled"));
    assert_eq!(slurm(&mut s, "gpu-002"), ("drained".to_string(), "RMA 4471".to_string()));
    // Cordoned alone, the operator drains it.
    let mut s = session("[[faults]]\nkind = \"node-cordon\"\nnode = \"gpu-002\"\n");
    assert!(slurm(&mut s, "gpu-002").1.starts_with("slurm-operator: Node (gpu-002) was cordoned"));
}

#[test]
fn a_deleted_slurmd_pod_is_replaced_and_leaves_its_node_down() {
    let mut s = session("");
    let pod = worker_pod(&mut s, "gpu-002");
    assert_eq!(s.run(&format!("kubectl delete pod -n slurm {pod}")).stdout(), format!("pod \"{pod}\" deleted\n"));
    let replacement = worker_pod(&mut s, "gpu-002");
    assert_ne!(replacement, pod);
    assert_eq!(slurm(&mut s, "gpu-002"), ("down".to_string(), "slurm-operator: Pod is terminating".to_string()));
    s.run("sudo scontrol update nodename=gpu-002 state=resume");
    assert_eq!(slurm(&mut s, "gpu-002").0, "idle");
}

#[test]
fn a_drain_evicts_an_idle_slurmd_until_the_uncordon() {
    let mut s = session("");
    let pod = worker_pod(&mut s, "gpu-002");
    let out = s.run("kubectl drain gpu-002 --ignore-daemonsets");
    assert!(out.stdout().contains(&format!("evicting pod slurm/{pod}\n")) && out.stdout().contains(&format!("pod/{pod} evicted\n")), "{}", out.stdout());
    assert!(!s.run("kubectl get pods -n slurm -o wide").stdout().contains("gpu-002"));
    // No slurmd answers for the node now: down and not responding.
    assert_eq!(slurm(&mut s, "gpu-002"), ("down*".to_string(), "slurm-operator: Pod is terminating".to_string()));
    s.run("kubectl uncordon gpu-002");
    let back = worker_pod(&mut s, "gpu-002");
    assert_ne!(back, pod);
    // Down by the hook, not for silence: it stays down until resumed.
    assert_eq!(slurm(&mut s, "gpu-002").0, "down");
}

#[test]
fn a_state_fact_reads_the_cordon() {
    let lab = load(&format!(
        "{LAB}[[questions]]\nid = \"q\"\ntype = \"state\"\nprompt = \"p\"\nexpect = [{{ node = \"gpu-002\", kubernetes = \"cordoned\" }}, {{ node = \"gpu-002\", slurm = \"drained|down\" }}]\n"
    ))
    .expect("the lab loads");
    let setup = Setup::from_json(&lab.to_json()).expect("the lab's data loads");
    let mut s = Session::new(lab.instantiate(0), "gpu-001");
    assert_eq!(setup.states_met(0, &s.cluster, &Baseline::default()), Vec::<String>::new());
    s.run("kubectl cordon gpu-002");
    assert_eq!(setup.states_met(0, &s.cluster, &Baseline::default()), vec!["q".to_string()]);
    s.run("kubectl drain gpu-002 --ignore-daemonsets");
    assert_eq!(setup.states_met(0, &s.cluster, &Baseline::default()), vec!["q".to_string()], "down is out of service too");
    // Uncordoned, the node is schedulable again while Slurm keeps it down.
    s.run("kubectl uncordon gpu-002");
    assert!(!setup.states_met(0, &s.cluster, &Baseline::default()).contains(&"q".to_string()));
}

#[test]
fn a_drain_waits_for_the_slurm_job_the_disruption_budget_protects() {
    let mut s = session("[[jobs]]\nname = \"train\"\nkind = \"training\"\nnodes = [\"gpu-002\"]\nparams = \"8B\"\nglobal_batch = 16\nseq_len = 2048\n");
    let pod = worker_pod(&mut s, "gpu-002");
    let out = s.run("kubectl drain gpu-002 --ignore-daemonsets");
    // kubectl retries every 5 s while the job runs; the lab stops the wait
    // after ten minutes, as Ctrl-C would.
    let retry =
        format!("error when evicting pods/\"{pod}\" -n \"slurm\" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.\n");
    assert_eq!(out.status, 130);
    assert!(out.stderr().ends_with(&retry) && out.stderr().matches(&retry).count() == 120, "{}", out.stderr());
    assert!(out.stdout().contains(&format!("evicting pod slurm/{pod}\n")) && !out.stdout().contains("drained"), "{}", out.stdout());
    // The cordon came first: Slurm drains the node while its job runs.
    assert_eq!(slurm(&mut s, "gpu-002").0, "draining");
    assert!(s.run("kubectl get pods -n slurm").stdout().contains(&pod));
}

#[test]
fn the_node_image_runs_slurmd_in_its_pod_not_from_systemd() {
    let mut s = session("");
    let out = s.run("ssh gpu-002 systemctl status slurmd");
    assert_eq!((out.stderr().as_str(), out.status), ("Unit slurmd.service could not be found.\n", 4));
    assert!(!s.run("ssh gpu-002 systemctl list-units --all").stdout().contains("slurmd"));
    assert_eq!(s.run("ssh gpu-002 journalctl -u slurmd").stdout(), "-- No entries --\n");
    // Configless: slurmd fetches slurm.conf from slurmctld into its pod.
    assert_eq!(s.run("ssh gpu-002 cat /etc/slurm/slurm.conf").stderr(), "cat: /etc/slurm/slurm.conf: No such file or directory\n");
    // The host still sees the container's process, on the command line
    // the operator's pod gives it (worker_app.go `slurmdArgs` at v1.2.1,
    // through the image's supervisord: SlinkyProject/containers).
    let first = s.run("ssh gpu-002 pgrep -a slurmd").stdout();
    let (pid, args) = first.trim_end().split_once(' ').unwrap_or_default();
    assert_eq!(args, "slurmd --systemd -Z --conf-server slurm-controller.slurm:6817 --conf Features=slurm-worker-slinky", "{first}");
    // A replaced pod is a new process, started with its pod.
    let pod = s
        .run("kubectl get pods -n slurm -o wide")
        .stdout()
        .lines()
        .find(|l| l.contains("gpu-002"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default()
        .to_string();
    s.run(&format!("kubectl delete pod -n slurm {pod}"));
    let again = s.run("ssh gpu-002 pgrep -a slurmd").stdout();
    assert!(!again.starts_with(&format!("{pid} ")) && again.ends_with(" Features=slurm-worker-slinky\n"), "{first}{again}");
    assert!(s.run("ssh gpu-002 ps -o etimes= -C slurmd").stdout().trim().parse::<u64>().is_ok_and(|seconds| seconds < 60));
    // Evicted by a drain, it no longer answers Slurm.
    s.run("kubectl drain gpu-002 --ignore-daemonsets");
    assert_eq!(s.run("ssh gpu-002 pgrep slurmd").status, 1);
}

#[test]
fn the_nodeset_counts_its_pods_and_their_slurm_nodes() {
    let mut s = session("");
    let out = s.run("kubectl get nodesets -n slurm").stdout();
    assert_eq!(out.lines().next(), Some("NAME                  DESIRED   REPLICAS   UPDATED   READY   AGE"), "{out}");
    assert!(out.lines().nth(1).is_some_and(|row| row.starts_with("slurm-worker-slinky   2         2          2         2       ")), "{out}");
    // A cordon takes the node out of DESIRED (its pod stays) and drains its Slurm node.
    s.run("kubectl cordon gpu-002");
    let wide = s.run("kubectl get nss -n slurm -o wide").stdout();
    assert_eq!(wide.lines().next(), Some("NAME                  DESIRED   REPLICAS   UPDATED   READY   IDLE   ALLOCATED   DOWN   DRAIN   AGE"), "{wide}");
    assert!(
        wide.lines()
            .nth(1)
            .is_some_and(|row| row.starts_with("slurm-worker-slinky   1         2          2         2       2      0           0      1       ")),
        "{wide}"
    );
    assert_eq!(s.run("kubectl get nodesets").stderr(), "No resources found in default namespace.\n");
    assert_eq!(s.run("kubectl get nodeset -n slurm -o name").stdout(), "nodeset.slinky.slurm.net/slurm-worker-slinky\n");
}
