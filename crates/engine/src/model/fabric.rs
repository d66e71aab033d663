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
    pub counters: PortCounters,
    /// Symbol errors added per hour of simulated time (a marginal cable).
    pub symbol_errors_per_hour: u64,
    /// When `perfquery -R` last cleared the counters, and the bytes the
    /// jobs had moved through the port by then (they count from there).
    pub counters_reset: Option<(i64, u64)>,
}

impl Port {
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
