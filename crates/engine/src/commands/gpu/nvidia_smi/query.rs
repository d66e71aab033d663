//! `nvidia-smi --query-gpu=... --format=csv` (FACTS.md §3) and `nvidia-smi -q
//! [-d SECTIONS]` (FACTS.md §2).

use super::{driver_major, invalid_arguments, short_bus_id};
use crate::commands::host::pci_ids;
use crate::commands::Output;
use crate::model::gpu::{throttle, FabricState};
use crate::model::time::{civil, ctime};
use crate::model::{Cluster, ComputeMode, Gpu, GpuHealth};
use crate::rng::Rng;

const EXIT_INVALID_ARGUMENT: i32 = 2;

/// What a GPU the driver cannot read answers for a live value.
const UNREADABLE_CSV: &str = "[Unknown Error]";
const UNREADABLE_Q: &str = "Unknown Error";

/// One `--query-gpu` value: bare text, or a number that carries a unit.
enum Value {
    Text(String),
    Measure(String),
}

struct Field {
    names: &'static [&'static str],
    unit: Option<&'static str>,
    /// Identity and configuration the driver keeps even when the GPU stops
    /// answering; everything else reads `[Unknown Error]` then.
    cached: bool,
    help: &'static str,
    read: fn(&Cluster, &Gpu) -> Value,
}

fn text(value: impl ToString) -> Value {
    Value::Text(value.to_string())
}

fn measure(value: impl ToString) -> Value {
    Value::Measure(value.to_string())
}

fn yes_no(on: bool) -> Value {
    text(if on { "Yes" } else { "No" })
}

fn enabled(on: bool) -> &'static str {
    if on {
        "Enabled"
    } else {
        "Disabled"
    }
}

fn active(gpu: &Gpu, bit: u64) -> &'static str {
    if gpu.throttle_reasons & bit != 0 {
        "Active"
    } else {
        "Not Active"
    }
}

fn watts(w: u32) -> String {
    format!("{w}.00")
}

