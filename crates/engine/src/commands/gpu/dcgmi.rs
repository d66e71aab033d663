//! `dcgmi`: NVIDIA DCGM's command line, `discovery -l` and `diag -r 1|2|3`
//! (FACTS.md §7); `dmon` in `dcgmi_dmon`, `group`, `health` and `nvlink`
//! in `dcgmi_health`; its usage text and `-v` as DCGM 3.3 prints them.
//!
//! `diag` draws a 78-column table: column 1 is 27 wide, column 2 48; long
//! messages wrap every 45 characters, mid-word. DCGM 3.x names the tests
//! (`Persistence Mode`, `PCIe`, `GPU Memory`), summarises multi-GPU tests
//! (`Pass - All`, `Fail - GPU: 0`) and prints every section header; DCGM 4.x
//! names plugins in lower case (`software`, `memory`, `pcie`) with one
//! `GPUn: Pass` row per GPU and only the sections it ran. The layout follows
//! `cluster.versions.dcgm`.
//!
//! Findings come from the model. A deployment problem (pending row remaps,
//! failed remapping, an unreadable GPU) fails its check: DCGM 3.2.5 and
//! later print every deployment check with the error under the failed one
//! and skip the later tests when a row remap is pending or a GPU is lost
//! (NVVS stops there); persistence mode off is an info row under a pass.
//! Before 3.2.5 the run stopped at deployment, printing only the errors
//! (the captured row-remap fragment). Later tests report uncorrectable ECC
//! and throttling (GPU Memory), a degraded PCIe link and NVLinks down
//! (PCIe). A GPU that fell off the bus while the host engine ran is still
//! in its list, and NVML answers "GPU is lost" for it; one that was already
//! gone when the node booted is missing from the list. Without Fabric
//! Manager on an NVSwitch system CUDA cannot initialise: PCIe and the
//! stress tests are skipped and GPU Memory fails with a `cuInit` warning
//! per GPU, as a DCGM 3.3 run on an HGX H100 with Fabric Manager stopped
//! printed it (NVIDIA/DCGM issue thread, 2024-11; `Fail - All` and
//! `Skip - All` are from the same run). A failed run exits 226
//! (DCGM_ST_NVVS_ERROR), 205 when a failure's severity is "isolate".
//! `-j` prints the run as DCGM 3.3's jsoncpp writer does.
//!
//! Layout sources: DCGM 3.3.9's `dcgmi/Diag.cpp` and NVVS for the failing
//! deployment rows, the JSON and the exit status; captures for the rest.
//! Unverified (no capture): the 4.x rendering of failures and its JSON (4.x
//! prints 3.x's JSON here), the `-r 3` section sets and 3.x stress test
//! names, the PCIe parameter names in the link messages. Message strings
//! are DCGM's `dcgm_errors.h` wording (the row-remap one before 3.2.5 is
//! the capture's).

use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::gpu::FabricState;
use crate::model::{Cluster, Gpu, GpuHealth};
use crate::rng::Rng;

pub struct Dcgmi;

static SIGNATURE: Signature = Signature {
    name: "dcgmi",
    summary: "command-line interface to NVIDIA DCGM: GPU discovery, diagnostics, health watches, NVLink status",
    usage: "dcgmi subsystem [options]",
    flags: &[
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Displays usage information and exits." },
        Flag { short: Some('l'), long: Some("list"), value: None, help: "discovery: list all GPUs and NvSwitches DCGM sees." },
        Flag { short: Some('r'), long: Some("run"), value: Some("LEVEL"), help: "diag: run level 1 (short), 2 (medium) or 3 (long)." },
        Flag { short: Some('i'), long: Some("gpuList"), value: Some("IDS"), help: "diag: only these GPU ids (comma separated)." },
        Flag { short: Some('g'), long: Some("group"), value: Some("GROUP"), help: "diag: the GPU group to run on (default: all GPUs)." },
        Flag { short: Some('p'), long: Some("parameters"), value: Some("PARAMS"), help: "diag: test parameters, e.g. pcie.gpu_nvlinks_expected_up=18." },
        Flag { short: Some('j'), long: Some("json"), value: None, help: "diag: print the results as JSON." },
    ],
    examples: &[
        Example { command: "dcgmi discovery -l", description: "the GPUs DCGM can see, with bus ids and UUIDs" },
        Example { command: "dcgmi diag -r 1", description: "quick deployment checks: persistence mode, row remapping, driver" },
        Example { command: "dcgmi diag -r 2", description: "adds the PCIe/NVLink and GPU memory tests (about two minutes)" },
        Example { command: "dcgmi diag -r 1 -j | grep -B4 Fail", description: "the results as JSON, for a script or a ticket" },
        Example { command: "dcgmi dmon -e 155,203,1002,1004 -c 5", description: "power, utilization, SM and tensor activity, once a second" },
        Example { command: "dcgmi health -s a && dcgmi health -c", description: "watch every health system, then check: NVLink, memory, PCIe, thermal, power" },
        Example { command: "dcgmi nvlink -s", description: "every GPU's 18 NVLink states (U up, D down)" },
        Example { command: "dcgmi nvlink -e -g 0", description: "one GPU's NVLink error counters, link by link" },
        Example { command: "dcgmi group -l", description: "the GPU groups DCGM knows" },
    ],
};

