//! Host channel adapters and their ports, as the RDMA stack sees them.

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LinkLayer {
    InfiniBand,
    Ethernet,
}

impl LinkLayer {
    pub fn label(self) -> &'static str {
        match self {
            LinkLayer::InfiniBand => "InfiniBand",
            LinkLayer::Ethernet => "Ethernet",
        }
    }
}

/// The logical port state (IBA 14.2.5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortState {
    Down,
    Initializing,
    Armed,
    Active,
}

impl PortState {
    /// The numeric value the verbs API and ibstatus use.
    pub fn code(self) -> u8 {
        match self {
            PortState::Down => 1,
            PortState::Initializing => 2,
            PortState::Armed => 3,
            PortState::Active => 4,
        }
    }

    /// As the kernel names it (sysfs `state`, `rdma link`).
    pub fn kernel_name(self) -> &'static str {
        match self {
            PortState::Down => "DOWN",
            PortState::Initializing => "INIT",
            PortState::Armed => "ARMED",
            PortState::Active => "ACTIVE",
        }
    }

    /// As ibstat prints it.
    pub fn label(self) -> &'static str {
        match self {
            PortState::Down => "Down",
            PortState::Initializing => "Initializing",
            PortState::Armed => "Armed",
            PortState::Active => "Active",
        }
    }
}

/// The physical port state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhysState {
    Sleep,
    Polling,
    Disabled,
    Training,
    LinkUp,
    LinkErrorRecovery,
}

impl PhysState {
    pub fn code(self) -> u8 {
        match self {
            PhysState::Sleep => 1,
            PhysState::Polling => 2,
            PhysState::Disabled => 3,
            PhysState::Training => 4,
            PhysState::LinkUp => 5,
            PhysState::LinkErrorRecovery => 6,
        }
    }

    /// As ibstat prints it.
    pub fn label(self) -> &'static str {
        match self {
            PhysState::Sleep => "Sleep",
            PhysState::Polling => "Polling",
            PhysState::Disabled => "Disabled",
            PhysState::Training => "PortConfigurationTraining",
            PhysState::LinkUp => "LinkUp",
            PhysState::LinkErrorRecovery => "LinkErrorRecovery",
        }
    }
}

/// Per-lane signalling generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaneSpeed {
    Edr,
    Hdr,
    Ndr,
    Xdr,
}

impl LaneSpeed {
    /// Data rate of one lane in Gb/s, as ibstat's Rate adds them up.
    pub fn gbps(self) -> u32 {
        match self {
            LaneSpeed::Edr => 25,
            LaneSpeed::Hdr => 50,
            LaneSpeed::Ndr => 100,
            LaneSpeed::Xdr => 200,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LaneSpeed::Edr => "EDR",
            LaneSpeed::Hdr => "HDR",
            LaneSpeed::Ndr => "NDR",
            LaneSpeed::Xdr => "XDR",
        }
    }

    /// The lane speed that gives `rate` Gb/s over `width` lanes.
    pub fn for_rate(rate: u32, width: u8) -> Option<LaneSpeed> {
        [LaneSpeed::Edr, LaneSpeed::Hdr, LaneSpeed::Ndr, LaneSpeed::Xdr].into_iter().find(|speed| speed.gbps() * u32::from(width) == rate)
    }
}

/// IB port counters (PortCounters and PortCountersExtended).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    pub symbol_errors: u64,
    pub link_error_recovery: u64,
    pub link_downed: u64,
    pub rcv_errors: u64,
    pub rcv_remote_physical_errors: u64,
    pub xmit_discards: u64,
    pub xmit_wait: u64,
    pub xmit_data: u64,
    pub rcv_data: u64,
    pub xmit_pkts: u64,
    pub rcv_pkts: u64,
}

#[derive(Clone, Debug)]
pub struct Port {
    pub number: u8,
    pub state: PortState,
    pub phys_state: PhysState,
    pub link_layer: LinkLayer,
    /// Active lanes: 4 for a healthy 4X link.
    pub width: u8,
    pub max_width: u8,
    pub lane_speed: LaneSpeed,
    pub max_lane_speed: LaneSpeed,
    pub lid: u16,
    pub sm_lid: u16,
    pub lmc: u8,
    pub capability_mask: u32,
    pub guid: u64,
    pub max_mtu: u32,
    pub active_mtu: u32,
    /// The MTU of the port's netdev. On RoCE the active MTU follows it
    /// ([`roce_active_mtu`]); IPoIB's (4092 in datagram mode) is its own.
    pub netdev_mtu: u32,
    /// RoCE: the priorities with PFC on, bit N for priority N. The site runs
    /// RDMA lossless on [`ROCE_PRIORITY`]; IB has no PFC (0).
    pub pfc_enabled: u8,
    /// RoCE: the priorities on which DCQCN's notification point (sending
    /// CNPs for ECN-marked packets) and reaction point (slowing down on a
    /// CNP) are on; mlx5 enables both on every priority. 0 on IB.
    pub ecn_np: u8,
    pub ecn_rp: u8,
    pub counters: PortCounters,
    /// Symbol errors added per hour of simulated time (a marginal cable).
    pub symbol_errors_per_hour: u64,
    /// When `perfquery -R` last cleared the counters, and the bytes the
    /// jobs had moved through the port by then (they count from there).
    pub counters_reset: Option<(i64, u64)>,
    /// What `perfquery -R` took off the base counts: the far end still has
    /// them (`Cluster::leaf_port_lifetime`).
    pub cleared: PortCounters,
    /// The leaf switch port's counters when it last cleared them (all it
    /// had counted by then).
    pub leaf_counters_reset: Option<PortCounters>,
}