static FIELDS: &[Field] = &[
    Field { names: &["timestamp"], unit: None, cached: true, help: "When the query ran, YYYY/MM/DD HH:MM:SS.msec.", read: |c, _| {
        let t = civil(c.now);
        text(format!("{}/{:02}/{:02} {:02}:{:02}:{:02}.000", t.year, t.month, t.day, t.hour, t.minute, t.second))
    } },
    Field { names: &["driver_version"], unit: None, cached: true, help: "The installed NVIDIA display driver version.", read: |c, _| text(&c.versions.driver) },
    Field { names: &["index"], unit: None, cached: true, help: "Zero based index of the GPU.", read: |_, g| text(g.index) },
    Field { names: &["name", "gpu_name"], unit: None, cached: false, help: "The official product name of the GPU.", read: |_, g| text(&g.name) },
    Field { names: &["serial", "gpu_serial"], unit: None, cached: true, help: "The serial number printed on the board.", read: |_, g| text(&g.serial) },
    Field { names: &["uuid", "gpu_uuid"], unit: None, cached: true, help: "Globally unique immutable identifier of the GPU.", read: |_, g| text(&g.uuid) },
    Field { names: &["pci.bus_id", "gpu_bus_id"], unit: None, cached: true, help: "PCI bus id as domain:bus:device.function, in hex.", read: |_, g| text(&g.bus_id) },
    Field { names: &["pci.device_id"], unit: None, cached: true, help: "PCI vendor device id, in hex.", read: |_, g| {
        text(format!("0x{:04X}{:04X}", g.device_id, pci_ids::NVIDIA_VENDOR))
    } },
    Field { names: &["vbios_version"], unit: None, cached: false, help: "The BIOS of the GPU board.", read: |_, g| text(&g.vbios) },
    Field { names: &["compute_cap"], unit: None, cached: true, help: "The CUDA compute capability, major.minor.", read: |_, g| {
        text(pci_ids::compute_capability(g.device_id).unwrap_or("[N/A]"))
    } },
    Field { names: &["persistence_mode"], unit: None, cached: true, help: "Whether persistence mode is enabled.", read: |_, g| text(enabled(g.persistence_mode)) },
    Field { names: &["display_active"], unit: None, cached: false, help: "Whether a display is initialized on the GPU.", read: |_, g| text(enabled(g.display_active)) },
    Field { names: &["compute_mode"], unit: None, cached: true, help: "Default, Exclusive_Process or Prohibited.", read: |_, g| {
        text(match g.compute_mode {
            ComputeMode::Default => "Default",
            ComputeMode::ExclusiveProcess => "Exclusive_Process",
            ComputeMode::Prohibited => "Prohibited",
        })
    } },
    Field { names: &["mig.mode.current"], unit: None, cached: false, help: "The MIG mode the GPU runs in.", read: |_, g| text(enabled(g.mig_enabled)) },
    Field { names: &["pstate"], unit: None, cached: false, help: "Performance state, P0 (maximum) to P12 (minimum).", read: |_, g| text(format!("P{}", g.pstate)) },
    Field { names: &["fan.speed"], unit: Some("%"), cached: false, help: "Fan speed as a percentage of the maximum.", read: |_, g| {
        g.fan_pct.map_or(text("[N/A]"), measure)
    } },
    Field { names: &["temperature.gpu"], unit: None, cached: false, help: "Core GPU temperature, degrees C.", read: |_, g| text(g.temperature_c) },
    Field { names: &["temperature.memory"], unit: None, cached: false, help: "HBM memory temperature, degrees C.", read: |_, g| text(g.memory_temperature_c) },
    Field { names: &["power.draw"], unit: Some("W"), cached: false, help: "Power drawn by the whole board, W.", read: |_, g| measure(watts(g.power_draw_w)) },
    Field { names: &["power.limit", "enforced.power.limit"], unit: Some("W"), cached: false, help: "The power management limit, W.", read: |_, g| measure(watts(g.power_limit_w)) },
    Field { names: &["clocks.sm", "clocks.current.sm"], unit: Some("MHz"), cached: false, help: "Current SM clock.", read: |_, g| measure(g.sm_clock_mhz) },
    Field { names: &["clocks.gr", "clocks.current.graphics"], unit: Some("MHz"), cached: false, help: "Current graphics clock.", read: |_, g| measure(g.sm_clock_mhz) },
    Field { names: &["clocks.mem", "clocks.current.memory"], unit: Some("MHz"), cached: false, help: "Current memory clock.", read: |_, g| measure(g.mem_clock_mhz) },
    Field { names: &["clocks.max.sm", "clocks.max.sm_clock"], unit: Some("MHz"), cached: false, help: "Maximum SM clock.", read: |_, g| measure(g.max_sm_clock_mhz) },
    Field { names: &["clocks.max.gr", "clocks.max.graphics"], unit: Some("MHz"), cached: false, help: "Maximum graphics clock.", read: |_, g| measure(g.max_sm_clock_mhz) },
    Field { names: &["clocks.max.mem", "clocks.max.memory"], unit: Some("MHz"), cached: false, help: "Maximum memory clock.", read: |_, g| measure(g.max_mem_clock_mhz) },
    Field { names: &["utilization.gpu"], unit: Some("%"), cached: false, help: "Percent of time a kernel was running.", read: |_, g| measure(g.utilization_pct) },
    Field { names: &["utilization.memory"], unit: Some("%"), cached: false, help: "Percent of time device memory was read or written.", read: |_, g| measure(g.memory_utilization_pct) },
    Field { names: &["memory.total"], unit: Some("MiB"), cached: true, help: "Total installed GPU memory.", read: |_, g| measure(g.memory_total_mib) },
    Field { names: &["memory.used"], unit: Some("MiB"), cached: false, help: "Memory allocated by active contexts.", read: |_, g| measure(g.memory_used_mib) },
    Field { names: &["memory.free"], unit: Some("MiB"), cached: false, help: "Total free memory.", read: |_, g| {
        measure(g.memory_total_mib.saturating_sub(g.memory_used_mib))
    } },
    Field { names: &["ecc.mode.current"], unit: None, cached: false, help: "The ECC mode the GPU runs in.", read: |_, _| text("Enabled") },
    Field { names: &["ecc.errors.corrected.volatile.total"], unit: None, cached: false, help: "Corrected ECC errors since the driver loaded.", read: |_, g| text(g.ecc.volatile_corrected) },
    Field { names: &["ecc.errors.uncorrected.volatile.total"], unit: None, cached: false, help: "Uncorrected ECC errors since the driver loaded.", read: |_, g| text(g.ecc.volatile_uncorrected) },
    Field { names: &["ecc.errors.corrected.aggregate.total"], unit: None, cached: false, help: "Corrected ECC errors over the GPU's life.", read: |_, g| text(g.ecc.aggregate_corrected) },
    Field { names: &["ecc.errors.uncorrected.aggregate.total"], unit: None, cached: false, help: "Uncorrected ECC errors over the GPU's life.", read: |_, g| text(g.ecc.aggregate_uncorrected) },
    Field { names: &["remapped_rows.correctable"], unit: None, cached: false, help: "Rows remapped for correctable errors.", read: |_, g| text(g.row_remap.correctable) },
    Field { names: &["remapped_rows.uncorrectable"], unit: None, cached: false, help: "Rows remapped for uncorrectable errors.", read: |_, g| text(g.row_remap.uncorrectable) },
    Field { names: &["remapped_rows.pending"], unit: None, cached: false, help: "Yes when a remap waits for a GPU reset.", read: |_, g| yes_no(g.row_remap.pending) },
    Field { names: &["remapped_rows.failure"], unit: None, cached: false, help: "Yes when a remap has failed.", read: |_, g| yes_no(g.row_remap.failure) },
    Field { names: &["clocks_event_reasons.active", "clocks_throttle_reasons.active"], unit: None, cached: false, help: "Bitmask of the active clock-event reasons.", read: |_, g| {
        text(format!("0x{:016x}", g.throttle_reasons))
    } },
    Field { names: &["clocks_event_reasons.gpu_idle", "clocks_throttle_reasons.gpu_idle"], unit: None, cached: false, help: "Nothing runs on the GPU.", read: |_, g| text(active(g, throttle::GPU_IDLE)) },
    Field { names: &["clocks_event_reasons.sw_power_cap", "clocks_throttle_reasons.sw_power_cap"], unit: None, cached: false, help: "Clocks lowered to stay under the power limit.", read: |_, g| text(active(g, throttle::SW_POWER_CAP)) },
    Field { names: &["clocks_event_reasons.hw_slowdown", "clocks_throttle_reasons.hw_slowdown"], unit: None, cached: false, help: "Hardware slowdown (thermal or power brake) is engaged.", read: |_, g| text(active(g, throttle::HW_SLOWDOWN)) },
    Field { names: &["clocks_event_reasons.hw_thermal_slowdown", "clocks_throttle_reasons.hw_thermal_slowdown"], unit: None, cached: false, help: "Hardware thermal slowdown: the GPU is too hot.", read: |_, g| text(active(g, throttle::HW_THERMAL_SLOWDOWN)) },
    Field { names: &["clocks_event_reasons.hw_power_brake_slowdown", "clocks_throttle_reasons.hw_power_brake_slowdown"], unit: None, cached: false, help: "External power brake (e.g. the PSU) is asserted.", read: |_, g| text(active(g, throttle::HW_POWER_BRAKE_SLOWDOWN)) },
    Field { names: &["clocks_event_reasons.sw_thermal_slowdown", "clocks_throttle_reasons.sw_thermal_slowdown"], unit: None, cached: false, help: "Software thermal slowdown.", read: |_, g| text(active(g, throttle::SW_THERMAL_SLOWDOWN)) },
    Field { names: &["clocks_event_reasons.sync_boost", "clocks_throttle_reasons.sync_boost"], unit: None, cached: false, help: "Clocks held to match a sync-boost group.", read: |_, g| text(active(g, throttle::SYNC_BOOST)) },
    Field { names: &["pcie.link.gen.current", "pcie.link.gen.gpucurrent"], unit: None, cached: false, help: "Current PCIe link generation.", read: |_, g| text(g.pcie.gen) },
    Field { names: &["pcie.link.gen.max", "pcie.link.gen.gpumax"], unit: None, cached: false, help: "Maximum PCIe link generation of GPU and system.", read: |_, g| text(g.pcie.max_gen) },
    Field { names: &["pcie.link.width.current"], unit: None, cached: false, help: "Current PCIe link width (lanes).", read: |_, g| text(g.pcie.width) },
    Field { names: &["pcie.link.width.max"], unit: None, cached: false, help: "Maximum PCIe link width (lanes).", read: |_, g| text(g.pcie.max_width) },
];

