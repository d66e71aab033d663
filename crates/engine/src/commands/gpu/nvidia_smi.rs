//! `nvidia-smi`: the default table, `-L`, `-i`, `--query-gpu`, `-q`, `-r`,
//! `nvlink`, `topo`, `dmon`, `--version` and `-h`.
//!
//! Layout rules are in ../shared/reference/gpu/FACTS.md §1-§5; the golden
//! tests in tests/golden_nvidia_smi.rs and tests/golden_gpu_tools.rs pin them
//! against real captures, tests/nvidia_smi_query.rs the `-q` report per driver.

mod dmon;
mod nvlink;
mod query;
mod report;
mod topo;

use crate::commands::options::{scan, Arg};
use crate::commands::sampling::Sampling;
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::time::ctime;
use crate::model::{Cluster, Gpu, GpuHealth, Node};

pub struct NvidiaSmi;

static SIGNATURE: Signature = Signature {
    name: "nvidia-smi",
    summary: "NVIDIA System Management Interface: GPU state, health and configuration",
    usage: "nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...",
    flags: &[
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Print usage information and exit." },
        Flag { short: None, long: Some("version"), value: None, help: "Print version information and exit." },
        Flag {
            short: Some('L'),
            long: Some("list-gpus"),
            value: None,
            help: "Display a list of GPUs connected to the system.",
        },
        Flag {
            short: Some('i'),
            long: Some("id"),
            value: Some("ID"),
            help: "Target a specific GPU: its index, UUID or PCI bus id. Several may be given, separated by commas.",
        },
        Flag { short: Some('q'), long: Some("query"), value: None, help: "Display GPU or Unit info (all sections, or those -d names)." },
        Flag { short: Some('a'), long: None, value: None, help: "The same as -q." },
        Flag {
            short: Some('d'),
            long: Some("display"),
            value: Some("TYPE"),
            help: "With -q: only these sections, comma separated: PCI, PERFORMANCE, MEMORY, COMPUTE, UTILIZATION, ENCODER_STATS, FBC_STATS, ECC, PAGE_RETIREMENT, ROW_REMAPPER, TEMPERATURE, POWER, CLOCK, VOLTAGE, RESET_STATUS, GSP_FIRMWARE_VERSION, PIDS.",
        },
        Flag {
            short: None,
            long: Some("query-gpu"),
            value: Some("FIELDS"),
            help: "Information about GPU, one line per GPU; see --help-query-gpu. Needs --format.",
        },
        Flag {
            short: None,
            long: Some("query-compute-apps"),
            value: Some("FIELDS"),
            help: "The compute processes, one line each: pid, process_name, used_memory, gpu_uuid, gpu_bus_id, gpu_name. Needs --format.",
        },
        Flag { short: None, long: Some("format"), value: Some("FORMAT"), help: "With --query-gpu or --query-compute-apps: csv, optionally with noheader and nounits." },
        Flag { short: None, long: Some("help-query-gpu"), value: None, help: "List the fields --query-gpu accepts." },
        Flag { short: Some('r'), long: Some("gpu-reset"), value: None, help: "Reset the GPU that -i names (needs -i; the GPU must be idle)." },
        Flag {
            short: None,
            long: Some("power-limit"),
            value: Some("WATTS"),
            help: "-pl: set the power limit of the GPUs -i names (all without -i), in W, between the board's minimum and its default.",
        },
        Flag {
            short: Some('l'),
            long: Some("loop"),
            value: Some("SEC"),
            help: "Probe until Ctrl+C at the given interval in seconds (the table or --query-gpu; this simulation prints 10 probes).",
        },
    ],
    examples: &[
        Example { command: "nvidia-smi", description: "the summary table of every GPU on this node" },
        Example { command: "nvidia-smi -L", description: "one line per GPU with its UUID" },
        Example { command: "nvidia-smi -i 3", description: "the summary table of GPU 3 only" },
        Example {
            command: "nvidia-smi --query-gpu=index,remapped_rows.pending,pcie.link.gen.current,pcie.link.width.current,clocks_event_reasons.active --format=csv",
            description: "per-GPU health fields as CSV: pending row remaps, PCIe link, throttling",
        },
        Example {
            command: "nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total,temperature.gpu,power.draw,clocks.sm --format=csv,noheader",
            description: "memory errors, temperature, power and clocks without the header",
        },
        Example { command: "sudo nvidia-smi -i 3 -pl 700", description: "set GPU 3's power limit back to 700 W (its default)" },
        Example { command: "nvidia-smi -q -d ECC,ROW_REMAPPER", description: "ECC counters and row-remapper state of every GPU" },
        Example { command: "nvidia-smi -q -d PERFORMANCE,PCI", description: "throttle reasons and PCIe link of every GPU" },
        Example { command: "nvidia-smi nvlink -s", description: "the speed of every NVLink; down links read <inactive>" },
        Example { command: "nvidia-smi nvlink -e", description: "NVLink replay, recovery and CRC error counters" },
        Example { command: "nvidia-smi topo -m", description: "the GPU/NIC topology matrix: NVLink bonds, PCIe paths, CPU affinity" },
        Example { command: "nvidia-smi dmon -c 1 -s pucm", description: "one sample of power, temperatures, utilization, clocks and memory" },
    ],
};

