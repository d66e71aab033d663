//! Performance models: what the benchmark tools (nccl-tests, perftest) would
//! measure on the cluster model. Numbers follow from the hardware in the
//! model (link rates, widths, MTUs, PCIe links, NVLinks, port states), never
//! from constants per lab; calibration constants come from the captures in
//! ../shared/reference/fabric.

pub mod collective;
pub mod rdma;
pub mod serving;
pub mod training;

use crate::model::fabric::{Hca, LinkLayer, Port};
use crate::model::gpu::PcieLink;
use crate::model::workload::{Pace, Stop, WorkloadSpec};
use crate::model::{Cluster, Node};

/// Header bytes per packet around an MTU of payload: IB LRH+BTH+ICRC+VCRC
/// (~30 B); RoCEv2 adds Ethernet, IP, UDP, FCS, preamble and gap (~82 B).
pub fn mtu_efficiency(mtu: u32, layer: LinkLayer) -> f64 {
    let overhead = if layer == LinkLayer::Ethernet { 82.0 } else { 30.0 };
    let mtu = f64::from(mtu.max(256));
    mtu / (mtu + overhead)
}

/// The share of packets a RoCE port drops under load without PFC on its
/// RDMA priority: bursts it can neither buffer nor pause (`rx_discards_phy`).
pub const DROP_RATE_WITHOUT_PFC: f64 = 0.004;

/// A round trip through the rail's switch, in seconds: what RC's go-back-N
/// sends again after each drop is the data in flight over one.
const ROUND_TRIP_S: f64 = 6e-6;

/// The share of time a RoCE port sits paused when DCQCN does not pace it:
/// many flows at once (a collective's) overrun the switch buffer, which
/// pauses the sender by PFC instead of slowing it early by ECN. Studies of
/// RoCE without congestion control put the loss at a tenth to a fifth.
pub const PAUSED_SHARE_WITHOUT_ECN: f64 = 0.14;

/// The share of a port's rate left to a collective's many flows: all of it
/// when congestion control paces the port; less by the paused time when
/// it does not. A single flow (perftest) congests nothing and keeps it all.
pub fn congestion_share(port: &Port) -> f64 {
    if port.congestion_controlled() {
        1.0
    } else {
        1.0 - PAUSED_SHARE_WITHOUT_ECN
    }
}

/// The share of a port's rate left after retransmissions: 1 on a lossless
/// port; without PFC each drop resends a round trip of packets.
pub fn goodput_share(port: &Port) -> f64 {
    if port.lossless() {
        return 1.0;
    }
    let in_flight = f64::from(port.rate_gbps()) * 1e9 * ROUND_TRIP_S / 8.0 / f64::from(port.active_mtu.max(256));
    1.0 / (1.0 + DROP_RATE_WITHOUT_PFC * in_flight)
}

/// What a PCIe link carries in Gb/s after TLP headers (~8% at 256 B payloads).
pub fn pcie_gbps(link: &PcieLink) -> f64 {
    PcieLink::bandwidth_mbps(link.gen, link.width) as f64 / 1000.0 * 0.92
}

/// Effective data rate of one rail in Gb/s: the port's signalling rate
/// (lane speed x width) times the MTU efficiency, capped by the HCA's PCIe
/// link; 0 when the port is not Active/LinkUp.
pub fn link_gbps(cluster: &Cluster, node: &Node, hca: &Hca) -> f64 {
    let _ = (cluster, node);
    if !hca.port.is_up() {
        return 0.0;
    }
    let wire = f64::from(hca.port.rate_gbps()) * mtu_efficiency(hca.port.active_mtu, hca.port.link_layer);
    wire.min(pcie_gbps(&hca.pcie)) * goodput_share(&hca.port)
}

/// A workload's pace on the cluster as it is (a training step, or a
/// server's engine step under its load), or what stops it: the model's
/// [`crate::model::workload::Pacer`].
pub fn workload_pace(cluster: &Cluster, spec: &WorkloadSpec, storage_gb_per_s: f64) -> Result<Pace, Stop> {
    match spec.load {
        Some(_) => serving::pace(cluster, spec),
        None => training::pace(cluster, spec, storage_gb_per_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::roce_session;

    #[test]
    fn a_rail_without_pfc_loses_about_a_fifth_to_retransmissions() {
        let shell = roce_session("[[faults]]\nkind = \"hca-pfc-off\"\nnode = \"gpu-001\"\nhca = \"mlx5_2\"\n");
        let node = &shell.cluster.nodes[0];
        let (bad, good) = (&node.hcas[2], &node.hcas[1]);
        assert_eq!(goodput_share(&good.port), 1.0);
        let share = link_gbps(&shell.cluster, node, bad) / link_gbps(&shell.cluster, node, good);
        assert!((0.75..0.80).contains(&share), "{share}");
    }
}
