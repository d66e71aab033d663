//! What the InfiniBand tools (ibstat, ibstatus, ibv_devinfo, ibv_devices,
//! perfquery, ibdev2netdev) derive from the model the same way: the order
//! devices are listed in, what a down port reports as its rate and LID, the
//! RoCE port GUID, counters that grow with simulated time, the infiniband-diags
//! usage screen and `ibpanic`/`ibwarn` lines.
//!
//! Facts are from ../shared/reference/fabric/FACTS.md §4 and its captures.

use crate::commands::{Invocation, Signature};
use crate::model::fabric::{Hca, LaneSpeed, LinkLayer, PhysState, Port, PortCounters, PortState};
use crate::model::{Cluster, Node};
use crate::rng::Rng;

/// ibstat, ibstatus and ibdev2netdev walk /sys/class/infiniband with a glob,
/// so `mlx5_10` comes before `mlx5_2`.
pub fn sysfs_order(node: &Node) -> Vec<&Hca> {
    let mut hcas: Vec<&Hca> = node.hcas.iter().collect();
    crate::sort::sort_by(&mut hcas, |a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    hcas
}

/// The negotiated link as the port reports it: lanes and per-lane speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub lanes: u8,
    pub lane: Lane,
}

/// Per-lane signalling, including the slow ones a down port reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Sdr,
    Qdr,
    Negotiated(LaneSpeed),
}

impl Lane {
    /// Tenths of a Gb/s per lane (SDR is 2.5).
    fn tenths_gbps(self) -> u32 {
        match self {
            Lane::Sdr => 25,
            Lane::Qdr => 100,
            Lane::Negotiated(speed) => speed.gbps() * 10,
        }
    }

    /// The name the kernel's `rate` file and mlxlink use.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Sdr => "SDR",
            Lane::Qdr => "QDR",
            Lane::Negotiated(speed) => speed.name(),
        }
    }

    /// `ibv_port_attr.active_speed` and its devinfo string.
    pub fn verbs(self) -> (&'static str, u32) {
        match self {
            Lane::Sdr => ("2.5 Gbps", 1),
            Lane::Qdr => ("10.0 Gbps", 4),
            Lane::Negotiated(LaneSpeed::Edr) => ("25.0 Gbps", 32),
            Lane::Negotiated(LaneSpeed::Hdr) => ("50.0 Gbps", 64),
            Lane::Negotiated(LaneSpeed::Ndr) => ("100.0 Gbps", 128),
            Lane::Negotiated(LaneSpeed::Xdr) => ("200.0 Gbps", 256),
        }
    }
}

impl Link {
    /// A down port has no negotiated link; the HCA reports a placeholder:
    /// 4X QDR (Rate 40) on ConnectX-6 Dx/7, 4X SDR (Rate 10) on ConnectX-8
    /// (captures: ibstat_*_down_*.txt, ibstat_b300_cx8_ports_down_disabled.txt).
    pub fn of(hca: &Hca) -> Link {
        let port = &hca.port;
        if port.state == PortState::Down {
            let lane = if hca.part_id == CONNECTX8 { Lane::Sdr } else { Lane::Qdr };
            return Link { lanes: 4, lane };
        }
        Link { lanes: port.width, lane: Lane::Negotiated(port.lane_speed) }
    }

    /// Tenths of a Gb/s over all lanes.
    fn tenths_gbps(self) -> u32 {
        self.lane.tenths_gbps() * u32::from(self.lanes)
    }

    /// ibstat's `Rate:` value: whole Gb/s, except 1X SDR which is 2.5.
    pub fn ibstat_rate(self) -> String {
        let tenths = self.tenths_gbps();
        if tenths % 10 == 0 {
            (tenths / 10).to_string()
        } else {
            format!("{}.{}", tenths / 10, tenths % 10)
        }
    }

    /// The kernel's `rate` file: `400 Gb/sec (4X NDR)`.
    pub fn sysfs_rate(self) -> String {
        format!("{} Gb/sec ({}X {})", self.ibstat_rate(), self.lanes, self.lane.name())
    }

    /// `ibv_port_attr.active_width` and its devinfo string.
    pub fn verbs_width(self) -> (String, u32) {
        let code = match self.lanes {
            1 => 1,
            4 => 2,
            8 => 4,
            12 => 8,
            2 => 16,
            _ => 0,
        };
        (format!("{}X", self.lanes), code)
    }
}

