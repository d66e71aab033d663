//! Faults: data applied to the model. Each kind changes the devices the way
//! the real failure does, and leaves the kernel lines it leaves; tools only
//! read the result. docs/authoring.md lists what reveals each kind.

use super::fabric::{roce_netdev_mtu_for, LaneSpeed, LinkLayer, PhysState, PortState, ROCE_PRIORITY};
use super::gpu::{throttle, FabricState, GpuHealth, PcieLink};
use super::node::{SchedulerState, ServiceState};
use super::Cluster;
use crate::rng::Rng;

/// How a downed HCA port looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortDown {
    /// Logical Down, physical Polling: no link partner (cable pulled, far end down).
    Down,
    /// The same as ibstat shows it: Down / Polling.
    Polling,
    /// Administratively disabled: Down / Disabled.
    Disabled,
}

/// A fault as a lab states it. Two need a word: a lost GPU that is `dead`
/// stays off the bus through reboots (only hands-on work brings it back);
/// a link flap drops a port for seconds (a loose cable or a failing
/// transceiver), so the port reads Active while its counters and the
/// kernel log remember, and the jobs across it lost their peers. A driver
/// mismatch is a package update that installed a newer driver of the same
/// branch (`installed`) while the old module stays loaded until a reboot.
/// PFC off (RoCE) is a QoS setup that did not run at boot: the port
/// neither pauses its switch when its buffer fills nor is lossless. A node
/// cordon is someone's `kubectl cordon` before the lab.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    GpuXid { node: String, gpu: u32, xid: u32 },
    GpuFallenOffBus { node: String, gpu: u32, dead: bool },
    GpuEccUncorrectable { node: String, gpu: u32, count: u64 },
    GpuRowRemapPending { node: String, gpu: u32 },
    GpuThermalSlowdown { node: String, gpu: u32 },
    GpuPowerBrake { node: String, gpu: u32 },
    GpuPowerCap { node: String, gpu: u32, watts: u32 },
    GpuPcieDegraded { node: String, gpu: u32, gen: Option<u8>, width: Option<u8> },
    NvlinkDown { node: String, gpu: u32, links: Vec<u32> },
    FabricManagerDown { node: String },
    ServiceStopped { node: String, unit: String },
    DriverMismatch { node: String, installed: String },
    HcaPortDown { node: String, hca: String, state: PortDown },
    HcaLinkDegraded { node: String, hca: String, rate: Option<u32>, width: Option<u8> },
    HcaSymbolErrors { node: String, hca: String, count: u64 },
    HcaLinkFlap { node: String, hca: String },
    HcaMtu { node: String, hca: String, mtu: u32 },
    HcaPfcOff { node: String, hca: String },
    HcaEcnOff { node: String, hca: String },
    HcaPcieDegraded { node: String, hca: String, gen: Option<u8>, width: Option<u8> },
    NodeDown { node: String, reason: String },
    NodeDrain { node: String, reason: String },
    NodeCordon { node: String },
}

/// Why a fault cannot apply to a cluster, and which of its fields is at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultError {
    pub field: &'static str,
    pub message: String,
}

impl FaultError {
    fn new(field: &'static str, message: impl Into<String>) -> FaultError {
        FaultError { field, message: message.into() }
    }
}

impl std::fmt::Display for FaultError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Xids whose consequences the model knows (others only leave their line).
pub const KNOWN_XIDS: &[u32] = &[13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120];

/// The valid IB MTUs.
pub const MTUS: &[u32] = &[256, 512, 1024, 2048, 4096];

/// The text after `NVRM: Xid (PCI:...): N, ` for each Xid.
fn xid_text(xid: u32, gpu_index: u32, process: Option<u32>) -> String {
    let app = format!("pid={}, name=python3", process.unwrap_or(2_291_417));
    let kernel = "pid='<unknown>', name=<unknown>";
    match xid {
        13 => format!("{app}, Graphics SM Warp Exception on (GPC 4, TPC 2, SM 1): Out Of Range Address"),
        31 => format!("{app}, Ch 00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x7f2a_3c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"),
        43 => format!("{app}, Ch 00000008"),
        45 => format!("{app}, Ch 00000010"),
        48 => format!(
            "{}, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
            if process.is_some() { app.as_str() } else { kernel }
        ),
        61 => format!("{kernel}, Internal micro-controller breakpoint/warning (0cec(2d54): 0000f6a0 00000000)"),
        62 => format!("{kernel}, Internal micro-controller halt (0cec(2d54): 0000f6a0 00000000)"),
        63 => format!("{kernel}, Row Remapper: New row (0x00000000000012a4) was marked for remapping, reset gpu to activate."),
        64 => format!("{kernel}, Row Remapper: Failed to mark a row for remapping (0x0000000000001a2b)."),
        74 => format!("{kernel}, NVLink: fatal error detected on link 5(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)"),
        79 => format!("{kernel}, GPU has fallen off the bus."),
        92 => format!("{kernel}, High single-bit ECC error rate"),
        94 => format!("{app}, Contained: SM (0x1). RST: No, D-RST: No"),
        95 => format!("{kernel}, Uncontained: FBHUB. RST: Yes, D-RST: No"),
        119 => format!("{kernel}, Timeout after 6s of waiting for RPC response from GPU{gpu_index} GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4)."),
        120 => format!("{kernel}, GSP task exception: ERROR 0x0 in task 4"),
        other => format!("{kernel}, Xid {other} reported"),
    }
}

