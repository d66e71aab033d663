//! Workload pods (issue 30, point 7: GPU pod failures) as one system: what
//! `kubectl` shows of a pod, its node and its events agrees with what the
//! node shows of its GPUs, and a GPU that fails under a pod crashes it.
//!
//! The layouts follow kubectl 1.29.14's own output for the same objects
//! (run against a stand-in API server): `describe pod` aligned per run of
//! lines by tabwriter (padding 2; conditions with a trailing space), the
//! scheduler's FailedScheduling text ending in two full stops, drain's
//! refusal `due to error:` without a space before a single error.

use clusterlab_engine::lab::evidence::Baseline;
use clusterlab_engine::lab::Setup;
use clusterlab_engine::{load, Lab, Session};

const CLUSTER: &str = "[lab]\nid = \"p\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n";

const TRAIN: &str = "[[pods]]\nname = \"train\"\nimage = \"nvcr.io/nvidia/pytorch:24.05-py3\"\ncommand = [\"torchrun\", \"--nproc-per-node=8\", \"/workspace/train.py\"]\ngpus = 8\nnode = \"gpu-002\"\n";

fn lab(extra: &str) -> (Lab, Session) {
    let lab = load(&format!("{CLUSTER}{extra}")).expect("the lab loads");
    let session = Session::new(lab.instantiate(0), "gpu-001");
    (lab, session)
}

fn lost_gpu(gpu: u32) -> String {
    format!("[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-002\"\ngpu = {gpu}\n")
}

/// The line of `text` that starts with `start`.
fn line<'t>(text: &'t str, start: &str) -> &'t str {
    text.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no line starting {start:?} in:\n{text}"))
}

#[test]
fn a_running_pod_is_described_as_kubectl_describes_it() {
    let (_, mut session) = lab(TRAIN);
    let out = session.run("kubectl describe pod train").stdout();
    for expected in [
        "Name:             train",
        "Namespace:        default",
        "Priority:         0",
        "Service Account:  default",
        "Labels:           app=train",
        "Annotations:      <none>",
        "Status:           Running",
        "Containers:",
        "  train:",
        // `Command:` has no value: it ends the run of lines aligned together.
        "    Image:         nvcr.io/nvidia/pytorch:24.05-py3",
        "    Port:          <none>",
        "    Host Port:     <none>",
        "    Command:",
        "      torchrun",
        "    State:          Running",
        "    Ready:          True",
        "    Restart Count:  0",
        "    Limits:",
        "      nvidia.com/gpu:  8",
        "    Environment:       <none>",
        "Conditions:",
        "  Type                        Status",
        "  PodReadyToStartContainers   True ",
        "  Initialized                 True ",
        "  Ready                       True ",
        "  PodScheduled                True ",
        "    Type:                    Projected (a volume that contains injected data from multiple sources)",
        "    TokenExpirationSeconds:  3607",
        "QoS Class:                   BestEffort",
        "Node-Selectors:              kubernetes.io/hostname=gpu-002",
        "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
        "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
    ] {
        assert!(out.lines().any(|l| l == expected), "{expected:?} missing from:\n{out}");
    }
    assert!(line(&out, "Node:             gpu-002/").len() > 26);
    assert!(line(&out, "    Container ID:  containerd://").len() == 19 + "containerd://".len() + 64);
    assert!(line(&out, "    Image ID:      nvcr.io/nvidia/pytorch@sha256:").len() == 19 + "nvcr.io/nvidia/pytorch@sha256:".len() + 64);
    // Applied five hours ago: its first events have expired.
    assert!(out.ends_with("Events:                      <none>\n"), "{out}");
    // Its training code holds its GPUs: the host sees one process on all eight.
    let smi = session.run("ssh gpu-002 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader").stdout();
    assert_eq!(smi.lines().count(), 8, "{smi}");
    let pid = smi.split(',').next().unwrap().to_string();
    assert!(smi.lines().all(|l| l.starts_with(&format!("{pid}, /usr/bin/python, "))), "{smi}");
    let ps = session.run(&format!("ssh gpu-002 ps -o user,args -p {pid}")).stdout();
    assert!(ps.contains("root") && ps.contains("torchrun --nproc-per-node=8 /workspace/train.py"), "{ps}");
    let reset = session.run("ssh gpu-002 sudo nvidia-smi -r -i 0");
    assert_ne!(reset.status, 0, "a GPU the pod holds cannot be reset");
}