impl Command for Dcgmi {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let Some(subsystem) = args.first().map(String::as_str) else {
            return Output::error("PARSE ERROR:  \n             Required argument missing: {vv | subsystem}\n\nUsage: \n   dcgmi subsystem \n   dcgmi -v \n\n\nFor complete USAGE and HELP type: \n   dcgmi --help\n\n", 1);
        };
        match subsystem {
            "-h" | "--help" => return Output::ok(usage()),
            "-v" => return version(invocation),
            "discovery" | "diag" | "dmon" | "group" | "health" | "nvlink" => {}
            // DCGM's other subsystems are not emulated: the usage, as before.
            "topo" | "stats" | "policy" | "config" | "fieldgroup" | "introspect" | "modules" | "profile" | "set" | "test" => return Output::error(usage(), 1),
            _ => return Output { status: 255, ..Output::ok(format!("ERROR: Invalid subsystem.\n\n{}", usage())) },
        }
        // Help needs no host engine.
        if args[1..].iter().any(|arg| arg == "-h" || arg == "--help") {
            if let Some(help) = super::dcgmi_help::help(subsystem) {
                return Output::ok(help);
            }
        }
        if !host_engine_runs(invocation.node) {
            return host_engine_down();
        }
        match subsystem {
            "dmon" => return super::dcgmi_dmon::run(invocation),
            "group" | "health" | "nvlink" => return monitor(invocation, subsystem, &args[1..]),
            _ => {}
        }
        let (mut list, mut help, mut level, mut ids, mut group, mut json) = (false, false, None, None, None, false);
        for arg in scan(&SIGNATURE, &args[1..]) {
            let allowed = |flag: &Flag| match subsystem {
                "discovery" => matches!(flag.short, Some('l' | 'h' | 'j')),
                _ => flag.short != Some('l'),
            };
            match arg {
                Arg::Flag(flag, _) if !allowed(flag) => {
                    return parse_error(subsystem, &format!("Couldn't find match for argument -{}", flag.short.unwrap_or('?')))
                }
                Arg::Flag(flag, value) => match flag.short {
                    Some('h') => help = true,
                    Some('l') => list = true,
                    Some('r') => level = value,
                    Some('i') => ids = value,
                    Some('g') => group = value,
                    Some('j') => json = true,
                    _ => {}
                },
                Arg::Positional(word) | Arg::Unknown(word) => return parse_error(subsystem, &format!("Couldn't find match for argument {word}")),
                Arg::MissingValue(flag) => return parse_error(subsystem, &format!("Missing a value for the argument --{}", flag.long.unwrap_or(""))),
            }
        }
        if help {
            return Output::ok(super::dcgmi_help::help(subsystem).unwrap_or_else(usage));
        }
        let gpus: Vec<&Gpu> = invocation.node.gpus.iter().filter(|gpu| gpu.is_visible()).collect();
        if subsystem == "discovery" {
            return if list { discovery(&gpus) } else { parse_error(subsystem, "One of -l, -c, -i or -v is required") };
        }
        // The host engine still holds the GPUs that fell off the bus since it started.
        let gpus: Vec<&Gpu> = invocation.node.gpus.iter().filter(|gpu| gpu.is_visible() || lost_while_watched(gpu)).collect();
        let level = match level.as_deref() {
            Some("1" | "short") => 1,
            Some("2" | "medium") => 2,
            Some("3" | "long") => 3,
            Some(other) => return Output::error(format!("Error: invalid run level or test name '{other}'.\n"), 1),
            None => return parse_error(subsystem, "Either a run level (-r) or a test name must be given"),
        };
        // A group names its GPUs (0 is all of them).
        let gpus = match group.as_deref().map(|id| super::dcgmi_health::group_gpus(invocation.node, id)) {
            None => gpus,
            Some(Some(members)) => gpus.into_iter().filter(|gpu| members.contains(&gpu.index)).collect(),
            Some(None) => {
                return Output::error(format!("Error: Unable to run diagnostic on group {}. Return: The Group is not found.\n", group.unwrap_or_default()), 251)
            }
        };
        let listed = ids.is_some();
        let gpus = match ids {
            None => gpus,
            Some(ids) => {
                let wanted: Vec<Option<u32>> = ids.split(',').map(|id| id.trim().parse().ok()).collect();
                if wanted.iter().any(|id| id.is_none_or(|id| !gpus.iter().any(|g| g.index == id))) {
                    return Output::error(format!("Error: invalid GPU list '{ids}'.\n"), 1);
                }
                gpus.into_iter().filter(|gpu| wanted.contains(&Some(gpu.index))).collect()
            }
        };
        diag(invocation.cluster, &invocation.node.hostname, &gpus, level, listed, json)
    }
}