impl Fault {
    /// The lab-file name of this fault's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::GpuXid { .. } => "gpu-xid",
            Fault::GpuFallenOffBus { .. } => "gpu-fallen-off-bus",
            Fault::GpuEccUncorrectable { .. } => "gpu-ecc-uncorrectable",
            Fault::GpuRowRemapPending { .. } => "gpu-row-remap-pending",
            Fault::GpuThermalSlowdown { .. } => "gpu-thermal-slowdown",
            Fault::GpuPowerBrake { .. } => "gpu-power-brake",
            Fault::GpuPowerCap { .. } => "gpu-power-cap",
            Fault::GpuPcieDegraded { .. } => "gpu-pcie-degraded",
            Fault::NvlinkDown { .. } => "nvlink-down",
            Fault::FabricManagerDown { .. } => "fabric-manager-down",
            Fault::ServiceStopped { .. } => "service-stopped",
            Fault::DriverMismatch { .. } => "driver-mismatch",
            Fault::HcaPortDown { .. } => "hca-port-down",
            Fault::HcaLinkDegraded { .. } => "hca-link-degraded",
            Fault::HcaSymbolErrors { .. } => "hca-symbol-errors",
            Fault::HcaLinkFlap { .. } => "hca-link-flap",
            Fault::HcaMtu { .. } => "hca-mtu",
            Fault::HcaPfcOff { .. } => "hca-pfc-off",
            Fault::HcaEcnOff { .. } => "hca-ecn-off",
            Fault::HcaPcieDegraded { .. } => "hca-pcie-degraded",
            Fault::NodeDown { .. } => "node-down",
            Fault::NodeDrain { .. } => "node-drain",
            Fault::NodeCordon { .. } => "node-cordon",
        }
    }

    /// What the fault acts on besides the node (`gpu 3`, `mlx5_1`), to seed
    /// each fault's timing apart from the others on the same node.
    pub fn target(&self) -> String {
        match self {
            Fault::GpuXid { gpu, xid, .. } => format!("gpu {gpu} xid {xid}"),
            Fault::GpuFallenOffBus { gpu, .. }
            | Fault::GpuEccUncorrectable { gpu, .. }
            | Fault::GpuRowRemapPending { gpu, .. }
            | Fault::GpuThermalSlowdown { gpu, .. }
            | Fault::GpuPowerBrake { gpu, .. }
            | Fault::GpuPowerCap { gpu, .. }
            | Fault::GpuPcieDegraded { gpu, .. }
            | Fault::NvlinkDown { gpu, .. } => format!("gpu {gpu}"),
            Fault::HcaPortDown { hca, .. }
            | Fault::HcaLinkDegraded { hca, .. }
            | Fault::HcaSymbolErrors { hca, .. }
            | Fault::HcaLinkFlap { hca, .. }
            | Fault::HcaMtu { hca, .. }
            | Fault::HcaPfcOff { hca, .. }
            | Fault::HcaEcnOff { hca, .. }
            | Fault::HcaPcieDegraded { hca, .. } => hca.clone(),
            Fault::ServiceStopped { unit, .. } => unit.clone(),
            Fault::FabricManagerDown { .. } | Fault::DriverMismatch { .. } | Fault::NodeDown { .. } | Fault::NodeDrain { .. } | Fault::NodeCordon { .. } => {
                String::new()
            }
        }
    }

    pub fn node(&self) -> &str {
        match self {
            Fault::GpuXid { node, .. }
            | Fault::GpuFallenOffBus { node, .. }
            | Fault::GpuEccUncorrectable { node, .. }
            | Fault::GpuRowRemapPending { node, .. }
            | Fault::GpuThermalSlowdown { node, .. }
            | Fault::GpuPowerBrake { node, .. }
            | Fault::GpuPowerCap { node, .. }
            | Fault::GpuPcieDegraded { node, .. }
            | Fault::NvlinkDown { node, .. }
            | Fault::FabricManagerDown { node }
            | Fault::ServiceStopped { node, .. }
            | Fault::DriverMismatch { node, .. }
            | Fault::HcaPortDown { node, .. }
            | Fault::HcaLinkDegraded { node, .. }
            | Fault::HcaSymbolErrors { node, .. }
            | Fault::HcaLinkFlap { node, .. }
            | Fault::HcaMtu { node, .. }
            | Fault::HcaPfcOff { node, .. }
            | Fault::HcaEcnOff { node, .. }
            | Fault::HcaPcieDegraded { node, .. }
            | Fault::NodeDown { node, .. }
            | Fault::NodeDrain { node, .. }
            | Fault::NodeCordon { node } => node,
        }
    }

    /// Whether the fault leaves nothing to repair: an Xid that only logs
    /// (an application's exception, a corrected-error rate) is evidence, not
    /// damage, so a lab's `repaired` never waits on it.
    pub fn nothing_to_repair(&self) -> bool {
        matches!(self, Fault::GpuXid { xid: 13 | 31 | 43 | 45 | 61 | 92, .. })
    }

    /// Whether resetting `gpu` clears this fault (what `nvidia-smi -r` clears:
    /// a pending row remap, volatile ECC errors, the Xids a reset recovers).
    pub fn cleared_by_reset(&self, gpu: u32) -> bool {
        match self {
            Fault::GpuRowRemapPending { gpu: at, .. } | Fault::GpuEccUncorrectable { gpu: at, .. } => *at == gpu,
            Fault::GpuXid { gpu: at, xid, .. } => *at == gpu && matches!(xid, 48 | 62 | 63 | 74 | 94 | 95 | 119 | 120),
            _ => false,
        }
    }

    /// Whether rebooting the node clears this fault: what a GPU reset
    /// clears, a GPU that fell off the bus (the next boot finds it, unless
    /// it is dead), Fabric Manager (its unit starts at boot) and a driver
    /// mismatch (the boot loads the installed module). Hardware
    /// and configuration faults (links, cables, cooling, MTU) survive it;
    /// a node that is down cannot run `reboot` at all.
    pub fn cleared_by_reboot(&self) -> bool {
        match self {
            // A limit set with nvidia-smi lasts until the driver reloads.
            Fault::GpuFallenOffBus { dead, .. } => !dead,
            Fault::FabricManagerDown { .. } | Fault::DriverMismatch { .. } | Fault::GpuXid { xid: 79, .. } | Fault::GpuPowerCap { .. } => true,
            // Every unit of the image is enabled: the boot starts it.
            Fault::ServiceStopped { .. } => true,
            // mlx5 turns DCQCN on at every priority when it loads.
            Fault::HcaEcnOff { .. } => true,
            Fault::GpuRowRemapPending { gpu, .. } | Fault::GpuEccUncorrectable { gpu, .. } | Fault::GpuXid { gpu, .. } => self.cleared_by_reset(*gpu),
            _ => false,
        }
    }

    /// How long before the lab's start a fault without a time struck:
    /// seeded per fault, the draw [`Fault::apply`] makes.
    pub fn struck_before(&self, seed: u64) -> i64 {
        Rng::derive(seed, &["fault", self.kind(), self.node(), &self.target()]).range_i64(600, 4 * 3600)
    }

    /// Changes the cluster. Fails, naming the problem, when the fault names a
    /// node, GPU or HCA the cluster lacks or a value the hardware cannot take.
    pub fn apply(&self, cluster: &mut Cluster) -> Result<(), FaultError> {
        // Before the lab began: the same instant however late a repair
        // replays it.
        let lab_start = cluster.started_at();
        let striking = cluster.striking;
        let seed = cluster.seed;
        let driver_major = cluster.versions.driver_major();
        // The process a memory error names: the job's rank on the GPU when
        // it struck (the error ends it). The applications' own Xids (13, 31,
        // 43, 45) name an earlier user's process: the labs' noise.
        let process = match self {
            Fault::GpuXid { node, gpu, xid: 94 } | Fault::GpuEccUncorrectable { node, gpu, .. } => {
                let struck = cluster.strike_instant(self);
                cluster.workloads.iter().filter(|w| w.running_at(struck)).find_map(|w| {
                    let node_at = w.spec.nodes.iter().position(|n| n == node)?;
                    w.rank(node, *gpu).map(|_| w.pid(node_at, *gpu))
                })
            }
            _ => None,
        };
        let hostnames: Vec<String> = cluster.nodes.iter().map(|n| n.hostname.clone()).collect();
        let node = cluster.node_mut(self.node()).ok_or_else(|| no_such_node(self.node(), &hostnames))?;
        // Faults happened a while before the trainee logs in.
        let mut rng = Rng::derive(seed, &["fault", self.kind(), &node.hostname, &self.target()]);
        let before = rng.range_i64(600, 4 * 3600);
        let at = striking.unwrap_or(lab_start - before);
        let gpu_count = node.gpus.len();
        let hca_names: Vec<String> = node.hcas.iter().map(|h| h.name.clone()).collect();
        let gpu_at = |gpu: u32| -> Result<usize, FaultError> {
            (gpu as usize)
                .lt(&gpu_count)
                .then_some(gpu as usize)
                .ok_or_else(|| FaultError::new("gpu", format!("no GPU {gpu} on {} (GPUs 0-{})", self.node(), gpu_count.saturating_sub(1))))
        };
        let hca_at = |hca: &str| -> Result<usize, FaultError> {
            hca_names
                .iter()
                .position(|name| name == hca)
                .ok_or_else(|| FaultError::new("hca", format!("no HCA `{hca}` on {} (HCAs: {})", self.node(), hca_names.join(", "))))
        };

        match self {
            Fault::GpuXid { gpu, xid: 119, .. } => {
                let index = gpu_at(*gpu)?;
                record_gsp_timeouts(node, index, at, driver_major, &mut rng);
            }
            Fault::GpuXid { gpu, xid, .. } => {
                let index = gpu_at(*gpu)?;
                record_xid_text(node, index, *xid, at, xid_text(*xid, index as u32, process));
                // An uncorrectable error's row is marked for remapping at the next reset.
                if matches!(xid, 94 | 95) {
                    record_xid(node, index, 63, at + 1);
                }
            }
            Fault::GpuFallenOffBus { gpu, .. } => {
                // While running, a GPU that drops off the bus shows first as a
                // PCIe Surprise Down on its switch port, then as Xid 79
                // (dmesg_aer-surprise-down_xid79.txt; FACTS 7). The port is
                // the bus above the GPU's; its id [1000:c030] (a Broadcom PCIe
                // switch, as on HGX baseboards) and the 5.15 kernel's wording
                // with the port's address are not from a capture.
                let index = gpu_at(*gpu)?;
                let bus = node.gpus[index].kernel_bus_id();
                let port = match (bus.get(..4), bus.get(5..7).and_then(|b| u8::from_str_radix(b, 16).ok())) {
                    (Some(domain), Some(number)) => format!("{domain}:{:02x}:00.0", number.saturating_sub(1)),
                    _ => "0000:00:02.0".to_string(),
                };
                let mut us = (at - node.booted_at).max(0) as u64 * 1_000_000 + rng.range_u64(0, 900_000);
                let mut log = |node: &mut super::Node, gap: u64, level: u8, text: String| {
                    us += gap;
                    node.log_kernel_us(us, level, text);
                };
                log(node, 0, 3, format!("pcieport {port}: AER: Uncorrected (Fatal) error received: {port}"));
                log(node, 13, 3, format!("pcieport {port}: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)"));
                log(node, 81, 3, format!("pcieport {port}:   device [1000:c030] error status/mask=00000020/00000000"));
                log(node, 59, 3, format!("pcieport {port}:    [ 5] Surprise Down Error    (First)"));
                log(node, 50, 6, format!("pcieport {port}: broadcast error_detected message"));
                log(node, 5, 6, format!("nvidia {bus}: device has no AER-aware driver"));
                // NVRM reports the Xid once the AER handling is through.
                record_xid(node, index, 79, at + 1);
            }
            Fault::GpuEccUncorrectable { gpu, count, .. } => {
                let index = gpu_at(*gpu)?;
                if *count == 0 {
                    return Err(FaultError::new("count", "`count` must be at least 1"));
                }
                // The errors came over a few seconds, not in one instant.
                for n in 0..(*count).min(3) {
                    let when = at + n as i64 * (3 + rng.range_i64(0, 9));
                    record_xid_text(node, index, 48, when, xid_text(48, index as u32, process));
                }
                // On GPUs that remap rows (A100 and later) an uncorrectable
                // error remaps its row: pending until the next reset (Xid 63).
                if node.gpus[index].row_remap.banks_max > 0 {
                    record_xid(node, index, 63, at + 30);
                }
                let ecc = &mut node.gpus[index].ecc;
                ecc.volatile_uncorrected = *count;
                ecc.aggregate_uncorrected = ecc.aggregate_uncorrected.max(*count);
            }
            Fault::GpuRowRemapPending { gpu, .. } => {
                let index = gpu_at(*gpu)?;
                // An uncorrectable error is what made the remap.
                record_xid(node, index, 48, at);
                record_xid(node, index, 63, at + 1);
            }
            Fault::GpuThermalSlowdown { gpu, .. } => {
                let index = gpu_at(*gpu)?;
                let gpu = &mut node.gpus[index];
                gpu.temperature_c = 88 + rng.range_u64(0, 4) as u32;
                gpu.memory_temperature_c = gpu.temperature_c + 6;
                gpu.throttle_reasons = throttle::HW_SLOWDOWN | throttle::HW_THERMAL_SLOWDOWN | throttle::SW_THERMAL_SLOWDOWN;
                gpu.sm_clock_mhz = gpu.max_sm_clock_mhz * 11 / 20;
            }
            Fault::GpuPowerBrake { gpu, .. } => {
                let index = gpu_at(*gpu)?;
                let gpu = &mut node.gpus[index];
                gpu.throttle_reasons = throttle::HW_SLOWDOWN | throttle::HW_POWER_BRAKE_SLOWDOWN;
                gpu.sm_clock_mhz = 382;
            }
            // A software power limit below the board's default (`nvidia-smi -pl`
            // left low by a script or an experiment).
            Fault::GpuPowerCap { gpu, watts, .. } => {
                let index = gpu_at(*gpu)?;
                let gpu = &mut node.gpus[index];
                let (min, max) = (gpu.min_power_limit_w(), gpu.default_power_limit_w);
                if !(min..max).contains(watts) {
                    return Err(FaultError::new(
                        "watts",
                        format!("`watts` must be from {min} (the board's minimum) to {} (below its default {max} W), not {watts}", max - 1),
                    ));
                }
                gpu.power_limit_w = *watts;
            }
            Fault::GpuPcieDegraded { gpu, gen, width, .. } => {
                let index = gpu_at(*gpu)?;
                let bus = node.gpus[index].kernel_bus_id();
                let link = degrade(&mut node.gpus[index].pcie, *gen, *width)?;
                node.log_kernel(node.booted_at + 2, 6, limited_by(&bus, &link));
            }
            Fault::NvlinkDown { gpu, links, .. } => {
                let index = gpu_at(*gpu)?;
                let gpu = &mut node.gpus[index];
                let count = gpu.nvlinks.len();
                if links.is_empty() {
                    return Err(FaultError::new("links", "`links` must name at least one link"));
                }
                for link in links {
                    let link = gpu
                        .nvlinks
                        .get_mut(*link as usize)
                        .ok_or_else(|| FaultError::new("links", format!("no NVLink {link} on GPU {index} (links 0-{})", count - 1)))?;
                    link.active = false;
                }
            }
            Fault::FabricManagerDown { .. } => {
                node.fabric_manager = ServiceState::Failed;
                node.fabric_manager_since = at;
                for gpu in &mut node.gpus {
                    gpu.fabric = FabricState::InProgress;
                }
            }
            Fault::ServiceStopped { unit, .. } => {
                let known = super::service::unit(unit).filter(|u| u.name != "nvidia-fabricmanager.service");
                let Some(known) = known else {
                    let names: Vec<&str> = super::service::UNITS.iter().map(|u| u.name).filter(|n| *n != "nvidia-fabricmanager.service").collect();
                    return Err(FaultError::new(
                        "service",
                        format!("`service` must be a unit of the node image ({}; Fabric Manager has its own fault), not `{unit}`", names.join(", ")),
                    ));
                };
                node.units.insert(known.name.to_string(), (ServiceState::Inactive, at));
            }
            Fault::DriverMismatch { installed, .. } => {
                let loaded = node.driver_loaded.clone();
                let branch = |version: &str| version.split('.').next().map(str::to_string);
                let well_formed =
                    installed.split('.').count() == 3 && installed.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
                if !well_formed || branch(installed) != branch(&loaded) || *installed == loaded {
                    return Err(FaultError::new(
                        "installed",
                        format!(
                            "`installed` must be another release of the loaded driver's branch, such as {}.999.01 (the node loads {loaded}), not `{installed}`",
                            branch(&loaded).unwrap_or_default()
                        ),
                    ));
                }
                // The update's packages restarted Fabric Manager, whose new
                // build refuses the old module.
                node.driver_installed = installed.clone();
                node.fabric_manager = ServiceState::Failed;
                node.fabric_manager_since = at;
            }
            Fault::HcaPortDown { hca, state, .. } => {
                let index = hca_at(hca)?;
                let hca = &mut node.hcas[index];
                hca.port.state = PortState::Down;
                hca.port.phys_state = if *state == PortDown::Disabled { PhysState::Disabled } else { PhysState::Polling };
                hca.port.counters.link_downed += 1;
                let (bus, netdev) = (hca.bus_id.clone(), hca.netdev.clone());
                node.log_kernel(at, 6, format!("mlx5_core {bus} {netdev}: Link down"));
            }
            Fault::HcaLinkDegraded { hca, rate, width, .. } => {
                let index = hca_at(hca)?;
                let port = &mut node.hcas[index].port;
                if rate.is_none() && width.is_none() {
                    return Err(FaultError::new("rate", "give `rate` (Gb/s) or `width` (lanes), or both"));
                }
                if let Some(width) = width {
                    if ![1, 2, 4].contains(width) || *width > port.max_width {
                        return Err(FaultError::new("width", format!("`width` must be 1, 2 or 4 lanes, not {width}")));
                    }
                    port.width = *width;
                }
                if let Some(rate) = rate {
                    let speed = LaneSpeed::for_rate(*rate, port.width)
                        .filter(|speed| *speed <= port.max_lane_speed)
                        .ok_or_else(|| FaultError::new("rate", format!("a {}X link cannot run at {rate} Gb/s on this HCA", port.width)))?;
                    port.lane_speed = speed;
                }
                if port.width == port.max_width && port.lane_speed == port.max_lane_speed {
                    return Err(FaultError::new("rate", "this leaves the link at full rate and width; lower one of them"));
                }
            }
            Fault::HcaSymbolErrors { hca, count, .. } => {
                let index = hca_at(hca)?;
                let port = &mut node.hcas[index].port;
                if *count == 0 {
                    return Err(FaultError::new("count", "`count` must be at least 1"));
                }
                port.counters.symbol_errors = *count;
                port.counters.link_error_recovery = (*count / 500).max(1);
                port.symbol_errors_per_hour = (*count / 24).max(1);
            }
            Fault::HcaLinkFlap { hca, .. } => {
                let index = hca_at(hca)?;
                let hca = &mut node.hcas[index];
                // Each flap its own: a link flaps several times in a lab.
                let mut rng = Rng::derive(seed, &["flap", &hca.name, &at.to_string()]);
                // Down, then trained again: the errors of a marginal link around it.
                hca.port.counters.link_downed += 1;
                hca.port.counters.link_error_recovery += 1;
                hca.port.counters.symbol_errors += rng.range_u64(40, 400);
                let (bus, netdev) = (hca.bus_id.clone(), hca.netdev.clone());
                node.log_kernel(at, 6, format!("mlx5_core {bus} {netdev}: Link down"));
                node.log_kernel(at + rng.range_i64(4, 14), 6, format!("mlx5_core {bus} {netdev}: Link up"));
            }
            Fault::HcaMtu { hca, mtu, .. } => {
                let index = hca_at(hca)?;
                if !MTUS.contains(mtu) || *mtu == 4096 {
                    return Err(FaultError::new("mtu", format!("`mtu` must be one of 256, 512, 1024 or 2048 (4096 is the healthy value), not {mtu}")));
                }
                let port = &mut node.hcas[index].port;
                if port.link_layer == LinkLayer::Ethernet {
                    // RoCE: the netdev lost its jumbo frames; the port follows it.
                    port.set_netdev_mtu(roce_netdev_mtu_for(*mtu));
                } else {
                    port.active_mtu = *mtu;
                }
            }
            Fault::HcaPfcOff { hca, .. } => {
                let index = hca_at(hca)?;
                let port = &mut node.hcas[index].port;
                if port.link_layer != LinkLayer::Ethernet {
                    return Err(FaultError::new("kind", "`hca-pfc-off` needs a RoCE cluster (`fabric = \"roce\"`): InfiniBand has no PFC"));
                }
                port.pfc_enabled &= !(1 << ROCE_PRIORITY);
            }
            Fault::HcaEcnOff { hca, .. } => {
                let index = hca_at(hca)?;
                let port = &mut node.hcas[index].port;
                if port.link_layer != LinkLayer::Ethernet {
                    return Err(FaultError::new(
                        "kind",
                        "`hca-ecn-off` needs a RoCE cluster (`fabric = \"roce\"`): InfiniBand's congestion control is the SM's",
                    ));
                }
                port.ecn_np &= !(1 << ROCE_PRIORITY);
                port.ecn_rp &= !(1 << ROCE_PRIORITY);
            }
            Fault::HcaPcieDegraded { hca, gen, width, .. } => {
                let index = hca_at(hca)?;
                let bus = node.hcas[index].bus_id.clone();
                let link = degrade(&mut node.hcas[index].pcie, *gen, *width)?;
                node.log_kernel(node.booted_at + 3, 6, limited_by(&bus, &link));
            }
            Fault::NodeDown { reason, .. } => {
                node.hang();
                node.scheduler = SchedulerState::Down;
                node.scheduler_reason = Some(reason.clone());
                node.scheduler_reason_since = at;
            }
            Fault::NodeDrain { reason, .. } => {
                node.scheduler = SchedulerState::Drained;
                node.scheduler_reason = Some(reason.clone());
                node.scheduler_reason_since = at;
            }
            Fault::NodeCordon { node: hostname } => {
                node.cordoned_since = node.cordoned_since.or(Some(at));
                let hostname = hostname.clone();
                cluster.sync_slurm_cordon(&hostname, at);
            }
        }
        Ok(())
    }
}

