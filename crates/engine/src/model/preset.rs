//! Hardware presets: the defaults a lab's `[cluster] preset = "..."` selects.
//!
//! Values come from real machines (../shared/reference/gpu/FACTS.md §9 and
//! ../shared/reference/fabric/FACTS.md §4): product names, memory in MiB,
//! power limits, clocks, the PCIe buses an HGX baseboard enumerates its GPUs
//! and HCAs at, HCA part numbers and firmware. The board facts only
//! `nvidia-smi -q` shows (part numbers, InfoROM, BAR1, reserved memory, video
//! clocks, voltage, thermal thresholds, module ids) come from the real `-q`
//! outputs listed in commands/gpu/nvidia_smi/report.rs.

use super::fabric::LaneSpeed;

/// One GPU model as nvidia-smi reports it.
#[derive(Debug)]
pub struct GpuSpec {
    pub name: &'static str,
    pub device_id: u16,
    pub vbios: &'static str,
    pub memory_total_mib: u64,
    /// Memory an idle GPU with persistence on reports as used.
    pub idle_memory_used_mib: u64,
    pub power_limit_w: u32,
    /// Idle board power, inclusive range in watts.
    pub idle_power_w: (u32, u32),
    /// Idle temperature, inclusive range in degrees Celsius.
    pub idle_temp_c: (u32, u32),
    pub idle_sm_clock_mhz: u32,
    pub max_sm_clock_mhz: u32,
    pub max_mem_clock_mhz: u32,
    /// SXM parts are passively cooled: nvidia-smi shows the fan as N/A.
    pub has_fan: bool,
    pub pcie_gen: u8,
    pub nvlinks: usize,
    /// Per-link NVLink bandwidth as `nvidia-smi nvlink -s` prints it (GB/s).
    pub nvlink_gbytes_per_sec: f64,
    /// Remap banks per GPU (`Bank Remap Availability Histogram` Max).
    pub remap_banks: u32,
    /// Dense BF16 tensor-core peak (TFLOP/s), NVIDIA's datasheet figure
    /// without sparsity: what a training job's MFU is measured against.
    pub bf16_dense_tflops: f64,
    /// HBM bandwidth (GB/s), NVIDIA's datasheet figure: what a decode step,
    /// which reads every weight once, is bound by.
    pub hbm_gbytes_per_sec: f64,
    /// What `nvidia-smi -q` reports of the board and its InfoROM:
    /// `Board Part Number`, `GPU Part Number`, `Inforom Version` (image, OEM
    /// and ECC objects).
    pub board_part_number: &'static str,
    pub gpu_part_number: &'static str,
    pub inforom_image: &'static str,
    pub inforom_oem: &'static str,
    pub inforom_ecc: &'static str,
    /// The BAR1 aperture, MiB (`BAR1 Memory Usage` / `Total`).
    pub bar1_mib: u64,
    /// Framebuffer the driver keeps for itself (`FB Memory Usage` / `Reserved`).
    pub fb_reserved_mib: u64,
    /// The default applications graphics clock (below the maximum on A100).
    pub applications_clock_mhz: u32,
    pub idle_video_clock_mhz: u32,
    pub max_video_clock_mhz: u32,
    /// Graphics voltage at idle in microvolts, one value per GPU drawn from
    /// these (`Voltage` / `Graphics : 685.000 mV`).
    pub idle_voltage_uv: &'static [u32],
    /// Thermal thresholds, degrees C: shutdown, slowdown, max operating (GPU),
    /// max operating (memory). Hopper reports them as offsets from its
    /// T.Limit (max operating) instead.
    pub shutdown_temp_c: u32,
    pub slowdown_temp_c: u32,
    pub max_operating_temp_c: u32,
    pub memory_max_operating_temp_c: u32,
}

/// One InfiniBand HCA model.
#[derive(Debug)]
pub struct HcaSpec {
    pub part_id: u32,
    pub board_id: &'static str,
    pub firmware: &'static str,
    pub lane_speed: LaneSpeed,
    pub pcie_gen: u8,
    /// The first three bytes of the GUIDs (the vendor's OUI).
    pub guid_oui: u64,
}

/// The host around the GPUs: CPUs and memory, as lscpu, free and Slurm see them.
#[derive(Debug)]
pub struct HostSpec {
    pub cpu_model: &'static str,
    /// What the CPU says of itself beyond its name (`/proc/cpuinfo`).
    pub cpu_id: &'static CpuId,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub threads_per_core: u32,
    /// Memory the OS reports, in MiB (Slurm's RealMemory).
    pub memory_mib: u64,
}