#[test]
fn a_gpu_lost_under_a_pod_puts_it_in_crash_loop_back_off() {
    let (_, mut session) = lab(&format!("{TRAIN}{}", lost_gpu(3)));
    let pods = session.run("kubectl get pods").stdout();
    let row: Vec<&str> = pods.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..3], ["train", "0/1", "CrashLoopBackOff"], "{pods}");
    assert!(row[4].starts_with('(') && row[6] == "5h", "RESTARTS carries the last restart's age: {pods}");
    let out = session.run("kubectl describe pod train").stdout();
    for expected in [
        "    State:          Waiting",
        "      Reason:       CrashLoopBackOff",
        "    Last State:     Terminated",
        "      Reason:       Error",
        "      Exit Code:    1",
        "    Ready:          False",
        "  Ready                       False ",
    ] {
        assert!(out.lines().any(|l| l == expected), "{expected:?} missing from:\n{out}");
    }
    let back_off = line(&out, "  Warning  BackOff ");
    assert!(back_off.contains(" (x") && back_off.contains("kubelet  Back-off restarting failed container train in pod train_default("), "{back_off}");
    // The crashed run's output, with or without --previous.
    let logs = session.run("kubectl logs train");
    assert_eq!(logs.status, 0);
    assert!(
        logs.stdout().contains("torch.cuda.set_device(local_rank)\n") && logs.stdout().contains("RuntimeError: CUDA error: invalid device ordinal\n"),
        "{}",
        logs.stdout()
    );
    assert_eq!(session.run("kubectl logs train -p").stdout(), logs.stdout());
    // No process holds the GPUs between restarts.
    assert_eq!(session.run("ssh gpu-002 nvidia-smi --query-compute-apps=pid --format=csv,noheader").stdout(), "");
    // The device plugin is down on the node: nothing to allocate.
    let node = session.run("kubectl describe node gpu-002").stdout();
    let allocatable = node.split("Allocatable:").nth(1).unwrap();
    assert!(allocatable.contains("  nvidia.com/gpu:  0\n"), "{node}");
    assert!(node.contains("  default                     train "), "{node}");
    assert!(node.contains("  nvidia.com/gpu     8         8\n"), "{node}");
}

#[test]
fn a_pod_nothing_can_take_is_pending_with_the_schedulers_reasons() {
    let (_, mut session) = lab(&format!("{TRAIN}{}", lost_gpu(3)));
    assert_eq!(session.run("kubectl delete pod train").stdout(), "pod \"train\" deleted\n");
    assert_eq!(session.run("kubectl apply -f ~/train.yaml").stdout(), "pod/train created\n");
    let out = session.run("kubectl describe pod train").stdout();
    assert!(out.lines().any(|l| l == "Node:             <none>"), "{out}");
    assert!(out.lines().any(|l| l == "IP:               "), "an empty value is padded: {out}");
    assert!(out.lines().any(|l| l == "IPs:              <none>"), "{out}");
    assert!(out.lines().any(|l| l == "  PodScheduled   False "), "{out}");
    assert!(out.ends_with("  Warning  FailedScheduling  0s    default-scheduler  0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..\n"), "{out}");
    assert_eq!(session.run("kubectl logs train").stdout(), "", "an unscheduled pod has no logs yet");
    // A cordon is the first filter: it names that instead.
    session.run("kubectl cordon gpu-001");
    let events = session.run("kubectl get events").stdout();
    assert!(events.contains("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable."), "{events}");
}