/// The error for a fault on a node the cluster lacks.
pub fn no_such_node(node: &str, hostnames: &[String]) -> FaultError {
    FaultError::new("node", format!("no node `{node}` in this cluster (nodes: {})", summarize(hostnames)))
}

/// `a, b, c` or, for long lists, `a, b, c, ..., y, z (1024 in all)`.
fn summarize(names: &[String]) -> String {
    if names.len() <= 8 {
        return names.join(", ");
    }
    format!("{}, ..., {} ({} in all)", names[..3].join(", "), names[names.len() - 2..].join(", "), names.len())
}

/// Lowers a PCIe link's generation and/or width.
fn degrade(link: &mut PcieLink, generation: Option<u8>, width: Option<u8>) -> Result<PcieLink, FaultError> {
    if generation.is_none() && width.is_none() {
        return Err(FaultError::new("gen", "give `gen` or `width`, or both"));
    }
    if let Some(generation) = generation {
        if generation == 0 || generation > link.max_gen {
            return Err(FaultError::new("gen", format!("`gen` must be between 1 and {}, not {generation}", link.max_gen)));
        }
        link.gen = generation;
    }
    if let Some(width) = width {
        if ![1, 2, 4, 8, 16].contains(&width) || width > link.max_width {
            return Err(FaultError::new("width", format!("`width` must be 1, 2, 4, 8 or 16, not {width}")));
        }
        link.width = width;
    }
    if !link.is_degraded() {
        return Err(FaultError::new("gen", "this leaves the link at full speed and width; lower one of them"));
    }
    Ok(*link)
}

