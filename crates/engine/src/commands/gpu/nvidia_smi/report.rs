//! `nvidia-smi -q [-d SECTIONS]` (also `-a`): the full per-GPU report, in the
//! layout of the lab's driver release, from the model (FACTS.md §2).
//!
//! Real outputs the layout follows (section order, field names, padding,
//! `N/A` conventions), by driver:
//! - 525.105.17, 8 x H800 (Hopper): a Chinese nvidia-smi notes page, research
//!   index id 19173983937.
//! - 535.129.03, 8 x A100-SXM4-40GB: a Chinese notes page, index id 47337582899.
//! - 535.247.01, A10G: a DCGM issue quoting `nvidia-smi -q`, index id 70772490119.
//! - 545.23.08, H100 SXM: ../shared/reference/gpu/nvidia-smi_q_h100_drv545.txt.
//! - 550.90.12, H200 in a VM: ../shared/reference/gpu/nvidia-smi_q_h200_drv550_passthrough.txt.
//! - 555.42.02, 4 x A100-SXM4-80GB: thamada/nvidia-smi gls/A100SXMx4_smi.py.
//! - 560.35.03, H100 SXM (HGX): jdh4/job_data_2023 README.md (Princeton della-k18g3).
//! - 565.57.01, 8 x H100 SXM (HGX): thamada/nvidia-smi gls/H100SXMx8_smi.py.
//! - 570.124.06, V100 in a VM (index id 60927155114) and RTX 5090 (thamada/nvidia-smi).
//! - 575.57.08, GTX 1650 (index id 15729269992).
//! - 580.95.05 (GB10, `-d PERFORMANCE`), 580.105.06/.08 (partial), 580.119.02
//!   (RTX 3050, index id 42511004217) and 580.173.02 (RTX 5080, index id 68598815792).
//!
//! No full H100 output from 535, 570, 575 or 580 was found: for those the
//! layout is the branch's (seen on other GPUs) and the values are the H100's
//! from the neighbouring branches. Each branch-dependent line below says which
//! outputs it rests on; `[K]` marks what none of them shows.

use super::{invalid_arguments, short_bus_id};
use crate::commands::host::pci_ids;
use crate::commands::Output;
use crate::model::gpu::{throttle, FabricState};
use crate::model::time::{civil, ctime};
use crate::model::{Cluster, ComputeMode, Gpu, GpuHealth, Node};
use crate::rng::Rng;

/// What a GPU the driver cannot read answers for a live value.
const UNREADABLE: &str = "Unknown Error";

/// nvidia-smi's word for a field NVIDIA has retired (575 and later).
const DEPRECATED: &str = "Requested functionality has been deprecated";

/// The atomic operations a Hopper GPU reports it can perform over PCIe; the
/// trailing space is nvidia-smi's.
const ATOMIC_CAPS: &str = "FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 ";

/// The sections `-d` accepts, each naming the blocks it prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    Pci,
    Performance,
    Memory,
    Compute,
    Utilization,
    EncoderStats,
    FbcStats,
    Ecc,
    PageRetirement,
    RowRemapper,
    Temperature,
    Power,
    Clock,
    Voltage,
    ResetStatus,
    GspFirmware,
    Pids,
}

const SECTIONS: &[(&str, Section)] = &[
    ("PCI", Section::Pci),
    ("PERFORMANCE", Section::Performance),
    ("MEMORY", Section::Memory),
    ("COMPUTE", Section::Compute),
    ("UTILIZATION", Section::Utilization),
    ("ENCODER_STATS", Section::EncoderStats),
    ("FBC_STATS", Section::FbcStats),
    ("ECC", Section::Ecc),
    ("PAGE_RETIREMENT", Section::PageRetirement),
    ("ROW_REMAPPER", Section::RowRemapper),
    ("TEMPERATURE", Section::Temperature),
    ("POWER", Section::Power),
    ("CLOCK", Section::Clock),
    ("VOLTAGE", Section::Voltage),
    ("RESET_STATUS", Section::ResetStatus),
    ("GSP_FIRMWARE_VERSION", Section::GspFirmware),
    ("PIDS", Section::Pids),
];

/// The driver release whose layout the report takes: its branch and the
/// release within it (`580.119.02` is branch 580, release 119). A version
/// that does not parse reads as 0.0, the oldest layout.
#[derive(Clone, Copy, Debug)]
struct Dialect {
    major: u32,
    minor: u32,
}

impl Dialect {
    fn of(driver: &str) -> Dialect {
        let mut parts = driver.split('.').map(|part| part.trim().parse::<u32>().unwrap_or(0));
        Dialect { major: parts.next().unwrap_or(0), minor: parts.next().unwrap_or(0) }
    }

