//! `kubectl`'s workload pods (`model::pods`): manifests read as the API
//! server reads a Pod (`apply -f`, `create -f`, `delete -f`), their rows in
//! `get pods`, their objects for `-o json|yaml|jsonpath`, `describe pod`,
//! their events and their containers' logs.
//!
//! Only Pods are emulated: a manifest of another kind is refused, saying
//! so. A container's output is what its program prints (`nvidia-smi -L`,
//! `echo`, PyTorch's count of GPUs, a CUDA error's traceback); training
//! code prints nothing until it fails.

use super::kubectl_print::{object, Value};
use crate::commands::monitoring::yaml::{self, Yaml};
use crate::commands::Output;
use crate::limits::MAX_PODS;
use crate::model::change::Change;
use crate::model::pods::{Ending, Pod, PodSpec, PodState, Program, RestartPolicy, Run, Toleration};
use crate::model::time::{iso_utc, EpochSeconds};
use crate::model::{Cluster, GpuHealth};
use crate::rng::Rng;

/// A pod's UID: stable for its name and creation.
pub(super) fn uid(cluster: &Cluster, pod: &Pod) -> String {
    crate::rng::uuid_for(&format!("{}:pod:{}/{}:{}", cluster.seed, pod.spec.namespace, pod.spec.name, pod.created))
}

/// The pod's IP on its node's pod network.
pub(super) fn ip(cluster: &Cluster, pod: &Pod) -> Option<String> {
    let binding = pod.binding.as_ref()?;
    let index = cluster.nodes.iter().position(|n| n.hostname == binding.node)?;
    let host = Rng::derive(cluster.seed, &[&pod.spec.name, &pod.created.to_string(), "ip"]).range_u64(20, 250);
    Some(format!("10.244.{}.{host}", index % 256))
}

/// A scalar's text, or None for a node of another type.
fn scalar(node: &Yaml) -> Option<&str> {
    match node {
        Yaml::Scalar(text, _) => Some(text),
        _ => None,
    }
}

fn field<'y>(node: &'y Yaml, key: &str) -> Option<&'y Yaml> {
    match node {
        Yaml::Map(entries, _) => entries.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v),
        _ => None,
    }
}

/// The fields of a Pod the emulator reads, by where they sit; any other
/// field is refused as the API server's strict decoding refuses one it
/// does not know (fields it knows but the model ignores are read and left).
const KNOWN: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "metadata.name",
    "metadata.namespace",
    "metadata.labels",
    "metadata.labels.*",
    "metadata.annotations",
    "metadata.annotations.*",
    "spec",
    "spec.containers",
    "spec.containers[].name",
    "spec.containers[].image",
    "spec.containers[].imagePullPolicy",
    "spec.containers[].command",
    "spec.containers[].args",
    "spec.containers[].env",
    "spec.containers[].env[].name",
    "spec.containers[].env[].value",
    "spec.containers[].workingDir",
    "spec.containers[].resources",
    "spec.containers[].resources.limits",
    "spec.containers[].resources.limits.*",
    "spec.containers[].resources.requests",
    "spec.containers[].resources.requests.*",
    "spec.containers[].securityContext",
    "spec.containers[].securityContext.*",
    "spec.containers[].volumeMounts",
    "spec.containers[].volumeMounts[].name",
    "spec.containers[].volumeMounts[].mountPath",
    "spec.volumes",
    "spec.volumes[].name",
    "spec.volumes[].hostPath",
    "spec.volumes[].hostPath.*",
    "spec.volumes[].emptyDir",
    "spec.volumes[].emptyDir.*",
    "spec.restartPolicy",
    "spec.nodeSelector",
    "spec.nodeSelector.*",
    "spec.nodeName",
    "spec.tolerations",
    "spec.tolerations[].key",
    "spec.tolerations[].operator",
    "spec.tolerations[].value",
    "spec.tolerations[].effect",
    "spec.tolerations[].tolerationSeconds",
    "spec.hostIPC",
    "spec.hostNetwork",
    "spec.runtimeClassName",
    "spec.terminationGracePeriodSeconds",
];

/// The first field not in [`KNOWN`], as the API server names it
/// (`spec.containers[0].resource`).
fn unknown_field(node: &Yaml, path: &str, pattern: &str) -> Option<String> {
    match node {
        Yaml::Map(entries, _) => entries.iter().find_map(|(key, _, value)| {
            let name = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            let shape = if pattern.is_empty() { key.clone() } else { format!("{pattern}.{key}") };
            let wildcard = if pattern.is_empty() { String::new() } else { format!("{pattern}.*") };
            if KNOWN.contains(&shape.as_str()) {
                unknown_field(value, &name, &shape)
            } else if KNOWN.contains(&wildcard.as_str()) {
                None
            } else {
                Some(name)
            }
        }),
        Yaml::Seq(items, _) => items.iter().enumerate().find_map(|(at, item)| unknown_field(item, &format!("{path}[{at}]"), &format!("{pattern}[]"))),
        _ => None,
    }
}