/// nvidia-smi's return codes (see its manual page, RETURN VALUE).
const EXIT_INVALID_ARGUMENT: i32 = 2;
const EXIT_NOT_FOUND: i32 = 6;

/// NVML_ERROR_LIB_RM_VERSION_MISMATCH: nvidia-smi exits with NVML's code
/// when NVML fails to start, as its man page's 9 (driver not loaded), 12
/// (library not found) and 15 (GPU lost) are NVML's codes.
const EXIT_VERSION_MISMATCH: i32 = 18;

/// What nvidia-smi prints when its NVML is not the loaded module's
/// version: NVML's major.minor after the message, as in public reports of
/// 550 to 580 drivers.
fn version_mismatch(installed: &str) -> Output {
    let nvml: Vec<&str> = installed.split('.').take(2).collect();
    Output::ok(format!("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: {}\n", nvml.join(".")))
        .with_status(EXIT_VERSION_MISMATCH)
}

const INVALID_ARGUMENTS: &str = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n";

enum Mode {
    Table,
    List,
    Query,
    QueryGpu(String),
    QueryApps(String),
    HelpQueryGpu,
    Version,
    Help,
    Reset,
    PowerLimit(String),
}

impl Command for NvidiaSmi {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        // Inside a Slurm step, NVML sees the GPUs of the step's cgroup only.
        if let Some(node) = invocation.constrained_node() {
            let mut env = invocation.env.clone();
            env.remove(crate::commands::STEP_GPUS);
            return self.run(&Invocation { node: &node, env: &env, ..*invocation });
        }
        // NVML of the installed driver refuses the older module still loaded.
        let help = invocation.args().iter().any(|arg| arg == "-h" || arg == "--help");
        if invocation.node.driver_mismatch() && !help {
            return version_mismatch(&invocation.node.driver_installed);
        }
        // A node that finished a driver update runs a newer release than
        // the image the cluster was built from.
        if invocation.node.driver_loaded != invocation.cluster.versions.driver {
            let mut cluster = invocation.cluster.clone();
            cluster.versions.driver = invocation.node.driver_loaded.clone();
            return self.run(&Invocation { cluster: &cluster, ..*invocation });
        }
        // After a failed probe NVML numbers only the GPUs the driver found;
        // what it changes names the physical GPU again.
        if let Some((node, numbers)) = invocation.node.as_probed() {
            let mut output = self.run(&Invocation { node: &node, ..*invocation });
            for change in &mut output.changes {
                if let Change::ResetGpu { gpu, .. } | Change::SetPowerLimit { gpu, .. } = change {
                    *gpu = numbers.iter().find(|(shown, _)| shown == gpu).map_or(*gpu, |(_, physical)| *physical);
                }
            }
            return output;
        }
        // `nvidia-smi nvlink ...` is a subcommand with flags of its own.
        match invocation.args().first().map(String::as_str) {
            Some("nvlink") => return nvlink::run(invocation),
            Some("topo") => return topo::run(invocation),
            Some("dmon") => return dmon::run(invocation),
            _ => {}
        }
        let mut mode = Mode::Table;
        let mut ids: Option<String> = None;
        let mut format: Option<String> = None;
        let mut sections: Option<String> = None;
        let mut interval: Option<u64> = None;
        // `-pl` is one option of two letters, not -p and -l.
        let args: Vec<String> = invocation.args().iter().map(|arg| if arg == "-pl" { "--power-limit".to_string() } else { arg.clone() }).collect();
        for arg in scan(&SIGNATURE, &args) {
            match arg {
                Arg::Flag(flag, _) if flag.short == Some('a') => mode = Mode::Query,
                Arg::Flag(flag, value) => match (flag.long, value) {
                    (Some("help"), _) => mode = Mode::Help,
                    (Some("version"), _) => mode = Mode::Version,
                    (Some("list-gpus"), _) => mode = Mode::List,
                    (Some("query"), _) => mode = Mode::Query,
                    (Some("help-query-gpu"), _) => mode = Mode::HelpQueryGpu,
                    (Some("query-gpu"), Some(fields)) => mode = Mode::QueryGpu(fields),
                    (Some("query-compute-apps"), Some(fields)) => mode = Mode::QueryApps(fields),
                    (Some("format"), value) => format = value,
                    (Some("display"), value) => sections = value,
                    (Some("id"), value) => ids = value,
                    (Some("gpu-reset"), _) => mode = Mode::Reset,
                    (Some("power-limit"), Some(watts)) => mode = Mode::PowerLimit(watts),
                    (Some("loop"), Some(seconds)) => match seconds.parse::<u64>() {
                        Ok(n) if n > 0 => interval = Some(n.min(3600)),
                        _ => return invalid_arguments(),
                    },
                    _ => return invalid_arguments(),
                },
                Arg::Positional(_) | Arg::Unknown(_) | Arg::MissingValue(_) => return invalid_arguments(),
            }
        }
        // -d only qualifies -q; --format only qualifies --query-gpu.
        let query_gpu = matches!(mode, Mode::QueryGpu(_) | Mode::QueryApps(_));
        if (sections.is_some() && !matches!(mode, Mode::Query)) || (format.is_some() != query_gpu) {
            return invalid_arguments();
        }
        if let Some(seconds) = interval {
            return match mode {
                Mode::Table | Mode::QueryGpu(_) | Mode::QueryApps(_) => probe_loop(invocation, seconds),
                _ => invalid_arguments(),
            };
        }
        let cluster = invocation.cluster;
        let node = invocation.node;
        match mode {
            Mode::Reset => reset(invocation.cluster, node, ids.as_deref(), crate::commands::is_root(invocation.env)),
            Mode::PowerLimit(watts) => power_limit(node, ids.as_deref(), &watts, crate::commands::is_root(invocation.env)),
            Mode::Help => Output::ok(help_text(cluster)),
            Mode::HelpQueryGpu => Output::ok(query::help_query_gpu()),
            Mode::Version => Output::ok(version_text(cluster)),
            Mode::List | Mode::Table | Mode::Query | Mode::QueryGpu(_) | Mode::QueryApps(_) => {
                let selected = match select(node, ids.as_deref()) {
                    Some(gpus) => gpus,
                    None => return Output::ok("No devices were found\n").with_status(EXIT_NOT_FOUND),
                };
                let (gpus, stderr) = reachable(&selected);
                let mut output = match mode {
                    Mode::List => Output::ok(gpus.iter().map(|gpu| list_line(gpu)).collect::<String>()),
                    Mode::Table => Output::ok(default_table(cluster, &gpus)),
                    // `Attached GPUs` counts the node's GPUs, not only those -i picks.
                    Mode::Query => report::query(cluster, node, &gpus, sections.as_deref(), node.gpus.iter().filter(|gpu| gpu.is_visible()).count()),
                    Mode::QueryGpu(fields) => query::query_gpu(cluster, &gpus, &fields, format.as_deref().unwrap_or("")),
                    Mode::QueryApps(fields) => query::query_compute_apps(&gpus, &fields, format.as_deref().unwrap_or("")),
                    Mode::Help | Mode::HelpQueryGpu | Mode::Version | Mode::Reset | Mode::PowerLimit(_) => Output::default(),
                };
                output.stderr = stderr + &output.stderr;
                output.duration_ms = 150;
                output
            }
        }
    }
}