/// The kernel's boot-time warning for a link that trained below its capability.
pub(crate) fn limited_by(bus: &str, link: &PcieLink) -> String {
    let upstream = match u8::from_str_radix(bus.get(5..7).unwrap_or("01"), 16) {
        Ok(device_bus) => format!("0000:{:02x}:00.0", device_bus.saturating_sub(1)),
        Err(_) => "0000:00:01.0".to_string(),
    };
    format!(
        "pci {bus}: {} Gb/s available PCIe bandwidth, limited by {:.1} GT/s PCIe x{} link at {upstream} (capable of {} Gb/s with {:.1} GT/s PCIe x{} link)",
        gigabits(PcieLink::bandwidth_mbps(link.gen, link.width)),
        gts(link.gen),
        link.width,
        gigabits(PcieLink::bandwidth_mbps(link.max_gen, link.max_width)),
        gts(link.max_gen),
        link.max_width
    )
}

/// Mb/s as the kernel prints Gb/s: `252048` → `252.048`.
fn gigabits(mbps: u64) -> String {
    format!("{}.{:03}", mbps / 1000, mbps % 1000)
}

fn gts(generation: u8) -> f64 {
    PcieLink::gts(generation).parse().unwrap_or(0.0)
}

/// A GSP that stops answering (Xid 119) is not one line: the process that
/// waited is named, the first timeout dumps its stack, and the timeouts go
/// on until the GPU is reset. Before 535 the driver logs every timeout, 45 s
/// apart (dmesg-T_xid119_gsp-timeout_a30_drv525.txt); from 535 they come 6 s
/// apart and the third turns into the rate-limit notice (FACTS "Xid 119";
/// the notice's wording is the driver's `portDbgPrintf` in
/// open-gpu-kernel-modules' kernel_gsp.c). The "Timeout waiting for RPC
/// from GPUn GSP" form of 535-545 is from public reports of 535 nodes; the
/// stack's symbols and the board's DMI name are not from a capture.
fn record_gsp_timeouts(node: &mut super::Node, index: usize, at: i64, driver_major: u32, rng: &mut Rng) {
    const CALLS: [(u32, &str); 3] = [(76, "GSP_RM_CONTROL"), (103, "GSP_RM_ALLOC"), (10, "FREE")];
    let (count, gap) = if driver_major < 535 { (6, 45) } else { (2, 6) };
    let pid = 2_291_417 + rng.range_u64(0, 4_000);
    for n in 0..count {
        let (function, name) = CALLS[rng.range_u64(0, 2) as usize];
        let detail = format!("0x{:x} 0x{:x}", 0x2080_0000 + rng.range_u64(0, 0xffff), rng.range_u64(0, 0x600));
        let waited = match driver_major {
            0..=534 => "Timeout waiting for RPC from GSP!".to_string(),
            535..=545 => format!("Timeout waiting for RPC from GPU{index} GSP!"),
            _ => format!("Timeout after 6s of waiting for RPC response from GPU{index} GSP!"),
        };
        let when = at + n * gap;
        record_xid_text(node, index, 119, when, format!("pid={pid}, name=python3, {waited} Expected function {function} ({name}) ({detail})."));
        if n == 0 {
            log_stack_dump(node, when, pid, "python3", rng);
        }
    }
    if driver_major >= 535 {
        let pci = node.gpus[index].nvrm_pci();
        let bus = pci.trim_start_matches("PCI:");
        node.log_kernel(
            at + count * gap,
            4,
            format!("NVRM: Rate limiting GSP RPC error prints for GPU at PCI:{bus} (printing 1 of every 30).  The GPU likely needs to be reset."),
        );
    }
}