fn field(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|field| field.names.contains(&name))
}

pub fn help_query_gpu() -> String {
    let mut out = String::from("List of valid properties to query for the switch \"--query-gpu=\":\n\n");
    for field in FIELDS {
        let names: Vec<String> = field.names.iter().map(|name| format!("\"{name}\"")).collect();
        out += &format!("Section about {} properties\n", field.names[0]);
        out += &format!("{}\n", field.help);
        out += &format!("{}\n\n", names.join(" or "));
    }
    out
}

pub fn query_gpu(cluster: &Cluster, gpus: &[&Gpu], fields: &str, format: &str) -> Output {
    let mut header = true;
    let mut units = true;
    let mut csv = false;
    for option in format.split(',').map(str::trim) {
        match option {
            "csv" => csv = true,
            "noheader" => header = false,
            "nounits" => units = false,
            _ => return invalid_arguments(),
        }
    }
    if !csv {
        return invalid_arguments();
    }
    let mut chosen = Vec::new();
    for name in fields.split(',').map(str::trim) {
        match field(name) {
            Some(field) => chosen.push((name, field)),
            None => {
                return Output::ok(format!("Field \"{name}\" is not a valid field to query.\n\n")).with_status(EXIT_INVALID_ARGUMENT)
            }
        }
    }
    let mut out = String::new();
    if header {
        let names: Vec<String> = chosen
            .iter()
            .map(|(name, field)| match (field.unit, units) {
                (Some(unit), true) => format!("{name} [{unit}]"),
                _ => name.to_string(),
            })
            .collect();
        out += &names.join(", ");
        out.push('\n');
    }
    for gpu in gpus {
        let values: Vec<String> = chosen
            .iter()
            .map(|(_, field)| {
                if gpu.health == GpuHealth::Unresponsive && !field.cached {
                    return UNREADABLE_CSV.to_string();
                }
                match ((field.read)(cluster, gpu), field.unit) {
                    (Value::Measure(number), Some(unit)) if units => format!("{number} {unit}"),
                    (Value::Measure(number), _) | (Value::Text(number), _) => number,
                }
            })
            .collect();
        out += &values.join(", ");
        out.push('\n');
    }
    Output::ok(out)
}