fn usage() -> String {
    // DCGM's own text, its en dashes included.
    let subsystems = [
        ("topo", "GPU Topology [dcgmi topo -h for more info]"),
        ("stats", "Process Statistics [dcgmi stats -h for more info]"),
        ("diag", "System Validation/Diagnostic [dcgmi diag \u{2013}h for more info]"),
        ("policy", "Policy Management [dcgmi policy \u{2013}h for more info]"),
        ("health", "Health Monitoring [dcgmi health \u{2013}h for more info]"),
        ("config", "Configuration Management [dcgmi config \u{2013}h for more info]"),
        ("group", "GPU Group Management [dcgmi group \u{2013}h for more info]"),
        ("fieldgroup", "Field Group Management [dcgmi fieldgroup \u{2013}h for more info]"),
        ("discovery", "Discover GPUs on the system [dcgmi discovery \u{2013}h for more\n                     info]"),
        ("introspect", "Gather info about DCGM itself [dcgmi introspect \u{2013}h for\n                     more info]"),
        ("nvlink", "Displays NvLink link statuses and error counts [dcgmi nvlink\n                     \u{2013}h for more info]"),
        ("dmon", "Stats Monitoring of GPUs [dcgmi dmon \u{2013}h for more info]"),
        ("modules", "Control and list DCGM modules"),
        ("profile", "Control and list DCGM profiling metrics"),
        ("set", "Configure hostengine settings"),
    ];
    let mut out = String::from("\n \n\nUsage: dcgmi\n   dcgmi subsystem \n   dcgmi -v \n\nFlags:\n  -v    vv          Get DCGMI version information\n        subsystem   The desired subsystem to be accessed.\n Subsystems Available:\n");
    for (name, text) in subsystems {
        out += &format!("        {name:<11} {text}\n");
    }
    out + "  --    ignore_rest Ignores the rest of the labeled arguments following this\n                     flag.\n      --version     Displays version information and exits.\n  -h  --help        Displays usage information and exits.\n\n Please email dcgm-support@nvidia.com with any questions, bug reports, etc.\n\n NVIDIA Datacenter GPU Management Interface\n\n"
}

/// `dcgmi -v`: the build's version lines (DCGM skips a line whose value it
/// lacks), then the host engine's when it answers.
fn version(invocation: &Invocation) -> Output {
    let release = &invocation.cluster.versions.dcgm;
    let branch: Vec<&str> = release.split('.').take(2).collect();
    let block = format!("Version : {release}\nBuild Type : Release\nBranch Name : rel_dcgm_{}\nCPU Arch : x86_64\n", branch.join("_"));
    let engine = if host_engine_runs(invocation.node) { format!("\nHostengine build info:\n{block}") } else { String::new() };
    Output::ok(block + &engine)
}

/// What `dcgmi group`, `health` and `nvlink` were asked.
#[derive(Default)]
struct MonitorArgs<'a> {
    group: super::dcgmi_health::GroupRequest<'a>,
    set: Option<&'a str>,
    fetch: bool,
    check: bool,
    status: bool,
    errors: bool,
    gpu: Option<&'a str>,
}

/// Reads `dcgmi group|health|nvlink`'s arguments, or the error to print.
fn monitor_args<'a>(node: &crate::model::Node, subsystem: &str, args: &'a [String]) -> Result<MonitorArgs<'a>, Output> {
    let mut parsed = MonitorArgs::default();
    let mut words = args.iter().map(String::as_str);
    while let Some(word) = words.next() {
        // An option that takes a value and got none.
        let mut value = |long: &str| words.next().ok_or_else(|| parse_error(subsystem, &format!("Missing a value for the argument --{long}")));
        let request = &mut parsed.group;
        match (subsystem, word) {
            ("group", "-l" | "--list") => request.list = true,
            ("group", "-c" | "--create") => request.create = Some(value("create")?),
            ("group", "--default") => request.all_gpus = true,
            ("group", "--defaultnvswitches") => {}
            ("group", "-d" | "--delete") => request.delete = Some(value("delete")?),
            ("group", "-g" | "--group") => request.group = Some(value("group")?),
            ("group", "-i" | "--info") => request.info = true,
            ("group", "-a" | "--add") => request.add = Some(value("add")?),
            ("group", "-r" | "--remove") => request.remove = Some(value("remove")?),
            ("health", "-s" | "--set") => parsed.set = words.next(),
            ("health", "-f" | "--fetch") => parsed.fetch = true,
            ("health", "-c" | "--check") => parsed.check = true,
            ("health", "-g" | "--group") => {
                // Its default groups by number or letter, or one an operator made.
                let group = words.next().unwrap_or_default();
                if !matches!(group, "g" | "s" | "a" | "i" | "c") && super::dcgmi_health::group_gpus(node, group).is_none() {
                    return Err(Output::error("Error: Unable to check health watches. Return: The Group is not found\n", 253));
                }
            }
            ("nvlink", "-s" | "--link-status") => parsed.status = true,
            ("nvlink", "-e" | "--errors") => parsed.errors = true,
            ("nvlink", "-g" | "--gpuid") => parsed.gpu = words.next(),
            _ => return Err(parse_error(subsystem, &format!("Couldn't find match for argument {word}"))),
        }
    }
    Ok(parsed)
}

/// `dcgmi group ...`, `dcgmi health -s|-f|-c [-g GROUP]`, `dcgmi nvlink -s|-e -g GPU`.
fn monitor(invocation: &Invocation, subsystem: &str, args: &[String]) -> Output {
    let node = invocation.node;
    let parsed = match monitor_args(node, subsystem, args) {
        Ok(parsed) => parsed,
        Err(refused) => return refused,
    };
    match subsystem {
        "group" => super::dcgmi_health::group(node, &parsed.group),
        "health" => super::dcgmi_health::health(node, parsed.set, parsed.fetch, parsed.check),
        _ if parsed.status => super::dcgmi_health::nvlink_status(node),
        _ if parsed.errors => super::dcgmi_health::nvlink_errors(node, parsed.gpu),
        _ => parse_error(subsystem, "One of -s or -e is required"),
    }
}