/// `-l SEC`: the same command without `-l`, every SEC seconds, each probe
/// reading the model at its own instant (a job starting or stalling, a
/// fault striking, shows from that probe on).
fn probe_loop(invocation: &Invocation, seconds: u64) -> Output {
    let args: Vec<String> = invocation
        .argv
        .iter()
        .enumerate()
        .filter_map(|(at, arg)| {
            let is_loop = arg == "-l"
                || arg == "--loop"
                || arg.starts_with("--loop=")
                || (arg.starts_with("-l") && arg.len() > 2 && arg[2..].bytes().all(|b| b.is_ascii_digit()));
            let value_of_loop = at > 0 && matches!(invocation.argv[at - 1].as_str(), "-l" | "--loop");
            (!is_loop && !value_of_loop).then(|| arg.clone())
        })
        .collect();
    let mut out = Output::default();
    // It runs until Ctrl+C.
    out.duration_ms = Sampling { interval_ms: seconds * 1000, count: None }.run(invocation.cluster, |_, _, view| {
        let view: &Cluster = view;
        let Some(node) = view.node(&invocation.node.hostname) else { return false };
        let once = Invocation { cluster: view, node, argv: &args, ..*invocation };
        let sample = NvidiaSmi.run(&once);
        out.stdout += &sample.stdout;
        out.stderr += &sample.stderr;
        out.status = sample.status;
        sample.status == 0
    });
    out
}

/// nvidia-smi's return code for a GPU that has fallen off the bus or is
/// otherwise inaccessible (manual page, RETURN VALUE: 15).
const EXIT_GPU_LOST: i32 = 15;

/// A reset refused because processes hold the GPU: nvidia-smi's catch-all
/// failure status.
const EXIT_IN_USE: i32 = 255;

/// "The current user does not have permission to access this device or
/// perform this action" (manual page, RETURN VALUE: 4).
const EXIT_NO_PERMISSION: i32 = 4;