/// The priority RDMA traffic runs on (DSCP 26), lossless with PFC.
pub const ROCE_PRIORITY: u8 = 3;

/// The RoCE netdev MTU of a site with jumbo frames on every rail.
pub const ROCE_NETDEV_MTU: u32 = 9000;

/// The IPoIB netdev MTU in datagram mode (a 4096 IB MTU less the IPoIB header).
pub const IPOIB_NETDEV_MTU: u32 = 4092;

/// The active MTU of a RoCE port whose netdev has `netdev_mtu`: the largest
/// IB MTU that fits after the RoCEv2 headers (GRH, UDP, BTH, atomic ETH,
/// XRC, ICRC: 96 bytes), as ib_core works it out; 0 below 256.
pub fn roce_active_mtu(netdev_mtu: u32) -> u32 {
    let room = netdev_mtu.saturating_sub(96);
    [4096, 2048, 1024, 512, 256].into_iter().find(|&mtu| room >= mtu).unwrap_or(0)
}

/// A netdev MTU an operator would find behind a RoCE active MTU: 1500 (the
/// default, jumbo frames lost) behind 1024.
pub fn roce_netdev_mtu_for(active_mtu: u32) -> u32 {
    match active_mtu {
        256 => 576,
        512 => 1000,
        1024 => 1500,
        2048 => 4000,
        _ => ROCE_NETDEV_MTU,
    }
}

impl Port {
    /// Whether PFC protects the RDMA priority: always on IB (credit-based
    /// flow control), on RoCE when [`ROCE_PRIORITY`] has PFC on.
    pub fn lossless(&self) -> bool {
        self.link_layer == LinkLayer::InfiniBand || self.pfc_enabled & (1 << ROCE_PRIORITY) != 0
    }

    /// Whether congestion control paces the RDMA priority: on RoCE, DCQCN's
    /// both ends on [`ROCE_PRIORITY`]; IB's is the fabric's own.
    pub fn congestion_controlled(&self) -> bool {
        let bit = 1 << ROCE_PRIORITY;
        self.link_layer == LinkLayer::InfiniBand || (self.ecn_np & bit != 0 && self.ecn_rp & bit != 0)
    }

    /// Sets the netdev MTU; on RoCE the active MTU follows.
    pub fn set_netdev_mtu(&mut self, mtu: u32) {
        self.netdev_mtu = mtu;
        if self.link_layer == LinkLayer::Ethernet {
            self.active_mtu = roce_active_mtu(mtu).min(self.max_mtu);
        }
    }

    /// The link rate in Gb/s that ibstat prints for an active port.
    pub fn rate_gbps(&self) -> u32 {
        self.lane_speed.gbps() * u32::from(self.width)
    }

    pub fn is_up(&self) -> bool {
        self.state == PortState::Active && self.phys_state == PhysState::LinkUp
    }
}

#[derive(Clone, Debug)]
pub struct Hca {
    /// RDMA device name, e.g. `mlx5_0`.
    pub name: String,
    /// The network interface bound to it, e.g. `ibp24s0`.
    pub netdev: String,
    /// ibstat's CA type: `MT` and the PCI device id, e.g. `MT4129`.
    pub ca_type: String,
    pub part_id: u32,
    pub board_id: String,
    pub firmware: String,
    pub node_guid: u64,
    /// PCI address as the kernel writes it, e.g. `0000:18:00.0`.
    pub bus_id: String,
    pub pcie: super::gpu::PcieLink,
    /// The NUMA node (CPU socket) the HCA hangs off.
    pub numa_node: u32,
    /// The PCIe switch the HCA sits behind, shared with its rail's GPU.
    pub pcie_switch: u32,
    pub port: Port,
}

impl Hca {
    /// `0x58a2e10300a7820e` → `58a2:e103:00a7:820e`, the ibv_devinfo form.
    pub fn guid_colon_form(guid: u64) -> String {
        let hex = format!("{guid:016x}");
        format!("{}:{}:{}:{}", &hex[0..4], &hex[4..8], &hex[8..12], &hex[12..16])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_active_mtu_follows_the_netdev_as_ib_core_works_it_out() {
        assert_eq!(roce_active_mtu(9000), 4096);
        assert_eq!(roce_active_mtu(4192), 4096);
        assert_eq!(roce_active_mtu(4191), 2048);
        assert_eq!(roce_active_mtu(1500), 1024);
        assert_eq!(roce_active_mtu(351), 0);
        for mtu in [256, 512, 1024, 2048, 4096] {
            assert_eq!(roce_active_mtu(roce_netdev_mtu_for(mtu)), mtu, "the fault's netdev MTU gives its active MTU");
        }
    }
}
