//! `nvidia-smi`: the default table, `-L`, `-i`, `--version` and `-h`.
//!
//! Layout rules are in ../shared/reference/gpu/FACTS.md §1; the golden tests
//! in tests/golden_nvidia_smi.rs pin them against real captures.

use super::args::{scan, Arg};
use super::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::time::ctime;
use crate::model::{Cluster, Gpu, Node};

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
    ],
    examples: &[
        Example { command: "nvidia-smi", description: "the summary table of every GPU on this node" },
        Example { command: "nvidia-smi -L", description: "one line per GPU with its UUID" },
        Example { command: "nvidia-smi -i 3", description: "the summary table of GPU 3 only" },
    ],
};

/// nvidia-smi's return codes (see its manual page, RETURN VALUE).
const EXIT_INVALID_ARGUMENT: i32 = 2;
const EXIT_NOT_FOUND: i32 = 6;

const INVALID_ARGUMENTS: &str = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n";

enum Mode {
    Table,
    List,
    Version,
    Help,
}

impl Command for NvidiaSmi {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut mode = Mode::Table;
        let mut ids: Option<String> = None;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.long {
                    Some("help") => mode = Mode::Help,
                    Some("version") => mode = Mode::Version,
                    Some("list-gpus") => mode = Mode::List,
                    Some("id") => ids = value,
                    _ => return Output::ok(INVALID_ARGUMENTS).with_status(EXIT_INVALID_ARGUMENT),
                },
                Arg::Positional(_) | Arg::Unknown(_) | Arg::MissingValue(_) => {
                    return Output::ok(INVALID_ARGUMENTS).with_status(EXIT_INVALID_ARGUMENT);
                }
            }
        }
        let cluster = invocation.cluster;
        let node = invocation.node;
        match mode {
            Mode::Help => Output::ok(help_text(cluster)),
            Mode::Version => Output::ok(version_text(cluster)),
            Mode::List | Mode::Table => {
                let gpus = match select(node, ids.as_deref()) {
                    Some(gpus) => gpus,
                    None => return Output::ok("No devices were found\n").with_status(EXIT_NOT_FOUND),
                };
                let text = if matches!(mode, Mode::List) {
                    gpus.iter().map(|gpu| list_line(gpu)).collect()
                } else {
                    default_table(cluster, &gpus)
                };
                Output { duration_ms: 150, ..Output::ok(text) }
            }
        }
    }
}

impl Output {
    fn with_status(mut self, status: i32) -> Output {
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
    chosen.sort_by_key(|gpu| gpu.index);
    Some(chosen)
}

fn list_line(gpu: &Gpu) -> String {
    format!("GPU {}: {} (UUID: {})\n", gpu.index, gpu.name, gpu.uuid)
}

fn driver_major(cluster: &Cluster) -> u32 {
    cluster.versions.driver.split('.').next().and_then(|major| major.parse().ok()).unwrap_or(0)
}

/// Inner widths of the three columns of the 550+ table.
const GPU_CELL: usize = 41;
const BUS_CELL: usize = 24;
const ECC_CELL: usize = 22;
const INNER: usize = GPU_CELL + 1 + BUS_CELL + 1 + ECC_CELL;

fn rule(left: char, fill: char, middle: char, right: char) -> String {
    let fill = |n: usize| fill.to_string().repeat(n);
    format!("{left}{}{middle}{}{middle}{}{right}\n", fill(GPU_CELL), fill(BUS_CELL), fill(ECC_CELL))
}

fn full_rule(edge: char, fill: char) -> String {
    format!("{edge}{}{edge}\n", fill.to_string().repeat(INNER))
}

fn row(gpu_cell: &str, bus_cell: &str, ecc_cell: &str) -> String {
    format!("|{gpu_cell:<GPU_CELL$}|{bus_cell:<BUS_CELL$}|{ecc_cell:<ECC_CELL$}|\n")
}

fn boxed(text: &str) -> String {
    format!("|{text:<INNER$}|\n")
}

fn on_off(on: bool) -> &'static str {
    if on {
        "On"
    } else {
        "Off"
    }
}