    fn since(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// 525 and older: no Addressing Mode, FRU, BBX flush, Reset Status or
    /// Conf Compute; `Ecc Mode`, `Power Readings`, `Clocks Throttle Reasons`
    /// (the 525.105.17 H800 output). 530 is taken as 535 [K].
    fn legacy(self) -> bool {
        self.major < 530
    }

    /// Where the colon sits: column 42 up to 580.105, 55 from 580.119 (the
    /// 580.119.02 and 580.173.02 outputs; where between the two it moved is
    /// not known).
    fn width(self) -> usize {
        if self.since(580, 119) {
            55
        } else {
            42
        }
    }

    /// SRAM uncorrectable split into parity and SEC-DED with its threshold and
    /// sources, and `Sparse Operation Mode`: 550 on, and late 535 releases
    /// (535.247.01 has them, 535.129.03 and 545.23.08 do not; the first 535
    /// release with them is not known, 535.247 is the earliest seen).
    fn split_sram(self) -> bool {
        self.major >= 550 || (self.major == 535 && self.minor >= 247)
    }
}

/// One GPU's report being written.
struct Report<'a> {
    cluster: &'a Cluster,
    node: &'a Node,
    gpu: &'a Gpu,
    d: Dialect,
    out: String,
}

impl Report<'_> {
    /// One `label : value` line, the label padded so that the colon sits at
    /// the dialect's column (a longer label pushes it right, as nvidia-smi's
    /// fixed-width format would).
    fn kv(&mut self, level: usize, label: &str, value: impl AsRef<str>) {
        let left = format!("{}{label}", "    ".repeat(level));
        let width = self.d.width();
        self.out += &format!("{left:<width$}: {}\n", value.as_ref());
    }

    fn heading(&mut self, level: usize, label: &str) {
        self.out += &format!("{}{label}\n", "    ".repeat(level));
    }

    /// A live reading, or `Unknown Error` when the GPU does not answer.
    /// Identity, configuration and InfoROM contents are cached by the driver
    /// and print either way.
    fn live(&self, value: impl ToString) -> String {
        if self.gpu.health == GpuHealth::Unresponsive {
            UNREADABLE.to_string()
        } else {
            value.to_string()
        }
    }

    fn hopper(&self) -> bool {
        pci_ids::gpu_architecture(self.gpu.device_id) == "Hopper"
    }

    fn rng(&self, stream: &str) -> Rng {
        Rng::derive(self.cluster.seed, &[&self.node.hostname, &self.gpu.uuid, stream])
    }

    fn spec(&self) -> &'static crate::model::preset::GpuSpec {
        &self.cluster.preset.gpu
    }
}

/// `Enabled`/`Disabled`, as -q and --query-gpu both print a switch.
pub(super) fn enabled(on: bool) -> &'static str {
    if on {
        "Enabled"
    } else {
        "Disabled"
    }
}

fn yes_no(on: bool) -> &'static str {
    if on {
        "Yes"
    } else {
        "No"
    }
}

/// Whether a clock-event (throttle) reason is on, in nvidia-smi's words.
pub(super) fn active(gpu: &Gpu, bit: u64) -> &'static str {
    if gpu.throttle_reasons & bit != 0 {
        "Active"
    } else {
        "Not Active"
    }
}

fn watts(w: u32) -> String {
    format!("{w}.00 W")
}

/// `nvidia-smi -q`: the header, then each GPU's report (only the `-d`
/// sections when `sections` names some). `attached` counts the node's GPUs,
/// not only those `-i` picks.
pub fn query(cluster: &Cluster, node: &Node, gpus: &[&Gpu], sections: Option<&str>, attached: usize) -> Output {
    let chosen: Option<Vec<Section>> = match sections {
        None => None,
        Some(list) => {
            let mut chosen = Vec::new();
            for name in list.split(',').map(str::trim) {
                let upper = name.to_ascii_uppercase();
                match SECTIONS.iter().find(|(section, _)| *section == upper) {
                    Some((_, section)) => chosen.push(*section),
                    None => return invalid_arguments(),
                }
            }
            Some(chosen)
        }
    };
    let d = Dialect::of(&cluster.versions.driver);
    let width = d.width();
    let kv = |label: &str, value: &str| format!("{label:<width$}: {value}\n");
    let mut out = String::from("\n==============NVSMI LOG==============\n\n");
    out += &kv("Timestamp", &ctime(cluster.now));
    out += &kv("Driver Version", &cluster.versions.driver);
    out += &kv("CUDA Version", &cluster.versions.cuda);
    out.push('\n');
    out += &kv("Attached GPUs", &attached.to_string());
    let blocks: Vec<String> = gpus
        .iter()
        .map(|gpu| {
            let mut report = Report { cluster, node, gpu, d, out: format!("GPU {}\n", gpu.bus_id) };
            let want = |section: Section| chosen.as_ref().is_none_or(|chosen| chosen.contains(&section));
            gpu_report(&mut report, chosen.is_none(), &want);
            report.out
        })
        .collect();
    out += &blocks.join("\n");
    Output::ok(out)
}