pub fn parse_error(subsystem: &str, detail: &str) -> Output {
    Output::error(
        format!("PARSE ERROR:  \n             {detail}\n\nBrief USAGE: \n   dcgmi {subsystem} [options]\n\nFor complete USAGE and HELP type: \n   dcgmi {subsystem} --help\n\n"),
        1,
    )
}

// ---------------------------------------------------------------- discovery

fn discovery(gpus: &[&Gpu]) -> Output {
    let rule = format!("+{}+{}+\n", "-".repeat(8), "-".repeat(70));
    let row = |id: &str, info: &str| format!("| {id:<6} | {info:<68} |\n");
    let mut out = format!("{} GPU{} found.\n", gpus.len(), if gpus.len() == 1 { "" } else { "s" });
    out += &rule;
    out += &row("GPU ID", "Device Information");
    out += &rule;
    for gpu in gpus {
        out += &row(&gpu.index.to_string(), &format!("Name: {}", gpu.name));
        out += &row("", &format!("PCI Bus ID: {}", gpu.bus_id));
        out += &row("", &format!("Device UUID: {}", gpu.uuid));
        out += &rule;
    }
    // The model has no NVSwitch devices; the captured HGX host listed none either.
    out += "0 NvSwitches found.\n+-----------+\n| Switch ID |\n+-----------+\n+-----------+\n";
    Output { stdout: out, duration_ms: 100, ..Output::default() }
}

// ---------------------------------------------------------------- diag

const LABEL: usize = 25;
const VALUE: usize = 46;
const WRAP: usize = 45;

fn border(edge: char, fill: char) -> String {
    format!("{edge}{}{edge}{}{edge}\n", fill.to_string().repeat(LABEL + 2), fill.to_string().repeat(VALUE + 2))
}

fn section(name: &str, edge: char) -> String {
    format!("{edge}{:-<27}+{}{edge}\n", format!("-----  {name}  "), "-".repeat(VALUE + 2))
}