/// A CPU model's identity and features as Linux 5.15 reports them.
#[derive(Debug)]
pub struct CpuId {
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub microcode: &'static str,
    /// The nominal clock (acpi-cpufreq reports it for every CPU at rest).
    pub mhz: u32,
    /// The cache size the kernel reports: the L3 on Intel, each core's L2 on AMD.
    pub cache_kib: u32,
    pub cpuid_level: u32,
    pub address_sizes: (u32, u32),
    pub bogomips: &'static str,
    pub flags: &'static str,
    pub vmx_flags: Option<&'static str>,
    pub bugs: &'static str,
    /// AMD's TLB size line, in 4K pages.
    pub tlb_pages: Option<u32>,
    pub power_management: &'static str,
    /// APIC ids per socket (a socket's first id is socket x this).
    pub apic_ids_per_socket: u32,
}

/// Sapphire Rapids (DGX H100 and H200): family 6 model 143 stepping 8, a
/// 105 MB L3, 57-bit virtual addresses (5-level paging), AMX.
pub static XEON_8480C: CpuId = CpuId {
    family: 6,
    model: 143,
    stepping: 8,
    microcode: "0x2b000571",
    mhz: 2000,
    cache_kib: 107_520,
    cpuid_level: 32,
    address_sizes: (46, 57),
    bogomips: "4000.00",
    flags: "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 cat_l2 cdp_l3 invpcid_single intel_ppin cdp_l2 ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local split_lock_detect avx_vnni avx512_bf16 wbnoinvd dtherm ida arat pln pts hwp hwp_act_window hwp_epp hwp_pkg_req avx512vbmi umip pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk pconfig arch_lbr amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities",
    vmx_flags: Some("vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad ept_1gb ept_5level flexpriority apicv tsc_offset vtpr mtf vapic ept vpid unrestricted_guest vapic_reg vid ple shadow_vmcs pml ept_mode_based_exec tsc_scaling usr_wait_pause notify_vm_exiting"),
    bugs: "spectre_v1 spectre_v2 spec_store_bypass swapgs eibrs_pbrsb",
    tlb_pages: None,
    power_management: "",
    apic_ids_per_socket: 128,
};

/// Rome (DGX A100): family 23 (Zen 2) model 49, 512 KB of L2 per core.
pub static EPYC_7742: CpuId = CpuId {
    family: 23,
    model: 49,
    stepping: 0,
    microcode: "0x830107a",
    mhz: 2250,
    cache_kib: 512,
    cpuid_level: 16,
    address_sizes: (43, 48),
    bogomips: "4491.55",
    flags: "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 hw_pstate ssbd mba ibrs ibpb stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 cqm rdt_a rdseed adx smap clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local clzero irperf xsaveerptr rdpru wbnoinvd amd_ppin arat npt lbrv svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic v_vmsave_vmload vgif v_spec_ctrl umip rdpid overflow_recov succor smca sme sev sev_es",
    vmx_flags: None,
    bugs: "sysret_ss_attrs spectre_v1 spectre_v2 spec_store_bypass retbleed smt_rsb",
    tlb_pages: Some(3072),
    power_management: "ts ttp tm hwpstate cpb eff_freq_ro [13] [14]",
    apic_ids_per_socket: 128,
};

impl HostSpec {
    pub fn cpus(&self) -> u32 {
        self.sockets * self.cores_per_socket * self.threads_per_core
    }

    /// The CPUs of one socket (its NUMA node) as Linux numbers them: the
    /// socket's cores, then their hyperthread siblings, e.g. `0-55,112-167`.
    pub fn socket_cpus(&self, socket: u32) -> String {
        let cores = self.sockets * self.cores_per_socket;
        let first = socket * self.cores_per_socket;
        let last = first + self.cores_per_socket - 1;
        (0..self.threads_per_core).map(|thread| format!("{}-{}", first + thread * cores, last + thread * cores)).collect::<Vec<_>>().join(",")
    }
}

#[derive(Debug)]
pub struct Preset {
    pub id: &'static str,
    pub description: &'static str,
    pub host: HostSpec,
    pub gpu: GpuSpec,
    /// PCI bus of each GPU, in nvidia-smi index order. GPU i shares a PCIe
    /// switch with HCA i (its rail); the first half of each list hangs off
    /// socket 0, the second half off socket 1.
    pub gpu_buses: &'static [u8],
    pub hca: HcaSpec,
    /// PCI bus of each compute HCA, in mlx5 index order.
    pub hca_buses: &'static [u8],
    /// The GPU each HCA shares a PCIe switch with (its rail), in mlx5
    /// order. Not the identity: the baseboard's NIC cages are cabled to the
    /// switches out of step with how the kernel numbers the NICs, so an
    /// operator reads the pairing off `nvidia-smi topo -m`, never assumes
    /// GPU n is on mlx5_n. Pairs stay within a socket.
    pub hca_rails: &'static [u32],
    /// The baseboard module (SXM slot) of each GPU, in nvidia-smi index order
    /// (`Module ID` in `nvidia-smi -q`).
    pub gpu_module_ids: &'static [u8],
    pub driver: &'static str,
    pub cuda: &'static str,
    pub nccl: &'static str,
    pub dcgm: &'static str,
    pub perftest: &'static str,
}