/// Every block in the order nvidia-smi prints them; `full` for the blocks
/// only the whole report has, `want` for those a `-d` section selects.
fn gpu_report(r: &mut Report, full: bool, want: &dyn Fn(Section) -> bool) {
    let d = r.d;
    if full {
        identity(r);
    } else {
        // The blocks of the identity part a section names, in its order.
        if want(Section::ResetStatus) {
            reset_status(r);
        }
        if want(Section::GspFirmware) {
            let gsp = r.cluster.versions.driver.clone();
            r.kv(1, "GSP Firmware Version", gsp);
        }
    }
    if want(Section::Pci) {
        pci(r);
    }
    if full {
        r.kv(1, "Fan Speed", r.live(r.gpu.fan_pct.map_or("N/A".to_string(), |pct| format!("{pct} %"))));
    }
    if want(Section::Performance) {
        performance(r);
    }
    if want(Section::Memory) {
        memory(r);
    }
    if want(Section::Compute) {
        let mode = match r.gpu.compute_mode {
            ComputeMode::Default => "Default",
            ComputeMode::ExclusiveProcess => "Exclusive_Process",
            ComputeMode::Prohibited => "Prohibited",
        };
        r.kv(1, "Compute Mode", mode);
    }
    if want(Section::Utilization) {
        utilization(r);
    }
    for (section, title) in [(Section::EncoderStats, "Encoder Stats"), (Section::FbcStats, "FBC Stats")] {
        if want(section) {
            r.heading(1, title);
            r.kv(2, "Active Sessions", r.live(0));
            r.kv(2, "Average FPS", r.live(0));
            r.kv(2, "Average Latency", r.live(0));
        }
    }
    // 570 and later (both 570.124.06 outputs); the H100 has no DRAM
    // encryption (the V100 prints N/A, the Blackwell RTX 5090 Disabled) [K].
    if full && d.major >= 570 {
        r.heading(1, "DRAM Encryption Mode");
        r.kv(2, "Current", "N/A");
        r.kv(2, "Pending", "N/A");
    }
    if want(Section::Ecc) {
        ecc(r);
    }
    if want(Section::PageRetirement) {
        // Retirement gave way to row remapping on A100 and later: N/A there.
        r.heading(1, "Retired Pages");
        r.kv(2, "Single Bit ECC", "N/A");
        r.kv(2, "Double Bit ECC", "N/A");
        r.kv(2, "Pending Page Blacklist", "N/A");
    }
    if want(Section::RowRemapper) {
        row_remapper(r);
    }
    if want(Section::Temperature) {
        temperature(r);
    }
    if want(Section::Power) {
        power(r);
    }
    // 570 on (570.124.06, 575, 580): both N/A on GPUs without them; the H100
    // is taken to be one [K].
    if full && d.major >= 570 {
        r.kv(1, "Power Smoothing", "N/A");
        r.heading(1, "Workload Power Profiles");
        r.kv(2, "Requested Profiles", "N/A");
        r.kv(2, "Enforced Profiles", "N/A");
    }
    if want(Section::Clock) {
        clocks(r);
    }
    // 580.119 dropped the section (580.119.02, 580.173.02).
    if want(Section::Voltage) && !d.since(580, 119) {
        voltage(r);
    }
    if full {
        fabric(r);
    }
    if want(Section::Pids) {
        // A workload's ranks, as the driver lists compute processes (MIG off:
        // no instance ids).
        let processes = r.gpu.processes.clone();
        if processes.is_empty() {
            r.kv(1, "Processes", "None");
        } else {
            r.heading(1, "Processes");
            for process in &processes {
                r.kv(2, "GPU instance ID", "N/A");
                r.kv(2, "Compute instance ID", "N/A");
                r.kv(2, "Process ID", process.pid.to_string());
                r.kv(3, "Type", "C");
                r.kv(3, "Name", &process.name);
                r.kv(3, "Used GPU Memory", format!("{} MiB", process.used_mib));
            }
        }
    }
    // From 555 (555.42.02 has it, 550.90.12 does not).
    if full && d.major >= 555 {
        r.heading(1, "Capabilities");
        r.kv(2, "EGM", "disabled");
    }
}