/// `nvidia-smi -r -i N`: the reset is returned as a [`Change::ResetGpu`] for
/// the shell to apply. It needs `-i` (refused like any invalid combination
/// otherwise; the exact wording for a missing `-i` is unverified). A GPU off
/// the bus cannot be reset: NVML cannot open it. Unverified strings: the
/// success line `GPU 00000000:43:00.0 was successfully reset.` and
/// `All done.` are as widely quoted, not in a capture here. A GPU a
/// workload's processes hold is refused as current drivers refuse it: the
/// GPUs that could not be reset (`In use by another client`), then the
/// paragraph asking to stop those processes, exit 255 (as widely quoted;
/// not in a capture here).
///
/// A reset needs root: as a plain user NVML answers NVML_ERROR_NO_PERMISSION
/// ("Insufficient Permissions") and nvidia-smi exits 4, the status its
/// manual page gives for "the current user does not have permission"; the
/// line's wording around NVML's string is unverified.
///
/// Any process holding the GPU's device file stands in the way, not only
/// compute ones: DCGM's host engine and the exporter's
/// (`model::service::processes`); `fuser -v /dev/nvidiaN` names them.
fn reset(cluster: &crate::model::Cluster, node: &Node, ids: Option<&str>, root: bool) -> Output {
    let Some(ids) = ids else {
        return invalid_arguments();
    };
    let Some(gpus) = select(node, Some(ids)) else {
        return Output::ok("No devices were found\n").with_status(EXIT_NOT_FOUND);
    };
    let (visible, stderr) = reachable(&gpus);
    if !stderr.is_empty() {
        return Output { stderr, status: EXIT_GPU_LOST, duration_ms: 150, ..Output::default() };
    }
    if !root {
        let lines: String = visible.iter().map(|gpu| format!("Unable to reset GPU {}: Insufficient Permissions\n", gpu.bus_id)).collect();
        return Output { stdout: lines, status: EXIT_NO_PERMISSION, duration_ms: 50, ..Output::default() };
    }
    // Every process with the GPU's device open: the jobs' ranks, DCGM.
    let open = crate::model::service::processes(cluster, node);
    let busy: Vec<&&Gpu> = visible.iter().filter(|gpu| open.iter().any(|process| process.gpus.contains(&gpu.index))).collect();
    if !busy.is_empty() {
        let mut text = "The following GPUs could not be reset:\n".to_string();
        for gpu in &busy {
            text += &format!("  GPU {}: In use by another client\n", gpu.bus_id);
        }
        let devices = if busy.len() == 1 { "1 device is".to_string() } else { format!("{} devices are", busy.len()) };
        text += &format!("\n{devices} currently being used by one or more other processes (e.g. Fabric Manager, CUDA application, graphics application such as an X server, or a monitoring application such as another instance of nvidia-smi). Please first kill all processes using this device and all compute applications running in the system.\n");
        return Output { stdout: text, status: EXIT_IN_USE, duration_ms: 200, ..Output::default() };
    }
    let mut out = Output { duration_ms: 3_000 * visible.len() as u64, ..Output::default() };
    for gpu in visible {
        out.stdout += &format!("GPU {} was successfully reset.\n", gpu.bus_id);
        out.changes.push(Change::ResetGpu { node: node.hostname.clone(), gpu: gpu.index });
    }
    out.stdout += "All done.\n";
    out
}

/// `nvidia-smi [-i N] -pl WATTS`: each GPU's new limit, returned as a
/// [`Change::SetPowerLimit`]. The success line and the out-of-range lines
/// are as public transcripts quote them; nvidia-smi checks every GPU before
/// it changes any ("Terminating early"). As a plain user NVML answers
/// NVML_ERROR_NO_PERMISSION and nvidia-smi exits 4, as for a reset; that
/// line's wording is modelled on the reset's and unverified.
fn power_limit(node: &Node, ids: Option<&str>, watts: &str, root: bool) -> Output {
    let Ok(asked) = watts.trim().parse::<f64>() else {
        return invalid_arguments();
    };
    if !asked.is_finite() || asked < 0.0 {
        return invalid_arguments();
    }
    let Some(gpus) = select(node, ids) else {
        return Output::ok("No devices were found\n").with_status(EXIT_NOT_FOUND);
    };
    let (visible, stderr) = reachable(&gpus);
    if !stderr.is_empty() {
        return Output { stderr, status: EXIT_GPU_LOST, duration_ms: 150, ..Output::default() };
    }
    for gpu in &visible {
        let (min, max) = (gpu.min_power_limit_w(), gpu.default_power_limit_w);
        if asked < f64::from(min) || asked > f64::from(max) {
            let text = format!(
                "Provided power limit {asked:.2} W is not a valid power limit which should be between {min}.00 W and {max}.00 W for GPU {}\nTerminating early due to previous errors.\n",
                gpu.bus_id
            );
            return Output { stdout: text, status: EXIT_INVALID_ARGUMENT, duration_ms: 50, ..Output::default() };
        }
    }
    if !root {
        let lines: String = visible.iter().map(|gpu| format!("Unable to set the power limit of GPU {}: Insufficient Permissions\n", gpu.bus_id)).collect();
        return Output { stdout: lines + "Terminating early due to previous errors.\n", status: EXIT_NO_PERMISSION, duration_ms: 50, ..Output::default() };
    }
    // NVML takes milliwatts; the limit is kept in whole watts.
    let watts = asked.round() as u32;
    let mut out = Output { duration_ms: 100 * visible.len() as u64, ..Output::default() };
    for gpu in visible {
        out.stdout += &format!("Power limit for GPU {} was set to {:.2} W from {}.00 W.\n", gpu.bus_id, asked, gpu.power_limit_w);
        out.changes.push(Change::SetPowerLimit { node: node.hostname.clone(), gpu: gpu.index, watts });
    }
    out.stdout += "All done.\n";
    out
}

fn invalid_arguments() -> Output {
    Output::ok(INVALID_ARGUMENTS).with_status(EXIT_INVALID_ARGUMENT)
}

