//! The InfiniBand switches the nodes' HCAs plug into. The model keeps no
//! switch state: the fabric is derived from the nodes, the same way for
//! every tool that walks it (iblinkinfo, ibswitches, ibhosts, sminfo).
//!
//! Their ports' PMA counters follow the HCAs cabled to them
//! (`model::counters`).
//!
//! A rail-optimised two-tier fat tree: one leaf per rail (rail i = HCA i of
//! every node) per 32 nodes, the nodes on leaf ports 1-32 in node order and
//! the other ports up to the spines, each leaf with the same number of
//! links to every spine. The subnet manager runs on the first spine,
//! LID 1, as the HCAs' `SM lid` says. Switches take LIDs from 1 (spines
//! first), below the HCAs' (from 100); past 98 switches they go on from
//! 40,000.

use super::change::Change;
use super::fabric::{LaneSpeed, LinkLayer, PortCounters};
use super::Cluster;
use crate::rng::Rng;

/// Host-facing ports of a leaf.
pub const LEAF_HOST_PORTS: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Leaf { rail: usize, group: usize },
    Spine { index: usize },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    pub role: Role,
    pub lid: u16,
    pub guid: u64,
    /// Its node description: `MF0;leaf-rail0:MQM9700/U1`.
    pub name: String,
    pub ports: usize,
}

/// What a switch port leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// HCA `rail` of node `node` (an index into the cluster's nodes).
    Host { node: usize, rail: usize },
    /// Port `port` of switch `switch` (an index into [`Fabric::switches`]).
    Switch { switch: usize, port: usize },
    /// An empty cage.
    Empty,
}

pub struct Fabric {
    pub switches: Vec<Switch>,
    /// What switch-to-switch links run at: the HCAs' full width and lane
    /// speed (the cables between switches are never degraded here).
    pub trunk: (u8, LaneSpeed),
    spines: usize,
    /// Links from each leaf to each spine.
    links_per_spine: usize,
    rails: usize,
}

impl Fabric {
    /// The InfiniBand fabric of the cluster; None on RoCE (Ethernet switches).
    pub fn of(cluster: &Cluster) -> Option<Fabric> {
        if cluster.fabric != LinkLayer::InfiniBand {
            return None;
        }
        let rails = cluster.nodes.iter().map(|node| node.hcas.len()).max().unwrap_or(0);
        let groups = cluster.nodes.len().div_ceil(LEAF_HOST_PORTS);
        let leaves = groups * rails;
        let ndr = cluster.nodes.iter().flat_map(|node| &node.hcas).any(|hca| hca.port.max_lane_speed >= LaneSpeed::Ndr);
        let trunk = cluster
            .nodes
            .iter()
            .flat_map(|node| &node.hcas)
            .find(|hca| hca.port.link_layer == LinkLayer::InfiniBand)
            .map_or((4, LaneSpeed::Ndr), |hca| (hca.port.max_width, hca.port.max_lane_speed));
        // A QM9700 has 64 NDR ports, a QM8700 40 HDR ports.
        let (model, radix) = if ndr { ("MQM9700", 64) } else { ("MQM8700", 40) };
        let uplinks = radix - LEAF_HOST_PORTS;
        let spines = leaves.div_ceil(2).next_power_of_two().clamp(1, uplinks);
        let links_per_spine = uplinks / spines;
        let lid = |index: usize| if index < 98 { 1 + index as u16 } else { 40_000 + index as u16 };
        let guid = |index: usize| (0x50_6b4b_u64 << 40) | (0x0300 << 24) | Rng::derive(cluster.seed, &["switch", &index.to_string()]).range_u64(0, 0xff_ffff);
        let mut switches = Vec::with_capacity(spines + leaves);
        for index in 0..spines {
            let ports = radix.max(leaves * links_per_spine);
            switches.push(Switch {
                role: Role::Spine { index },
                lid: lid(index),
                guid: guid(index),
                name: format!("MF0;spine{}:{model}/U1", index + 1),
                ports,
            });
        }
        for group in 0..groups {
            for rail in 0..rails {
                let index = switches.len();
                let suffix = if group == 0 { String::new() } else { format!("-{group}") };
                let name = format!("MF0;leaf-rail{rail}{suffix}:{model}/U1");
                switches.push(Switch { role: Role::Leaf { rail, group }, lid: lid(index), guid: guid(index), name, ports: radix });
            }
        }
        Some(Fabric { switches, trunk, spines, links_per_spine, rails })
    }

    /// The leaf that HCA `rail` of node `node` plugs into, and its port there.
    pub fn leaf_port(&self, node: usize, rail: usize) -> (usize, usize) {
        let group = node / LEAF_HOST_PORTS;
        (self.spines + group * self.rails + rail, node % LEAF_HOST_PORTS + 1)
    }