/// PCI device id of ConnectX-8 (CA type MT4131).
const CONNECTX8: u32 = 4131;
/// PCI device id of BlueField-3, the only part here with hardware version 1.
const BLUEFIELD3: u32 = 41692;

/// `Hardware version` (ibstat) / `hw_ver` (ibv_devinfo).
pub fn hardware_version(hca: &Hca) -> u32 {
    u32::from(hca.part_id == BLUEFIELD3)
}

/// The model has no separate system image GUID; a single-function HCA
/// reports its node GUID there.
pub fn system_image_guid(hca: &Hca) -> u64 {
    hca.node_guid
}

pub fn is_infiniband(port: &Port) -> bool {
    port.link_layer == LinkLayer::InfiniBand
}

/// An IB port that never came up has no LID from the SM: 65535 (capture:
/// the B300 file), and no SM LID. A port that went down after the SM
/// configured it keeps its LID.
fn unconfigured(port: &Port) -> bool {
    is_infiniband(port) && port.phys_state == PhysState::Disabled
}

pub fn base_lid(port: &Port) -> u16 {
    if unconfigured(port) {
        0xffff
    } else {
        port.lid
    }
}

pub fn sm_lid(port: &Port) -> u16 {
    if unconfigured(port) {
        0
    } else {
        port.sm_lid
    }
}

/// The port's capability mask. It is a property of the machine (driver and
/// SM configuration), not of the port state: the B300 capture shows
/// 0xa750e848 on active and disabled ports alike.
pub fn capability_mask(port: &Port) -> u32 {
    port.capability_mask
}

/// The Port GUID ibstat prints. On InfiniBand it is the port's GUID. On RoCE
/// it is the interface id of GID 0, the EUI-64 of the netdev's MAC; a
/// ConnectX derives its MAC from its GUID by dropping the `03:00` in the
/// middle, so a GUID in that form is converted (0xa088c20300e3142a becomes
/// 0xa288c2fffee3142a, as in the captures). Other values are already an
/// interface id; 0 means GID 0 is empty.
pub fn port_guid(port: &Port) -> u64 {
    let guid = port.guid;
    if is_infiniband(port) || guid == 0 || (guid >> 24) & 0xffff != 0x0300 {
        return guid;
    }
    let oui = guid >> 40;
    let nic = guid & 0x00ff_ffff;
    ((oui ^ 0x02_00_00) << 40) | (0xfffe << 24) | nic
}

/// GID 0 as sysfs prints it, or None when the table entry is empty.
pub fn default_gid(port: &Port) -> Option<String> {
    let guid = port_guid(port);
    (guid != 0).then(|| format!("fe80:0000:0000:0000:{}", Hca::guid_colon_form(guid)))
}

/// The IB MTU enum ibv_devinfo prints next to the size.
pub fn mtu_code(mtu: u32) -> u32 {
    match mtu {
        256 => 1,
        512 => 2,
        1024 => 3,
        2048 => 4,
        4096 => 5,
        _ => 0,
    }
}

/// The port's counters at `cluster.now` (`Cluster::hca_port_counters`):
/// the training jobs' traffic counts in the data and packet counters, and a
/// marginal link keeps adding symbol errors.
pub fn counters_now(cluster: &Cluster, port: &Port) -> PortCounters {
    cluster.hca_port_counters(port)
}

/// A process id for `ibpanic: [pid]` lines: the same for the same
/// invocation at the same simulated time.
pub fn pid(invocation: &Invocation) -> u64 {
    let now = invocation.cluster.now.to_string();
    Rng::derive(invocation.cluster.seed, &[&invocation.node.hostname, &invocation.argv.join(" "), &now]).range_u64(3_000, 3_999_999)
}

/// infiniband-diags' management port: `/dev/infiniband/umad*` is root's
/// alone (mode 0600), and RoCE ports and unknown CAs have none. Fails as
/// the tools do: the `ibwarn` line, then `PROGRAM: iberror: failed: ...`.
pub fn open_umad_port(invocation: &Invocation, program: &str, ca: Option<&str>) -> Result<(), super::super::Output> {
    let node = invocation.node;
    let port = match ca {
        Some(name) => node.hca(name),
        None => node.hcas.iter().find(|hca| is_infiniband(&hca.port)),
    };
    if port.is_some_and(|hca| is_infiniband(&hca.port)) && crate::commands::is_root(invocation.env) {
        return Ok(());
    }
    let name = ca.unwrap_or("(null)");
    Err(super::super::Output {
        stdout: format!("{program}: iberror: failed: Failed to open '{name}' port '0'\n"),
        stderr: format!("ibwarn: [{}] mad_rpc_open_port: can't open UMAD port ({name}:0)\n", pid(invocation)),
        status: 255,
        ..Default::default()
    })
}