/// The GPUs NVML can open, and the message nvidia-smi prints for each one it
/// cannot (a GPU that has fallen off the bus).
///
/// FACTS.md §1.2: the lost GPU is missing and the message comes before the
/// output, on stderr, in the `GPU0000:CB:00.0` form newer drivers print. The
/// rest of the output follows and the status stays 0: FACTS records the other
/// GPUs still being listed. (Public reports from single-GPU hosts show only the
/// message; whether a multi-GPU host's exit status changes is not captured.)
fn reachable<'g>(gpus: &[&'g Gpu]) -> (Vec<&'g Gpu>, String) {
    let mut stderr = String::new();
    let mut visible = Vec::new();
    for gpu in gpus {
        if gpu.is_visible() {
            visible.push(*gpu);
        } else {
            stderr += &format!("Unable to determine the device handle for GPU{}: Unknown Error\n", short_bus_id(gpu));
        }
    }
    (visible, stderr)
}

/// `00000000:CB:00.0` with a 4-digit domain: `0000:CB:00.0`.
fn short_bus_id(gpu: &Gpu) -> &str {
    gpu.bus_id.get(4..).unwrap_or(&gpu.bus_id)
}

impl Output {
    pub(crate) fn with_status(mut self, status: i32) -> Output {
        self.status = status;
        self
    }
}

/// The GPUs `-i` names, or all of them. `None` when an id matches no GPU.
fn select<'n>(node: &'n Node, ids: Option<&str>) -> Option<Vec<&'n Gpu>> {
    let Some(ids) = ids else {
        return Some(node.gpus.iter().collect());
    };
    let mut chosen = Vec::new();
    for id in ids.split(',').map(str::trim) {
        let gpu = node.gpus.iter().find(|gpu| {
            id.parse::<u32>().ok() == Some(gpu.index)
                || gpu.uuid.eq_ignore_ascii_case(id)
                || gpu.bus_id.eq_ignore_ascii_case(id)
                || gpu.bus_id.get(4..).is_some_and(|short| short.eq_ignore_ascii_case(id))
        })?;
        if !chosen.iter().any(|g: &&Gpu| g.index == gpu.index) {
            chosen.push(gpu);
        }
    }
    crate::sort::sort_by_key(&mut chosen, |gpu| gpu.index);
    Some(chosen)
}

fn list_line(gpu: &Gpu) -> String {
    format!("GPU {}: {} (UUID: {})\n", gpu.index, gpu.name, gpu.uuid)
}

/// The default table's geometry, chosen by driver branch (FACTS.md §1.1):
/// `<= 525` 79 columns, `530-545` 89, `550+` 91. The ECC column is 22 wide in all.
#[derive(Clone, Copy)]
struct Layout {
    major: u32,
    /// Inner widths of the GPU and Bus-Id columns.
    gpu: usize,
    bus: usize,
    /// Widths of the power usage and cap fields, and of the used and total memory fields.
    power: usize,
    cap: usize,
    used: usize,
    total: usize,
}

const ECC_CELL: usize = 22;

impl Layout {
    fn for_driver(major: u32) -> Layout {
        match major {
            0..=529 => Layout { major, gpu: 31, bus: 22, power: 7, cap: 4, used: 10, total: 8 },
            530..=549 => Layout { major, gpu: 41, bus: 22, power: 17, cap: 4, used: 10, total: 8 },
            _ => Layout { major, gpu: 41, bus: 24, power: 16, cap: 5, used: 11, total: 9 },
        }
    }

    fn inner(&self) -> usize {
        self.gpu + 1 + self.bus + 1 + ECC_CELL
    }

    fn rule(&self, left: char, fill: char, middle: char, right: char) -> String {
        let fill = |n: usize| fill.to_string().repeat(n);
        format!("{left}{}{middle}{}{middle}{}{right}\n", fill(self.gpu), fill(self.bus), fill(ECC_CELL))
    }

    fn full_rule(&self, edge: char, fill: char) -> String {
        format!("{edge}{}{edge}\n", fill.to_string().repeat(self.inner()))
    }

    fn row(&self, gpu_cell: &str, bus_cell: &str, ecc_cell: &str) -> String {
        let (g, b) = (self.gpu, self.bus);
        format!("|{gpu_cell:<g$}|{bus_cell:<b$}|{ecc_cell:<ECC_CELL$}|\n")
    }

    fn boxed(&self, text: &str) -> String {
        let inner = self.inner();
        format!("|{text:<inner$}|\n")
    }

    /// Index, name and persistence: the 79-column layout gives the name 18
    /// columns (longer names end in `...`, [K]: no long-name 525 capture).
    fn name_cell(&self, index: u32, name: &str, persistence: &str) -> String {
        if self.gpu == 31 {
            let name = if name.chars().count() > 18 { format!("{}...", name.chars().take(15).collect::<String>()) } else { name.to_string() };
            format!("{index:>4}  {name:<18}  {persistence:<3}  ")
        } else {
            let name: String = name.chars().take(31).collect();
            format!("{index:>4}  {name:<31}{persistence:<3} ")
        }
    }

    fn bus_cell(&self, gpu: &Gpu) -> String {
        format!("{:lead$}{} {:>3} ", "", gpu.bus_id, on_off(gpu.display_active), lead = self.bus - 21)
    }

    fn memory_cell(&self, used: &str, total: &str) -> String {
        let (u, t) = (self.used, self.total);
        format!("{used:>u$} / {total:>t$} ")
    }
}