#[test]
fn a_repaired_gpu_and_a_new_pod_run_again() {
    let (lab, mut session) = lab(&format!(
        "{TRAIN}{}\n[[questions]]\nid = \"q\"\ntype = \"state\"\nprompt = \"p\"\nexpect = [{{ pod = \"train\", running = true }}]\n",
        lost_gpu(3)
    ));
    let setup = Setup::from_json(&lab.to_json()).unwrap();
    let baseline = Baseline::default();
    assert!(setup.states_met(0, &session.cluster, &baseline).is_empty());
    session.run("ssh gpu-002 sudo reboot");
    session.run("sleep 400");
    // The device plugin registers about five minutes after boot.
    assert!(line(&session.run("kubectl describe node gpu-002").stdout(), "  nvidia.com/gpu:").ends_with(" 8"));
    session.run("sleep 200");
    session.run("kubectl delete pod train");
    session.run("kubectl apply -f ~/train.yaml");
    assert_eq!(
        session.run("kubectl get pods --no-headers 2>/dev/null || kubectl get pods").stdout().lines().last().unwrap().split_whitespace().nth(2),
        Some("ContainerCreating")
    );
    session.run("sleep 90");
    let pods = session.run("kubectl get pods -o wide").stdout();
    assert!(pods.lines().nth(1).unwrap().contains(" 1/1     Running   0 "), "{pods}");
    assert_eq!(setup.states_met(0, &session.cluster, &baseline), vec!["q".to_string()]);
    let events = session.run("kubectl describe pod train").stdout();
    let pulled = line(&events, "  Normal  Pulled ");
    assert!(pulled.contains("Successfully pulled image \"nvcr.io/nvidia/pytorch:24.05-py3\" in ") && pulled.ends_with("s including waiting)"), "{pulled}");
}

#[test]
fn after_a_repair_the_device_plugin_offers_the_gpus_at_its_next_restart() {
    let (_, mut session) = lab("[[faults]]\nkind = \"gpu-xid\"\nnode = \"gpu-002\"\ngpu = 2\nxid = 119\n");
    let allocatable = |session: &mut Session| session.run("kubectl get node gpu-002 -o jsonpath='{.status.allocatable.nvidia\\.com/gpu}'").stdout();
    let plugin = |session: &mut Session| session.run("kubectl get pods -n gpu-operator | grep device-plugin | grep -v ' 1/1 .* 0 '").stdout();
    assert_eq!(allocatable(&mut session), "0");
    let reset =
        session.run("ssh gpu-002 'sudo systemctl stop dcgm-exporter nvidia-dcgm && sudo nvidia-smi -r -i 2 && sudo systemctl start nvidia-dcgm dcgm-exporter'");
    assert_eq!(reset.status, 0, "{}", reset.stderr());
    // The plugin is still in its back-off: nothing offered yet.
    assert_eq!(allocatable(&mut session), "0");
    assert!(plugin(&mut session).contains("   0/1     CrashLoopBackOff   "), "{}", plugin(&mut session));
    session.run("sleep 310");
    assert_eq!(allocatable(&mut session), "8");
    let row = plugin(&mut session);
    assert!(row.contains("   1/1     Running   "), "running again, its restarts kept: {row}");
}