/// The default summary table (550-580 layout: 91 columns).
fn default_table(cluster: &Cluster, gpus: &[&Gpu]) -> String {
    let versions = &cluster.versions;
    let mut out = format!("{}       \n", ctime(cluster.now));
    out += &full_rule('+', '-');
    out += &boxed(&format!(
        " NVIDIA-SMI {:<23}Driver Version: {:<15}CUDA Version: {:<9}",
        versions.driver, versions.driver, versions.cuda
    ));
    // The rule under the header opens with `|` up to 570 and with `+` from 580 (FACTS.md §1.1).
    out += &if driver_major(cluster) >= 580 { rule('+', '-', '+', '+') } else { rule('|', '-', '+', '+') };
    out += &row(" GPU  Name                 Persistence-M", " Bus-Id          Disp.A", " Volatile Uncorr. ECC");
    out += &row(" Fan  Temp   Perf          Pwr:Usage/Cap", "           Memory-Usage", " GPU-Util  Compute M.");
    out += &row("", "", "               MIG M.");
    out += &rule('|', '=', '+', '|');
    for gpu in gpus {
        out += &gpu_rows(gpu);
        out += &rule('+', '-', '+', '+');
    }
    // 535-570 print an 89-space spacer line even though the table is 91 wide.
    out += &" ".repeat(89);
    out.push('\n');
    out += &processes_box();
    out
}

fn gpu_rows(gpu: &Gpu) -> String {
    let name: String = gpu.name.chars().take(31).collect();
    let fan = gpu.fan_pct.map_or("N/A".to_string(), |pct| format!("{pct}%"));
    let mig = if gpu.mig_enabled { "Enabled" } else { "Disabled" };
    let mut out = row(
        &format!("{:>4}  {:<31}{:<3} ", gpu.index, name, on_off(gpu.persistence_mode)),
        &format!("   {} {:>3} ", gpu.bus_id, on_off(gpu.display_active)),
        &format!("{:>21} ", gpu.ecc.volatile_uncorrected),
    );
    out += &row(
        &format!(
            " {:<3}  {:>4}    {:<2}{:>16} / {:>5} ",
            fan,
            format!("{}C", gpu.temperature_c),
            format!("P{}", gpu.pstate),
            format!("{}W", gpu.power_draw_w),
            format!("{}W", gpu.power_limit_w)
        ),
        &format!(
            "{:>11} / {:>9} ",
            format!("{}MiB", gpu.memory_used_mib),
            format!("{}MiB", gpu.memory_total_mib)
        ),
        &format!("{:>8}{:>13} ", format!("{}%", gpu.utilization_pct), gpu.compute_mode.label()),
    );
    out += &row("", "", &format!("{mig:>21} "));
    out
}

fn processes_box() -> String {
    let mut out = full_rule('+', '-');
    out += &boxed(" Processes:");
    out += &boxed("  GPU   GI   CI              PID   Type   Process name                        GPU Memory");
    out += &boxed("        ID   ID                                                               Usage     ");
    out += &full_rule('|', '=');
    out += &boxed("  No running processes found");
    out += &full_rule('+', '-');
    out
}

fn version_text(cluster: &Cluster) -> String {
    let driver = &cluster.versions.driver;
    let nvml: String = driver.split('.').take(2).collect::<Vec<_>>().join(".");
    format!(
        "NVIDIA-SMI version  : {driver}\nNVML version        : {nvml}\nDRIVER version      : {driver}\nCUDA Version        : {}\n",
        cluster.versions.cuda
    )
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

    #[test]
    fn version_and_help() {
        let out = run_on_first_node("nvidia-smi --version");
        assert!(out.stdout.starts_with("NVIDIA-SMI version  : 570.158.01\nNVML version        : 570.158\n"));
        let out = run_on_first_node("nvidia-smi -h");
        assert!(out.stdout.starts_with("NVIDIA System Management Interface -- v570.158.01"));
        assert!(out.stdout.contains("--list-gpus"));
    }
}