/// A row; a long value wraps every 45 characters under an empty label.
fn row(label: &str, value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    let mut out = String::new();
    for (at, chunk) in chars.chunks(WRAP).enumerate() {
        let chunk: String = chunk.iter().collect();
        out += &format!("| {:<LABEL$} | {chunk:<VALUE$} |\n", if at == 0 { label } else { "" });
    }
    if chars.is_empty() {
        out += &format!("| {label:<LABEL$} | {:<VALUE$} |\n", "");
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Test {
    Deployment,
    Pcie,
    Memory,
    /// The level-3 tests (diagnostic and stress), which also run CUDA.
    Stress,
}

/// How a finding shows: an error fails its test, a warning comes with a
/// failed or warned test, an info row sits under a passing one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Error,
    Warning,
    Info,
}

struct Finding {
    test: Test,
    /// The deployment check it belongs to (`Persistence Mode`), "" for the
    /// per-GPU tests.
    check: &'static str,
    gpu: u32,
    kind: Kind,
    /// DCGM's error id, severity and category (`dcgm_errors.h`).
    code: (u32, u32, u32),
    message: String,
}

/// DCGM_ERROR_ISOLATE: the GPU cannot run work; the run's status says so.
const ISOLATE: u32 = 2;

/// Whether CUDA cannot initialise on the GPU: "system not yet initialized"
/// until Fabric Manager has trained the NVSwitch fabric.
fn cuda_blocked(gpu: &Gpu) -> bool {
    !gpu.nvlinks.is_empty() && gpu.fabric == FabricState::InProgress
}

/// Whether the GPU fell off the bus since the driver loaded (its Xid 79 is
/// this boot's): the host engine, started at boot, still lists it.
fn lost_while_watched(gpu: &Gpu) -> bool {
    gpu.health == GpuHealth::FallenOffBus && gpu.xids.contains(&79)
}

/// A DCGM release as (major, minor, patch), to pick its wording and layout.
fn release(version: &str) -> (u32, u32, u32) {
    let mut parts = version.split('.').map(|part| part.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// DCGM 3.2.5 reworded its deployment messages, made persistence mode a
/// warning shown as info, and prints every deployment check with the error
/// under the one that failed.
fn reworded(version: &str) -> bool {
    release(version) >= (3, 2, 5)
}

// The findings' codes, (id, severity, category) from DCGM 3.3.9's error
// table: DCGM_FR_NVML_API, _PERSISTENCE_MODE, _PENDING_ROW_REMAP,
// _ROW_REMAP_FAILURE, _PCIE_GENERATION, _PCIE_WIDTH, _NVLINK_DOWN,
// _VOLATILE_DBE_DETECTED, _CUDA_API, _CLOCK_THROTTLE_THERMAL and _POWER.
const NVML: (u32, u32, u32) = (19, 1, 4);
const PERSISTENCE: (u32, u32, u32) = (29, 5, 8);
const PENDING_REMAP: (u32, u32, u32) = (85, 6, 10);
const REMAP_FAILED: (u32, u32, u32) = (80, ISOLATE, 10);
const PCIE_GEN: (u32, u32, u32) = (45, 4, 13);
const PCIE_WIDTH: (u32, u32, u32) = (46, 5, 13);
const NVLINK_DOWN: (u32, u32, u32) = (14, 4, 11);
const DBE: (u32, u32, u32) = (4, ISOLATE, 10);
const CUDA: (u32, u32, u32) = (51, 1, 6);
const THERMAL: (u32, u32, u32) = (10, 1, 9);
const POWER: (u32, u32, u32) = (12, 1, 14);

fn findings(cluster: &Cluster, host: &str, gpus: &[&Gpu]) -> Vec<Finding> {
    let modern = reworded(&cluster.versions.dcgm);
    let mut out = Vec::new();
    let mut add = |test, check, gpu: &Gpu, kind, code, message: String| out.push(Finding { test, check, gpu: gpu.index, kind, code, message });
    // The host engine started at boot with the old driver's NVML; the
    // diagnostic's own CUDA is the installed driver's, which the loaded
    // module refuses.
    let driver_mismatch = cluster.node(host).is_some_and(|node| node.driver_mismatch());
    for gpu in gpus {
        let g = gpu.index;
        if lost_while_watched(gpu) {
            add(
                Test::Deployment,
                "NVML Library",
                gpu,
                Kind::Error,
                NVML,
                format!("Error calling NVML API nvmlDeviceGetHandleByIndex for GPU {g}: GPU is lost"),
            );
            continue;
        }
        let cuda_error = if driver_mismatch {
            Some("system has unsupported display driver / cuda driver combination")
        } else {
            cuda_blocked(gpu).then_some("system not yet initialized")
        };
        if let Some(cuda_error) = cuda_error {
            add(Test::Memory, "", gpu, Kind::Warning, CUDA, format!("GPU {g} Error using CUDA API cuInit Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics. Unable to initialize CUDA library: '{cuda_error}'. . Please check if a CUDA sample program can be run successfully on this host. Refer to https://github.com/nvidia/cuda-samples"));
        }
        if gpu.health == GpuHealth::Unresponsive {
            add(
                Test::Deployment,
                "NVML Library",
                gpu,
                Kind::Error,
                NVML,
                format!("Error calling NVML API nvmlDeviceGetHandleByIndex for GPU {g}: Unknown Error"),
            );
            continue;
        }
        if !gpu.persistence_mode && modern {
            add(
                Test::Deployment,
                "Persistence Mode",
                gpu,
                Kind::Info,
                PERSISTENCE,
                format!("Persistence mode for GPU {g} is disabled. Enable persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as root."),
            );
        } else if !gpu.persistence_mode {
            add(Test::Deployment, "Persistence Mode", gpu, Kind::Error, PERSISTENCE, format!("Persistence mode for GPU {g} is currently disabled. The DCGM diagnostic requires peristence mode to be enabled. Enable persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as root."));
        }
        if gpu.row_remap.pending {
            let message = if modern {
                format!("GPU {g} had memory errors and row remappings are pending")
            } else {
                format!("GPU {g} has uncorrectable memory errors and row remappings are pending")
            };
            add(Test::Deployment, "Page Retirement/Row Remap", gpu, Kind::Error, PENDING_REMAP, message);
        }
        if gpu.row_remap.failure {
            add(
                Test::Deployment,
                "Page Retirement/Row Remap",
                gpu,
                Kind::Error,
                REMAP_FAILED,
                format!("GPU {g} had uncorrectable memory errors and row remapping failed."),
            );
        }
        if gpu.pcie.gen < gpu.pcie.max_gen {
            add(
                Test::Pcie,
                "",
                gpu,
                Kind::Error,
                PCIE_GEN,
                format!(
                    "GPU {g} is running at PCI link generation {}, which is below the minimum allowed link generation of {} (parameter 'min_pci_generation')",
                    gpu.pcie.gen, gpu.pcie.max_gen
                ),
            );
        }
        if gpu.pcie.width < gpu.pcie.max_width {
            add(
                Test::Pcie,
                "",
                gpu,
                Kind::Error,
                PCIE_WIDTH,
                format!(
                    "GPU {g} is running at PCI link width {}X, which is below the minimum allowed link generation of {} (parameter 'min_pci_width')",
                    gpu.pcie.width, gpu.pcie.max_width
                ),
            );
        }
        for (link, _) in gpu.nvlinks.iter().enumerate().filter(|(_, link)| !link.active) {
            add(Test::Pcie, "", gpu, Kind::Error, NVLINK_DOWN, format!("GPU {g}'s NvLink link {link} is currently down"));
        }
        if gpu.ecc.volatile_uncorrected > 0 {
            add(Test::Memory, "", gpu, Kind::Error, DBE, format!("Detected {} volatile double-bit ECC error(s) in GPU {g}.", gpu.ecc.volatile_uncorrected));
        }
        if gpu.throttle_reasons & 0x60 != 0 {
            let mut rng = Rng::derive(cluster.seed, &[host, "dcgmi", &g.to_string()]);
            let total = rng.range_u64(100, 399) as f64 / 10.0;
            let start = rng.range_u64(10, 99) as f64 / 10.0;
            add(Test::Memory, "", gpu, Kind::Warning, THERMAL, format!("GPU {g} Thermal violations totaling {total:.1} seconds started at {start:.1} seconds into the test for GPU {g} Verify that the cooling on this machine is functional, including external, thermal material interface, fans, and any other components."));
        } else if gpu.throttle_reasons & 0x84 != 0 {
            add(Test::Memory, "", gpu, Kind::Warning, POWER, format!("Detected clock throttling due to power violation in GPU {g}."));
        }
    }
    out
}

fn gpu_list(gpus: &[u32]) -> String {
    let ids: Vec<String> = gpus.iter().map(u32::to_string).collect();
    format!("{}: {}", if gpus.len() == 1 { "GPU" } else { "GPUs" }, ids.join(", "))
}

/// One test's rows: its result (3.x summary or 4.x per-GPU lines), then a
/// row per finding.
fn test_rows(v4: bool, name: &str, gpus: &[&Gpu], found: &[&Finding]) -> String {
    let failed: Vec<u32> = gpus.iter().map(|g| g.index).filter(|g| found.iter().any(|f| f.gpu == *g && f.kind != Kind::Info)).collect();
    let passed: Vec<u32> = gpus.iter().map(|g| g.index).filter(|g| !failed.contains(g)).collect();
    let mut out = if v4 {
        let mut out = row(name, if failed.is_empty() { "Pass" } else { "Fail" });
        for gpu in gpus {
            out += &row("", &format!("GPU{}: {}", gpu.index, if failed.contains(&gpu.index) { "Fail" } else { "Pass" }));
        }
        out
    } else if failed.is_empty() {
        row(name, "Pass - All")
    } else if passed.is_empty() {
        row(name, "Fail - All")
    } else {
        row(name, &format!("Pass - {}", gpu_list(&passed))) + &row("", &format!("Fail - {}", gpu_list(&failed)))
    };
    for finding in found.iter().filter(|f| f.kind != Kind::Info) {
        out += &row(if finding.kind == Kind::Error { "Error" } else { "Warning" }, &finding.message);
    }
    out
}

/// A test that did not run: `Skip - All` (3.x), or per GPU (4.x).
fn skipped_rows(v4: bool, name: &str, gpus: &[&Gpu]) -> String {
    if !v4 {
        return row(name, "Skip - All");
    }
    let mut out = row(name, "Skip");
    for gpu in gpus {
        out += &row("", &format!("GPU{}: Skip", gpu.index));
    }
    out
}

/// dcgmi talks to DCGM's host engine (`nv-hostengine`, the unit
/// `nvidia-dcgm.service`) on localhost.
fn host_engine_runs(node: &crate::model::Node) -> bool {
    crate::model::service::runs(node, crate::model::service::DCGM_UNIT)
}

/// dcgmi without its host engine (the first line as DCGM prints it; the
/// status is unverified).
fn host_engine_down() -> Output {
    Output::error(
        "Error: unable to establish a connection to the specified host: localhost\nError: Unable to connect to host engine. Host engine connection invalid/disconnected.\n",
        1,
    )
}

/// What `dcgmi diag -r LEVEL` on `host` would report now: the errors that
/// fail it, none when it passes.
pub fn diag_errors(cluster: &Cluster, host: &str, level: u8) -> Vec<String> {
    let Some(node) = cluster.node(host) else { return vec![format!("{host} is not a node of this lab")] };
    if !node.up(cluster.now) {
        return vec![format!("{host} does not answer")];
    }
    if !host_engine_runs(node) {
        return vec![format!("DCGM's host engine does not run on {host}")];
    }
    let gpus: Vec<&Gpu> = node.gpus.iter().filter(|gpu| gpu.is_visible() || lost_while_watched(gpu)).collect();
    if diag(cluster, host, &gpus, level, false, false).status == 0 {
        return Vec::new();
    }
    let errors: Vec<String> = findings(cluster, host, &gpus).into_iter().filter(|f| f.kind == Kind::Error).map(|f| f.message).collect();
    if errors.is_empty() {
        vec!["a test failed".to_string()]
    } else {
        errors
    }
}

/// DCGM 3.x's deployment checks, in the order it prints them.
const DEPLOYMENT_CHECKS: [&str; 9] = [
    "Denylist",
    "NVML Library",
    "CUDA Main Library",
    "Permissions and OS Blocks",
    "Persistence Mode",
    "Environment Variables",
    "Page Retirement/Row Remap",
    "Graphics Processes",
    "Inforom",
];

/// The tests past deployment: (section, 3.x and 4.x names, level, findings).
const TESTS: [(&str, &str, &str, u8, Test); 7] = [
    ("Integration", "PCIe", "pcie", 2, Test::Pcie),
    ("Hardware", "GPU Memory", "memory", 2, Test::Memory),
    ("Hardware", "Diagnostic", "diagnostic", 3, Test::Stress),
    ("Stress", "SM Stress", "sm_stress", 3, Test::Stress),
    ("Stress", "Targeted Stress", "targeted_stress", 3, Test::Stress),
    ("Stress", "Targeted Power", "targeted_power", 3, Test::Stress),
    ("Stress", "Memory Bandwidth", "memory_bandwidth", 3, Test::Stress),
];

/// What a run found, for the table and for `-j`.
struct Run<'a> {
    gpus: &'a [&'a Gpu],
    found: Vec<Finding>,
    level: u8,
}

impl Run<'_> {
    fn of(&self, test: Test) -> Vec<&Finding> {
        self.found.iter().filter(|f| f.test == test).collect()
    }

    /// A deployment result that stops the later tests: a pending row remap
    /// (NVVS's main_should_stop) or a GPU NVML cannot reach.
    fn stopped(&self) -> bool {
        self.of(Test::Deployment).iter().any(|f| f.kind == Kind::Error && (f.code == PENDING_REMAP || f.code == NVML))
    }

    /// Whether a test ran on CUDA that cannot start (PCIe and the stress tests skip).
    fn skipped(&self, test: Test) -> bool {
        self.stopped() && test != Test::Deployment || self.gpus.iter().any(|gpu| cuda_blocked(gpu)) && matches!(test, Test::Pcie | Test::Stress)
    }

    /// The tests run past deployment, in their order.
    fn tests(&self) -> Vec<&'static (&'static str, &'static str, &'static str, u8, Test)> {
        TESTS.iter().filter(|test| test.3 <= self.level).collect()
    }

    /// The exit status: 0, or DCGM_ST_NVVS_ISOLATE_ERROR (-51) when a
    /// failure's severity says isolate the GPU, else DCGM_ST_NVVS_ERROR (-30).
    fn status(&self) -> i32 {
        let ran = |f: &&Finding| f.test == Test::Deployment || (self.tests().iter().any(|t| t.4 == f.test) && !self.skipped(f.test));
        let failures: Vec<&Finding> = self.found.iter().filter(ran).filter(|f| f.kind != Kind::Info).collect();
        if failures.is_empty() {
            0
        } else if failures.iter().any(|f| f.kind == Kind::Error && f.code.1 == ISOLATE) {
            205
        } else {
            226
        }
    }
}