/// The sections `-d` accepts, in the order `-q` prints them.
const SECTIONS: &[&str] =
    &["PCI", "PERFORMANCE", "MEMORY", "UTILIZATION", "ECC", "PAGE_RETIREMENT", "ROW_REMAPPER", "TEMPERATURE", "POWER", "CLOCK"];

/// One `-q` line: the label padded so that the colon sits at column 42.
fn kv(level: usize, label: &str, value: impl AsRef<str>) -> String {
    let left = format!("{}{label}", "    ".repeat(level));
    format!("{left:<42}: {}\n", value.as_ref())
}

fn heading(level: usize, label: &str) -> String {
    format!("{}{label}\n", "    ".repeat(level))
}

/// Reads a live value, or `Unknown Error` when the GPU does not answer.
struct Reader<'g> {
    gpu: &'g Gpu,
}

impl Reader<'_> {
    fn live(&self, value: impl ToString) -> String {
        if self.gpu.health == GpuHealth::Unresponsive {
            UNREADABLE_Q.to_string()
        } else {
            value.to_string()
        }
    }
}

pub fn query(cluster: &Cluster, gpus: &[&Gpu], sections: Option<&str>, attached: usize) -> Output {
    let chosen: Vec<&str> = match sections {
        None => SECTIONS.to_vec(),
        Some(list) => {
            let mut chosen = Vec::new();
            for name in list.split(',').map(str::trim) {
                let upper = name.to_ascii_uppercase();
                match SECTIONS.iter().find(|section| **section == upper) {
                    Some(section) => chosen.push(*section),
                    None => return invalid_arguments(),
                }
            }
            chosen
        }
    };
    let versions = &cluster.versions;
    let mut out = String::from("\n==============NVSMI LOG==============\n\n");
    out += &kv(0, "Timestamp", ctime(cluster.now));
    out += &kv(0, "Driver Version", &versions.driver);
    out += &kv(0, "CUDA Version", &versions.cuda);
    out.push('\n');
    out += &kv(0, "Attached GPUs", attached.to_string());
    let blocks: Vec<String> = gpus.iter().map(|gpu| gpu_block(cluster, gpu, &chosen, sections.is_none())).collect();
    out += &blocks.join("\n");
    Output::ok(out)
}