#[test]
fn manifests_are_read_as_the_api_server_reads_them() {
    let (_, mut session) = lab("");
    let write = |session: &mut Session, text: &str| session.run(&format!("printf '{text}' > p.yaml"));
    write(&mut session, "apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: smoke\\nspec:\\n  restartPolicy: Never\\n  containers:\\n  - name: smoke\\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\\n    command: [nvidia-smi, -L]\\n    resources:\\n      limits:\\n        nvidia.com/gpu: 2\\n");
    assert_eq!(session.run("kubectl apply -f p.yaml").stdout(), "pod/smoke created\n");
    assert_eq!(session.run("kubectl apply -f p.yaml").stdout(), "pod/smoke unchanged\n");
    let again = session.run("kubectl create -f p.yaml");
    assert_eq!(again.stderr(), "Error from server (AlreadyExists): error when creating \"p.yaml\": pods \"smoke\" already exists\n");
    session.run("sleep 120");
    let pods = session.run("kubectl get pods").stdout();
    assert!(pods.contains("smoke   0/1     Completed   0          2m"), "{pods}");
    let logs = session.run("kubectl logs smoke").stdout();
    let lines: Vec<&str> = logs.lines().collect();
    assert_eq!(lines.len(), 2, "{logs}");
    assert!(lines[0].starts_with("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-") && lines[1].starts_with("GPU 1: "), "{logs}");
    write(&mut session, "kind: Pod\\nmetadata:\\n  name: x\\n");
    assert_eq!(session.run("kubectl apply -f p.yaml").stderr(), "error: error validating \"p.yaml\": error validating data: apiVersion not set; if you choose to ignore these errors, turn validation off with --validate=false\n");
    write(&mut session, "metadata:\\n  name: x\\n");
    assert!(session.run("kubectl apply -f p.yaml").stderr().contains("error validating data: [apiVersion not set, kind not set]; if you choose"));
    write(
        &mut session,
        "apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: x\\nspec:\\n  containers:\\n  - name: x\\n    image: busybox\\n    resource:\\n      limits: {}\\n",
    );
    assert_eq!(session.run("kubectl apply -f p.yaml").stderr(), "Error from server (BadRequest): error when creating \"p.yaml\": Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.containers[0].resource\"\n");
    write(&mut session, "apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: x\\n  bad: [\\n");
    assert!(session.run("kubectl apply -f p.yaml").stderr().starts_with("error: error parsing p.yaml: error converting YAML to JSON: yaml: line "));
    write(&mut session, "apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: Big_Name\\nspec:\\n  containers:\\n  - name: c\\n    image: busybox\\n");
    assert!(session
        .run("kubectl apply -f p.yaml")
        .stderr()
        .starts_with("The Pod \"Big_Name\" is invalid: metadata.name: Invalid value: \"Big_Name\": a lowercase RFC 1123 subdomain"));
    assert_eq!(session.run("kubectl apply -f nothere.yaml").stderr(), "error: the path \"nothere.yaml\" does not exist\n");
    assert_eq!(session.run("kubectl delete pod ghost").stderr(), "Error from server (NotFound): pods \"ghost\" not found\n");
    let gone = session.run("kubectl delete -f p.yaml --force");
    assert!(gone.stderr().starts_with("Warning: Immediate deletion does not wait"));
    // The namespace's quota bounds how many pods a loop can make.
    write(&mut session, "apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: smoke\\nspec:\\n  containers:\\n  - name: smoke\\n    image: busybox\\n    command: [sleep, infinity]\\n");
    let made = session.run("for i in $(seq 100); do sed \"s/name: smoke/name: s$i/\" p.yaml > q.yaml; kubectl apply -f q.yaml; done 2>&1 | tail -n 1").stdout();
    assert_eq!(made, "Error from server (Forbidden): error when creating \"q.yaml\": pods \"s100\" is forbidden: exceeded quota: pod-count, requested: pods=1, used: pods=64, limited: pods=64\n");
}

#[test]
fn drain_needs_force_for_a_bare_pod() {
    let (_, mut session) = lab(TRAIN);
    let refused = session.run("kubectl drain gpu-002 --ignore-daemonsets");
    assert_eq!(refused.status, 1);
    assert_eq!(refused.stdout(), "node/gpu-002 cordoned\n");
    assert_eq!(
        refused.stderr(),
        "error: unable to drain node \"gpu-002\" due to error:cannot delete Pods declare no controller (use --force to override): default/train, continuing command...\nThere are pending nodes to be drained:\n gpu-002\ncannot delete Pods declare no controller (use --force to override): default/train\n"
    );
    let both = session.run("kubectl drain gpu-002").stderr();
    assert!(both.starts_with("error: unable to drain node \"gpu-002\" due to error:[cannot delete DaemonSet-managed Pods"), "{both}");
    let forced = session.run("kubectl drain gpu-002 --ignore-daemonsets --force");
    assert_eq!(forced.status, 0);
    assert!(
        forced.stderr().starts_with("Warning: deleting Pods that declare no controller: default/train; ignoring DaemonSet-managed Pods: gpu-operator/"),
        "{}",
        forced.stderr()
    );
    assert_eq!(forced.stdout(), "node/gpu-002 already cordoned\nevicting pod default/train\npod/train evicted\nnode/gpu-002 drained\n");
    assert_eq!(session.run("kubectl get pods").stderr(), "No resources found in default namespace.\n");
    assert_eq!(session.run("ssh gpu-002 nvidia-smi --query-compute-apps=pid --format=csv,noheader").stdout(), "", "the evicted pod let go of its GPUs");
}