/// The options every infiniband-diags tool takes (ibdiag_common.c), for
/// the tools' signatures to list after their own, less those a tool
/// leaves out: one declaration gives the usage screen, `help`, the manual
/// page and completion.
pub mod common {
    use crate::commands::Flag;

    pub const CONFIG: Flag =
        Flag { short: Some('z'), long: Some("config"), value: Some("<config>"), help: "use config file, default: /etc/infiniband-diags/ibdiag.conf" };
    pub const CA: Flag = Flag { short: Some('C'), long: Some("Ca"), value: Some("<ca>"), help: "Ca name to use" };
    pub const PORT: Flag = Flag { short: Some('P'), long: Some("Port"), value: Some("<port>"), help: "Ca port number to use" };
    pub const DIRECT: Flag = Flag { short: Some('D'), long: Some("Direct"), value: None, help: "use Direct address argument" };
    pub const LID: Flag = Flag { short: Some('L'), long: Some("Lid"), value: None, help: "use LID address argument" };
    pub const GUID: Flag = Flag { short: Some('G'), long: Some("Guid"), value: None, help: "use GUID address argument" };
    pub const TIMEOUT: Flag = Flag { short: Some('t'), long: Some("timeout"), value: Some("<ms>"), help: "timeout in ms" };
    pub const SM_PORT: Flag = Flag { short: Some('s'), long: Some("sm_port"), value: Some("<lid>"), help: "SM port lid" };
    pub const SHOW_KEYS: Flag = Flag { short: Some('K'), long: Some("show_keys"), value: None, help: "display security keys in output" };
    pub const M_KEY: Flag = Flag { short: Some('y'), long: Some("m_key"), value: Some("<key>"), help: "M_Key to use in request" };
    pub const PKEY_INDEX: Flag =
        Flag { short: Some('Y'), long: Some("pkey-idx"), value: Some("<idx>"), help: "P_Key table index for outgoing SA/GMP MADs (default 0)" };
    pub const ERRORS: Flag = Flag { short: Some('e'), long: Some("errors"), value: None, help: "show send and receive errors" };
    pub const VERBOSE: Flag = Flag { short: Some('v'), long: Some("verbose"), value: None, help: "increase verbosity level" };
    pub const DEBUG: Flag = Flag { short: Some('d'), long: Some("debug"), value: None, help: "raise debug level" };
    pub const HELP: Flag = Flag { short: Some('h'), long: Some("help"), value: None, help: "help message" };
    pub const VERSION: Flag = Flag { short: Some('V'), long: Some("version"), value: None, help: "show version" };
}

/// The usage screen infiniband-diags tools print on stderr (then exit 2):
/// the signature's options in its order.
pub fn diag_usage(signature: &Signature, arguments: &str, examples: &[&str]) -> String {
    let program = signature.name;
    let mut out = format!("\nUsage: {program} [options] {arguments}\n\n");
    if !signature.flags.is_empty() {
        out += "Options:\n";
    }
    for option in signature.flags {
        let mut line = format!("  --{}", option.long.unwrap_or_default());
        if let Some(letter) = option.short {
            line += &format!(", -{letter}");
        }
        if let Some(value) = option.value {
            line += &format!(" {value}");
        }
        if !option.help.is_empty() {
            line = format!("{line:<24}  ");
            let start = line.len();
            line += &wrap_description(start, option.help);
        }
        out += &line;
        out.push('\n');
    }
    if !examples.is_empty() {
        out += "\nExamples:\n";
        for example in examples {
            out += &format!("  {program} {example}\n");
        }
    }
    out.push('\n');
    out
}