fn gpu_block(cluster: &Cluster, gpu: &Gpu, sections: &[&str], everything: bool) -> String {
    let r = Reader { gpu };
    let mut out = format!("GPU {}\n", gpu.bus_id);
    if everything {
        out += &identity(gpu, &r);
    }
    for section in SECTIONS.iter().filter(|section| sections.contains(section)) {
        out += &match *section {
            "PCI" => pci(cluster, gpu, &r),
            "PERFORMANCE" => performance(cluster, gpu, &r),
            "MEMORY" => memory(gpu, &r),
            "UTILIZATION" => utilization(gpu, &r),
            "ECC" => ecc(cluster, gpu, &r),
            // Retirement gave way to row remapping on A100 and later: N/A there.
            "PAGE_RETIREMENT" => {
                heading(1, "Retired Pages")
                    + &kv(2, "Single Bit ECC", "N/A")
                    + &kv(2, "Double Bit ECC", "N/A")
                    + &kv(2, "Pending Page Blacklist", "N/A")
            }
            "ROW_REMAPPER" => row_remapper(gpu, &r),
            "TEMPERATURE" => temperature(gpu, &r),
            "POWER" => power(cluster, gpu, &r),
            _ => clocks(gpu, &r),
        };
    }
    if everything {
        out += &fabric(cluster, gpu);
        out += &kv(1, "Processes", "None");
    }
    out
}

fn utilization(gpu: &Gpu, r: &Reader) -> String {
    let mut out = heading(1, "Utilization");
    out += &kv(2, "Gpu", r.live(format!("{} %", gpu.utilization_pct)));
    out += &kv(2, "Memory", r.live(format!("{} %", gpu.memory_utilization_pct)));
    for engine in ["Encoder", "Decoder", "JPEG", "OFA"] {
        out += &kv(2, engine, r.live("0 %"));
    }
    out
}

fn identity(gpu: &Gpu, r: &Reader) -> String {
    let mut out = kv(1, "Product Name", r.live(&gpu.name));
    out += &kv(1, "Product Brand", "NVIDIA");
    out += &kv(1, "Product Architecture", pci_ids::gpu_architecture(gpu.device_id));
    out += &kv(1, "Display Mode", "Disabled");
    out += &kv(1, "Display Active", enabled(gpu.display_active));
    out += &kv(1, "Persistence Mode", enabled(gpu.persistence_mode));
    out += &heading(1, "MIG Mode");
    out += &kv(2, "Current", r.live(enabled(gpu.mig_enabled)));
    out += &kv(2, "Pending", r.live(enabled(gpu.mig_enabled)));
    out += &kv(1, "Serial Number", &gpu.serial);
    out += &kv(1, "GPU UUID", &gpu.uuid);
    out += &kv(1, "Minor Number", gpu.index.to_string());
    out += &kv(1, "VBIOS Version", r.live(&gpu.vbios));
    out += &heading(1, "GPU Reset Status");
    out += &kv(2, "Reset Required", if gpu.needs_reset { "Yes" } else { "No" });
    out += &kv(2, "Drain and Reset Recommended", "No");
    out
}

