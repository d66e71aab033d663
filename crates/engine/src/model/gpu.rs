//! A GPU as the driver sees it: identity, live readings, health, links.

/// NVML clock-event (throttle) reason bits, as `clocks_event_reasons.active` prints them.
pub mod throttle {
    pub const GPU_IDLE: u64 = 0x1;
    pub const APPLICATIONS_CLOCKS_SETTING: u64 = 0x2;
    pub const SW_POWER_CAP: u64 = 0x4;
    pub const HW_SLOWDOWN: u64 = 0x8;
    pub const SYNC_BOOST: u64 = 0x10;
    pub const SW_THERMAL_SLOWDOWN: u64 = 0x20;
    pub const HW_THERMAL_SLOWDOWN: u64 = 0x40;
    pub const HW_POWER_BRAKE_SLOWDOWN: u64 = 0x80;
    pub const DISPLAY_CLOCK_SETTING: u64 = 0x100;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeMode {
    Default,
    ExclusiveProcess,
    Prohibited,
}

impl ComputeMode {
    pub fn label(self) -> &'static str {
        match self {
            ComputeMode::Default => "Default",
            ComputeMode::ExclusiveProcess => "E. Process",
            ComputeMode::Prohibited => "Prohibited",
        }
    }
}

/// Whether the driver can talk to the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuHealth {
    Healthy,
    /// The driver has the device but cannot read it (GSP timeout, Xid 119/120,
    /// some Xid 62): nvidia-smi prints `ERR!` cells.
    Unresponsive,
    /// Gone from the bus (Xid 79): missing from nvidia-smi, still in lspci.
    FallenOffBus,
}

/// A PCIe link: what the device can do and what it trained to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcieLink {
    pub max_gen: u8,
    pub max_width: u8,
    pub gen: u8,
    pub width: u8,
}

impl PcieLink {
    pub fn full(generation: u8, width: u8) -> PcieLink {
        PcieLink { max_gen: generation, max_width: width, gen: generation, width }
    }

    pub fn is_degraded(&self) -> bool {
        self.gen < self.max_gen || self.width < self.max_width
    }

    /// Transfer rate per lane in GT/s, as lspci prints it.
    pub fn gts(generation: u8) -> &'static str {
        match generation {
            1 => "2.5",
            2 => "5",
            3 => "8",
            4 => "16",
            5 => "32",
            _ => "64",
        }
    }

    /// Usable bandwidth in Mb/s after line encoding, computed as the kernel
    /// does for its "available PCIe bandwidth" message: whole Mb/s per lane.
    pub fn bandwidth_mbps(generation: u8, width: u8) -> u64 {
        let per_lane: u64 = match generation {
            1 => 2_500 * 8 / 10,
            2 => 5_000 * 8 / 10,
            3 => 8_000 * 128 / 130,
            4 => 16_000 * 128 / 130,
            5 => 32_000 * 128 / 130,
            _ => 64_000 * 242 / 256,
        };
        per_lane * u64::from(width)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NvLink {
    /// Per-link bandwidth in GB/s, as `nvidia-smi nvlink -s` prints it.
    pub gbytes_per_sec: f64,
    pub active: bool,
    pub replay_errors: u64,
    pub recovery_errors: u64,
    pub crc_errors: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EccCounters {
    pub volatile_corrected: u64,
    pub volatile_uncorrected: u64,
    pub aggregate_corrected: u64,
    pub aggregate_uncorrected: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowRemap {
    pub correctable: u32,
    pub uncorrectable: u32,
    /// A remap is waiting for a GPU reset to take effect.
    pub pending: bool,
    pub failure: bool,
    /// Banks with full remap capacity left (`Max` in the histogram).
    pub banks_max: u32,
    pub banks_high: u32,
}

/// The NVLink fabric state as `nvidia-smi -q` reports it under `Fabric`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FabricState {
    Completed,
    InProgress,
    NotSupported,
}

#[derive(Clone, Debug)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    /// PCI domain:bus:device.function, e.g. `00000000:04:00.0`.
    pub bus_id: String,
    /// PCI device id, e.g. 0x2330 for H100 SXM5.
    pub device_id: u16,
    pub uuid: String,
    pub serial: String,
    pub vbios: String,
    pub memory_total_mib: u64,
    pub memory_used_mib: u64,
    /// The enforced power limit (`nvidia-smi -pl` changes it).
    pub power_limit_w: u32,
    /// The board's default, which is also its maximum.
    pub default_power_limit_w: u32,
    pub power_draw_w: u32,
    pub temperature_c: u32,
    pub memory_temperature_c: u32,
    /// Performance state: 0 for P0.
    pub pstate: u8,
    pub utilization_pct: u32,
    pub memory_utilization_pct: u32,
    /// Fan speed in percent; `None` for passively cooled (SXM) parts.
    pub fan_pct: Option<u32>,
    pub sm_clock_mhz: u32,
    pub mem_clock_mhz: u32,
    pub max_sm_clock_mhz: u32,
    pub max_mem_clock_mhz: u32,
    /// Active clock-event reasons, a [`throttle`] bitmask.
    pub throttle_reasons: u64,
    pub persistence_mode: bool,
    pub display_active: bool,
    pub ecc: EccCounters,
    pub row_remap: RowRemap,
    pub mig_enabled: bool,
    pub compute_mode: ComputeMode,
    pub health: GpuHealth,
    pub pcie: PcieLink,
    pub nvlinks: Vec<NvLink>,
    pub fabric: FabricState,
    /// The NUMA node (CPU socket) the GPU hangs off.
    pub numa_node: u32,
    /// The PCIe switch the GPU sits behind; its rail's HCA shares it.
    pub pcie_switch: u32,
    /// Xids seen since boot, in order.
    pub xids: Vec<u32>,
    /// Something happened that only a GPU reset clears.
    pub needs_reset: bool,
    /// The compute processes holding the GPU (a workload's ranks).
    pub processes: Vec<GpuProcess>,
}

/// A process with a CUDA context on a GPU, as nvidia-smi lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuProcess {
    pub pid: u32,
    pub name: String,
    pub used_mib: u64,
}