fn diag(cluster: &Cluster, host: &str, gpus: &[&Gpu], level: u8, listed: bool, json: bool) -> Output {
    let version = &cluster.versions.dcgm;
    let v4 = release(version).0 >= 4;
    let run = Run { gpus, found: findings(cluster, host, gpus), level };
    let driver = cluster.node(host).map_or(&cluster.versions.driver, |node| &node.driver_loaded);
    let duration_ms = match level {
        1 => 8_000,
        2 => 95_000,
        _ => 1_500_000,
    };
    if json {
        return Output { stdout: diag_json(&run, version, driver), status: run.status(), duration_ms, ..Output::default() };
    }
    let mut out = border('+', '-');
    out += &row("Diagnostic", "Result");
    out += &border('+', '=');
    let deployment = run.of(Test::Deployment);
    if !reworded(version) && deployment.iter().any(|f| f.kind == Kind::Error) {
        // Before 3.2.5 the run stops at deployment: only its errors print.
        out += &section("Deployment", '|');
        for finding in deployment {
            out += &row("Error", &finding.message);
        }
        out += &border('+', '-');
        return Output { stdout: out, status: 226, duration_ms: 4_000, ..Output::default() };
    }
    out += &section("Metadata", '|');
    out += &row("DCGM Version", version);
    out += &row("Driver Version Detected", driver);
    let ids: Vec<String> = gpus.iter().map(|gpu| format!("{:04x}", gpu.device_id)).collect();
    out += &row("GPU Device IDs Detected", &ids.join(","));
    out += &section("Deployment", '|');
    if v4 {
        out += &test_rows(true, "software", gpus, &deployment);
    } else {
        // Every check, the errors under the one that failed, its infos under a pass.
        for check in DEPLOYMENT_CHECKS {
            let found: Vec<&&Finding> = deployment.iter().filter(|f| f.check == check).collect();
            let failed = found.iter().any(|f| f.kind == Kind::Error);
            out += &row(check, if failed { "Fail" } else { "Pass" });
            for finding in found {
                out += &row(if finding.kind == Kind::Error { "Error" } else { "Info" }, &finding.message);
            }
        }
    }
    // 3.x prints every section once a per-GPU test ran or `-i` named GPUs
    // (the r2 capture shows an empty Stress); 4.x only those it ran,
    // Hardware before Integration.
    let sections: &[&str] = if v4 { &["Hardware", "Integration", "Stress"] } else { &["Integration", "Hardware", "Stress"] };
    if v4 || level >= 2 || listed {
        for name in sections {
            let tests: Vec<_> = run.tests().into_iter().filter(|t| t.0 == *name).collect();
            if v4 && tests.is_empty() {
                continue;
            }
            out += &section(name, '+');
            for (_, v3_name, v4_name, _, test) in tests {
                let name = if v4 { v4_name } else { v3_name };
                out += &if run.skipped(*test) { skipped_rows(v4, name, gpus) } else { test_rows(v4, name, gpus, &run.of(*test)) };
            }
        }
    }
    out += &border('+', '-');
    Output { stdout: format!("Successfully ran diagnostic for group.\n{out}"), status: run.status(), duration_ms, ..Output::default() }
}