/// From `Product Name` to `IBMNPU`: identity, board, InfoROM and modes.
fn identity(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    let spec = r.spec();
    r.kv(1, "Product Name", r.live(&gpu.name));
    r.kv(1, "Product Brand", "NVIDIA");
    r.kv(1, "Product Architecture", pci_ids::gpu_architecture(gpu.device_id));
    // Enabled on every bare-metal H100 and A100 output from 535 to 565
    // (Disabled in the 525 H800 one and in a VM); 575 deprecated the field and
    // added Display Attached (575.57.08, 580.119.02).
    if d.since(575, 0) {
        r.kv(1, "Display Mode", DEPRECATED);
        r.kv(1, "Display Attached", "No");
    } else {
        r.kv(1, "Display Mode", if d.legacy() { "Disabled" } else { "Enabled" });
    }
    r.kv(1, "Display Active", enabled(gpu.display_active));
    r.kv(1, "Persistence Mode", enabled(gpu.persistence_mode));
    if !d.legacy() {
        r.kv(1, "Addressing Mode", "None");
    }
    r.heading(1, "MIG Mode");
    r.kv(2, "Current", r.live(enabled(gpu.mig_enabled)));
    r.kv(2, "Pending", r.live(enabled(gpu.mig_enabled)));
    r.kv(1, "Accounting Mode", "Disabled");
    r.kv(1, "Accounting Mode Buffer Size", "4000");
    r.heading(1, "Driver Model");
    r.kv(2, "Current", "N/A");
    r.kv(2, "Pending", "N/A");
    r.kv(1, "Serial Number", &gpu.serial);
    r.kv(1, "GPU UUID", &gpu.uuid);
    // 580.119 added the GPU's 64-bit PDI (580.119.02, 580.173.02).
    if d.since(580, 119) {
        let pdi = r.rng("pdi").hex(16);
        r.kv(1, "GPU PDI", format!("0x{pdi}"));
    }
    r.kv(1, "Minor Number", gpu.index.to_string());
    r.kv(1, "VBIOS Version", r.live(&gpu.vbios));
    r.kv(1, "MultiGPU Board", "No");
    // The bus number shifted into the high byte, in lower-case hex: 0xdb00, 0x300.
    let bus = u32::from_str_radix(short_bus_id(gpu).get(5..7).unwrap_or("0"), 16).unwrap_or(0);
    r.kv(1, "Board ID", format!("{:#x}", bus << 8));
    r.kv(1, "Board Part Number", spec.board_part_number);
    r.kv(1, "GPU Part Number", spec.gpu_part_number);
    if !d.legacy() {
        r.kv(1, "FRU Part Number", "N/A");
    }
    let module = r.cluster.preset.gpu_module_ids.get(gpu.index as usize).map_or(gpu.index + 1, |id| u32::from(*id));
    platform_info(r, module);
    r.heading(1, "Inforom Version");
    r.kv(2, "Image Version", spec.inforom_image);
    r.kv(2, "OEM Object", spec.inforom_oem);
    r.kv(2, "ECC Object", spec.inforom_ecc);
    r.kv(2, "Power Management Object", "N/A");
    if !d.legacy() {
        // The InfoROM's black box is flushed shortly after the driver loads
        // (every bare-metal H100 output shows a time after boot, within
        // seconds across a node's GPUs).
        let mut rng = r.rng("bbx-flush");
        let at = (r.node.booted_at + rng.range_i64(60, 120)).min(r.cluster.now);
        let t = civil(at);
        let millis = rng.range_u64(0, 999);
        r.heading(1, "Inforom BBX Object Flush");
        r.kv(2, "Latest Timestamp", format!("{}/{:02}/{:02} {:02}:{:02}:{:02}.{millis:03}", t.year, t.month, t.day, t.hour, t.minute, t.second));
        r.kv(2, "Latest Duration", format!("{} us", rng.range_u64(88_000, 145_000)));
    }
    r.heading(1, "GPU Operation Mode");
    r.kv(2, "Current", "N/A");
    r.kv(2, "Pending", "N/A");
    // GSP firmware runs the driver's own version. Up to 545 the line sits
    // here; from 550 after the reset status (all outputs agree).
    let gsp = r.cluster.versions.driver.clone();
    if d.major < 550 {
        r.kv(1, "GSP Firmware Version", &gsp);
    }
    // 545 on: Disabled on Hopper, N/A on A100 (555.42.02).
    if d.major >= 545 {
        r.kv(1, "GPU C2C Mode", if r.hopper() { "Disabled" } else { "N/A" });
    }
    r.heading(1, "GPU Virtualization Mode");
    r.kv(2, "Virtualization Mode", "None");
    r.kv(2, "Host VGPU Mode", "N/A");
    if d.major >= 550 {
        r.kv(2, "vGPU Heterogeneous Mode", "N/A");
    }
    reset_status(r);
    if d.major >= 550 {
        r.kv(1, "GSP Firmware Version", &gsp);
    }
    r.heading(1, "IBMNPU");
    r.kv(2, "Relaxed Ordering Mode", "N/A");
}

/// The reset status: Yes/No up to 565; 570 deprecated both values
/// (570.124.06, 575.57.08) and 580.119 dropped the block (580.119.02). Xid
/// 48/62/64/74/95/119/120 leave a GPU needing a reset (model::fault). Then,
/// from 565, the recovery action (565.57.01: None); `Reset` for a GPU that
/// needs one is the word a test fixture quotes from a 570.86.15 H200
/// [unverified].
fn reset_status(r: &mut Report) {
    let d = r.d;
    let needs_reset = r.gpu.needs_reset;
    if !d.legacy() && !d.since(580, 119) {
        let (required, drain) = if d.major >= 570 { (DEPRECATED, DEPRECATED) } else { (yes_no(needs_reset), "No") };
        r.heading(1, "GPU Reset Status");
        r.kv(2, "Reset Required", required);
        r.kv(2, "Drain and Reset Recommended", drain);
    }
    if d.major >= 565 {
        r.kv(1, "GPU Recovery Action", if needs_reset { "Reset" } else { "None" });
    }
}

/// `Module ID` up to 560; 565 moved it into `Platform Info` (565.57.01) and
/// 570 renamed that block's fields and added the fabric GUID (570.124.06,
/// 575, 580). An HGX H100 leaves the rack fields N/A; its fabric GUID is N/A
/// too (a 580 HGX H100 node's `grep -A2 Fabric`, index id 63344708815).
fn platform_info(r: &mut Report, module: u32) {
    let d = r.d;
    if d.major < 565 {
        r.kv(1, "Module ID", module.to_string());
        return;
    }
    r.heading(1, "Platform Info");
    let fields: &[&str] = if d.major >= 570 {
        &["Chassis Serial Number", "Slot Number", "Tray Index", "Host ID", "Peer Type"]
    } else {
        &["RACK Serial Number", "Chassis Physical Slot Number", "Compute Slot Index", "Node Index", "Peer Type"]
    };
    for field in fields {
        r.kv(2, field, "N/A");
    }
    r.kv(2, "Module Id", module.to_string());
    if d.major >= 570 {
        r.kv(2, "GPU Fabric GUID", "N/A");
    }
}