fn on_off(on: bool) -> &'static str {
    if on {
        "On"
    } else {
        "Off"
    }
}

/// The default summary table, in the layout of the lab's driver branch.
fn default_table(cluster: &Cluster, gpus: &[&Gpu]) -> String {
    let versions = &cluster.versions;
    let layout = Layout::for_driver(versions.driver_major());
    let mut out = format!("{}       \n", ctime(cluster.now));
    out += &layout.full_rule('+', '-');
    let (smi, driver) = match layout.major {
        0..=529 => (13, 13),
        530..=549 => (23, 13),
        _ => (23, 15),
    };
    out += &layout.boxed(&format!(" NVIDIA-SMI {:<smi$}Driver Version: {:<driver$}CUDA Version: {:<9}", versions.driver, versions.driver, versions.cuda));
    // The rule under the header opens with `|` up to 570 and with `+` from 580 (FACTS.md §1.1).
    out += &if layout.major >= 580 { layout.rule('+', '-', '+', '+') } else { layout.rule('|', '-', '+', '+') };
    let bus_heading = format!(" Bus-Id{:>w$} ", "Disp.A", w = layout.bus - 8);
    let memory_heading = format!("{:>w$} ", "Memory-Usage", w = layout.bus - 1);
    let (name_heading, fan_heading) = if layout.gpu == 31 {
        (" GPU  Name        Persistence-M", " Fan  Temp  Perf  Pwr:Usage/Cap")
    } else {
        (" GPU  Name                 Persistence-M", " Fan  Temp   Perf          Pwr:Usage/Cap")
    };
    out += &layout.row(name_heading, &bus_heading, " Volatile Uncorr. ECC");
    out += &layout.row(fan_heading, &memory_heading, " GPU-Util  Compute M.");
    out += &layout.row("", "", "               MIG M.");
    out += &layout.rule('|', '=', '+', '|');
    for gpu in gpus {
        out += &gpu_rows(&layout, gpu);
        out += &layout.rule('+', '-', '+', '+');
    }
    // The spacer line: as wide as the table up to 525, 89 spaces from 530 to
    // 570 (even under the 91-column table), empty in every 580 capture.
    out += &" ".repeat(match layout.major {
        0..=529 => layout.inner() + 2,
        530..=579 => 89,
        _ => 0,
    });
    out.push('\n');
    out += &processes_box(&layout, gpus);
    out
}

fn gpu_rows(layout: &Layout, gpu: &Gpu) -> String {
    if gpu.health == GpuHealth::Unresponsive {
        return unreadable_gpu_rows(layout, gpu);
    }
    let mig = if gpu.mig_enabled { "Enabled" } else { "Disabled" };
    let mut out = layout.row(
        &layout.name_cell(gpu.index, &gpu.name, on_off(gpu.persistence_mode)),
        &layout.bus_cell(gpu),
        &format!("{:>21} ", gpu.ecc.volatile_uncorrected),
    );
    let fan = gpu.fan_pct.map_or("N/A".to_string(), |pct| format!("{pct}%"));
    // The fan sits right-aligned in 4 columns up to 525, after one space later.
    let fan = if layout.gpu == 31 { format!("{fan:>4}") } else { format!(" {fan:<3}") };
    let (power, cap) = (layout.power, layout.cap);
    out += &layout.row(
        &format!(
            "{fan}  {:>4}    {:<2}{:>power$} / {:>cap$} ",
            format!("{}C", gpu.temperature_c),
            format!("P{}", gpu.pstate),
            format!("{}W", gpu.power_draw_w),
            format!("{}W", gpu.power_limit_w)
        ),
        &layout.memory_cell(&format!("{}MiB", gpu.memory_used_mib), &format!("{}MiB", gpu.memory_total_mib)),
        &format!("{:>8}{:>13} ", format!("{}%", gpu.utilization_pct), gpu.compute_mode.label()),
    );
    out += &layout.row("", "", &format!("{mig:>21} "));
    out
}

/// A GPU the driver holds but cannot read (GSP timeout, Xid 119/120): `ERR!`
/// in every live cell, as in nvidia-smi_default_a40x8_drv525_err-gpu4.txt.
/// Bus-Id, Disp.A, persistence, the memory total and the compute mode stay;
/// used memory reads 0. Each `ERR!` sits where the value it replaces ends,
/// except Perf, which follows the temperature after one space (as captured).
fn unreadable_gpu_rows(layout: &Layout, gpu: &Gpu) -> String {
    const ERR: &str = "ERR!";
    let mut out = layout.row(&layout.name_cell(gpu.index, ERR, on_off(gpu.persistence_mode)), &layout.bus_cell(gpu), &format!("{ERR:>21} "));
    let (power, cap) = (layout.power + 1, layout.cap);
    out += &layout.row(
        &format!("{ERR}  {ERR} {ERR}{ERR:>power$} / {ERR:>cap$} "),
        &layout.memory_cell("0MiB", &format!("{}MiB", gpu.memory_total_mib)),
        &format!("{ERR:>8}{:>13} ", gpu.compute_mode.label()),
    );
    out += &layout.row("", "", &format!("{ERR:>21} "));
    out
}