#[test]
fn a_pod_cut_down_to_fit_is_not_the_pod_the_lab_asks_for() {
    let (lab, mut session) =
        lab(&format!("{TRAIN}[[questions]]\nid = \"q\"\ntype = \"state\"\nprompt = \"p\"\nexpect = [{{ pod = \"train\", running = true }}]\n"));
    let setup = Setup::from_json(&lab.to_json()).unwrap();
    assert_eq!(setup.states_met(0, &session.cluster, &Baseline::default()), vec!["q".to_string()]);
    session.run("kubectl delete pod train; sed 's/nvidia.com\\/gpu: 8/nvidia.com\\/gpu: 1/' ~/train.yaml > small.yaml; kubectl apply -f small.yaml; sleep 120");
    assert!(session.run("kubectl get pods").stdout().contains(" 1/1     Running "));
    assert!(setup.states_met(0, &session.cluster, &Baseline::default()).is_empty(), "one GPU is not the eight it asks for");
}

#[test]
fn restart_policies_decide_what_an_exit_becomes() {
    let (_, mut session) = lab("");
    for (name, policy, command) in [("once", "Never", "[echo, hi]"), ("again", "Always", "[echo, hi]"), ("fails", "OnFailure", "[ls, /nothere]")] {
        session.run(&format!(
            "printf 'apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: {name}\\nspec:\\n  restartPolicy: {policy}\\n  containers:\\n  - name: c\\n    image: busybox\\n    command: {command}\\n' > {name}.yaml; kubectl apply -f {name}.yaml"
        ));
    }
    session.run("sleep 600");
    let pods = session.run("kubectl get pods").stdout();
    let status = |name: &str| pods.lines().find(|l| l.starts_with(name)).map(|l| l.split_whitespace().nth(2).unwrap_or("").to_string());
    // Never: done once. Always: a program that ends is restarted, and backs off.
    assert_eq!(status("once").as_deref(), Some("Completed"), "{pods}");
    assert_eq!(status("again").as_deref(), Some("CrashLoopBackOff"), "{pods}");
    assert_eq!(session.run("kubectl logs once").stdout(), "hi\n");
    let again = session.run("kubectl describe pod again").stdout();
    assert!(again.lines().any(|l| l == "      Reason:       Completed"), "the last run exited 0: {again}");
    // OnFailure: an unknown program exits 0 here (only the modelled ones fail), so it completes.
    assert_eq!(status("fails").as_deref(), Some("Completed"), "{pods}");
}

#[test]
fn exec_runs_in_the_containers_view_of_its_node() {
    let (_, mut session) = lab(&TRAIN.replace("gpus = 8", "gpus = 2"));
    let listed = session.run("kubectl exec train -- nvidia-smi -L").stdout();
    assert_eq!(listed.lines().count(), 2, "only the pod's GPUs, numbered from 0: {listed}");
    let host = session.run("ssh gpu-002 nvidia-smi -L").stdout();
    assert_eq!(listed.lines().next().unwrap(), host.lines().next().unwrap(), "the lowest-numbered free GPUs, as they are");
    assert_eq!(session.run("kubectl exec -it train -- hostname").stdout(), "train\n");
    let apps = session.run("kubectl exec train -- nvidia-smi --query-compute-apps=pid --format=csv,noheader");
    assert_eq!((apps.status, apps.stdout()), (0, String::new()), "the host's processes are not the container's");
    let missing = session.run("kubectl exec train -- ls /nothere");
    assert_eq!(missing.status, 2);
    assert!(missing.stderr().ends_with("command terminated with exit code 2\n"), "{}", missing.stderr());
    let unknown = session.run("kubectl exec train -- frobnicate");
    assert_eq!(unknown.status, 126);
    assert!(unknown.stderr().starts_with(
        "OCI runtime exec failed: exec failed: unable to start container process: exec: \"frobnicate\": executable file not found in $PATH: unknown\n"
    ));
    assert_eq!(session.run("kubectl exec train").stderr(), "error: you must specify at least one command for the container\n");
}