impl Preset {
    pub fn hca_count(&self) -> usize {
        self.hca_buses.len()
    }
}

const DGX_H_HOST: HostSpec = HostSpec {
    cpu_model: "Intel(R) Xeon(R) Platinum 8480C",
    cpu_id: &XEON_8480C,
    sockets: 2,
    cores_per_socket: 56,
    threads_per_core: 2,
    memory_mib: 2_063_937,
};

const CONNECTX7_NDR: HcaSpec =
    HcaSpec { part_id: 4129, board_id: "MT_0000000838", firmware: "28.39.1002", lane_speed: LaneSpeed::Ndr, pcie_gen: 5, guid_oui: 0xa0_88_c2 };

/// The module ids of an 8 x H100 SXM HGX node in index order, as its
/// `nvidia-smi -q` (565.57.01, thamada/nvidia-smi gls/H100SXMx8_smi.py)
/// reports them; another HGX H100 (Princeton della, 560.35.03) agrees for GPU 0.
const HGX_H_MODULE_IDS: &[u8] = &[2, 4, 1, 3, 6, 8, 5, 7];

/// DGX H100/H200 compute NICs: ibp24s0, ibp64s0, ... ibp220s0.
const HGX_H_HCA_BUSES: &[u8] = &[0x18, 0x40, 0x4f, 0x5e, 0x9a, 0xc0, 0xce, 0xdc];