/// `dcgmi diag -j`: the run as DCGM 3.3 writes it with jsoncpp. Deployment
/// checks have one result for all GPUs (an error's `gpu_id` is 0, and its
/// message key `warnings`); the later tests one per GPU.
fn diag_json(run: &Run, version: &str, driver: &str) -> String {
    use serde_json::{json, Map, Value};
    let warning = |finding: &Finding, key: &str| {
        let mut entry = Map::new();
        entry.insert("error_category".into(), json!(finding.code.2));
        entry.insert("error_id".into(), json!(finding.code.0));
        entry.insert("error_severity".into(), json!(finding.code.1));
        entry.insert(key.into(), json!(finding.message));
        Value::Object(entry)
    };
    let deployment = run.of(Test::Deployment);
    let checks: Vec<Value> = DEPLOYMENT_CHECKS
        .iter()
        .map(|check| {
            let errors: Vec<Value> = deployment.iter().filter(|f| f.check == *check && f.kind == Kind::Error).map(|f| warning(f, "warnings")).collect();
            let result = if errors.is_empty() { json!({ "status": "Pass" }) } else { json!({ "gpu_id": 0, "status": "Fail", "warnings": errors }) };
            json!({ "name": check, "results": [result] })
        })
        .collect();
    let mut categories = vec![json!({ "category": "Deployment", "tests": checks })];
    for category in ["Integration", "Hardware", "Stress"] {
        let tests: Vec<Value> = run
            .tests()
            .into_iter()
            .filter(|t| t.0 == category)
            .map(|(_, name, _, _, test)| {
                let found = run.of(*test);
                let results: Vec<Value> = run
                    .gpus
                    .iter()
                    .map(|gpu| {
                        let mut result = Map::new();
                        result.insert("gpu_id".into(), json!(gpu.index.to_string()));
                        let mine: Vec<&&Finding> = found.iter().filter(|f| f.gpu == gpu.index && f.kind != Kind::Info).collect();
                        let status = if run.skipped(*test) {
                            "Skip"
                        } else if mine.is_empty() {
                            "Pass"
                        } else {
                            "Fail"
                        };
                        if *test == Test::Memory && status == "Pass" {
                            // The memory test allocates 98% of what is free.
                            let free = gpu.memory_total_mib.saturating_sub(gpu.memory_used_mib) * 1_048_576;
                            result.insert("info".into(), json!(format!("GPU {} Allocated {} bytes (98.0%)", gpu.index, free / 50 * 49)));
                        }
                        result.insert("status".into(), json!(status));
                        if status == "Fail" {
                            result.insert("warnings".into(), Value::Array(mine.iter().map(|f| warning(f, "warning")).collect()));
                        }
                        Value::Object(result)
                    })
                    .collect();
                json!({ "name": name, "results": results })
            })
            .collect();
        if !tests.is_empty() {
            categories.push(json!({ "category": category, "tests": tests }));
        }
    }
    let serials: Map<String, Value> = run.gpus.iter().map(|gpu| (gpu.index.to_string(), json!(gpu.serial))).collect();
    let ids: Vec<String> = run.gpus.iter().map(|gpu| format!("{:04x}", gpu.device_id)).collect();
    let document = json!({
        "DCGM GPU Diagnostic": { "test_categories": categories },
        "Driver Version Detected": driver,
        "GPU Device IDs": ids,
        "GPU Device Serials": serials,
        "version": version,
    });
    styled(&document, 0) + "\n"
}

