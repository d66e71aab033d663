//! The cluster model: the single source of truth every emulated tool reads.
//!
//! A lab describes a cluster (preset, hostnames, overrides); [`Cluster::build`]
//! turns that description and a seed into concrete nodes, GPUs and HCAs with
//! plausible per-device values (temperatures, power, UUIDs). Tools never
//! invent state: they format what is here.

pub mod preset;
pub mod time;

use crate::rng::Rng;
pub use preset::Preset;
use time::EpochSeconds;

/// What a lab's `[cluster]` table asks for, after validation.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    pub preset: &'static Preset,
    pub hostnames: Vec<String>,
    pub driver: Option<String>,
    pub cuda: Option<String>,
    pub persistence: bool,
}

#[derive(Clone, Debug)]
pub struct Versions {
    pub driver: String,
    pub cuda: String,
}

#[derive(Clone, Debug)]
pub struct Cluster {
    pub preset: &'static Preset,
    pub versions: Versions,
    pub nodes: Vec<Node>,
    /// The lab's simulated wall clock (UTC).
    pub now: EpochSeconds,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub hostname: String,
    pub gpus: Vec<Gpu>,
    pub hcas: Vec<Hca>,
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

#[derive(Clone, Debug)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    /// PCI domain:bus:device.function, e.g. `00000000:04:00.0`.
    pub bus_id: String,
    pub uuid: String,
    pub serial: String,
    pub memory_total_mib: u64,
    pub memory_used_mib: u64,
    pub power_limit_w: u32,
    pub power_draw_w: u32,
    pub temperature_c: u32,
    /// Performance state: 0 for P0.
    pub pstate: u8,
    pub utilization_pct: u32,
    /// Fan speed in percent; `None` for passively cooled (SXM) parts.
    pub fan_pct: Option<u32>,
    pub persistence_mode: bool,
    pub display_active: bool,
    pub ecc_uncorrected_volatile: u64,
    pub mig_enabled: bool,
    pub compute_mode: ComputeMode,
}

#[derive(Clone, Debug)]
pub struct Hca {
    /// RDMA device name, e.g. `mlx5_0`.
    pub name: String,
    pub ca_type: String,
    pub firmware: String,
    pub rate_gbps: u32,
}

/// When every lab's clock starts unless it says otherwise: a fixed instant, so
/// outputs do not depend on when the lab is opened.
pub const DEFAULT_START: EpochSeconds = 1_773_045_600; // 2026-03-09 08:40:00 UTC

impl Cluster {
    /// Builds the concrete cluster. Every per-device value comes from `seed`
    /// and the device's name, so a node's GPUs do not change when another
    /// node is added.
    pub fn build(config: &ClusterConfig, seed: u64) -> Cluster {
        let preset = config.preset;
        let nodes = config
            .hostnames
            .iter()
            .map(|hostname| Node::build(preset, hostname, config.persistence, seed))
            .collect();
        let start_offset = Rng::derive(seed, &["clock"]).range_i64(0, 6 * 3600);
        Cluster {
            preset,
            versions: Versions {
                driver: config.driver.clone().unwrap_or_else(|| preset.driver.to_string()),
                cuda: config.cuda.clone().unwrap_or_else(|| preset.cuda.to_string()),
            },
            nodes,
            now: DEFAULT_START + start_offset,
        }
    }

    pub fn node(&self, hostname: &str) -> Option<&Node> {
        self.nodes.iter().find(|node| node.hostname == hostname)
    }

    pub fn node_mut(&mut self, hostname: &str) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|node| node.hostname == hostname)
    }
}