    /// The switches a packet to LID `dlid` crosses from HCA `from` to HCA
    /// `to` (each a node index and a rail), as the subnet manager's up/down
    /// routing sets the forwarding tables: up to a spine only between
    /// leaves, the spine and its uplink picked by the destination LID (as
    /// ftree spreads destinations). Each hop is (port out of the previous
    /// device, switch index, port in).
    pub fn route(&self, from: (usize, usize), to: (usize, usize), dlid: u16) -> Vec<(usize, usize, usize)> {
        let (leaf_a, port_a) = self.leaf_port(from.0, from.1);
        let (leaf_b, _) = self.leaf_port(to.0, to.1);
        let mut hops = vec![(1, leaf_a, port_a)];
        if leaf_a != leaf_b && self.spines > 0 {
            let spine = usize::from(dlid) % self.spines;
            let lane = usize::from(dlid) % self.links_per_spine.max(1);
            let up = LEAF_HOST_PORTS + spine * self.links_per_spine + lane + 1;
            if let Peer::Switch { switch, port } = self.peer(leaf_a, up, usize::MAX) {
                hops.push((up, switch, port));
                let down = (leaf_b - self.spines) * self.links_per_spine + lane + 1;
                if let Peer::Switch { switch, port } = self.peer(spine, down, usize::MAX) {
                    hops.push((down, switch, port));
                }
            }
        }
        hops
    }

    /// The PMA counters of port `port` of switch `switch`: a host-facing
    /// port's follow its cable's HCA (`Cluster::leaf_port_counters`); the
    /// links between switches carry no host's rail traffic (each rail
    /// stays on its leaf) and count no errors; port 0 is the switch's own.
    pub fn port_counters(&self, cluster: &Cluster, switch: usize, port: usize) -> PortCounters {
        match self.peer(switch, port, cluster.nodes.len()) {
            Peer::Host { node, rail } => cluster.leaf_port_counters(&cluster.nodes[node], rail),
            _ => PortCounters::default(),
        }
    }

    /// The changes that clear `ports` of switch `switch`: one for each port
    /// a host is cabled to (the others count nothing to clear).
    pub fn clear_ports(&self, cluster: &Cluster, switch: usize, ports: impl IntoIterator<Item = usize>) -> Vec<Change> {
        ports
            .into_iter()
            .filter_map(|port| match self.peer(switch, port, cluster.nodes.len()) {
                Peer::Host { node, rail } => {
                    let node = &cluster.nodes[node];
                    Some(Change::ResetLeafPortCounters { node: node.hostname.clone(), hca: node.hcas[rail].name.clone() })
                }
                _ => None,
            })
            .collect()
    }

    /// The switch whose LID is `lid`.
    pub fn switch_with_lid(&self, lid: i64) -> Option<usize> {
        self.switches.iter().position(|switch| i64::from(switch.lid) == lid)
    }

    /// The switch running the subnet manager.
    pub fn subnet_manager(&self) -> &Switch {
        &self.switches[0]
    }

    /// What port `port` (from 1) of switch `switch` leads to; `nodes` is
    /// how many nodes the cluster has.
    pub fn peer(&self, switch: usize, port: usize, nodes: usize) -> Peer {
        let Some(found) = self.switches.get(switch) else { return Peer::Empty };
        // Port 0 is the switch's management port, cabled to nothing.
        if port == 0 || port > found.ports {
            return Peer::Empty;
        }
        match found.role {
            Role::Leaf { rail, group } if port <= LEAF_HOST_PORTS => {
                let node = group * LEAF_HOST_PORTS + port - 1;
                if node < nodes {
                    Peer::Host { node, rail }
                } else {
                    Peer::Empty
                }
            }
            Role::Leaf { .. } => {
                let uplink = port - LEAF_HOST_PORTS - 1;
                let spine = uplink / self.links_per_spine.max(1);
                let leaf = switch - self.spines;
                if spine >= self.spines {
                    return Peer::Empty;
                }
                Peer::Switch { switch: spine, port: leaf * self.links_per_spine + uplink % self.links_per_spine.max(1) + 1 }
            }
            Role::Spine { index } => {
                let leaf = (port - 1) / self.links_per_spine.max(1);
                if leaf + self.spines >= self.switches.len() {
                    return Peer::Empty;
                }
                Peer::Switch { switch: self.spines + leaf, port: LEAF_HOST_PORTS + index * self.links_per_spine + (port - 1) % self.links_per_spine.max(1) + 1 }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{preset, ClusterConfig};

    fn fabric(nodes: usize, preset_name: &str) -> (Cluster, Fabric) {
        let hostnames = (1..=nodes).map(|n| format!("gpu-{n:03}")).collect();
        let cluster = Cluster::build(&ClusterConfig::new(preset::find(preset_name).unwrap(), hostnames), 3);
        let fabric = Fabric::of(&cluster).unwrap();
        (cluster, fabric)
    }

    #[test]
    fn every_link_is_the_same_link_from_both_ends() {
        for (nodes, preset) in [(2, "hgx-h100"), (40, "hgx-h100"), (300, "hgx-h100"), (4, "hgx-a100")] {
            let (cluster, fabric) = fabric(nodes, preset);
            for (at, switch) in fabric.switches.iter().enumerate() {
                for port in 1..=switch.ports {
                    match fabric.peer(at, port, cluster.nodes.len()) {
                        Peer::Switch { switch: other, port: back } => {
                            assert_eq!(fabric.peer(other, back, nodes), Peer::Switch { switch: at, port }, "{nodes} nodes: {} port {port}", switch.name);
                        }
                        Peer::Host { node, rail } => assert_eq!(fabric.leaf_port(node, rail), (at, port)),
                        Peer::Empty => {}
                    }
                }
            }
            // Every leaf reaches every spine; the SM is on LID 1, as the HCAs say.
            assert_eq!(fabric.subnet_manager().lid, cluster.nodes[0].hcas[0].port.sm_lid);
            let lids: std::collections::BTreeSet<u16> = fabric.switches.iter().map(|s| s.lid).collect();
            assert_eq!(lids.len(), fabric.switches.len());
        }
    }
}