/// A quantity of whole devices (`1`, `"2"`), as the API server takes an
/// extended resource's.
fn devices(node: Option<&Yaml>) -> Result<Option<u32>, String> {
    let Some(node) = node else { return Ok(None) };
    let text = scalar(node).unwrap_or("");
    text.parse::<u32>().map(Some).map_err(|_| text.to_string())
}

/// Reads one document of a manifest: a Pod, or why the API server (or
/// kubectl before it) refuses it. `source` names the file in messages.
pub(super) fn pod_spec(doc: &Yaml, source: &str, namespace: &str) -> Result<PodSpec, String> {
    let validating = |what: &str| {
        format!("error: error validating \"{source}\": error validating data: {what}; if you choose to ignore these errors, turn validation off with --validate=false\n")
    };
    let api = field(doc, "apiVersion").and_then(scalar);
    let kind = field(doc, "kind").and_then(scalar);
    match (api, kind) {
        (None, None) => return Err(validating("[apiVersion not set, kind not set]")),
        (None, _) => return Err(validating("apiVersion not set")),
        (_, None) => return Err(validating("kind not set")),
        (Some("v1"), Some("Pod")) => {}
        (Some(api), Some(kind)) => {
            return Err(format!("error: kubectl apply: a {kind} ({api}) is not emulated; ClusterLab's Kubernetes runs Pods (apiVersion: v1, kind: Pod)\n"))
        }
    }
    let name = field(doc, "metadata").and_then(|m| field(m, "name")).and_then(scalar).unwrap_or("").to_string();
    let namespace = field(doc, "metadata").and_then(|m| field(m, "namespace")).and_then(scalar).unwrap_or(namespace).to_string();
    let creating = |message: String| format!("Error from server (BadRequest): error when creating \"{source}\": {message}\n");
    if let Some(unknown) = unknown_field(doc, "", "") {
        return Err(creating(format!("Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"{unknown}\"")));
    }
    let invalid = |fields: Vec<String>| {
        let list = if fields.len() == 1 { fields[0].clone() } else { format!("[{}]", fields.join(", ")) };
        format!("The Pod \"{name}\" is invalid: {list}\n")
    };
    if name.is_empty() {
        return Err("error: error when retrieving current configuration of:\nResource: \"/v1, Resource=pods\", GroupVersionKind: \"/v1, Kind=Pod\"\nName: \"\", Namespace: \"default\"\nfrom server for: \"".to_string() + source + "\": resource name may not be empty\n");
    }
    let spec = field(doc, "spec");
    let containers = match spec.and_then(|s| field(s, "containers")) {
        Some(Yaml::Seq(items, _)) if !items.is_empty() => items,
        _ => return Err(invalid(vec!["spec.containers: Required value".to_string()])),
    };
    let container = &containers[0];
    let container_name = field(container, "name").and_then(scalar).unwrap_or("").to_string();
    let image = field(container, "image").and_then(scalar).unwrap_or("").to_string();
    let mut problems = Vec::new();
    if container_name.is_empty() {
        problems.push("spec.containers[0].name: Required value".to_string());
    }
    if image.is_empty() {
        problems.push("spec.containers[0].image: Required value".to_string());
    }
    let words = |key: &str| -> Vec<String> {
        match field(container, key) {
            Some(Yaml::Seq(items, _)) => items.iter().filter_map(scalar).map(str::to_string).collect(),
            Some(Yaml::Scalar(text, _)) => vec![text.clone()],
            _ => Vec::new(),
        }
    };
    let mut command = words("command");
    command.extend(words("args"));
    let resources = field(container, "resources");
    let quantity = |part: &str| devices(resources.and_then(|r| field(r, part)).and_then(|l| field(l, "nvidia.com/gpu")));
    let (limit, request) = match (quantity("limits"), quantity("requests")) {
        (Ok(limit), Ok(request)) => (limit, request),
        (Err(bad), _) | (_, Err(bad)) => {
            return Err(creating(format!("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (\"{bad}\")")));
        }
    };
    let gpus = match (limit, request) {
        (Some(limit), Some(request)) if limit != request => {
            problems.push(format!("spec.containers[0].resources.requests: Invalid value: \"{request}\": must be equal to nvidia.com/gpu limit of {limit}"));
            limit
        }
        (None, Some(_)) => {
            problems.push("spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources".to_string());
            0
        }
        (Some(limit), _) => limit,
        (None, None) => 0,
    };
    let restart_policy = match spec.and_then(|s| field(s, "restartPolicy")).and_then(scalar) {
        None | Some("Always") => RestartPolicy::Always,
        Some("OnFailure") => RestartPolicy::OnFailure,
        Some("Never") => RestartPolicy::Never,
        Some(other) => {
            problems.push(format!("spec.restartPolicy: Unsupported value: \"{other}\": supported values: \"Always\", \"OnFailure\", \"Never\""));
            RestartPolicy::Always
        }
    };
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let node_selector = match spec.and_then(|s| field(s, "nodeSelector")) {
        Some(Yaml::Map(entries, _)) => entries.iter().map(|(k, _, v)| (k.clone(), scalar(v).unwrap_or("").to_string())).collect(),
        _ => Vec::new(),
    };
    let tolerations = match spec.and_then(|s| field(s, "tolerations")) {
        Some(Yaml::Seq(items, _)) => items
            .iter()
            .map(|t| {
                let text = |key: &str| field(t, key).and_then(scalar).unwrap_or("").to_string();
                let exists = text("operator") == "Exists";
                Toleration { key: text("key"), value: if exists { None } else { Some(text("value")) }, effect: text("effect") }
            })
            .collect(),
        _ => Vec::new(),
    };
    let node_name = spec.and_then(|s| field(s, "nodeName")).and_then(scalar).map(str::to_string);
    let labels = match field(doc, "metadata").and_then(|m| field(m, "labels")) {
        Some(Yaml::Map(entries, _)) => entries.iter().map(|(k, _, v)| (k.clone(), scalar(v).unwrap_or("").to_string())).collect(),
        _ => Vec::new(),
    };
    Ok(PodSpec { name, namespace, container: container_name, image, command, labels, gpus, node_selector, tolerations, node_name, restart_policy })
}