fn pci(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    let bus = short_bus_id(gpu);
    let hex = |at: std::ops::Range<usize>| bus.get(at).unwrap_or("00").to_string();
    r.heading(1, "PCI");
    r.kv(2, "Bus", format!("0x{}", hex(5..7)));
    r.kv(2, "Device", format!("0x{}", hex(8..10)));
    r.kv(2, "Domain", format!("0x{}", hex(0..4)));
    if d.major >= 550 {
        r.kv(2, "Base Classcode", "0x3");
        r.kv(2, "Sub Classcode", "0x2");
    }
    r.kv(2, "Device Id", format!("0x{:04X}{:04X}", gpu.device_id, pci_ids::NVIDIA_VENDOR));
    r.kv(2, "Bus Id", &gpu.bus_id);
    r.kv(2, "Sub System Id", format!("0x{:04X}{:04X}", pci_ids::gpu_subsystem(gpu.device_id), pci_ids::NVIDIA_VENDOR));
    r.heading(2, "GPU Link Info");
    r.heading(3, "PCIe Generation");
    r.kv(4, "Max", r.live(gpu.pcie.max_gen));
    r.kv(4, "Current", r.live(gpu.pcie.gen));
    r.kv(4, "Device Current", r.live(gpu.pcie.gen));
    r.kv(4, "Device Max", r.live(gpu.pcie.max_gen));
    r.kv(4, "Host Max", r.live(gpu.pcie.max_gen));
    r.heading(3, "Link Width");
    r.kv(4, "Max", r.live(format!("{}x", gpu.pcie.max_width)));
    r.kv(4, "Current", r.live(format!("{}x", gpu.pcie.width)));
    r.heading(2, "Bridge Chip");
    r.kv(3, "Type", "N/A");
    r.kv(3, "Firmware", "N/A");
    r.kv(2, "Replays Since Reset", r.live(0));
    r.kv(2, "Replay Number Rollovers", r.live(0));
    // Idle Hopper traffic: a few hundred KB/s, stable per GPU; the idle A100s
    // read 0 KB/s in both A100 outputs.
    let mut rng = r.rng("pcie-throughput");
    let (tx, rx) = if r.hopper() { (rng.range_u64(300, 900), rng.range_u64(300, 2600)) } else { (0, 0) };
    r.kv(2, "Tx Throughput", r.live(format!("{tx} KB/s")));
    r.kv(2, "Rx Throughput", r.live(format!("{rx} KB/s")));
    // Atomics: N/A up to 525 and on A100; 545 prints Inbound (N/A) first and
    // Outbound populated; 560 and 565 print Outbound first, both populated
    // (bare-metal H100 outputs). 550/555 are taken as 545 [K].
    let hopper = r.hopper() && !d.legacy();
    let caps = |on: bool| if on && hopper { ATOMIC_CAPS } else { "N/A" };
    if d.major >= 560 {
        r.kv(2, "Atomic Caps Outbound", caps(true));
        r.kv(2, "Atomic Caps Inbound", caps(true));
    } else {
        r.kv(2, "Atomic Caps Inbound", caps(false));
        r.kv(2, "Atomic Caps Outbound", caps(d.major >= 545));
    }
}

fn performance(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    r.kv(1, "Performance State", r.live(format!("P{}", gpu.pstate)));
    // Renamed from `Clocks Throttle Reasons` in the 535 branch (FACTS.md §2).
    r.heading(1, if d.legacy() { "Clocks Throttle Reasons" } else { "Clocks Event Reasons" });
    for (level, label, bit) in [
        (2, "Idle", throttle::GPU_IDLE),
        (2, "Applications Clocks Setting", throttle::APPLICATIONS_CLOCKS_SETTING),
        (2, "SW Power Cap", throttle::SW_POWER_CAP),
        (2, "HW Slowdown", throttle::HW_SLOWDOWN),
        (3, "HW Thermal Slowdown", throttle::HW_THERMAL_SLOWDOWN),
        (3, "HW Power Brake Slowdown", throttle::HW_POWER_BRAKE_SLOWDOWN),
        (2, "Sync Boost", throttle::SYNC_BOOST),
        (2, "SW Thermal Slowdown", throttle::SW_THERMAL_SLOWDOWN),
        (2, "Display Clock Setting", throttle::DISPLAY_CLOCK_SETTING),
    ] {
        r.kv(level, label, r.live(active(gpu, bit)));
    }
    // 575 on: how long each reason has held the clocks down since the driver
    // loaded (575.57.08, 580.95.05, 580.105.06). The model keeps no history:
    // a reason active now has held them a while, the others never [K].
    if d.since(575, 0) {
        r.heading(1, "Clocks Event Reasons Counters");
        let mut rng = r.rng("clock-event-counters");
        for (label, bit) in [
            ("SW Power Capping", throttle::SW_POWER_CAP),
            ("Sync Boost", throttle::SYNC_BOOST),
            ("SW Thermal Slowdown", throttle::SW_THERMAL_SLOWDOWN),
            ("HW Thermal Slowdown", throttle::HW_THERMAL_SLOWDOWN),
            ("HW Power Braking", throttle::HW_POWER_BRAKE_SLOWDOWN),
        ] {
            let held = rng.range_u64(1_000_000, 900_000_000);
            r.kv(2, label, r.live(format!("{} us", if gpu.throttle_reasons & bit != 0 { held } else { 0 })));
        }
    }
    // Disabled on Hopper, N/A on A100 and A10G.
    if d.split_sram() {
        r.kv(1, "Sparse Operation Mode", r.live(if r.hopper() { "Disabled" } else { "N/A" }));
    }
}