/// ibdiag_common's `pretty_print` to 74 columns from column `start`: it
/// breaks after the last space that keeps a line short, keeping that
/// space, and never breaks before the last word.
fn wrap_description(start: usize, text: &str) -> String {
    let room = 74usize.saturating_sub(start);
    let mut out = String::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        // Spaces after the first character, in order.
        let spaces: Vec<usize> = rest.char_indices().skip(1).filter(|(_, c)| *c == ' ').map(|(at, _)| at).collect();
        let Some(&over) = spaces.iter().find(|&&at| at >= room) else {
            out += rest;
            return out;
        };
        let cut = spaces.iter().rev().find(|&&at| at < over).map_or(over, |at| at + 1);
        out += &rest[..cut];
        out += "\n";
        out += &" ".repeat(start);
        rest = &rest[cut..];
    }
}

/// C's strtol with base 0 on a whole argument: `0x1f`, `017`, `42`. Text that
/// is not a number gives 0, as strtol does.
pub fn strtol(text: &str) -> i64 {
    let text = text.trim_start();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (radix, digits) = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        (16, hex)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    let valid: String = digits.chars().take_while(|c| c.is_digit(radix)).collect();
    let value = i64::from_str_radix(&valid, radix).unwrap_or(if valid.is_empty() { 0 } else { i64::MAX });
    if negative {
        -value
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fabric::{LaneSpeed, Port};

    fn port(link_layer: LinkLayer, guid: u64) -> Port {
        Port {
            number: 1,
            state: PortState::Active,
            phys_state: PhysState::LinkUp,
            link_layer,
            width: 4,
            max_width: 4,
            lane_speed: LaneSpeed::Ndr,
            max_lane_speed: LaneSpeed::Ndr,
            lid: 0,
            sm_lid: 0,
            lmc: 0,
            capability_mask: 0x0001_0000,
            guid,
            max_mtu: 4096,
            active_mtu: 4096,
            netdev_mtu: 9000,
            pfc_enabled: 1 << 3,
            ecn_np: 0xff,
            ecn_rp: 0xff,
            counters: PortCounters::default(),
            symbol_errors_per_hour: 0,
            counters_reset: None,
            cleared: PortCounters::default(),
            leaf_counters_reset: None,
        }
    }

    #[test]
    fn roce_port_guid_is_the_eui64_of_the_mac() {
        // Pairs from ibstat_h100_roce_8x400_all_active.txt and the cx6dx file.
        assert_eq!(port_guid(&port(LinkLayer::Ethernet, 0xa088c20300e3142a)), 0xa288c2fffee3142a);
        assert_eq!(port_guid(&port(LinkLayer::Ethernet, 0x946dae0300c2b690)), 0x966daefffec2b690);
        assert_eq!(port_guid(&port(LinkLayer::Ethernet, 0)), 0);
        assert_eq!(port_guid(&port(LinkLayer::Ethernet, 0x201d97fffe0056cf)), 0x201d97fffe0056cf);
        assert_eq!(port_guid(&port(LinkLayer::InfiniBand, 0x946dae0300cde72c)), 0x946dae0300cde72c);
    }

    #[test]
    fn strtol_reads_c_bases() {
        assert_eq!(strtol("1"), 1);
        assert_eq!(strtol("0x10"), 16);
        assert_eq!(strtol("010"), 8);
        assert_eq!(strtol("abc"), 0);
        assert_eq!(strtol("12abc"), 12);
    }

    #[test]
    fn usage_aligns_descriptions_at_column_26_and_wraps_as_pretty_print() {
        use crate::commands::{Flag, Signature};
        static LISTING: Signature = Signature {
            name: "ibstat",
            summary: "",
            usage: "",
            flags: &[Flag { short: Some('l'), long: Some("list_of_cas"), value: None, help: "list all IB devices" }, common::PKEY_INDEX, common::CONFIG],
            examples: &[],
        };
        let usage = diag_usage(&LISTING, "<ca_name> [portnum]", &["-l       # list all IB devices"]);
        assert!(usage.contains("\n  --list_of_cas, -l       list all IB devices\n"));
        assert!(usage.contains("\n  ibstat -l       # list all IB devices\n"));
        assert!(usage.contains("\n  --pkey-idx, -Y <idx>    P_Key table index for outgoing SA/GMP MADs \n                          (default 0)\n"), "{usage}");
        assert!(usage.contains("\n  --config, -z <config>   use config file, default: /etc/infiniband-diags/ibdiag.conf\n"), "{usage}");
    }
}