/// A manifest file's Pods: its YAML documents (`---` between them), each read
/// by [`pod_spec`]; the first refusal stops the rest.
pub(super) fn manifest(text: &str, source: &str, namespace: &str) -> Vec<Result<PodSpec, String>> {
    let mut documents = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            documents.push(String::new());
        } else if let Some(last) = documents.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    let mut pods = Vec::new();
    for document in documents.iter().filter(|d| d.lines().any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))) {
        let read = yaml::parse(document)
            .map_err(|error| format!("error: error parsing {source}: error converting YAML to JSON: {error}\n"))
            .and_then(|doc| pod_spec(&doc, source, namespace));
        let failed = read.is_err();
        pods.push(read);
        if failed {
            break;
        }
    }
    pods
}

/// The manifest a lab leaves for its pod (`~/NAME.yaml`).
pub fn manifest_yaml(spec: &PodSpec) -> String {
    let quote = |word: &str| {
        if word.is_empty() || word.contains([':', '#', '"', '\'', '{', '}', '[', ']', ',', '&', '*', '!', '|', '>', '%', '@', '`']) || word.starts_with('-') {
            format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
        } else {
            word.to_string()
        }
    };
    let mut text = format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {}\n", spec.name);
    if spec.namespace != "default" {
        text += &format!("  namespace: {}\n", spec.namespace);
    }
    if !spec.labels.is_empty() {
        text += "  labels:\n";
        for (key, value) in &spec.labels {
            text += &format!("    {key}: {}\n", quote(value));
        }
    }
    text += "spec:\n";
    if spec.restart_policy != RestartPolicy::Always {
        text += &format!("  restartPolicy: {}\n", spec.restart_policy.name());
    }
    if let Some(node) = &spec.node_name {
        text += &format!("  nodeName: {node}\n");
    }
    if !spec.node_selector.is_empty() {
        text += "  nodeSelector:\n";
        for (key, value) in &spec.node_selector {
            text += &format!("    {key}: {}\n", quote(value));
        }
    }
    if !spec.tolerations.is_empty() {
        text += "  tolerations:\n";
        for t in &spec.tolerations {
            text += &format!("  - key: {}\n", quote(&t.key));
            match &t.value {
                None => text += "    operator: Exists\n",
                Some(value) => text += &format!("    operator: Equal\n    value: {}\n", quote(value)),
            }
            if !t.effect.is_empty() {
                text += &format!("    effect: {}\n", t.effect);
            }
        }
    }
    text += &format!("  containers:\n  - name: {}\n    image: {}\n", spec.container, spec.image);
    if !spec.command.is_empty() {
        let words: Vec<String> = spec.command.iter().map(|w| quote(w)).collect();
        text += &format!("    command: [{}]\n", words.join(", "));
    }
    if spec.gpus > 0 {
        text += &format!("    resources:\n      limits:\n        nvidia.com/gpu: {}\n", spec.gpus);
    }
    text
}

/// What a run of the container printed: its program's output, or the
/// traceback of the CUDA error that ended it.
pub(super) fn run_output(cluster: &Cluster, pod: &Pod, run: &Run) -> String {
    let Some(binding) = &pod.binding else { return String::new() };
    let node = cluster.node(&binding.node);
    let gpus: Vec<_> = binding.gpus.iter().filter_map(|g| node.and_then(|n| n.gpu(*g))).collect();
    match run.ended {
        Some((_, _, Ending::GpuAtStart)) => {
            let lost = gpus.iter().any(|g| g.health == GpuHealth::FallenOffBus);
            return cuda_traceback(&pod.spec.command, if lost { "invalid device ordinal" } else { "unknown error" }, true);
        }
        Some((_, _, Ending::GpuFailed)) => {
            let ecc = gpus.iter().any(|g| g.ecc.volatile_uncorrected > 0);
            return cuda_traceback(&pod.spec.command, if ecc { "uncorrectable ECC error encountered" } else { "unspecified launch failure" }, false);
        }
        _ => {}
    }
    match Program::of(&pod.spec.command) {
        Program::ListGpus => gpus.iter().enumerate().map(|(at, gpu)| format!("GPU {at}: {} (UUID: {})\n", gpu.name, gpu.uuid)).collect(),
        Program::CountGpus { available: false } => format!("{}\n", gpus.len()),
        Program::CountGpus { available: true } => format!("{}\n", if gpus.is_empty() { "False" } else { "True" }),
        Program::Echo(words) => format!("{words}\n"),
        Program::Sleep(_) | Program::GpuWork | Program::Other => String::new(),
    }
}