pub const PRESETS: &[Preset] = &[
    Preset {
        id: "hgx-h100",
        description: "HGX H100 8-GPU: 8 x H100 80GB HBM3 SXM5, NVSwitch, 8 x ConnectX-7 NDR 400 Gb/s",
        host: DGX_H_HOST,
        gpu: GpuSpec {
            name: "NVIDIA H100 80GB HBM3",
            device_id: 0x2330,
            vbios: "96.00.99.00.01",
            memory_total_mib: 81559,
            idle_memory_used_mib: 4,
            power_limit_w: 700,
            idle_power_w: (66, 76),
            idle_temp_c: (26, 34),
            idle_sm_clock_mhz: 345,
            max_sm_clock_mhz: 1980,
            max_mem_clock_mhz: 2619,
            has_fan: false,
            pcie_gen: 5,
            nvlinks: 18,
            nvlink_gbytes_per_sec: 26.562,
            remap_banks: 2560,
            bf16_dense_tflops: 989.4,
            hbm_gbytes_per_sec: 3350.0,
            board_part_number: "692-2G520-0200-000",
            gpu_part_number: "2330-885-A1",
            inforom_image: "G520.0200.00.05",
            inforom_oem: "2.1",
            inforom_ecc: "7.16",
            bar1_mib: 131_072,
            fb_reserved_mib: 450,
            applications_clock_mhz: 1980,
            idle_video_clock_mhz: 765,
            max_video_clock_mhz: 1545,
            idle_voltage_uv: &[670_000, 685_000],
            shutdown_temp_c: 92,
            slowdown_temp_c: 89,
            max_operating_temp_c: 87,
            memory_max_operating_temp_c: 95,
        },
        gpu_buses: &[0x04, 0x23, 0x43, 0x64, 0x84, 0xa3, 0xc3, 0xe4],
        hca: CONNECTX7_NDR,
        hca_buses: HGX_H_HCA_BUSES,
        hca_rails: &[1, 0, 3, 2, 5, 4, 7, 6],
        gpu_module_ids: HGX_H_MODULE_IDS,
        driver: "570.158.01",
        cuda: "12.8",
        nccl: "2.26.2",
        dcgm: "3.3.9",
        perftest: "25.01.0",
    },
    Preset {
        id: "hgx-h200",
        description: "HGX H200 8-GPU: 8 x H200 141GB HBM3e SXM5, NVSwitch, 8 x ConnectX-7 NDR 400 Gb/s",
        host: DGX_H_HOST,
        gpu: GpuSpec {
            name: "NVIDIA H200",
            device_id: 0x2335,
            vbios: "96.00.AF.00.01",
            memory_total_mib: 143771,
            idle_memory_used_mib: 1,
            power_limit_w: 700,
            idle_power_w: (72, 78),
            idle_temp_c: (21, 27),
            idle_sm_clock_mhz: 345,
            max_sm_clock_mhz: 1980,
            max_mem_clock_mhz: 3201,
            has_fan: false,
            pcie_gen: 5,
            nvlinks: 18,
            nvlink_gbytes_per_sec: 26.562,
            remap_banks: 3072,
            bf16_dense_tflops: 989.4,
            hbm_gbytes_per_sec: 4800.0,
            board_part_number: "695-2G520-0280-000",
            gpu_part_number: "2335-895-A1",
            inforom_image: "G520.0280.02.02",
            inforom_oem: "2.1",
            inforom_ecc: "7.16",
            bar1_mib: 262_144,
            fb_reserved_mib: 700,
            applications_clock_mhz: 1980,
            idle_video_clock_mhz: 765,
            max_video_clock_mhz: 1545,
            idle_voltage_uv: &[685_000],
            shutdown_temp_c: 92,
            slowdown_temp_c: 89,
            max_operating_temp_c: 87,
            memory_max_operating_temp_c: 95,
        },
        gpu_buses: &[0x19, 0x3b, 0x4c, 0x5d, 0x9b, 0xbb, 0xcb, 0xdb],
        hca: CONNECTX7_NDR,
        hca_buses: HGX_H_HCA_BUSES,
        hca_rails: &[2, 3, 0, 1, 6, 7, 4, 5],
        gpu_module_ids: HGX_H_MODULE_IDS,
        driver: "570.124.06",
        cuda: "12.8",
        nccl: "2.26.2",
        dcgm: "3.3.9",
        perftest: "25.01.0",
    },
    Preset {
        id: "hgx-a100",
        description: "HGX A100 8-GPU: 8 x A100-SXM4-80GB, NVSwitch, 8 x ConnectX-6 HDR 200 Gb/s",
        host: HostSpec {
            cpu_model: "AMD EPYC 7742 64-Core Processor",
            cpu_id: &EPYC_7742,
            sockets: 2,
            cores_per_socket: 64,
            threads_per_core: 2,
            memory_mib: 1_031_891,
        },
        gpu: GpuSpec {
            name: "NVIDIA A100-SXM4-80GB",
            device_id: 0x20b2,
            vbios: "92.00.45.00.06",
            memory_total_mib: 81920,
            idle_memory_used_mib: 4,
            power_limit_w: 400,
            idle_power_w: (52, 64),
            idle_temp_c: (27, 35),
            idle_sm_clock_mhz: 210,
            max_sm_clock_mhz: 1410,
            max_mem_clock_mhz: 1593,
            has_fan: false,
            pcie_gen: 4,
            nvlinks: 12,
            nvlink_gbytes_per_sec: 25.0,
            remap_banks: 640,
            bf16_dense_tflops: 312.0,
            hbm_gbytes_per_sec: 2039.0,
            board_part_number: "692-2G506-0212-005",
            gpu_part_number: "20B2-896-A1",
            inforom_image: "G506.0212.00.01",
            inforom_oem: "2.0",
            inforom_ecc: "6.16",
            bar1_mib: 131_072,
            fb_reserved_mib: 763,
            applications_clock_mhz: 1140,
            idle_video_clock_mhz: 585,
            max_video_clock_mhz: 1290,
            idle_voltage_uv: &[700_000, 706_250],
            shutdown_temp_c: 92,
            slowdown_temp_c: 89,
            max_operating_temp_c: 85,
            memory_max_operating_temp_c: 95,
        },
        gpu_buses: &[0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd],
        hca: HcaSpec { part_id: 4123, board_id: "MT_0000000223", firmware: "20.31.1014", lane_speed: LaneSpeed::Hdr, pcie_gen: 4, guid_oui: 0x0c_42_a1 },
        hca_buses: &[0x0c, 0x12, 0x4b, 0x54, 0x8d, 0x94, 0xba, 0xcc],
        hca_rails: &[1, 0, 3, 2, 5, 4, 7, 6],
        // GPUs 0, 1, 3 and 4 as an 8 x A100-SXM4-40GB node (535.129.03)
        // reports them; the other four are the remaining slots in order [K].
        gpu_module_ids: &[4, 2, 1, 6, 7, 3, 5, 8],
        driver: "535.183.01",
        cuda: "12.2",
        nccl: "2.18.5",
        dcgm: "3.3.3",
        perftest: "4.5-0.20",
    },
];

/// Serde for a preset reference: its id, looked up again on the way in.
pub mod by_id {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    use super::Preset;

    pub fn serialize<S: Serializer>(preset: &&'static Preset, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(preset.id)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<&'static Preset, D::Error> {
        let id = String::deserialize(deserializer)?;
        super::find(&id).ok_or_else(|| D::Error::custom(format!("unknown preset `{id}`")))
    }
}

pub fn find(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|preset| preset.id == id)
}

pub fn ids() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|preset| preset.id)
}