fn memory(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    let spec = r.spec();
    let mib = |value: u64| format!("{value} MiB");
    r.heading(1, "FB Memory Usage");
    r.kv(2, "Total", mib(gpu.memory_total_mib));
    r.kv(2, "Reserved", mib(spec.fb_reserved_mib));
    r.kv(2, "Used", r.live(mib(gpu.memory_used_mib)));
    // Real outputs differ from total - reserved - used by up to 2 MiB of
    // rounding; the model does not reproduce that.
    r.kv(2, "Free", r.live(mib(gpu.memory_total_mib.saturating_sub(spec.fb_reserved_mib).saturating_sub(gpu.memory_used_mib))));
    r.heading(1, "BAR1 Memory Usage");
    r.kv(2, "Total", mib(spec.bar1_mib));
    r.kv(2, "Used", r.live(mib(1)));
    r.kv(2, "Free", r.live(mib(spec.bar1_mib.saturating_sub(1))));
    // Confidential computing is off: zeros (535 on).
    if !d.legacy() {
        r.heading(1, "Conf Compute Protected Memory Usage");
        for label in ["Total", "Used", "Free"] {
            r.kv(2, label, r.live("0 MiB"));
        }
    }
}

fn utilization(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    r.heading(1, "Utilization");
    // `Gpu` up to 565, `GPU` from 570 (570.124.06, 575, 580).
    r.kv(2, if d.major >= 570 { "GPU" } else { "Gpu" }, r.live(format!("{} %", gpu.utilization_pct)));
    r.kv(2, "Memory", r.live(format!("{} %", gpu.memory_utilization_pct)));
    let engines: &[&str] = if d.legacy() { &["Encoder", "Decoder"] } else { &["Encoder", "Decoder", "JPEG", "OFA"] };
    for engine in engines {
        r.kv(2, engine, r.live("0 %"));
    }
}

fn ecc(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    // The model counts DRAM errors; SRAM stays 0.
    r.heading(1, if d.legacy() { "Ecc Mode" } else { "ECC Mode" });
    r.kv(2, "Current", "Enabled");
    r.kv(2, "Pending", "Enabled");
    r.heading(1, "ECC Errors");
    let split = d.split_sram();
    for (scope, corrected, uncorrected) in
        [("Volatile", gpu.ecc.volatile_corrected, gpu.ecc.volatile_uncorrected), ("Aggregate", gpu.ecc.aggregate_corrected, gpu.ecc.aggregate_uncorrected)]
    {
        r.heading(2, scope);
        r.kv(3, "SRAM Correctable", r.live(0));
        if split {
            r.kv(3, "SRAM Uncorrectable Parity", r.live(0));
            r.kv(3, "SRAM Uncorrectable SEC-DED", r.live(0));
        } else {
            r.kv(3, "SRAM Uncorrectable", r.live(0));
        }
        r.kv(3, "DRAM Correctable", r.live(corrected));
        r.kv(3, "DRAM Uncorrectable", r.live(uncorrected));
    }
    if split {
        r.kv(3, "SRAM Threshold Exceeded", r.live("No"));
        r.heading(2, "Aggregate Uncorrectable SRAM Sources");
        for source in ["SRAM L2", "SRAM SM", "SRAM Microcontroller", "SRAM PCIE", "SRAM Other"] {
            r.kv(3, source, r.live(0));
        }
    }
    // 580.119 added the repair flags (580.119.02), 580.173 the unrepairable
    // memory line (580.173.02); N/A there on a GPU without ECC [K for H100].
    if d.since(580, 119) {
        r.kv(2, "Channel Repair Pending", r.live("No"));
        r.kv(2, "TPC Repair Pending", r.live("No"));
    }
    if d.since(580, 173) {
        r.kv(2, "Unrepairable Memory", r.live("N/A"));
    }
}

fn row_remapper(r: &mut Report) {
    let remap = r.gpu.row_remap;
    let banks = |count: u32| format!("{count} bank(s)");
    r.heading(1, "Remapped Rows");
    r.kv(2, "Correctable Error", r.live(remap.correctable));
    r.kv(2, "Uncorrectable Error", r.live(remap.uncorrectable));
    r.kv(2, "Pending", r.live(yes_no(remap.pending)));
    r.kv(2, "Remapping Failure Occurred", r.live(yes_no(remap.failure)));
    r.heading(2, "Bank Remap Availability Histogram");
    r.kv(3, "Max", r.live(banks(remap.banks_max)));
    r.kv(3, "High", r.live(banks(remap.banks_high)));
    for level in ["Partial", "Low", "None"] {
        r.kv(3, level, r.live(banks(0)));
    }
}