fn pci(cluster: &Cluster, gpu: &Gpu, r: &Reader) -> String {
    let major = driver_major(cluster);
    let bus = short_bus_id(gpu);
    let hex = |at: std::ops::Range<usize>| bus.get(at).unwrap_or("00").to_string();
    let mut out = heading(1, "PCI");
    out += &kv(2, "Bus", format!("0x{}", hex(5..7)));
    out += &kv(2, "Device", format!("0x{}", hex(8..10)));
    out += &kv(2, "Domain", format!("0x{}", hex(0..4)));
    if major >= 550 {
        out += &kv(2, "Base Classcode", "0x3");
        out += &kv(2, "Sub Classcode", "0x2");
    }
    out += &kv(2, "Device Id", format!("0x{:04X}{:04X}", gpu.device_id, pci_ids::NVIDIA_VENDOR));
    out += &kv(2, "Bus Id", &gpu.bus_id);
    out += &kv(2, "Sub System Id", format!("0x{:04X}{:04X}", pci_ids::gpu_subsystem(gpu.device_id), pci_ids::NVIDIA_VENDOR));
    out += &heading(2, "GPU Link Info");
    out += &heading(3, "PCIe Generation");
    out += &kv(4, "Max", r.live(gpu.pcie.max_gen));
    out += &kv(4, "Current", r.live(gpu.pcie.gen));
    out += &kv(4, "Device Current", r.live(gpu.pcie.gen));
    out += &kv(4, "Device Max", r.live(gpu.pcie.max_gen));
    out += &kv(4, "Host Max", r.live(gpu.pcie.max_gen));
    out += &heading(3, "Link Width");
    out += &kv(4, "Max", r.live(format!("{}x", gpu.pcie.max_width)));
    out += &kv(4, "Current", r.live(format!("{}x", gpu.pcie.width)));
    out += &heading(2, "Bridge Chip");
    out += &kv(3, "Type", "N/A");
    out += &kv(3, "Firmware", "N/A");
    out += &kv(2, "Replays Since Reset", r.live(0));
    out += &kv(2, "Replay Number Rollovers", r.live(0));
    // Idle traffic: a few hundred KB/s, stable per GPU.
    let mut rng = Rng::derive(cluster.seed, &[&gpu.uuid, "pcie-throughput"]);
    out += &kv(2, "Tx Throughput", r.live(format!("{} KB/s", rng.range_u64(300, 900))));
    out += &kv(2, "Rx Throughput", r.live(format!("{} KB/s", rng.range_u64(300, 2600))));
    // 545 prints Inbound first, 560 Outbound first (FACTS.md §2); the populated
    // value keeps its trailing space.
    let outbound = "FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 ";
    if major >= 560 {
        out += &kv(2, "Atomic Caps Outbound", outbound);
        out += &kv(2, "Atomic Caps Inbound", "N/A");
    } else {
        out += &kv(2, "Atomic Caps Inbound", "N/A");
        out += &kv(2, "Atomic Caps Outbound", outbound);
    }
    out
}

fn performance(cluster: &Cluster, gpu: &Gpu, r: &Reader) -> String {
    let mut out = kv(1, "Performance State", r.live(format!("P{}", gpu.pstate)));
    // Renamed from `Clocks Throttle Reasons` in the 535 branch (FACTS.md §2).
    let title = if driver_major(cluster) >= 535 { "Clocks Event Reasons" } else { "Clocks Throttle Reasons" };
    out += &heading(1, title);
    let reason = |level: usize, label: &str, bit: u64| kv(level, label, r.live(active(gpu, bit)));
    out += &reason(2, "Idle", throttle::GPU_IDLE);
    out += &reason(2, "Applications Clocks Setting", throttle::APPLICATIONS_CLOCKS_SETTING);
    out += &reason(2, "SW Power Cap", throttle::SW_POWER_CAP);
    out += &reason(2, "HW Slowdown", throttle::HW_SLOWDOWN);
    out += &reason(3, "HW Thermal Slowdown", throttle::HW_THERMAL_SLOWDOWN);
    out += &reason(3, "HW Power Brake Slowdown", throttle::HW_POWER_BRAKE_SLOWDOWN);
    out += &reason(2, "Sync Boost", throttle::SYNC_BOOST);
    out += &reason(2, "SW Thermal Slowdown", throttle::SW_THERMAL_SLOWDOWN);
    out += &reason(2, "Display Clock Setting", throttle::DISPLAY_CLOCK_SETTING);
    out
}

fn memory(gpu: &Gpu, r: &Reader) -> String {
    let mib = |value: u64| r.live(format!("{value} MiB"));
    let mut out = heading(1, "FB Memory Usage");
    out += &kv(2, "Total", format!("{} MiB", gpu.memory_total_mib));
    out += &kv(2, "Used", mib(gpu.memory_used_mib));
    out += &kv(2, "Free", mib(gpu.memory_total_mib.saturating_sub(gpu.memory_used_mib)));
    out
}

