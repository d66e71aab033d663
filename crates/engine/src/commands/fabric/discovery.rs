//! A fabric sweep as libibnetdisc makes it: directed-route SMPs outward
//! from the local port, breadth first, through every port whose link is
//! up. What it finds, in the order it finds it, is what `ibnetdiscover`,
//! `saquery` and `ibdiagnet` report; a node behind a down link or on a
//! powered-off host is not found. The fabric is `model::switches`' fat tree.

use crate::commands::fabric::ib_common::{base_lid, is_infiniband, system_image_guid};
use crate::model::fabric::{Hca, PortState};
use crate::model::switches::{Fabric, Peer, Switch};
use crate::model::Cluster;

/// A node of the fabric: an HCA (node index, rail) or a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Ca { node: usize, rail: usize },
    Switch(usize),
}

/// PCI device ids as NodeInfo reports them.
pub const MELLANOX_VENDOR: u32 = 0x2c9;

/// Quantum (QM8700, HDR) is 0xd2f0, Quantum-2 (QM9700, NDR) 0xd2f2.
pub fn switch_device_id(switch: &Switch) -> u32 {
    if switch.name.contains("MQM8700") {
        0xd2f0
    } else {
        0xd2f2
    }
}

/// The HCA a node's rail holds, when it is an InfiniBand port whose link
/// is up on a running host.
pub fn live_hca(cluster: &Cluster, node: usize, rail: usize) -> Option<&Hca> {
    let host = cluster.nodes.get(node).filter(|host| host.up(cluster.now))?;
    host.hcas.get(rail).filter(|hca| is_infiniband(&hca.port) && hca.port.state == PortState::Active)
}

/// What a node's NodeInfo and NodeDescription say of it, as a sweep or the
/// SA reads them.
pub struct NodeInfo {
    pub is_switch: bool,
    pub description: String,
    pub lid: u16,
    pub node_guid: u64,
    pub port_guid: u64,
    pub system_guid: u64,
    pub device_id: u32,
    /// NumPorts: a switch counts its aggregation node's port too.
    pub ports: usize,
}

pub fn node_info(cluster: &Cluster, fabric: &Fabric, at: Found) -> NodeInfo {
    match at {
        Found::Ca { node, rail } => {
            let hca = &cluster.nodes[node].hcas[rail];
            NodeInfo {
                is_switch: false,
                description: format!("{} {}", cluster.nodes[node].hostname, hca.name),
                lid: base_lid(&hca.port),
                node_guid: hca.node_guid,
                port_guid: hca.port.guid,
                system_guid: system_image_guid(hca),
                device_id: hca.part_id,
                ports: 1,
            }
        }
        Found::Switch(index) => {
            let switch = &fabric.switches[index];
            NodeInfo {
                is_switch: true,
                description: switch.name.clone(),
                lid: switch.lid,
                node_guid: switch.guid,
                port_guid: switch.guid,
                system_guid: switch.guid,
                device_id: switch_device_id(switch),
                ports: switch.ports + 1,
            }
        }
    }
}

/// What a node's port `port` leads to: (the node, its port number), or None.
pub fn neighbour(cluster: &Cluster, fabric: &Fabric, at: Found, port: usize) -> Option<(Found, usize)> {
    match at {
        Found::Ca { node, rail } => {
            live_hca(cluster, node, rail)?;
            let (leaf, leaf_port) = fabric.leaf_port(node, rail);
            Some((Found::Switch(leaf), leaf_port))
        }
        Found::Switch(switch) => match fabric.peer(switch, port, cluster.nodes.len()) {
            Peer::Host { node, rail } => live_hca(cluster, node, rail).map(|hca| (Found::Ca { node, rail }, usize::from(hca.port.number))),
            Peer::Switch { switch, port } => Some((Found::Switch(switch), port)),
            Peer::Empty => None,
        },
    }
}

/// How many ports a node has (a switch's aggregation port not counted).
pub fn port_count(fabric: &Fabric, at: Found) -> usize {
    match at {
        Found::Ca { .. } => 1,
        Found::Switch(switch) => fabric.switches[switch].ports,
    }
}

/// Every node reachable from `start`, in discovery order (breadth first,
/// each node's ports in order).
pub fn sweep(cluster: &Cluster, fabric: &Fabric, start: Found) -> Vec<Found> {
    sweep_with_ports(cluster, fabric, start).into_iter().map(|(found, _)| found).collect()
}

/// The sweep with the port each node was first reached on (NodeInfo's
/// LocalPortNum to whoever swept): 0 for the start itself.
pub fn sweep_with_ports(cluster: &Cluster, fabric: &Fabric, start: Found) -> Vec<(Found, usize)> {
    let mut found = vec![(start, 0)];
    let mut next = 0;
    while next < found.len() {
        let (at, _) = found[next];
        next += 1;
        for port in 1..=port_count(fabric, at) {
            if let Some((peer, peer_port)) = neighbour(cluster, fabric, at, port) {
                if !found.iter().any(|(known, _)| *known == peer) {
                    found.push((peer, peer_port));
                }
            }
        }
    }
    found
}

/// The sweep from the local port: the HCA `ca` names, or the node's first
/// InfiniBand port that is up. None when there is no such port.
pub fn sweep_from_local(cluster: &Cluster, fabric: &Fabric, hostname: &str, ca: Option<&str>) -> Option<(Found, Vec<Found>)> {
    let node = cluster.nodes.iter().position(|node| node.hostname == hostname)?;
    let rail = cluster.nodes[node].hcas.iter().position(|hca| match ca {
        Some(name) => hca.name == name,
        None => is_infiniband(&hca.port) && hca.port.state == PortState::Active,
    })?;
    let start = Found::Ca { node, rail };
    live_hca(cluster, node, rail)?;
    Some((start, sweep(cluster, fabric, start)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::cluster;

    #[test]
    fn the_sweep_finds_every_live_port_once_and_not_a_dead_one() {
        let mut cluster = cluster();
        let fabric = Fabric::of(&cluster).unwrap();
        let (start, all) = sweep_from_local(&cluster, &fabric, "gpu-001", None).unwrap();
        assert_eq!(all[0], start);
        assert_eq!(all[1], Found::Switch(fabric.leaf_port(0, 0).0), "the local leaf next");
        assert_eq!(all.len(), 12 + 16);
        Fault::HcaPortDown { node: "gpu-002".into(), hca: "mlx5_3".into(), state: PortDown::Down }.apply(&mut cluster).unwrap();
        let (_, fewer) = sweep_from_local(&cluster, &fabric, "gpu-001", None).unwrap();
        assert_eq!(fewer.len(), 12 + 15);
        assert!(!fewer.contains(&Found::Ca { node: 1, rail: 3 }));
    }
}