/// What a busy GPU of this board would draw uncapped, as a share of its
/// default limit: a training step runs near, not at, the limit.
const BUSY_SHARE_OF_LIMIT: f64 = 0.92;

impl Gpu {
    /// The lowest limit `nvidia-smi -pl` accepts: 200 W on 700 W boards, 100 W
    /// on smaller ones (the captures' `Min Power Limit`).
    pub fn min_power_limit_w(&self) -> u32 {
        if self.default_power_limit_w >= 700 {
            200
        } else {
            100
        }
    }

    /// The share of its top clock a busy GPU keeps under its power limit:
    /// 1 at the default; below what a step draws, the clock falls with the
    /// square root of the power left (voltage falls with the clock).
    pub fn power_capped_clock_share(&self) -> f64 {
        let busy = f64::from(self.default_power_limit_w) * BUSY_SHARE_OF_LIMIT;
        (f64::from(self.power_limit_w) / busy).sqrt().clamp(0.3, 1.0)
    }

    /// `00000000:04:00.0` as the kernel writes it: `0000:04:00.0`.
    pub fn kernel_bus_id(&self) -> String {
        self.bus_id.get(4..).unwrap_or(&self.bus_id).to_ascii_lowercase()
    }

    /// The `PCI:0000:04:00` form NVRM prints in Xid lines.
    pub fn nvrm_pci(&self) -> String {
        let id = self.kernel_bus_id();
        format!("PCI:{}", id.rsplit_once('.').map_or(id.as_str(), |(head, _)| head))
    }

    pub fn active_nvlinks(&self) -> usize {
        self.nvlinks.iter().filter(|link| link.active).count()
    }

    /// Whether nvidia-smi can read this GPU at all.
    /// Whether it can take work: on the bus, answering, nothing awaiting a reset.
    pub fn works(&self) -> bool {
        self.health == GpuHealth::Healthy && !self.needs_reset
    }

    pub fn is_visible(&self) -> bool {
        self.health != GpuHealth::FallenOffBus
    }

    /// Whether the driver's probe at this boot failed for it: it was off
    /// the bus when the node booted (its Xid 79 is an earlier boot's), so
    /// the driver never numbered it.
    pub fn failed_probe(&self) -> bool {
        self.health == GpuHealth::FallenOffBus && !self.xids.contains(&79)
    }
}