/// jsoncpp's styled writer: keys sorted, a tab per level, ` : ` between a
/// key and its value, an object or array on the line after its key (which
/// keeps a trailing space), one array item per line.
fn styled(value: &serde_json::Value, depth: usize) -> String {
    use serde_json::Value;
    let tabs = |n: usize| "\t".repeat(n);
    let nested = |value: &Value| matches!(value, Value::Object(map) if !map.is_empty()) || matches!(value, Value::Array(items) if !items.is_empty());
    match value {
        Value::Object(map) if !map.is_empty() => {
            let members: Vec<String> = map
                .iter()
                .map(|(key, member)| {
                    let head = format!("{}{} : ", tabs(depth + 1), serde_json::to_string(key).unwrap_or_default());
                    if nested(member) {
                        format!("{head}\n{}{}", tabs(depth + 1), styled(member, depth + 1))
                    } else {
                        head + &styled(member, depth + 1)
                    }
                })
                .collect();
            format!("{{\n{}\n{}}}", members.join(",\n"), tabs(depth))
        }
        Value::Array(items) if !items.is_empty() => {
            let items: Vec<String> = items.iter().map(|item| format!("{}{}", tabs(depth + 1), styled(item, depth + 1))).collect();
            format!("[\n{}\n{}]", items.join(",\n"), tabs(depth))
        }
        Value::Object(_) => "{}".to_string(),
        Value::Array(_) => "[]".to_string(),
        scalar => serde_json::to_string(scalar).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn diag_levels_and_bad_input() {
        let r1 = run_on_first_node("dcgmi diag -r 1");
        assert_eq!(r1.status, 0);
        assert!(r1.stdout.contains("| Persistence Mode          | Pass"));
        assert!(!r1.stdout.contains("GPU Memory"));
        let r3 = run_on_first_node("dcgmi diag -r 3");
        assert!(r3.stdout.contains("| Targeted Power            | Pass - All"));
        assert!(r3.duration_ms > run_on_first_node("dcgmi diag -r 2").duration_ms);
        for line in [
            "dcgmi",
            "dcgmi bogus",
            "dcgmi diag",
            "dcgmi diag -r 9",
            "dcgmi diag -r",
            "dcgmi diag -l",
            "dcgmi discovery",
            "dcgmi diag -r 1 -i 42",
            "dcgmi discovery -l -x",
        ] {
            assert_ne!(run_on_first_node(line).status, 0, "{line}");
        }
    }
}