/// The script a container runs: the first `.py` among its words.
fn script(command: &[String]) -> String {
    command.iter().flat_map(|w| w.split_whitespace()).find(|w| w.ends_with(".py")).unwrap_or("/workspace/train.py").to_string()
}

/// PyTorch's traceback for a CUDA error: at `torch.cuda.set_device` when
/// the GPU was bad as the program started, else in a step's backward pass.
fn cuda_traceback(command: &[String], error: &str, at_start: bool) -> String {
    use super::job_log::{frame, TORCH};
    let script = script(command);
    let mut lines = vec!["Traceback (most recent call last):".to_string()];
    if at_start {
        lines.extend(frame(&script, 18, "<module>", "torch.cuda.set_device(local_rank)"));
        lines.extend(frame(&format!("{TORCH}/cuda/__init__.py"), 420, "set_device", "torch._C._cuda_setDevice(device)"));
    } else {
        lines.extend(frame(&script, 64, "<module>", "loss.backward()"));
        lines.extend(frame(&format!("{TORCH}/_tensor.py"), 521, "backward", "torch.autograd.backward("));
        lines.extend(frame(&format!("{TORCH}/autograd/__init__.py"), 289, "backward", "_engine_run_backward("));
        lines.extend(frame(
            &format!("{TORCH}/autograd/graph.py"),
            768,
            "_engine_run_backward",
            "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
        ));
    }
    lines.extend([
        format!("RuntimeError: CUDA error: {error}"),
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.".to_string(),
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1".to_string(),
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.".to_string(),
        String::new(),
    ]);
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// `kubectl logs POD [-p]`: the current run's output, or the one before.
pub(super) fn logs(cluster: &Cluster, pod: &Pod, previous: bool, tail: Option<usize>) -> Result<String, String> {
    let state = cluster.pod_state(pod);
    let name = &pod.spec.name;
    let container = &pod.spec.container;
    // A container waiting in its back-off serves the run that ended; so does
    // `--previous` (the container's last state).
    let ended = state.runs.last().is_some_and(|r| r.ended.is_some());
    let run = match (previous, state.runs.len()) {
        (_, 0) if pod.binding.is_none() => return Ok(String::new()),
        (false, 0) => {
            return Err(format!("Error from server (BadRequest): container \"{container}\" in pod \"{name}\" is waiting to start: ContainerCreating\n"))
        }
        (false, n) => &state.runs[n - 1],
        (true, n) if ended && state.status == "CrashLoopBackOff" => &state.runs[n - 1],
        (true, n) if n >= 2 => &state.runs[n - 2],
        (true, _) => return Err(format!("Error from server (BadRequest): previous terminated container \"{container}\" in pod \"{name}\" not found\n")),
    };
    let text = run_output(cluster, pod, run);
    let lines: Vec<&str> = text.lines().collect();
    let keep = tail.unwrap_or(lines.len()).min(lines.len());
    Ok(lines[lines.len() - keep..].iter().map(|l| format!("{l}\n")).collect())
}

/// kubectl's RESTARTS cell of a pod: its restarts, and when its last run before the current one ended.
pub(super) fn restarts_cell(cluster: &Cluster, state: &PodState) -> String {
    let running = state.runs.last().is_some_and(|r| r.ended.is_none());
    let last_end = state.runs.iter().rev().skip(usize::from(running)).find_map(|r| r.ended.map(|e| e.0));
    super::kubectl::restarts_text(cluster, state.restarts() as u64, last_end)
}

/// The Pod object, as `get -o json` returns it.
pub(super) fn pod_object(cluster: &Cluster, pod: &Pod) -> Value {
    let state = cluster.pod_state(pod);
    let spec = &pod.spec;
    let mut container = object([("image", spec.image.clone().into()), ("name", spec.container.clone().into())]);
    if !spec.command.is_empty() {
        container.set("command", Value::from(spec.command.clone()));
    }
    if spec.gpus > 0 {
        let gpus = object([("nvidia.com/gpu", spec.gpus.to_string().into())]);
        container.set("resources", object([("limits", gpus.clone()), ("requests", gpus)]));
    }
    let mut pod_spec = object([("containers", Value::from(vec![container])), ("restartPolicy", spec.restart_policy.name().into())]);
    if let Some(binding) = &pod.binding {
        pod_spec.set("nodeName", binding.node.clone().into());
    }
    if !spec.node_selector.is_empty() {
        pod_spec.set("nodeSelector", super::kubectl_print::object_from(spec.node_selector.iter().map(|(k, v)| (k.clone(), Value::from(v.clone())))));
    }
    let mut status = object([("phase", state.phase.into())]);
    if let Some(binding) = &pod.binding {
        status.set("hostIP", crate::model::network::frontend_ip(&binding.node).into());
        if let Some(ip) = ip(cluster, pod) {
            status.set("podIP", ip.into());
        }
        status.set("startTime", iso_utc(binding.at).into());
        let mut container_status = object([
            ("image", spec.image.clone().into()),
            ("name", spec.container.clone().into()),
            ("ready", state.ready.into()),
            ("restartCount", (state.restarts() as u64).into()),
            ("started", state.ready.into()),
            ("state", container_state(cluster, pod, &state, false)),
        ]);
        if state.runs.len() > 1 {
            container_status.set("lastState", container_state(cluster, pod, &state, true));
        }
        status.set("containerStatuses", Value::from(vec![container_status]));
    } else if let Err(reasons) = cluster.placement(spec) {
        let condition = object([
            ("lastTransitionTime", iso_utc(pod.created).into()),
            ("message", scheduling_message(cluster, &reasons).into()),
            ("reason", "Unschedulable".into()),
            ("status", "False".into()),
            ("type", "PodScheduled".into()),
        ]);
        status.set("conditions", Value::from(vec![condition]));
    }
    let labels = super::kubectl_print::object_from(spec.labels.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))));
    let mut metadata = object([
        ("creationTimestamp", iso_utc(pod.created).into()),
        ("labels", labels),
        ("name", spec.name.clone().into()),
        ("namespace", spec.namespace.clone().into()),
        ("uid", uid(cluster, pod).into()),
    ]);
    let version = Rng::derive(cluster.seed, &[&spec.name, "resourceVersion"]).range_u64(1_000_000, 90_000_000);
    metadata.set("resourceVersion", version.to_string().into());
    object([("apiVersion", "v1".into()), ("kind", "Pod".into()), ("metadata", metadata), ("spec", pod_spec), ("status", status)])
}