impl Node {
    fn build(preset: &'static Preset, hostname: &str, persistence: bool, seed: u64) -> Node {
        let gpus = preset
            .gpu_buses
            .iter()
            .enumerate()
            .map(|(index, bus)| Gpu::idle(preset, hostname, index as u32, *bus, persistence, seed))
            .collect();
        let hcas = (0..preset.hca_count)
            .map(|index| Hca {
                name: format!("mlx5_{index}"),
                ca_type: preset.hca.ca_type.to_string(),
                firmware: preset.hca.firmware.to_string(),
                rate_gbps: preset.hca.rate_gbps,
            })
            .collect();
        Node { hostname: hostname.to_string(), gpus, hcas }
    }
}

impl Gpu {
    fn idle(preset: &Preset, hostname: &str, index: u32, bus: u8, persistence: bool, seed: u64) -> Gpu {
        let spec = &preset.gpu;
        let mut rng = Rng::derive(seed, &[hostname, "gpu", &index.to_string()]);
        let uuid = format!(
            "GPU-{}-{}-{}-{}-{}",
            rng.hex(8),
            rng.hex(4),
            rng.hex(4),
            rng.hex(4),
            rng.hex(12)
        );
        let serial = format!("16{:011}", rng.range_u64(0, 99_999_999_999));
        Gpu {
            index,
            name: spec.name.to_string(),
            bus_id: format!("00000000:{bus:02X}:00.0"),
            uuid,
            serial,
            memory_total_mib: spec.memory_total_mib,
            memory_used_mib: spec.idle_memory_used_mib,
            power_limit_w: spec.power_limit_w,
            power_draw_w: rng.range_u64(u64::from(spec.idle_power_w.0), u64::from(spec.idle_power_w.1)) as u32,
            temperature_c: rng.range_u64(u64::from(spec.idle_temp_c.0), u64::from(spec.idle_temp_c.1)) as u32,
            pstate: 0,
            utilization_pct: 0,
            fan_pct: spec.has_fan.then_some(30),
            persistence_mode: persistence,
            display_active: false,
            ecc_uncorrected_volatile: 0,
            mig_enabled: false,
            compute_mode: ComputeMode::Default,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(hosts: &[&str]) -> ClusterConfig {
        ClusterConfig {
            preset: preset::find("hgx-h100").unwrap(),
            hostnames: hosts.iter().map(|h| h.to_string()).collect(),
            driver: None,
            cuda: None,
            persistence: true,
        }
    }

    #[test]
    fn hgx_h100_has_eight_gpus_and_eight_hcas_per_node() {
        let cluster = Cluster::build(&config(&["gpu-001", "gpu-002"]), 1);
        assert_eq!(cluster.nodes.len(), 2);
        for node in &cluster.nodes {
            assert_eq!(node.gpus.len(), 8);
            assert_eq!(node.hcas.len(), 8);
            assert_eq!(node.hcas[7].name, "mlx5_7");
            assert!(node.gpus.iter().all(|g| g.memory_total_mib == 81559 && g.power_limit_w == 700));
        }
        assert_eq!(cluster.nodes[0].gpus[5].bus_id, "00000000:A3:00.0");
        assert_eq!(cluster.versions.driver, "570.158.01");
    }

    #[test]
    fn devices_are_deterministic_and_independent_of_other_nodes() {
        let one = Cluster::build(&config(&["gpu-001"]), 9);
        let two = Cluster::build(&config(&["gpu-001", "gpu-002"]), 9);
        assert_eq!(one.nodes[0].gpus[3].uuid, two.nodes[0].gpus[3].uuid);
        assert_ne!(two.nodes[0].gpus[3].uuid, two.nodes[1].gpus[3].uuid);
        let other_seed = Cluster::build(&config(&["gpu-001"]), 10);
        assert_ne!(one.nodes[0].gpus[0].uuid, other_seed.nodes[0].gpus[0].uuid);
    }

    #[test]
    fn uuids_have_the_nvidia_shape() {
        let cluster = Cluster::build(&config(&["gpu-001"]), 3);
        let uuid = &cluster.nodes[0].gpus[0].uuid;
        let groups: Vec<usize> = uuid.trim_start_matches("GPU-").split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
    }
}