/// The kernel's `dump_stack` of a process stuck in the driver's ioctl.
fn log_stack_dump(node: &mut super::Node, at: i64, pid: u64, comm: &str, rng: &mut Rng) {
    use super::node::{KERNEL_RELEASE, KERNEL_VERSION};
    let cpu = rng.range_u64(0, 111);
    // The version string up to its first space, as dump_stack prints it.
    let build = KERNEL_VERSION.split(' ').next().unwrap_or(KERNEL_VERSION);
    node.log_kernel(at, 4, format!("CPU: {cpu} PID: {pid} Comm: {comm} Tainted: P           OE     {KERNEL_RELEASE} {build}"));
    node.log_kernel(at, 4, "Hardware name: Supermicro SYS-821GE-TNHR/X13DEG-OAD, BIOS 2.1 11/29/2023");
    node.log_kernel(at, 4, "Call Trace:");
    node.log_kernel(at, 4, format!(" dump_stack_lvl+0x{:x}/0x{:x}", rng.range_u64(0x40, 0x60), rng.range_u64(0x70, 0x90)));
    for _ in 0..rng.range_u64(6, 10) {
        let (symbol, offset, size) = (rng.range_u64(10_000, 45_000), rng.range_u64(0x10, 0x7ff), rng.range_u64(0x800, 0xfff));
        node.log_kernel(at, 4, format!(" ? _nv{symbol:06}rm+0x{offset:x}/0x{size:x} [nvidia]"));
    }
    for frame in [
        "rm_ioctl+0x63/0xb0 [nvidia]",
        "nvidia_unlocked_ioctl+0x6f6/0x8e0 [nvidia]",
        "__x64_sys_ioctl+0x95/0xd0",
        "do_syscall_64+0x5c/0xc0",
        "entry_SYSCALL_64_after_hwframe+0x67/0xd1",
    ] {
        node.log_kernel(at, 4, format!(" ? {frame}"));
    }
}

