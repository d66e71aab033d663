//! Hardware presets: the defaults a lab's `[cluster] preset = "..."` selects.
//!
//! Values come from real machines (see ../shared/reference/gpu/FACTS.md §9):
//! product names, memory in MiB, power limits and the PCIe bus ids an HGX
//! baseboard enumerates its GPUs at.

/// One GPU model as nvidia-smi reports it.
#[derive(Debug)]
pub struct GpuSpec {
    pub name: &'static str,
    pub memory_total_mib: u64,
    /// Memory an idle GPU with persistence on reports as used.
    pub idle_memory_used_mib: u64,
    pub power_limit_w: u32,
    /// Idle board power, inclusive range in watts.
    pub idle_power_w: (u32, u32),
    /// Idle temperature, inclusive range in degrees Celsius.
    pub idle_temp_c: (u32, u32),
    /// SXM parts are passively cooled: nvidia-smi shows the fan as N/A.
    pub has_fan: bool,
}

/// One InfiniBand HCA model as ibstat reports it.
#[derive(Debug)]
pub struct HcaSpec {
    pub ca_type: &'static str,
    pub firmware: &'static str,
    pub rate_gbps: u32,
}

#[derive(Debug)]
pub struct Preset {
    pub id: &'static str,
    pub description: &'static str,
    pub gpu: GpuSpec,
    /// PCI bus of each GPU, in nvidia-smi index order.
    pub gpu_buses: &'static [u8],
    pub hca: HcaSpec,
    pub hca_count: usize,
    pub driver: &'static str,
    pub cuda: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        id: "hgx-h100",
        description: "HGX H100 8-GPU: 8 x H100 80GB HBM3 SXM5, NVSwitch, 8 x ConnectX-7 NDR 400 Gb/s",
        gpu: GpuSpec {
            name: "NVIDIA H100 80GB HBM3",
            memory_total_mib: 81559,
            idle_memory_used_mib: 4,
            power_limit_w: 700,
            idle_power_w: (66, 76),
            idle_temp_c: (26, 34),
            has_fan: false,
        },
        gpu_buses: &[0x04, 0x23, 0x43, 0x64, 0x84, 0xa3, 0xc3, 0xe4],
        hca: HcaSpec { ca_type: "MT4129", firmware: "28.39.1002", rate_gbps: 400 },
        hca_count: 8,
        driver: "570.158.01",
        cuda: "12.8",
    },
    Preset {
        id: "hgx-h200",
        description: "HGX H200 8-GPU: 8 x H200 141GB HBM3e SXM5, NVSwitch, 8 x ConnectX-7 NDR 400 Gb/s",
        gpu: GpuSpec {
            name: "NVIDIA H200",
            memory_total_mib: 143771,
            idle_memory_used_mib: 1,
            power_limit_w: 700,
            idle_power_w: (72, 78),
            idle_temp_c: (21, 27),
            has_fan: false,
        },
        gpu_buses: &[0x19, 0x3b, 0x4c, 0x5d, 0x9b, 0xbb, 0xcb, 0xdb],
        hca: HcaSpec { ca_type: "MT4129", firmware: "28.39.1002", rate_gbps: 400 },
        hca_count: 8,
        driver: "570.124.06",
        cuda: "12.8",
    },
    Preset {
        id: "hgx-a100",
        description: "HGX A100 8-GPU: 8 x A100-SXM4-80GB, NVSwitch, 8 x ConnectX-6 HDR 200 Gb/s",
        gpu: GpuSpec {
            name: "NVIDIA A100-SXM4-80GB",
            memory_total_mib: 81920,
            idle_memory_used_mib: 4,
            power_limit_w: 400,
            idle_power_w: (52, 64),
            idle_temp_c: (27, 35),
            has_fan: false,
        },
        gpu_buses: &[0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd],
        hca: HcaSpec { ca_type: "MT4123", firmware: "20.31.1014", rate_gbps: 200 },
        hca_count: 8,
        driver: "535.183.01",
        cuda: "12.2",
    },
];

pub fn find(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|preset| preset.id == id)
}

pub fn ids() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|preset| preset.id)
}