fn ecc(cluster: &Cluster, gpu: &Gpu, r: &Reader) -> String {
    // The model counts DRAM errors; SRAM stays 0. 550 split SRAM uncorrectable
    // into parity and SEC-DED (FACTS.md §2).
    let split = driver_major(cluster) >= 550;
    let mut out = heading(1, "ECC Mode");
    out += &kv(2, "Current", "Enabled");
    out += &kv(2, "Pending", "Enabled");
    out += &heading(1, "ECC Errors");
    let scope = |name: &str, corrected: u64, uncorrected: u64| {
        let mut out = heading(2, name);
        out += &kv(3, "SRAM Correctable", r.live(0));
        if split {
            out += &kv(3, "SRAM Uncorrectable Parity", r.live(0));
            out += &kv(3, "SRAM Uncorrectable SEC-DED", r.live(0));
        } else {
            out += &kv(3, "SRAM Uncorrectable", r.live(0));
        }
        out += &kv(3, "DRAM Correctable", r.live(corrected));
        out += &kv(3, "DRAM Uncorrectable", r.live(uncorrected));
        out
    };
    out += &scope("Volatile", gpu.ecc.volatile_corrected, gpu.ecc.volatile_uncorrected);
    out += &scope("Aggregate", gpu.ecc.aggregate_corrected, gpu.ecc.aggregate_uncorrected);
    if split {
        out += &kv(3, "SRAM Threshold Exceeded", r.live("No"));
        out += &heading(2, "Aggregate Uncorrectable SRAM Sources");
        for source in ["SRAM L2", "SRAM SM", "SRAM Microcontroller", "SRAM PCIE", "SRAM Other"] {
            out += &kv(3, source, r.live(0));
        }
    }
    out
}

fn row_remapper(gpu: &Gpu, r: &Reader) -> String {
    let remap = &gpu.row_remap;
    let yes = |on: bool| r.live(if on { "Yes" } else { "No" });
    let banks = |count: u32| r.live(format!("{count} bank(s)"));
    let mut out = heading(1, "Remapped Rows");
    out += &kv(2, "Correctable Error", r.live(remap.correctable));
    out += &kv(2, "Uncorrectable Error", r.live(remap.uncorrectable));
    out += &kv(2, "Pending", yes(remap.pending));
    out += &kv(2, "Remapping Failure Occurred", yes(remap.failure));
    out += &heading(2, "Bank Remap Availability Histogram");
    out += &kv(3, "Max", banks(remap.banks_max));
    out += &kv(3, "High", banks(remap.banks_high));
    out += &kv(3, "Partial", banks(0));
    out += &kv(3, "Low", banks(0));
    out += &kv(3, "None", banks(0));
    out
}

/// Where Hopper and Ampere boards start to slow down, degrees C. `T.Limit`
/// is the margin to it: 87 - 33 = 54 and 87 - 28 = 59 in the H100/H200 captures.
const SLOWDOWN_C: i64 = 87;

fn temperature(gpu: &Gpu, r: &Reader) -> String {
    let celsius = |value: i64| r.live(format!("{value} C"));
    let mut out = heading(1, "Temperature");
    out += &kv(2, "GPU Current Temp", celsius(i64::from(gpu.temperature_c)));
    out += &kv(2, "GPU T.Limit Temp", celsius(SLOWDOWN_C - i64::from(gpu.temperature_c)));
    out += &kv(2, "GPU Shutdown T.Limit Temp", celsius(-8));
    out += &kv(2, "GPU Slowdown T.Limit Temp", celsius(-2));
    out += &kv(2, "GPU Max Operating T.Limit Temp", celsius(0));
    out += &kv(2, "GPU Target Temperature", "N/A");
    out += &kv(2, "Memory Current Temp", celsius(i64::from(gpu.memory_temperature_c)));
    out += &kv(2, "Memory Max Operating T.Limit Temp", celsius(0));
    out
}

