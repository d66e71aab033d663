//! `nvidia-smi --query-gpu=... --format=csv` (FACTS.md §3); `-q` is report.rs.

use super::invalid_arguments;
use super::report::{active, enabled};
use crate::commands::host::pci_ids;
use crate::commands::Output;
use crate::model::gpu::throttle;
use crate::model::time::civil;
use crate::model::{Cluster, ComputeMode, Gpu, GpuHealth};

const EXIT_INVALID_ARGUMENT: i32 = 2;

/// What a GPU the driver cannot read answers for a live value.
const UNREADABLE_CSV: &str = "[Unknown Error]";

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

fn watts(w: u32) -> String {
    format!("{w}.00")
}

static FIELDS: &[Field] = &[
    Field {
        names: &["timestamp"],
        unit: None,
        cached: true,
        help: "When the query ran, YYYY/MM/DD HH:MM:SS.msec.",
        read: |c, _| {
            let t = civil(c.now);
            text(format!("{}/{:02}/{:02} {:02}:{:02}:{:02}.000", t.year, t.month, t.day, t.hour, t.minute, t.second))
        },
    },
    Field { names: &["driver_version"], unit: None, cached: true, help: "The installed NVIDIA display driver version.", read: |c, _| text(&c.versions.driver) },
    Field { names: &["index"], unit: None, cached: true, help: "Zero based index of the GPU.", read: |_, g| text(g.index) },
    Field { names: &["name", "gpu_name"], unit: None, cached: false, help: "The official product name of the GPU.", read: |_, g| text(&g.name) },
    Field { names: &["serial", "gpu_serial"], unit: None, cached: true, help: "The serial number printed on the board.", read: |_, g| text(&g.serial) },
    Field { names: &["uuid", "gpu_uuid"], unit: None, cached: true, help: "Globally unique immutable identifier of the GPU.", read: |_, g| text(&g.uuid) },
    Field {
        names: &["pci.bus_id", "gpu_bus_id"],
        unit: None,
        cached: true,
        help: "PCI bus id as domain:bus:device.function, in hex.",
        read: |_, g| text(&g.bus_id),
    },
    Field {
        names: &["pci.device_id"],
        unit: None,
        cached: true,
        help: "PCI vendor device id, in hex.",
        read: |_, g| text(format!("0x{:04X}{:04X}", g.device_id, pci_ids::NVIDIA_VENDOR)),
    },
    Field { names: &["vbios_version"], unit: None, cached: false, help: "The BIOS of the GPU board.", read: |_, g| text(&g.vbios) },
    Field {
        names: &["compute_cap"],
        unit: None,
        cached: true,
        help: "The CUDA compute capability, major.minor.",
        read: |_, g| text(pci_ids::compute_capability(g.device_id).unwrap_or("[N/A]")),
    },
    Field {
        names: &["persistence_mode"],
        unit: None,
        cached: true,
        help: "Whether persistence mode is enabled.",
        read: |_, g| text(enabled(g.persistence_mode)),
    },
    Field {
        names: &["display_active"],
        unit: None,
        cached: false,
        help: "Whether a display is initialized on the GPU.",
        read: |_, g| text(enabled(g.display_active)),
    },
    Field {
        names: &["compute_mode"],
        unit: None,
        cached: true,
        help: "Default, Exclusive_Process or Prohibited.",
        read: |_, g| {
            text(match g.compute_mode {
                ComputeMode::Default => "Default",
                ComputeMode::ExclusiveProcess => "Exclusive_Process",
                ComputeMode::Prohibited => "Prohibited",
            })
        },
    },
    Field { names: &["mig.mode.current"], unit: None, cached: false, help: "The MIG mode the GPU runs in.", read: |_, g| text(enabled(g.mig_enabled)) },
    Field {
        names: &["pstate"],
        unit: None,
        cached: false,
        help: "Performance state, P0 (maximum) to P12 (minimum).",
        read: |_, g| text(format!("P{}", g.pstate)),
    },
    Field {
        names: &["fan.speed"],
        unit: Some("%"),
        cached: false,
        help: "Fan speed as a percentage of the maximum.",
        read: |_, g| g.fan_pct.map_or(text("[N/A]"), measure),
    },
    Field { names: &["temperature.gpu"], unit: None, cached: false, help: "Core GPU temperature, degrees C.", read: |_, g| text(g.temperature_c) },
    Field { names: &["temperature.memory"], unit: None, cached: false, help: "HBM memory temperature, degrees C.", read: |_, g| text(g.memory_temperature_c) },
    Field { names: &["power.draw"], unit: Some("W"), cached: false, help: "Power drawn by the whole board, W.", read: |_, g| measure(watts(g.power_draw_w)) },
    Field {
        names: &["power.limit", "enforced.power.limit"],
        unit: Some("W"),
        cached: false,
        help: "The power management limit, W.",
        read: |_, g| measure(watts(g.power_limit_w)),
    },
    Field {
        names: &["power.default_limit"],
        unit: Some("W"),
        cached: false,
        help: "The default power management limit, W.",
        read: |_, g| measure(watts(g.default_power_limit_w)),
    },
    Field {
        names: &["power.min_limit"],
        unit: Some("W"),
        cached: false,
        help: "The lowest power limit that can be set, W.",
        read: |_, g| measure(watts(g.min_power_limit_w())),
    },
    Field {
        names: &["power.max_limit"],
        unit: Some("W"),
        cached: false,
        help: "The highest power limit that can be set, W.",
        read: |_, g| measure(watts(g.default_power_limit_w)),
    },
    Field { names: &["clocks.sm", "clocks.current.sm"], unit: Some("MHz"), cached: false, help: "Current SM clock.", read: |_, g| measure(g.sm_clock_mhz) },
    Field {
        names: &["clocks.gr", "clocks.current.graphics"],
        unit: Some("MHz"),
        cached: false,
        help: "Current graphics clock.",
        read: |_, g| measure(g.sm_clock_mhz),
    },
    Field {
        names: &["clocks.mem", "clocks.current.memory"],
        unit: Some("MHz"),
        cached: false,
        help: "Current memory clock.",
        read: |_, g| measure(g.mem_clock_mhz),
    },
    Field {
        names: &["clocks.max.sm", "clocks.max.sm_clock"],
        unit: Some("MHz"),
        cached: false,
        help: "Maximum SM clock.",
        read: |_, g| measure(g.max_sm_clock_mhz),
    },
    Field {
        names: &["clocks.max.gr", "clocks.max.graphics"],
        unit: Some("MHz"),
        cached: false,
        help: "Maximum graphics clock.",
        read: |_, g| measure(g.max_sm_clock_mhz),
    },
    Field {
        names: &["clocks.max.mem", "clocks.max.memory"],
        unit: Some("MHz"),
        cached: false,
        help: "Maximum memory clock.",
        read: |_, g| measure(g.max_mem_clock_mhz),
    },
    Field {
        names: &["utilization.gpu"],
        unit: Some("%"),
        cached: false,
        help: "Percent of time a kernel was running.",
        read: |_, g| measure(g.utilization_pct),
    },
    Field {
        names: &["utilization.memory"],
        unit: Some("%"),
        cached: false,
        help: "Percent of time device memory was read or written.",
        read: |_, g| measure(g.memory_utilization_pct),
    },
    Field { names: &["memory.total"], unit: Some("MiB"), cached: true, help: "Total installed GPU memory.", read: |_, g| measure(g.memory_total_mib) },
    Field { names: &["memory.used"], unit: Some("MiB"), cached: false, help: "Memory allocated by active contexts.", read: |_, g| measure(g.memory_used_mib) },
    Field {
        names: &["memory.free"],
        unit: Some("MiB"),
        cached: false,
        help: "Total free memory.",
        read: |_, g| measure(g.memory_total_mib.saturating_sub(g.memory_used_mib)),
    },
    Field { names: &["ecc.mode.current"], unit: None, cached: false, help: "The ECC mode the GPU runs in.", read: |_, _| text("Enabled") },
    Field {
        names: &["ecc.errors.corrected.volatile.total"],
        unit: None,
        cached: false,
        help: "Corrected ECC errors since the driver loaded.",
        read: |_, g| text(g.ecc.volatile_corrected),
    },
    Field {
        names: &["ecc.errors.uncorrected.volatile.total"],
        unit: None,
        cached: false,
        help: "Uncorrected ECC errors since the driver loaded.",
        read: |_, g| text(g.ecc.volatile_uncorrected),
    },
    Field {
        names: &["ecc.errors.corrected.aggregate.total"],
        unit: None,
        cached: false,
        help: "Corrected ECC errors over the GPU's life.",
        read: |_, g| text(g.ecc.aggregate_corrected),
    },
    Field {
        names: &["ecc.errors.uncorrected.aggregate.total"],
        unit: None,
        cached: false,
        help: "Uncorrected ECC errors over the GPU's life.",
        read: |_, g| text(g.ecc.aggregate_uncorrected),
    },
    Field {
        names: &["remapped_rows.correctable"],
        unit: None,
        cached: false,
        help: "Rows remapped for correctable errors.",
        read: |_, g| text(g.row_remap.correctable),
    },
    Field {
        names: &["remapped_rows.uncorrectable"],
        unit: None,
        cached: false,
        help: "Rows remapped for uncorrectable errors.",
        read: |_, g| text(g.row_remap.uncorrectable),
    },
    Field {
        names: &["remapped_rows.pending"],
        unit: None,
        cached: false,
        help: "Yes when a remap waits for a GPU reset.",
        read: |_, g| yes_no(g.row_remap.pending),
    },
    Field { names: &["remapped_rows.failure"], unit: None, cached: false, help: "Yes when a remap has failed.", read: |_, g| yes_no(g.row_remap.failure) },
    Field {
        names: &["clocks_event_reasons.active", "clocks_throttle_reasons.active"],
        unit: None,
        cached: false,
        help: "Bitmask of the active clock-event reasons.",
        read: |_, g| text(format!("0x{:016x}", g.throttle_reasons)),
    },
    Field {
        names: &["clocks_event_reasons.gpu_idle", "clocks_throttle_reasons.gpu_idle"],
        unit: None,
        cached: false,
        help: "Nothing runs on the GPU.",
        read: |_, g| text(active(g, throttle::GPU_IDLE)),
    },
    Field {
        names: &["clocks_event_reasons.sw_power_cap", "clocks_throttle_reasons.sw_power_cap"],
        unit: None,
        cached: false,
        help: "Clocks lowered to stay under the power limit.",
        read: |_, g| text(active(g, throttle::SW_POWER_CAP)),
    },
    Field {
        names: &["clocks_event_reasons.hw_slowdown", "clocks_throttle_reasons.hw_slowdown"],
        unit: None,
        cached: false,
        help: "Hardware slowdown (thermal or power brake) is engaged.",
        read: |_, g| text(active(g, throttle::HW_SLOWDOWN)),
    },
    Field {
        names: &["clocks_event_reasons.hw_thermal_slowdown", "clocks_throttle_reasons.hw_thermal_slowdown"],
        unit: None,
        cached: false,
        help: "Hardware thermal slowdown: the GPU is too hot.",
        read: |_, g| text(active(g, throttle::HW_THERMAL_SLOWDOWN)),
    },
    Field {
        names: &["clocks_event_reasons.hw_power_brake_slowdown", "clocks_throttle_reasons.hw_power_brake_slowdown"],
        unit: None,
        cached: false,
        help: "External power brake (e.g. the PSU) is asserted.",
        read: |_, g| text(active(g, throttle::HW_POWER_BRAKE_SLOWDOWN)),
    },
    Field {
        names: &["clocks_event_reasons.sw_thermal_slowdown", "clocks_throttle_reasons.sw_thermal_slowdown"],
        unit: None,
        cached: false,
        help: "Software thermal slowdown.",
        read: |_, g| text(active(g, throttle::SW_THERMAL_SLOWDOWN)),
    },
    Field {
        names: &["clocks_event_reasons.sync_boost", "clocks_throttle_reasons.sync_boost"],
        unit: None,
        cached: false,
        help: "Clocks held to match a sync-boost group.",
        read: |_, g| text(active(g, throttle::SYNC_BOOST)),
    },
    Field {
        names: &["pcie.link.gen.current", "pcie.link.gen.gpucurrent"],
        unit: None,
        cached: false,
        help: "Current PCIe link generation.",
        read: |_, g| text(g.pcie.gen),
    },
    Field {
        names: &["pcie.link.gen.max", "pcie.link.gen.gpumax"],
        unit: None,
        cached: false,
        help: "Maximum PCIe link generation of GPU and system.",
        read: |_, g| text(g.pcie.max_gen),
    },
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

/// `--query-compute-apps=FIELDS --format=csv`: one line per compute
/// process on the listed GPUs; only the header when there is none.
pub fn query_compute_apps(gpus: &[&Gpu], fields: &str, format: &str) -> Output {
    let options: Vec<&str> = format.split(',').map(str::trim).collect();
    if !options.contains(&"csv") || options.iter().any(|o| !matches!(*o, "csv" | "noheader" | "nounits")) {
        return invalid_arguments();
    }
    let (header, units) = (!options.contains(&"noheader"), !options.contains(&"nounits"));
    let names: Vec<&str> = fields.split(',').map(str::trim).collect();
    let known = ["pid", "process_name", "name", "used_memory", "used_gpu_memory", "gpu_uuid", "gpu_bus_id", "gpu_name"];
    if let Some(bad) = names.iter().find(|name| !known.contains(name)) {
        return Output::ok(format!("Field \"{bad}\" is not a valid field to query.\n\n")).with_status(EXIT_INVALID_ARGUMENT);
    }
    let mut out = String::new();
    if header {
        let titles: Vec<String> = names
            .iter()
            .map(|name| match *name {
                "used_memory" | "used_gpu_memory" if units => "used_gpu_memory [MiB]".to_string(),
                "used_memory" | "used_gpu_memory" => "used_gpu_memory".to_string(),
                "name" => "process_name".to_string(),
                other => other.to_string(),
            })
            .collect();
        out += &format!("{}\n", titles.join(", "));
    }
    for gpu in gpus {
        for process in &gpu.processes {
            let cells: Vec<String> = names
                .iter()
                .map(|name| match *name {
                    "pid" => process.pid.to_string(),
                    "process_name" | "name" => process.name.clone(),
                    "gpu_uuid" => gpu.uuid.clone(),
                    "gpu_bus_id" => gpu.bus_id.clone(),
                    "gpu_name" => gpu.name.clone(),
                    _ if units => format!("{} MiB", process.used_mib),
                    _ => process.used_mib.to_string(),
                })
                .collect();
            out += &format!("{}\n", cells.join(", "));
        }
    }
    Output::ok(out)
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
            None => return Output::ok(format!("Field \"{name}\" is not a valid field to query.\n\n")).with_status(EXIT_INVALID_ARGUMENT),
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