/// Logs an Xid and applies its consequences to the GPU.
fn record_xid(node: &mut super::Node, index: usize, xid: u32, at: i64) {
    record_xid_text(node, index, xid, at, xid_text(xid, index as u32, None));
}

/// Logs an Xid with the text after `NVRM: Xid (PCI:...): N, ` and applies
/// its consequences to the GPU.
fn record_xid_text(node: &mut super::Node, index: usize, xid: u32, at: i64, text: String) {
    let gpu = &node.gpus[index];
    let pci = gpu.nvrm_pci();
    if gpu.xids.is_empty() {
        let (uuid, serial) = (gpu.uuid.clone(), gpu.serial.clone());
        node.log_kernel(at, 6, format!("NVRM: GPU at {pci}: {uuid}"));
        node.log_kernel(at, 6, format!("NVRM: GPU Board Serial Number: {serial}"));
    }
    node.log_kernel(at, 3, format!("NVRM: Xid ({pci}): {xid}, {text}"));
    let gpu = &mut node.gpus[index];
    gpu.xids.push(xid);
    match xid {
        48 => {
            gpu.ecc.volatile_uncorrected += 1;
            gpu.ecc.aggregate_uncorrected += 1;
            gpu.needs_reset = true;
        }
        62 | 119 | 120 => {
            gpu.health = GpuHealth::Unresponsive;
            gpu.needs_reset = true;
        }
        63 => {
            gpu.row_remap.uncorrectable += 1;
            gpu.row_remap.pending = true;
            gpu.row_remap.banks_max = gpu.row_remap.banks_max.saturating_sub(1);
            gpu.row_remap.banks_high += 1;
        }
        64 => {
            gpu.row_remap.failure = true;
            gpu.needs_reset = true;
        }
        74 => {
            if let Some(link) = gpu.nvlinks.get_mut(5) {
                link.active = false;
                link.replay_errors += 3;
                link.recovery_errors += 1;
            }
            gpu.needs_reset = true;
        }
        79 => gpu.health = GpuHealth::FallenOffBus,
        // Lifetime counts hold what the volatile ones saw since the last reset.
        92 => {
            gpu.ecc.volatile_corrected += 1200;
            gpu.ecc.aggregate_corrected += 1200;
        }
        94 | 95 => {
            gpu.ecc.volatile_uncorrected += 1;
            gpu.ecc.aggregate_uncorrected += 1;
            gpu.needs_reset = xid == 95;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{preset, ClusterConfig};

    fn cluster() -> Cluster {
        let config = ClusterConfig::new(preset::find("hgx-h100").unwrap(), vec!["gpu-001".into(), "gpu-002".into()]);
        Cluster::build(&config, 5)
    }

    #[test]
    fn a_driver_update_installs_another_release_of_the_loaded_branch() {
        let update = |installed: &str| Fault::DriverMismatch { node: "gpu-001".into(), installed: installed.into() }.apply(&mut cluster());
        assert_eq!(update("570.172.08"), Ok(()));
        for wrong in ["570.158.01", "575.51.03", "570.172", "570.172.x", ""] {
            assert_eq!(update(wrong).map_err(|e| e.field), Err("installed"), "{wrong}");
        }
        let mut cluster = cluster();
        Fault::DriverMismatch { node: "gpu-001".into(), installed: "570.172.08".into() }.apply(&mut cluster).unwrap();
        let node = &cluster.nodes[0];
        assert!(node.driver_mismatch() && !node.fabric_manager_can_start());
        assert_eq!((node.driver_loaded.as_str(), node.fabric_manager), ("570.158.01", ServiceState::Failed));
    }

    #[test]
    fn xid_79_takes_the_gpu_off_the_bus_and_logs_it() {
        let mut cluster = cluster();
        Fault::GpuXid { node: "gpu-002".into(), gpu: 3, xid: 79 }.apply(&mut cluster).unwrap();
        let node = cluster.node("gpu-002").unwrap();
        assert_eq!(node.gpus[3].health, GpuHealth::FallenOffBus);
        let log: Vec<&str> = node.kernel_log.iter().map(|l| l.text.as_str()).collect();
        assert!(log.contains(&"NVRM: Xid (PCI:0000:64:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."));
        assert!(log.iter().any(|l| l.starts_with("NVRM: GPU at PCI:0000:64:00: GPU-")));
        assert_eq!(cluster.node("gpu-001").unwrap().gpus[3].health, GpuHealth::Healthy);
    }

    #[test]
    fn bad_targets_are_named() {
        let mut cluster = cluster();
        let error = Fault::GpuXid { node: "gpu-009".into(), gpu: 0, xid: 79 }.apply(&mut cluster).unwrap_err().message;
        assert_eq!(error, "no node `gpu-009` in this cluster (nodes: gpu-001, gpu-002)");
        let error = Fault::GpuXid { node: "gpu-001".into(), gpu: 8, xid: 79 }.apply(&mut cluster).unwrap_err().message;
        assert_eq!(error, "no GPU 8 on gpu-001 (GPUs 0-7)");
        let error = Fault::HcaMtu { node: "gpu-001".into(), hca: "mlx5_9".into(), mtu: 1024 }.apply(&mut cluster).unwrap_err().message;
        assert!(error.starts_with("no HCA `mlx5_9` on gpu-001 (HCAs: mlx5_0, "));
    }

    #[test]
    fn link_degradation_sets_speed_and_width() {
        let mut cluster = cluster();
        Fault::HcaLinkDegraded { node: "gpu-001".into(), hca: "mlx5_1".into(), rate: Some(200), width: None }.apply(&mut cluster).unwrap();
        let port = &cluster.nodes[0].hcas[1].port;
        assert_eq!((port.rate_gbps(), port.width, port.lane_speed), (200, 4, LaneSpeed::Hdr));
        Fault::HcaLinkDegraded { node: "gpu-001".into(), hca: "mlx5_2".into(), rate: None, width: Some(2) }.apply(&mut cluster).unwrap();
        assert_eq!(cluster.nodes[0].hcas[2].port.rate_gbps(), 200);
        let error = Fault::HcaLinkDegraded { node: "gpu-001".into(), hca: "mlx5_3".into(), rate: Some(300), width: None }.apply(&mut cluster);
        assert!(error.is_err());
    }

    #[test]
    fn pcie_degradation_logs_the_kernel_warning() {
        let mut cluster = cluster();
        Fault::GpuPcieDegraded { node: "gpu-001".into(), gpu: 0, gen: Some(4), width: None }.apply(&mut cluster).unwrap();
        let node = &cluster.nodes[0];
        assert_eq!((node.gpus[0].pcie.gen, node.gpus[0].pcie.width), (4, 16));
        assert!(node.kernel_log.iter().any(|l| l.text
            == "pci 0000:04:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x16 link at 0000:03:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)"));
    }
}