fn power(cluster: &Cluster, gpu: &Gpu, r: &Reader) -> String {
    let w = |value: u32| r.live(format!("{} W", watts(value)));
    // 700 W parts allow 200 W at least (captures); smaller parts 100 W [K].
    let min = if gpu.power_limit_w >= 700 { 200 } else { 100 };
    let mut out = heading(1, "GPU Power Readings");
    out += &kv(2, "Power Draw", w(gpu.power_draw_w));
    out += &kv(2, "Current Power Limit", w(gpu.power_limit_w));
    out += &kv(2, "Requested Power Limit", w(gpu.power_limit_w));
    out += &kv(2, "Default Power Limit", w(gpu.power_limit_w));
    out += &kv(2, "Min Power Limit", w(min));
    out += &kv(2, "Max Power Limit", w(gpu.power_limit_w));
    // The trailing space after the heading is the real tool's (FACTS.md §2).
    out += &heading(1, "GPU Memory Power Readings ");
    let mut rng = Rng::derive(cluster.seed, &[&gpu.uuid, "memory-power"]);
    let centiwatts = rng.range_u64(3_000, 4_500);
    out += &kv(2, "Power Draw", r.live(format!("{}.{:02} W", centiwatts / 100, centiwatts % 100)));
    out += &heading(1, "Module Power Readings");
    for label in ["Power Draw", "Current Power Limit", "Requested Power Limit", "Default Power Limit", "Min Power Limit", "Max Power Limit"] {
        out += &kv(2, label, "N/A");
    }
    out
}

fn clocks(gpu: &Gpu, r: &Reader) -> String {
    let mhz = |value: u32| r.live(format!("{value} MHz"));
    // The model has no video clock: it idles at 765 MHz and scales with the SM
    // clock up to 1545 MHz (captures).
    let max_video = 1545;
    let video = (gpu.sm_clock_mhz * max_video / gpu.max_sm_clock_mhz.max(1)).max(765);
    let mut out = heading(1, "Clocks");
    out += &kv(2, "Graphics", mhz(gpu.sm_clock_mhz));
    out += &kv(2, "SM", mhz(gpu.sm_clock_mhz));
    out += &kv(2, "Memory", mhz(gpu.mem_clock_mhz));
    out += &kv(2, "Video", mhz(video));
    out += &heading(1, "Applications Clocks");
    out += &kv(2, "Graphics", mhz(gpu.max_sm_clock_mhz));
    out += &kv(2, "Memory", mhz(gpu.max_mem_clock_mhz));
    out += &heading(1, "Default Applications Clocks");
    out += &kv(2, "Graphics", mhz(gpu.max_sm_clock_mhz));
    out += &kv(2, "Memory", mhz(gpu.max_mem_clock_mhz));
    out += &heading(1, "Deferred Clocks");
    out += &kv(2, "Memory", "N/A");
    out += &heading(1, "Max Clocks");
    out += &kv(2, "Graphics", mhz(gpu.max_sm_clock_mhz));
    out += &kv(2, "SM", mhz(gpu.max_sm_clock_mhz));
    out += &kv(2, "Memory", mhz(gpu.max_mem_clock_mhz));
    out += &kv(2, "Video", mhz(max_video));
    out += &heading(1, "Max Customer Boost Clocks");
    out += &kv(2, "Graphics", mhz(gpu.max_sm_clock_mhz));
    out += &heading(1, "Clock Policy");
    out += &kv(2, "Auto Boost", "N/A");
    out += &kv(2, "Auto Boost Default", "N/A");
    out
}

fn fabric(cluster: &Cluster, gpu: &Gpu) -> String {
    let (state, status) = match gpu.fabric {
        FabricState::Completed => ("Completed", "Success"),
        FabricState::InProgress => ("In Progress", "N/A"),
        FabricState::NotSupported => ("N/A", "N/A"),
    };
    let mut out = heading(1, "Fabric");
    out += &kv(2, "State", state);
    out += &kv(2, "Status", status);
    if driver_major(cluster) >= 550 {
        let known = gpu.fabric == FabricState::Completed;
        out += &kv(2, "CliqueId", if known { "0" } else { "N/A" });
        out += &kv(2, "ClusterUUID", if known { "00000000-0000-0000-0000-000000000000" } else { "N/A" });
        out += &heading(2, "Health");
        out += &kv(3, "Bandwidth", "N/A");
    }
    out
}