/// From 535 a GPU with a thermal limit (Hopper) gives its thresholds as
/// offsets from it (`GPU Shutdown T.Limit Temp : -8 C`), one without (A100)
/// as temperatures with `T.Limit` N/A; 525 printed temperatures and the
/// T.Limit both (the H800 output).
fn temperature(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    let spec = r.spec();
    let celsius = |value: i64| format!("{value} C");
    let limit = i64::from(spec.max_operating_temp_c);
    let now = i64::from(gpu.temperature_c);
    let t_limit = if r.hopper() { r.live(celsius(limit - now)) } else { "N/A".to_string() };
    r.heading(1, "Temperature");
    r.kv(2, "GPU Current Temp", r.live(celsius(now)));
    r.kv(2, "GPU T.Limit Temp", t_limit);
    let memory = r.live(celsius(i64::from(gpu.memory_temperature_c)));
    if r.hopper() && !d.legacy() {
        // The same offsets in every H100/H200 output from 545 to 565.
        r.kv(2, "GPU Shutdown T.Limit Temp", r.live(celsius(-8)));
        r.kv(2, "GPU Slowdown T.Limit Temp", r.live(celsius(-2)));
        r.kv(2, "GPU Max Operating T.Limit Temp", r.live(celsius(0)));
        r.kv(2, "GPU Target Temperature", "N/A");
        r.kv(2, "Memory Current Temp", memory);
        r.kv(2, "Memory Max Operating T.Limit Temp", r.live(celsius(0)));
    } else {
        r.kv(2, "GPU Shutdown Temp", r.live(celsius(i64::from(spec.shutdown_temp_c))));
        r.kv(2, "GPU Slowdown Temp", r.live(celsius(i64::from(spec.slowdown_temp_c))));
        r.kv(2, "GPU Max Operating Temp", r.live(celsius(limit)));
        r.kv(2, "GPU Target Temperature", "N/A");
        r.kv(2, "Memory Current Temp", memory);
        r.kv(2, "Memory Max Operating Temp", r.live(celsius(i64::from(spec.memory_max_operating_temp_c))));
    }
}

fn power(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    let min = gpu.min_power_limit_w();
    let limit = r.live(watts(gpu.power_limit_w));
    let draw = r.live(watts(gpu.power_draw_w));
    if d.legacy() {
        r.heading(1, "Power Readings");
        r.kv(2, "Power Management", "Supported");
        r.kv(2, "Power Draw", draw);
        r.kv(2, "Power Limit", &limit);
        r.kv(2, "Default Power Limit", watts(gpu.default_power_limit_w));
        r.kv(2, "Enforced Power Limit", &limit);
        r.kv(2, "Min Power Limit", watts(min));
        r.kv(2, "Max Power Limit", watts(gpu.default_power_limit_w));
        return;
    }
    // 570 split the reading into a 1 s average and an instantaneous sample
    // (570.124.06 on); the model draws one value for both [K].
    let readings = |r: &mut Report, value: &str| {
        if d.major >= 570 {
            r.kv(2, "Average Power Draw", value);
            r.kv(2, "Instantaneous Power Draw", value);
        } else {
            r.kv(2, "Power Draw", value);
        }
    };
    r.heading(1, "GPU Power Readings");
    readings(r, &draw);
    r.kv(2, "Current Power Limit", &limit);
    r.kv(2, "Requested Power Limit", &limit);
    r.kv(2, "Default Power Limit", r.live(watts(gpu.default_power_limit_w)));
    r.kv(2, "Min Power Limit", r.live(watts(min)));
    r.kv(2, "Max Power Limit", r.live(watts(gpu.default_power_limit_w)));
    // From 545 (absent in both 535 outputs); HBM power on Hopper, N/A on A100.
    // The trailing space after the heading is the real tool's (FACTS.md §2).
    if d.major >= 545 {
        r.heading(1, "GPU Memory Power Readings ");
        let memory = if r.hopper() {
            let centiwatts = r.rng("memory-power").range_u64(3_000, 4_500);
            r.live(format!("{}.{:02} W", centiwatts / 100, centiwatts % 100))
        } else {
            "N/A".to_string()
        };
        readings(r, &memory);
    }
    r.heading(1, "Module Power Readings");
    readings(r, "N/A");
    for label in ["Current Power Limit", "Requested Power Limit", "Default Power Limit", "Min Power Limit", "Max Power Limit"] {
        r.kv(2, label, "N/A");
    }
}

fn clocks(r: &mut Report) {
    let gpu = r.gpu;
    let spec = r.spec();
    let mhz = |value: u32| format!("{value} MHz");
    // The model has no video clock: it idles at the spec's and scales with the
    // SM clock up to its maximum (765 and 1545 MHz on H100 in every output).
    let video = (gpu.sm_clock_mhz.saturating_mul(spec.max_video_clock_mhz) / gpu.max_sm_clock_mhz.max(1)).max(spec.idle_video_clock_mhz);
    r.heading(1, "Clocks");
    r.kv(2, "Graphics", r.live(mhz(gpu.sm_clock_mhz)));
    r.kv(2, "SM", r.live(mhz(gpu.sm_clock_mhz)));
    r.kv(2, "Memory", r.live(mhz(gpu.mem_clock_mhz)));
    r.kv(2, "Video", r.live(mhz(video)));
    for title in ["Applications Clocks", "Default Applications Clocks"] {
        r.heading(1, title);
        r.kv(2, "Graphics", r.live(mhz(spec.applications_clock_mhz)));
        r.kv(2, "Memory", r.live(mhz(gpu.max_mem_clock_mhz)));
    }
    r.heading(1, "Deferred Clocks");
    r.kv(2, "Memory", "N/A");
    r.heading(1, "Max Clocks");
    r.kv(2, "Graphics", r.live(mhz(gpu.max_sm_clock_mhz)));
    r.kv(2, "SM", r.live(mhz(gpu.max_sm_clock_mhz)));
    r.kv(2, "Memory", r.live(mhz(gpu.max_mem_clock_mhz)));
    r.kv(2, "Video", r.live(mhz(spec.max_video_clock_mhz)));
    r.heading(1, "Max Customer Boost Clocks");
    r.kv(2, "Graphics", r.live(mhz(gpu.max_sm_clock_mhz)));
    r.heading(1, "Clock Policy");
    r.kv(2, "Auto Boost", "N/A");
    r.kv(2, "Auto Boost Default", "N/A");
}