#[test]
fn pods_are_the_same_bytes_for_the_same_seed() {
    let run = || {
        let (_, mut session) = lab(&format!("{TRAIN}{}", lost_gpu(5)));
        ["kubectl get pods -A -o wide", "kubectl describe pod train", "kubectl get events -A", "kubectl get pod train -o json"]
            .map(|line| session.run(line).stdout())
            .join("")
    };
    assert_eq!(run(), run());
}

/// The rows of `kubectl get pods -n gpu-operator -o wide` for the validator on gpu-002.
fn validator_row(session: &mut Session) -> String {
    let pods = session.run("kubectl get pods -n gpu-operator -o wide").stdout();
    pods.lines().find(|l| l.starts_with("nvidia-operator-validator-") && l.contains(" gpu-002 ")).unwrap_or_default().to_string()
}

#[test]
fn a_validator_restarted_on_a_broken_host_driver_waits_at_its_driver_validation() {
    // The GPU Operator v24.6.2's validator (validator/main.go): the host's
    // nvidia-smi fails, so it looks for a driver container every 5 seconds.
    let (_, mut s) = lab("[[faults]]\nkind = \"driver-mismatch\"\nnode = \"gpu-002\"\ninstalled = \"570.172.08\"\n");
    // Validated before the packages changed, the running pod stays so.
    let before = validator_row(&mut s);
    assert!(before.contains("   1/1     Running   "), "{before}");
    let old = before.split_whitespace().next().unwrap_or_default().to_string();
    let ip = before.split_whitespace().nth(5).unwrap_or_default().to_string();
    assert_eq!(s.run(&format!("kubectl delete pod -n gpu-operator {old}")).stdout(), format!("pod \"{old}\" deleted\n"));
    // Its DaemonSet makes another at once, under a new name, at the address it left.
    let after = validator_row(&mut s);
    let new = after.split_whitespace().next().unwrap_or_default().to_string();
    assert!(new != old && after.contains("   0/1     Init:0/4   0          ") && after.contains(&format!(" {ip} ")), "{after}");
    s.run("sleep 12");
    let log = s.run(&format!("kubectl logs -n gpu-operator {new} -c driver-validation")).stdout();
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].starts_with("time=\"") && lines[0].ends_with("\" level=info msg=\"version: v24.6.2, commit: e4f1f5d\""), "{log}");
    assert!(lines[1].ends_with(" level=info msg=\"Attempting to validate a pre-installed driver on the host\""), "{log}");
    assert_eq!(lines[2..4], ["Failed to initialize NVML: Driver/library version mismatch", "NVML library version: 570.172"]);
    let retries: Vec<&&str> =
        lines.iter().filter(|l| l.ends_with(" level=warning msg=\"failed to validate the driver, retrying after 5 seconds\\n\"")).collect();
    assert!(retries.len() >= 2 && lines.len() == 4 + 2 * retries.len(), "{log}");
    // Its own container has not started; kubectl names the containers first.
    let waiting = s.run(&format!("kubectl logs -n gpu-operator {new}"));
    assert_eq!(waiting.status, 1);
    assert_eq!(
        waiting.stderr(),
        format!("Defaulted container \"nvidia-operator-validator\" out of: nvidia-operator-validator, driver-validation (init), toolkit-validation (init), cuda-validation (init), plugin-validation (init)\nError from server (BadRequest): container \"nvidia-operator-validator\" in pod \"{new}\" is waiting to start: PodInitializing\n")
    );
    // The other nodes' validators passed; a healthy one says so.
    let healthy = s.run("kubectl get pods -n gpu-operator -o wide").stdout();
    let other = healthy
        .lines()
        .find(|l| l.starts_with("nvidia-operator-validator-") && l.contains(" gpu-001 "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default()
        .to_string();
    assert_eq!(s.run(&format!("kubectl logs -n gpu-operator {other} -c nvidia-operator-validator")).stdout(), "all validations are successful\n");
    assert_eq!(s.run(&format!("kubectl logs -n gpu-operator {other} -c nope")).stderr(), format!("error: container nope not found in pod {other}\n"));
}