/// A container state object: the current one, or with `last` the run before.
fn container_state(cluster: &Cluster, pod: &Pod, state: &PodState, last: bool) -> Value {
    let run = if last { state.runs.len().checked_sub(2).map(|i| &state.runs[i]) } else { state.runs.last() };
    match run {
        None => object([("waiting", object([("reason", "ContainerCreating".into())]))]),
        Some(Run { started, ended: None }) => object([("running", object([("startedAt", iso_utc(*started).into())]))]),
        Some(Run { started, ended: Some((end, code, _)) }) if last || state.status != "CrashLoopBackOff" => {
            let reason = if *code == 0 { "Completed" } else { "Error" };
            object([(
                "terminated",
                object([
                    ("exitCode", Value::Number(i64::from(*code))),
                    ("finishedAt", iso_utc(*end).into()),
                    ("reason", reason.into()),
                    ("startedAt", iso_utc(*started).into()),
                ]),
            )])
        }
        Some(_) => {
            let message = back_off_message(cluster, pod, state);
            object([("waiting", object([("message", message.into()), ("reason", "CrashLoopBackOff".into())]))])
        }
    }
}

/// The kubelet's back-off message: `back-off 40s restarting failed container=...`.
pub(super) fn back_off_message(cluster: &Cluster, pod: &Pod, state: &PodState) -> String {
    let wait = match (state.next_start, state.runs.last().and_then(|r| r.ended)) {
        (Some(next), Some((end, ..))) => next - end,
        _ => 10,
    };
    let spell = if wait >= 60 { format!("{}m{}s", wait / 60, wait % 60) } else { format!("{wait}s") };
    format!("back-off {spell} restarting failed container={} pod={}_{}({})", pod.spec.container, pod.spec.name, pod.spec.namespace, uid(cluster, pod))
}

/// kube-scheduler's FailedScheduling message for the reasons each node gave.
pub(super) fn scheduling_message(cluster: &Cluster, reasons: &[&str]) -> String {
    let total = cluster.nodes.len();
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for reason in reasons {
        match counted.iter_mut().find(|(r, _)| r == reason) {
            Some((_, n)) => *n += 1,
            None => counted.push((reason, 1)),
        }
    }
    // Each entry is sorted as a string, count first (so `10 ...` before `2 ...`).
    let mut list: Vec<String> = counted.iter().map(|(r, n)| format!("{n} {r}")).collect();
    crate::sort::sort(&mut list);
    // Preemption could help only where resources were short.
    let short = counted.iter().filter(|(r, _)| r.starts_with("Insufficient")).map(|(_, n)| *n).sum::<usize>();
    let mut preemption = Vec::new();
    if short > 0 {
        preemption.push(format!("{short} No preemption victims found for incoming pod"));
    }
    if total > short {
        preemption.push(format!("{} Preemption is not helpful for scheduling", total - short));
    }
    crate::sort::sort(&mut preemption);
    // The preemption message ends in its own full stop: the text ends in two.
    format!("0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {}..", list.join(", "), preemption.join(", "))
}