/// The Processes box: the compute processes on the listed GPUs (a
/// workload's ranks), or `No running processes found`. From 570 the PID
/// field is 6 columns wider and the name 6 narrower (FACTS.md §1.3); long
/// names lose their start to `...`, long memory figures their end.
fn processes_box(layout: &Layout, gpus: &[&Gpu]) -> String {
    let columns =
        if layout.major >= 570 { "  GPU   GI   CI              PID   Type   Process name" } else { "  GPU   GI   CI        PID   Type   Process name" };
    let width = layout.inner() - 11;
    let mut out = layout.full_rule('+', '-');
    out += &layout.boxed(" Processes:");
    out += &layout.boxed(&format!("{columns:<width$}GPU Memory "));
    out += &layout.boxed(&format!("{:<width$}Usage      ", "        ID   ID"));
    out += &layout.full_rule('|', '=');
    let (pid_width, name_width) = if layout.major >= 570 { (16, 32) } else { (10, 38) };
    let mut any = false;
    for gpu in gpus.iter().filter(|gpu| gpu.is_visible()) {
        for process in &gpu.processes {
            any = true;
            let chars: Vec<char> = process.name.chars().collect();
            let name = if chars.len() > name_width {
                format!("...{}", chars[chars.len() - (name_width - 3)..].iter().collect::<String>())
            } else {
                process.name.clone()
            };
            let memory = format!("{}MiB", process.used_mib);
            let memory = if memory.len() > 8 { format!("{}...", &memory[..5]) } else { memory };
            let gi = if gpu.mig_enabled { "  0" } else { "N/A" };
            out += &layout.boxed(&format!("{:>5}   {gi}  {gi}{:>pid_width$}      C   {name:<w$}{memory:>8} ", gpu.index, process.pid, w = name_width + 6));
        }
    }
    if !any {
        out += &layout.boxed("  No running processes found");
    }
    out += &layout.full_rule('+', '-');
    out
}

fn version_text(cluster: &Cluster) -> String {
    let driver = &cluster.versions.driver;
    let nvml: String = driver.split('.').take(2).collect::<Vec<_>>().join(".");
    format!("NVIDIA-SMI version  : {driver}\nNVML version        : {nvml}\nDRIVER version      : {driver}\nCUDA Version        : {}\n", cluster.versions.cuda)
}