/// The graphics rail: an idle value the spec lists (670 or 685 mV on H100),
/// rising with the SM clock to 900 mV at the maximum [K: no loaded output].
/// 570 reads N/A (both 570.124.06 outputs; [K] for H100) and 575 deprecated
/// the field (575.57.08).
fn voltage(r: &mut Report) {
    let d = r.d;
    let gpu = r.gpu;
    let spec = r.spec();
    let value = if d.since(575, 0) {
        DEPRECATED.to_string()
    } else if d.major >= 570 {
        "N/A".to_string()
    } else {
        let idle = u64::from(*r.rng("voltage").pick(spec.idle_voltage_uv).unwrap_or(&685_000));
        let span = u64::from(gpu.max_sm_clock_mhz.saturating_sub(spec.idle_sm_clock_mhz)).max(1);
        let above = u64::from(gpu.sm_clock_mhz.saturating_sub(spec.idle_sm_clock_mhz)).min(span);
        let loaded = idle + 900_000u64.saturating_sub(idle) * above / span;
        // Whole 5 mV steps once the clock moves; the idle value stays exact.
        let uv = if above == 0 { idle } else { loaded / 5_000 * 5_000 };
        r.live(format!("{}.{:03} mV", uv / 1000, uv % 1000))
    };
    r.heading(1, "Voltage");
    r.kv(2, "Graphics", value);
}

/// Fabric Manager's registration of the GPU. State and Status up to 545;
/// 550 adds the clique, cluster and bandwidth health; 570 three more health
/// lines (570.124.06, 575.57.08); 580.119 a summary and a configuration check,
/// 580.173 the partition (580.119.02, 580.173.02). Only Hopper reports it:
/// the A100 outputs (535, 555) read N/A throughout, NVSwitch or not.
fn fabric(r: &mut Report) {
    let d = r.d;
    let hopper = r.hopper();
    let (state, status) = match r.gpu.fabric {
        _ if !hopper => ("N/A", "N/A"),
        FabricState::Completed => ("Completed", "Success"),
        FabricState::InProgress => ("In Progress", "N/A"),
        FabricState::NotSupported => ("N/A", "N/A"),
    };
    r.heading(1, "Fabric");
    r.kv(2, "State", state);
    r.kv(2, "Status", status);
    if d.major < 550 {
        return;
    }
    let known = hopper && r.gpu.fabric == FabricState::Completed;
    r.kv(2, "CliqueId", if known { "0" } else { "N/A" });
    r.kv(2, "ClusterUUID", if known { "00000000-0000-0000-0000-000000000000" } else { "N/A" });
    r.heading(2, "Health");
    // N/A on HGX H100 (no multi-node NVLink); GB200 systems fill them in.
    if d.since(580, 119) {
        r.kv(3, "Summary", "N/A");
    }
    r.kv(3, "Bandwidth", "N/A");
    if d.major >= 570 {
        for label in ["Route Recovery in progress", "Route Unhealthy", "Access Timeout Recovery"] {
            r.kv(3, label, "N/A");
        }
    }
    if d.since(580, 119) {
        r.kv(3, "Incorrect Configuration", "N/A");
    }
    if d.since(580, 173) {
        r.kv(3, "Partition Assigned", "N/A");
    }
}

#[cfg(test)]
mod tests {
    use super::{Dialect, SECTIONS};

    #[test]
    fn help_names_every_section() {
        let display = super::super::SIGNATURE.flags.iter().find(|flag| flag.long == Some("display")).expect("-d");
        for (name, _) in SECTIONS {
            assert!(display.help.contains(name), "{name}");
        }
    }

    #[test]
    fn dialect_reads_branch_and_release() {
        let d = Dialect::of("580.119.02");
        assert_eq!((d.major, d.minor, d.width()), (580, 119, 55));
        let d = Dialect::of("580.105.08");
        assert_eq!(d.width(), 42);
        assert!(Dialect::of("535.247.01").split_sram());
        assert!(!Dialect::of("535.129.03").split_sram());
        assert!(!Dialect::of("545.23.08").split_sram());
        // Anything that does not parse is the oldest layout, never a panic.
        let d = Dialect::of("garbage");
        assert_eq!((d.major, d.minor), (0, 0));
        assert!(d.legacy());
        assert_eq!(Dialect::of("99999999999999999999.1").major, 0);
    }
}