/// The API server's check of an object name (a DNS subdomain), with its message.
fn name_problem(name: &str, field: &str) -> Option<String> {
    let label = |part: &str| {
        !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') && !part.starts_with('-') && !part.ends_with('-')
    };
    if name.len() <= 253 && name.split('.').all(label) {
        return None;
    }
    Some(format!(
        "{field}: Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ))
}

/// `kubectl apply -f` (or `create -f` with `create`) of the manifests read
/// (each file's name and its text, or why it could not be read).
pub(super) fn apply(cluster: &Cluster, host: &str, inputs: &[(String, Result<String, String>)], namespace: &str, create: bool) -> Output {
    let mut out = Output { duration_ms: 300, ..Output::default() };
    for (file, text) in inputs {
        let text = match text {
            Ok(text) => text,
            Err(message) => {
                out.stderr += message;
                out.status = 1;
                continue;
            }
        };
        let pods = manifest(text, file, namespace);
        if pods.is_empty() {
            out.stderr += &format!("error: no objects passed to {}\n", if create { "create" } else { "apply" });
            out.status = 1;
        }
        for read in pods {
            let spec = match read {
                Ok(spec) => spec,
                Err(message) => {
                    out.stderr += &message;
                    out.status = 1;
                    continue;
                }
            };
            if !super::kubectl::namespaces(cluster).contains(&spec.namespace.as_str()) {
                out.stderr += &format!("Error from server (NotFound): error when creating \"{file}\": namespaces \"{}\" not found\n", spec.namespace);
                out.status = 1;
                continue;
            }
            let name = &spec.name;
            let problems: Vec<String> =
                [name_problem(name, "metadata.name"), name_problem(&spec.container, "spec.containers[0].name")].into_iter().flatten().collect();
            if !problems.is_empty() {
                let list = if problems.len() == 1 { problems[0].clone() } else { format!("[{}]", problems.join(", ")) };
                out.stderr += &format!("The Pod \"{name}\" is invalid: {list}\n");
                out.status = 1;
                continue;
            }
            let change = || Change::ApplyPod { node: host.to_string(), pod: spec.clone() };
            let used = cluster.pods.len() + out.changes.len();
            match cluster.pod(&spec.namespace, name) {
                None if used >= MAX_PODS => {
                    out.stderr += &format!("Error from server (Forbidden): error when creating \"{file}\": pods \"{name}\" is forbidden: exceeded quota: pod-count, requested: pods=1, used: pods={used}, limited: pods={MAX_PODS}\n");
                    out.status = 1;
                }
                None => {
                    out.stdout += &format!("pod/{name} created\n");
                    out.changes.push(change());
                }
                Some(_) if create => {
                    out.stderr += &format!("Error from server (AlreadyExists): error when creating \"{file}\": pods \"{name}\" already exists\n");
                    out.status = 1;
                }
                Some(existing) if existing.spec == spec => out.stdout += &format!("pod/{name} unchanged\n"),
                Some(existing) if PodSpec { image: spec.image.clone(), ..existing.spec.clone() } == spec => {
                    out.stdout += &format!("pod/{name} configured\n");
                    out.changes.push(change());
                }
                Some(_) => {
                    out.stderr += &format!("The Pod \"{name}\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n");
                    out.status = 1;
                }
            }
        }
    }
    out
}

/// How long deleting the pod takes: its container's grace period (30 s;
/// PID 1 in a container ignores SIGTERM unless it handles it), or a moment
/// when nothing runs.
pub(super) fn deletion_ms(cluster: &Cluster, pod: &Pod, force: bool) -> u64 {
    let running = cluster.pod_state(pod).runs.last().is_some_and(|r| r.ended.is_none());
    if running && !force {
        30_400
    } else {
        400
    }
}

/// An event about a pod, as the API server keeps it: a repeated one is
/// one record with a count, its first and last time.
pub(super) struct PodEvent {
    pub kind: &'static str,
    pub reason: &'static str,
    pub first: EpochSeconds,
    pub last: EpochSeconds,
    pub count: usize,
    pub source: &'static str,
    pub message: String,
}

/// How long the API server keeps an event after its last update.
const EVENT_TTL_S: i64 = 3600;
/// How often the scheduler tries an unschedulable pod again with no
/// change to the cluster (`podMaxInUnschedulablePodsDuration`).
const RETRY_UNSCHEDULABLE_S: i64 = 300;
/// How often the kubelet records a back-off while it waits.
const BACK_OFF_EVENT_S: i64 = 12;

/// What happened to `pod`, oldest first, within the events' lifetime.
pub(super) fn pod_events(cluster: &Cluster, pod: &Pod) -> Vec<PodEvent> {
    let now = cluster.now;
    let mut events: Vec<PodEvent> = Vec::new();
    let mut record = |kind: &'static str, reason: &'static str, at: EpochSeconds, source: &'static str, message: String| {
        if at > now {
            return;
        }
        match events.iter_mut().find(|e| e.reason == reason && e.message == message) {
            Some(event) => {
                event.count += 1;
                event.last = event.last.max(at);
            }
            None => events.push(PodEvent { kind, reason, first: at, last: at, count: 1, source, message }),
        }
    };
    let spec = &pod.spec;
    let Some(binding) = &pod.binding else {
        if let Err(reasons) = cluster.placement(spec) {
            let message = scheduling_message(cluster, &reasons);
            let tries = (now - pod.created).max(0) / RETRY_UNSCHEDULABLE_S;
            for attempt in 0..=tries.min(1_000) {
                record("Warning", "FailedScheduling", pod.created + attempt * RETRY_UNSCHEDULABLE_S, "default-scheduler", message.clone());
            }
        }
        return events;
    };
    let state = cluster.pod_state(pod);
    record("Normal", "Scheduled", binding.at, "default-scheduler", format!("Successfully assigned {}/{} to {}", spec.namespace, spec.name, binding.node));
    let image = &spec.image;
    if let Some(pulled) = state.pulled {
        record("Normal", "Pulling", binding.at + 1, "kubelet", format!("Pulling image \"{image}\""));
        let took = (pulled - binding.at - 1) as f64 + Rng::derive(cluster.seed, &[image, "pull ms"]).range_u64(0, 999) as f64 / 1000.0;
        record("Normal", "Pulled", pulled, "kubelet", format!("Successfully pulled image \"{image}\" in {took:.3}s ({took:.3}s including waiting)"));
    }
    for (at, run) in state.runs.iter().enumerate() {
        if at > 0 {
            record("Normal", "Pulled", run.started, "kubelet", format!("Container image \"{image}\" already present on machine"));
        }
        record("Normal", "Created", run.started, "kubelet", format!("Created container {}", spec.container));
        record("Normal", "Started", run.started, "kubelet", format!("Started container {}", spec.container));
        // The waits between its runs, and the one under way.
        let next = state.runs.get(at + 1).map(|r| r.started).or(state.next_start);
        if let (Some((end, ..)), Some(next)) = (run.ended, next) {
            let message = format!("Back-off restarting failed container {} in pod {}_{}({})", spec.container, spec.name, spec.namespace, uid(cluster, pod));
            let mut t = end + 1;
            while t < next.min(now + 1) {
                record("Warning", "BackOff", t, "kubelet", message.clone());
                t += BACK_OFF_EVENT_S;
            }
        }
    }
    events.retain(|e| now - e.last <= EVENT_TTL_S);
    // By last time; the scheduler's events carry none, so they come first.
    crate::sort::sort_by_key(&mut events, |e| (e.source != "default-scheduler", e.last));
    events
}

/// An event's AGE cell: its last time, and with repeats how many over how long.
pub(super) fn event_age(now: EpochSeconds, event: &PodEvent, age: &dyn Fn(i64) -> String) -> String {
    if event.count > 1 {
        format!("{} (x{} over {})", age(now - event.last), event.count, age(now - event.first))
    } else {
        age(now - event.last)
    }
}

/// A seeded 64-digit hex identifier (container IDs, image digests).
fn hex64(cluster: &Cluster, parts: &[&str]) -> String {
    Rng::derive(cluster.seed, parts).hex(64)
}

/// The image's repository digest, as the runtime names it.
fn image_id(cluster: &Cluster, image: &str) -> String {
    let repository = image.split(['@', ':']).next().unwrap_or(image);
    let first = repository.split('/').next().unwrap_or("");
    let full = if repository.contains('/') && (first.contains('.') || first.contains(':')) {
        repository.to_string()
    } else if repository.contains('/') {
        format!("docker.io/{repository}")
    } else {
        format!("docker.io/library/{repository}")
    };
    format!("{full}@sha256:{}", hex64(cluster, &[image, "digest"]))
}

/// `kubectl describe pod`: kubectl's layout, aligned as its tabwriter
/// aligns it (padding 2, columns per run of lines).
pub(super) fn describe(cluster: &Cluster, pod: &Pod, age: &dyn Fn(i64) -> String, rfc1123: &dyn Fn(EpochSeconds) -> String) -> Vec<String> {
    let spec = &pod.spec;
    let state = cluster.pod_state(pod);
    let mut l: Vec<String> =
        vec![format!("Name:\t{}", spec.name), format!("Namespace:\t{}", spec.namespace), "Priority:\t0".into(), "Service Account:\tdefault".into()];
    match &pod.binding {
        Some(binding) => {
            l.push(format!("Node:\t{}/{}", binding.node, crate::model::network::frontend_ip(&binding.node)));
            l.push(format!("Start Time:\t{}", rfc1123(binding.at)));
        }
        None => l.push("Node:\t<none>".into()),
    }
    if spec.labels.is_empty() {
        l.push("Labels:\t<none>".into());
    }
    for (at, (key, value)) in spec.labels.iter().enumerate() {
        l.push(format!("{}\t{key}={value}", if at == 0 { "Labels:" } else { "" }));
    }
    l.push("Annotations:\t<none>".into());
    l.push(format!("Status:\t{}", if state.status == "Terminating" { "Terminating (lasts 1m)" } else { state.phase }));
    match ip(cluster, pod).filter(|_| !state.runs.is_empty() || state.status == "ContainerCreating") {
        Some(ip) => {
            l.push(format!("IP:\t{ip}"));
            l.push("IPs:".into());
            l.push(format!("  IP:\t{ip}"));
        }
        None => {
            l.push("IP:\t".into());
            l.push("IPs:\t<none>".into());
        }
    }
    l.push("Containers:".into());
    l.push(format!("  {}:", spec.container));
    let bound = pod.binding.is_some();
    if bound {
        let id = state.runs.last().map_or(String::new(), |r| format!("containerd://{}", hex64(cluster, &[&spec.name, &r.started.to_string(), "container"])));
        l.push(format!("    Container ID:\t{id}"));
    }
    l.push(format!("    Image:\t{}", spec.image));
    if bound {
        let id = if state.runs.is_empty() { String::new() } else { image_id(cluster, &spec.image) };
        l.push(format!("    Image ID:\t{id}"));
    }
    l.push("    Port:\t<none>".into());
    l.push("    Host Port:\t<none>".into());
    if !spec.command.is_empty() {
        l.push("    Command:".into());
        l.extend(spec.command.iter().map(|word| format!("      {word}")));
    }
    if bound {
        let terminated = |l: &mut Vec<String>, title: &str, started: EpochSeconds, end: EpochSeconds, code: i32| {
            l.push(format!("    {title}:\tTerminated"));
            l.push(format!("      Reason:\t{}", if code == 0 { "Completed" } else { "Error" }));
            l.push(format!("      Exit Code:\t{code}"));
            l.push(format!("      Started:\t{}", rfc1123(started)));
            l.push(format!("      Finished:\t{}", rfc1123(end)));
        };
        match state.runs.last() {
            None => {
                l.push("    State:\tWaiting".into());
                l.push("      Reason:\tContainerCreating".into());
            }
            Some(Run { started, ended: None }) => {
                l.push("    State:\tRunning".into());
                l.push(format!("      Started:\t{}", rfc1123(*started)));
            }
            Some(Run { ended: Some(_), .. }) if state.status == "CrashLoopBackOff" => {
                l.push("    State:\tWaiting".into());
                l.push("      Reason:\tCrashLoopBackOff".into());
            }
            Some(Run { started, ended: Some((end, code, _)) }) => terminated(&mut l, "State", *started, *end, *code),
        }
        let before = if state.status == "CrashLoopBackOff" { state.runs.len().checked_sub(1) } else { state.runs.len().checked_sub(2) };
        if let Some(Run { started, ended: Some((end, code, _)) }) = before.and_then(|i| state.runs.get(i)) {
            terminated(&mut l, "Last State", *started, *end, *code);
        }
        l.push(format!("    Ready:\t{}", if state.ready { "True" } else { "False" }));
        l.push(format!("    Restart Count:\t{}", state.restarts()));
    }
    if spec.gpus > 0 {
        for title in ["Limits", "Requests"] {
            l.push(format!("    {title}:"));
            l.push(format!("      nvidia.com/gpu:\t{}", spec.gpus));
        }
    }
    l.push("    Environment:\t<none>".into());
    let volume = format!("kube-api-access-{}", super::kubectl::suffix(cluster, &[&spec.name, "kube-api-access"], 5));
    l.push("    Mounts:".into());
    l.push(format!("      /var/run/secrets/kubernetes.io/serviceaccount from {volume} (ro)"));
    l.push("Conditions:".into());
    l.push("  Type\tStatus".into());
    if bound {
        let ready = if state.ready { "True" } else { "False" };
        let sandbox = if cluster.versions.kubernetes_minor() >= 29 { Some(("PodReadyToStartContainers", "True")) } else { None };
        let rows = sandbox.into_iter().chain([("Initialized", "True"), ("Ready", ready), ("ContainersReady", ready), ("PodScheduled", "True")]);
        l.extend(rows.map(|(kind, status)| format!("  {kind} \t{status} ")));
    } else {
        l.push("  PodScheduled \tFalse ".into());
    }
    l.push("Volumes:".into());
    l.push(format!("  {volume}:"));
    l.push("    Type:\tProjected (a volume that contains injected data from multiple sources)".into());
    l.push("    TokenExpirationSeconds:\t3607".into());
    l.push("    ConfigMapName:\tkube-root-ca.crt".into());
    l.push("    ConfigMapOptional:\t<nil>".into());
    l.push("    DownwardAPI:\ttrue".into());
    l.push("QoS Class:\tBestEffort".into());
    if spec.node_selector.is_empty() {
        l.push("Node-Selectors:\t<none>".into());
    }
    for (at, (key, value)) in spec.node_selector.iter().enumerate() {
        l.push(format!("{}\t{key}={value}", if at == 0 { "Node-Selectors:" } else { "" }));
    }
    let mut tolerations: Vec<String> = spec
        .tolerations
        .iter()
        .map(|t| {
            let mut text = t.key.clone();
            if let Some(value) = t.value.as_ref().filter(|v| !v.is_empty()) {
                text += &format!("={value}");
            }
            if !t.effect.is_empty() {
                text += &format!(":{}", t.effect);
            }
            if t.value.is_none() {
                text += " op=Exists";
            }
            text
        })
        .collect();
    tolerations.push("node.kubernetes.io/not-ready:NoExecute op=Exists for 300s".into());
    tolerations.push("node.kubernetes.io/unreachable:NoExecute op=Exists for 300s".into());
    for (at, toleration) in tolerations.iter().enumerate() {
        l.push(format!("{}\t{toleration}", if at == 0 { "Tolerations:" } else { "" }));
    }
    let events: Vec<[String; 5]> = pod_events(cluster, pod)
        .into_iter()
        .map(|e| [e.kind.to_string(), e.reason.to_string(), event_age(cluster.now, &e, age), e.source.to_string(), e.message])
        .collect();
    super::kubectl::events_table(&mut l, events);
    l
}