fn help_text(cluster: &Cluster) -> String {
    let mut out = format!("NVIDIA System Management Interface -- v{}\n\n", cluster.versions.driver);
    out += "Reports the state of the NVIDIA GPUs in this node and lets an administrator change it.\n\n";
    out += &format!("{}\n\n", SIGNATURE.usage);
    for flag in SIGNATURE.flags {
        out += &format!("    {:<26}{}\n", flag.display(), flag.help);
    }
    out += "\nPlease see the nvidia-smi documentation for more detailed information.\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_on_first_node;

    #[test]
    fn a_slurm_step_sees_the_gpus_it_was_given() {
        let mut shell = crate::testing::session();
        assert_eq!(shell.run("srun --gpus=2 nvidia-smi -L | wc -l").stdout(), "2\n");
        assert_eq!(shell.run("srun --gres=gpu:3 printenv CUDA_VISIBLE_DEVICES").stdout(), "0,1,2\n");
        assert_eq!(shell.run("srun -N2 --gpus-per-node=1 nvidia-smi -L | wc -l").stdout(), "2\n");
        assert_eq!(shell.run("srun nvidia-smi -L | wc -l").stdout(), "8\n");
        assert_eq!(shell.run("srun --gpus-per-node=9 hostname").status, 1);
    }

    #[test]
    fn a_reset_waits_for_dcgm_to_let_go_of_the_gpus() {
        let mut shell = crate::testing::session();
        let refused = shell.run("sudo nvidia-smi -r -i 2");
        assert_eq!(refused.status, EXIT_IN_USE);
        assert!(refused.stdout().contains(": In use by another client"));
        shell.run("sudo systemctl stop dcgm-exporter");
        assert_eq!(shell.run("sudo nvidia-smi -r -i 2").status, EXIT_IN_USE, "nv-hostengine still holds it");
        shell.run("sudo systemctl stop nvidia-dcgm");
        assert!(shell.run("dcgmi discovery -l").stderr().contains("Unable to connect to host engine"));
        let reset = shell.run("sudo nvidia-smi -r -i 2");
        assert_eq!(reset.status, 0, "{}", reset.stdout());
        shell.run("sudo systemctl start nvidia-dcgm dcgm-exporter");
        assert_eq!(shell.run("sudo fuser /dev/nvidia2").status, 0);
    }

    #[test]
    fn list_prints_one_line_per_gpu() {
        let out = run_on_first_node("nvidia-smi -L");
        assert_eq!(out.status, 0);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), 8);
        assert!(lines[0].starts_with("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-"));
        assert!(lines[7].starts_with("GPU 7: "));
    }

    #[test]
    fn every_table_line_is_91_wide() {
        let out = run_on_first_node("nvidia-smi");
        for line in out.stdout.lines().skip(1).filter(|l| l.starts_with(['+', '|'])) {
            assert_eq!(line.chars().count(), 91, "{line:?}");
        }
    }

    #[test]
    fn id_selects_gpus() {
        let out = run_on_first_node("nvidia-smi -L -i 3,1");
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("GPU 1: "));
        let out = run_on_first_node("nvidia-smi --id=9");
        assert_eq!((out.stdout.as_str(), out.status), ("No devices were found\n", 6));
    }

    #[test]
    fn bad_flags_answer_as_nvidia_smi_does() {
        for line in ["nvidia-smi --bogus", "nvidia-smi -Z", "nvidia-smi stray", "nvidia-smi -i", "nvidia-smi --list-gpus=1"] {
            let out = run_on_first_node(line);
            assert_eq!(out.stdout, INVALID_ARGUMENTS, "{line}");
            assert_eq!(out.status, 2, "{line}");
        }
    }

    fn faulted(faults: &[crate::model::fault::Fault]) -> crate::testing::Shell {
        let mut cluster = crate::testing::cluster();
        for fault in faults {
            fault.apply(&mut cluster).unwrap();
        }
        crate::testing::shell(cluster)
    }

    #[test]
    fn query_gpu_units_header_and_errors() {
        let out = run_on_first_node("nvidia-smi --query-gpu=index,power.limit,utilization.gpu --format=csv -i 0");
        assert_eq!(out.stdout, "index, power.limit [W], utilization.gpu [%]\n0, 700.00 W, 0 %\n");
        let out = run_on_first_node("nvidia-smi --query-gpu=index,power.limit --format=csv,nounits -i 0");
        assert_eq!(out.stdout, "index, power.limit\n0, 700.00\n");
        let out = run_on_first_node("nvidia-smi --query-gpu=index,bogus --format=csv");
        assert_eq!((out.stdout.as_str(), out.status), ("Field \"bogus\" is not a valid field to query.\n\n", 2));
        assert_eq!(run_on_first_node("nvidia-smi --query-gpu=index").status, 2);
        assert_eq!(run_on_first_node("nvidia-smi --query-gpu=index --format=xml").status, 2);
        assert!(run_on_first_node("nvidia-smi --help-query-gpu").stdout.contains("\"remapped_rows.pending\""));
    }

    #[test]
    fn faults_show_in_query_gpu_and_q() {
        use crate::model::fault::Fault;
        let node = || "gpu-001".to_string();
        let mut session = faulted(&[
            Fault::GpuRowRemapPending { node: node(), gpu: 1 },
            Fault::GpuPowerBrake { node: node(), gpu: 2 },
            Fault::GpuPcieDegraded { node: node(), gpu: 3, gen: Some(4), width: Some(8) },
            Fault::GpuXid { node: node(), gpu: 4, xid: 119 },
        ]);
        let csv = session
            .run("nvidia-smi --query-gpu=index,remapped_rows.pending,pcie.link.gen.current,pcie.link.width.current,clocks_event_reasons.active,clocks.sm --format=csv,noheader")
            .stdout();
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows[1], "1, Yes, 5, 16, 0x0000000000000001, 345 MHz");
        assert_eq!(rows[2], "2, No, 5, 16, 0x0000000000000088, 382 MHz");
        assert_eq!(rows[3], "3, No, 4, 8, 0x0000000000000001, 345 MHz");
        assert_eq!(rows[4], "4, [Unknown Error], [Unknown Error], [Unknown Error], [Unknown Error], [Unknown Error]");
        let q = session.run("nvidia-smi -q -d ROW_REMAPPER,PERFORMANCE -i 1,2").stdout();
        assert!(q.contains("        Pending                           : Yes\n"));
        assert!(q.contains("            HW Power Brake Slowdown       : Active\n"));
        let table = session.run("nvidia-smi").stdout();
        assert!(table.contains("|ERR!  ERR! ERR!             ERR! /  ERR! |       0MiB /  81559MiB |    ERR!      Default |\n"), "{table}");
    }

    #[test]
    fn nvlink_shows_inactive_links_and_counters() {
        use crate::model::fault::Fault;
        let mut session = faulted(&[Fault::GpuXid { node: "gpu-001".into(), gpu: 0, xid: 74 }]);
        let status = session.run("nvidia-smi nvlink -s -i 0").stdout();
        assert!(status.contains("\t Link 5: <inactive>\n"));
        assert!(status.contains("\t Link 4: 26.562 GB/s\n"));
        let errors = session.run("nvidia-smi nvlink -e -i 0").stdout();
        assert!(errors.contains("\t Link 5: Replay Errors: 3\n\t Link 5: Recovery Errors: 1\n"));
        assert_eq!(session.run("nvidia-smi nvlink --bogus").status, 2);
        assert!(session.run("nvidia-smi nvlink").stdout().contains("--status"));
    }

    #[test]
    fn version_and_help() {
        let out = run_on_first_node("nvidia-smi --version");
        assert!(out.stdout.starts_with("NVIDIA-SMI version  : 570.158.01\nNVML version        : 570.158\n"));
        let out = run_on_first_node("nvidia-smi -h");
        assert!(out.stdout.starts_with("NVIDIA System Management Interface -- v570.158.01"));
        assert!(out.stdout.contains("--list-gpus"));
    }
}
