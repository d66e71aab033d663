//! `saquery`: the subnet administrator's records as infiniband-diags dumps
//! them (rdma-core `infiniband-diags/saquery.c`): NodeRecords by default
//! (all, or those of one LID or node description), `-s` the ports with
//! the IsSM capability, `SMIR` the SMInfoRecord, `-D` the CAs' LIDs and
//! names, `-L`/`-G`/`-O` a name's LIDs or GUIDs and a LID's name.
//!
//! The SA is the master SM's (on the first spine, `model::switches`); it
//! knows every node its sweep reaches, in its GUID table's order (OpenSM's
//! map keyed by the GUID in network byte order, read on a little-endian
//! host). A switch has one record, for its port 0; a CA one per port.

use crate::commands::fabric::discovery::{node_info, sweep_with_ports, Found, NodeInfo, MELLANOX_VENDOR};
use crate::commands::fabric::ib_common::{common, diag_usage, open_umad_port};
use crate::commands::fabric::sminfo::{activity_count, PRIORITY};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::switches::Fabric;
use crate::model::Cluster;

pub struct Saquery;

static SIGNATURE: Signature = Signature {
    name: "saquery",
    summary: "query the InfiniBand subnet administrator: node records, SM ports and records, LIDs by name",
    usage: "saquery [options] [query-name] [<name> | <lid> | <guid>]",
    flags: &[
        Flag { short: Some('p'), long: Some("p"), value: None, help: "get PathRecord info" },
        Flag { short: Some('N'), long: Some("N"), value: None, help: "get NodeRecord info" },
        Flag { short: Some('L'), long: Some("L"), value: None, help: "return the Lids of the name specified" },
        Flag { short: Some('l'), long: Some("l"), value: None, help: "return the unique Lid of the name specified" },
        Flag { short: Some('G'), long: Some("G"), value: None, help: "return the Guids of the name specified" },
        Flag { short: Some('O'), long: Some("O"), value: None, help: "return name for the Lid specified" },
        Flag { short: Some('U'), long: Some("U"), value: None, help: "return name for the Guid specified" },
        Flag { short: Some('s'), long: Some("s"), value: None, help: "return the PortInfoRecords with isSM or isSMdisabled capability mask bit on" },
        Flag { short: Some('g'), long: Some("g"), value: None, help: "get multicast group info" },
        Flag { short: Some('m'), long: Some("m"), value: None, help: "get multicast member info (if multicast group specified, list member GIDs only for group specified, for example 'saquery -m 0xC000')" },
        Flag { short: Some('x'), long: Some("x"), value: None, help: "get LinkRecord info" },
        Flag { short: Some('c'), long: Some("c"), value: None, help: "get the SA's class port info" },
        Flag { short: Some('S'), long: Some("S"), value: None, help: "get ServiceRecord info" },
        Flag { short: Some('I'), long: Some("I"), value: None, help: "get InformInfoRecord (subscription) info" },
        Flag { short: Some('D'), long: Some("list"), value: None, help: "the node desc of the CA's" },
        Flag { short: None, long: Some("src-to-dst"), value: Some("<src:dst>"), help: "get a PathRecord for <src:dst> where src and dst are either node names or LIDs" },
        Flag { short: None, long: Some("sgid-to-dgid"), value: Some("<sgid-dgid>"), help: "get a PathRecord for <sgid-dgid> where sgid and dgid are addresses in IPv6 format" },
        Flag { short: None, long: Some("node-name-map"), value: Some("<file>"), help: "specify a node name map file" },
        Flag { short: None, long: Some("smkey"), value: Some("<val>"), help: "SA SM_Key value for the query. If non-numeric value (like 'x') is specified then saquery will prompt for a value.  Default (when not specified here or in ibdiag.conf) is to  use SM_Key == 0 (or \"untrusted\")" },
        Flag { short: None, long: Some("slid"), value: Some("<lid>"), help: "Source LID (PathRecord)" },
        Flag { short: None, long: Some("dlid"), value: Some("<lid>"), help: "Destination LID (PathRecord)" },
        Flag { short: None, long: Some("mlid"), value: Some("<lid>"), help: "Multicast LID (MCMemberRecord)" },
        Flag { short: None, long: Some("sgid"), value: Some("<gid>"), help: "Source GID (IPv6 format) (PathRecord)" },
        Flag { short: None, long: Some("dgid"), value: Some("<gid>"), help: "Destination GID (IPv6 format) (PathRecord)" },
        Flag { short: None, long: Some("gid"), value: Some("<gid>"), help: "Port GID (MCMemberRecord)" },
        Flag { short: None, long: Some("mgid"), value: Some("<gid>"), help: "Multicast GID (MCMemberRecord)" },
        Flag { short: Some('r'), long: Some("reversible"), value: Some("<val>"), help: "Reversible path (PathRecord)" },
        Flag { short: Some('n'), long: Some("numb_path"), value: Some("<val>"), help: "Number of paths (PathRecord)" },
        Flag { short: None, long: Some("pkey"), value: Some("<val>"), help: "P_Key (PathRecord, MCMemberRecord). If non-numeric value (like 'x') is specified then saquery will prompt for a value" },
        Flag { short: Some('Q'), long: Some("qos_class"), value: Some("<val>"), help: "QoS Class (PathRecord)" },
        Flag { short: None, long: Some("sl"), value: Some("<val>"), help: "Service level (PathRecord, MCMemberRecord)" },
        Flag { short: Some('M'), long: Some("mtu"), value: Some("<val>"), help: "MTU and selector (PathRecord, MCMemberRecord)" },
        Flag { short: Some('R'), long: Some("rate"), value: Some("<val>"), help: "Rate and selector (PathRecord, MCMemberRecord)" },
        Flag { short: None, long: Some("pkt_lifetime"), value: Some("<val>"), help: "Packet lifetime and selector (PathRecord, MCMemberRecord)" },
        Flag { short: Some('q'), long: Some("qkey"), value: Some("<val>"), help: "Q_Key (MCMemberRecord). If non-numeric value (like 'x') is specified then saquery will prompt for a value" },
        Flag { short: Some('T'), long: Some("tclass"), value: Some("<val>"), help: "Traffic Class (PathRecord, MCMemberRecord)" },
        Flag { short: Some('F'), long: Some("flow_label"), value: Some("<val>"), help: "Flow Label (PathRecord, MCMemberRecord)" },
        Flag { short: Some('H'), long: Some("hop_limit"), value: Some("<val>"), help: "Hop limit (PathRecord, MCMemberRecord)" },
        Flag { short: None, long: Some("scope"), value: Some("<val>"), help: "Scope (MCMemberRecord)" },
        Flag { short: Some('J'), long: Some("join_state"), value: Some("<val>"), help: "Join state (MCMemberRecord)" },
        Flag { short: Some('X'), long: Some("proxy_join"), value: Some("<val>"), help: "Proxy join (MCMemberRecord)" },
        Flag { short: None, long: Some("service_id"), value: Some("<val>"), help: "ServiceID (PathRecord)" },
        common::CONFIG,
        common::CA,
        common::PORT,
        common::TIMEOUT,
        common::SHOW_KEYS,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[
        Example { command: "sudo saquery -D", description: "every CA the subnet manager knows: LID and node description" },
        Example { command: "sudo saquery \"gpu-002 mlx5_0\"", description: "the NodeRecord of one HCA, by its node description" },
        Example { command: "sudo saquery -s", description: "the ports that run (or could run) a subnet manager" },
    ],
};

/// The query names saquery takes, with their aliases and arguments.
const QUERIES: [(&str, &str, &str); 16] = [
    ("ClassPortInfo", "CPI", ""),
    ("NodeRecord", "NR", "[lid]"),
    ("PortInfoRecord", "PIR", "[[lid]/[port]/[options]]"),
    ("SL2VLTableRecord", "SL2VL", "[[lid]/[in_port]/[out_port]]"),
    ("PKeyTableRecord", "PKTR", "[[lid]/[port]/[block]]"),
    ("VLArbitrationTableRecord", "VLAR", "[[lid]/[port]/[block]]"),
    ("InformInfoRecord", "IIR", "[subscriber_gid]"),
    ("LinkRecord", "LR", "[[from_lid]/[from_port]] [[to_lid]/[to_port]]"),
    ("ServiceRecord", "SR", ""),
    ("PathRecord", "PR", ""),
    ("MCMemberRecord", "MCMR", ""),
    ("LFTRecord", "LFTR", "[[lid]/[block]]"),
    ("MFTRecord", "MFTR", "[[mlid]/[position]/[block]]"),
    ("GUIDInfoRecord", "GIR", "[[lid]/[block]]"),
    ("SwitchInfoRecord", "SWIR", "[lid]"),
    ("SMInfoRecord", "SMIR", "[lid]"),
];

fn usage() -> String {
    let mut arguments = "[query-name] [<name> | <lid> | <guid>]\n\nSupported query names (and aliases):\n".to_string();
    for (name, alias, args) in QUERIES {
        arguments += &format!("  {name} ({alias}) {args}\n");
    }
    arguments += "\n  Queries node records by default.";
    diag_usage(&SIGNATURE, &arguments, &[])
}

/// One NodeRecord: what the SA knows of a node, and the port its sweep
/// reached it on.
struct NodeRecord {
    info: NodeInfo,
    local_port: usize,
}

impl NodeRecord {
    fn dump(&self) -> String {
        let info = &self.info;
        let (node_type, partition_cap, revision) = if info.is_switch { ("Switch", 0x2000, 0xa0) } else { ("Channel Adapter", 0x80, 0) };
        format!(
            "NodeRecord dump:\n\t\tlid.....................{}\n\t\treserved................0x0\n\t\tbase_version............0x1\n\t\tclass_version...........0x1\n\t\tnode_type...............{node_type}\n\t\tnum_ports...............{}\n\t\tsys_guid................0x{:016x}\n\t\tnode_guid...............0x{:016x}\n\t\tport_guid...............0x{:016x}\n\t\tpartition_cap...........0x{partition_cap:X}\n\t\tdevice_id...............0x{:X}\n\t\trevision................0x{revision:X}\n\t\tport_num................{}\n\t\tvendor_id...............0x{MELLANOX_VENDOR:X}\n\t\tNodeDescription.........{}\n",
            info.lid, info.ports, info.system_guid, info.node_guid, info.port_guid, info.device_id, self.local_port, info.description
        )
    }
}

/// The SA's NodeRecords, in its table's order.
fn node_records(cluster: &Cluster, fabric: &Fabric) -> Vec<NodeRecord> {
    let mut records: Vec<NodeRecord> = sweep_with_ports(cluster, fabric, Found::Switch(0))
        .into_iter()
        .map(|(found, local_port)| NodeRecord { info: node_info(cluster, fabric, found), local_port })
        .collect();
    crate::sort::sort_by(&mut records, |a, b| a.info.node_guid.swap_bytes().cmp(&b.info.node_guid.swap_bytes()));
    records
}

/// How the records print.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Print {
    Dump,
    Lids,
    UniqueLid,
    Guids,
    NameOfLid,
    CaList,
}

/// A query the emulator does not answer, said as such.
fn not_emulated(what: &str) -> Output {
    Output::error(format!("saquery: {what} is not emulated; try NodeRecord (the default), SMInfoRecord or -s\n"), 1)
}

impl Command for Saquery {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut ca, mut print, mut issm, mut words) = (None, Print::Dump, false, Vec::new());
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('C') => ca = value,
                    Some('L') => print = Print::Lids,
                    Some('l') => print = Print::UniqueLid,
                    Some('G') => print = Print::Guids,
                    Some('O') => print = Print::NameOfLid,
                    Some('D') => print = Print::CaList,
                    Some('N') => print = Print::Dump,
                    Some('s') => issm = true,
                    Some('h') => return Output::error(usage(), 2),
                    // Path, multicast, link, service and inform records, and the class port info.
                    Some('p' | 'U' | 'g' | 'm' | 'x' | 'c' | 'S' | 'I') => return not_emulated(flag.long.unwrap_or_default()),
                    None if matches!(flag.long, Some("src-to-dst" | "sgid-to-dgid")) => return not_emulated(flag.long.unwrap_or_default()),
                    _ => {}
                },
                Arg::Positional(word) => words.push(word),
                other => return Output::error(crate::commands::options::complaint("saquery", &other) + &usage(), 2),
            }
        }
        let named = matches!(print, Print::Lids | Print::UniqueLid | Print::Guids);
        if named && words.is_empty() {
            return Output::error(format!("ERROR: name not specified\n{}", usage()), 2);
        }
        if print == Print::NameOfLid && words.is_empty() {
            return Output::error(format!("ERROR: lid not specified\n{}", usage()), 2);
        }
        if let Err(refused) = open_umad_port(invocation, "saquery", ca.as_deref()) {
            return refused;
        }
        let cluster = invocation.cluster;
        // The management port opened on an IB port: the cluster's fabric is IB.
        let Some(fabric) = Fabric::of(cluster) else { return Output::error("Failed to bind to the SA\n", 255) };
        let sm = fabric.subnet_manager();
        let done = |text: String| Output { duration_ms: 30, ..Output::ok(text) };
        if issm {
            // The SM's switch port 0 carries IsSM; no port has IsSM disabled.
            return done(format!(
                "IsSM ports\nPortInfoRecord dump:\n\t\tEndPortLid..............{}\n\t\tPortNum.................0\n\t\tbase_lid................{}\n\t\tmaster_sm_base_lid......{}\n\t\tcapability_mask.........0x{:X}\n\nIsSMdisabled ports\n",
                sm.lid, sm.lid, sm.lid, 0x0248_0002_u32
            ));
        }
        // A query name, then what it takes.
        let query = words.first().and_then(|word| QUERIES.iter().find(|(name, alias, _)| word == name || word == alias));
        if query.is_some() {
            words.remove(0);
        }
        let records = node_records(cluster, &fabric);
        let argument = words.first().map(String::as_str);
        if let Some(("SMInfoRecord", ..)) = query {
            if argument.is_some_and(|lid| crate::commands::fabric::ib_common::strtol(lid) != i64::from(sm.lid)) {
                return done(String::new());
            }
            return done(format!(
                "SMInfoRecord dump:\n\t\tRID\n\t\tLID...................{}\n\t\tSMInfo dump:\n\t\tGUID..................0x{:016x}\n\t\tSM_Key................0x0000000000000000\n\t\tActCount..............{}\n\t\tPriority..............{PRIORITY}\n\t\tSMState...............3\n",
                sm.lid,
                sm.guid,
                activity_count(cluster)
            ));
        }
        if let Some((name, ..)) = query.filter(|(name, ..)| *name != "NodeRecord") {
            return not_emulated(name);
        }
        // The default query: NodeRecords, of one LID when a name or LID is given.
        let wanted_lid = match (print, argument) {
            (Print::Dump, Some(word)) if word.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                match records.iter().find(|record| record.info.description == word) {
                    Some(record) => Some(record.info.lid),
                    None => return Output::error(format!("Failed to find lid for \"{word}\": Machine is not on the network\n"), 64),
                }
            }
            (Print::Dump, Some(word)) => match crate::commands::fabric::ib_common::strtol(word) {
                lid @ 1..=0xffff => Some(lid as u16),
                _ => return Output::error(format!("Invalid lid specified: \"{word}\"\n"), 22),
            },
            (Print::NameOfLid, Some(word)) => Some(crate::commands::fabric::ib_common::strtol(word).clamp(0, 0xffff) as u16),
            _ => None,
        };
        if print == Print::NameOfLid && wanted_lid == Some(0) {
            return Output::error(format!("ERROR: lid invalid\n{}", usage()), 2);
        }
        let mut out = String::new();
        if print == Print::CaList {
            out += "   LID \"name\"\n================\n";
        }
        for record in &records {
            match print {
                Print::CaList if !record.info.is_switch => out += &format!("{:>6}  \"{}\"\n", record.info.lid, record.info.description),
                Print::CaList => {}
                Print::NameOfLid if wanted_lid == Some(record.info.lid) => out += &format!("{}\n", record.info.description),
                Print::NameOfLid => {}
                Print::Dump if wanted_lid.is_none_or(|lid| lid == record.info.lid) => out += &record.dump(),
                Print::Dump => {}
                Print::Lids | Print::UniqueLid | Print::Guids if argument == Some(record.info.description.as_str()) => {
                    out += &if print == Print::Guids { format!("0x{:016x}\n", record.info.port_guid) } else { format!("{}\n", record.info.lid) };
                    if print == Print::UniqueLid {
                        break;
                    }
                }
                Print::Lids | Print::UniqueLid | Print::Guids => {}
            }
        }
        done(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn node_records_are_the_sms_view_of_every_port() {
        let all = run_on_first_node("sudo saquery").stdout;
        assert_eq!(all.matches("NodeRecord dump:\n").count(), 12 + 16);
        assert_eq!(all.matches("\t\tnode_type...............Switch\n").count(), 12);
        let one = run_on_first_node("sudo saquery \"gpu-002 mlx5_0\"").stdout;
        assert!(one.starts_with("NodeRecord dump:\n\t\tlid.....................108\n\t\treserved................0x0\n"), "{one}");
        assert!(one.contains("\t\tnode_type...............Channel Adapter\n\t\tnum_ports...............1\n\t\tsys_guid................0x"), "{one}");
        assert!(one.contains("\t\tdevice_id...............0x1021\n\t\trevision................0x0\n\t\tport_num................1\n\t\tvendor_id...............0x2C9\n\t\tNodeDescription.........gpu-002 mlx5_0\n"), "{one}");
        assert_eq!(run_on_first_node("sudo saquery 108").stdout, one);
        let lost = run_on_first_node("sudo saquery gpu-002");
        assert_eq!((lost.status, lost.stderr.as_str()), (64, "Failed to find lid for \"gpu-002\": Machine is not on the network\n"));
        let cas = run_on_first_node("sudo saquery -D").stdout;
        assert!(cas.starts_with("   LID \"name\"\n================\n") && cas.contains("\n   100  \"gpu-001 mlx5_0\"\n"), "{cas}");
        assert_eq!(cas.lines().count(), 2 + 16);
        assert_eq!(run_on_first_node("sudo saquery -O 108").stdout, "gpu-002 mlx5_0\n");
        assert_eq!(run_on_first_node("sudo saquery -L \"gpu-002 mlx5_0\"").stdout, "108\n");
    }

    #[test]
    fn the_sm_records_name_the_first_spine() {
        let smir = run_on_first_node("sudo saquery SMIR").stdout;
        assert!(smir.starts_with("SMInfoRecord dump:\n\t\tRID\n\t\tLID...................1\n\t\tSMInfo dump:\n\t\tGUID..................0x506b4b03"), "{smir}");
        assert!(smir.ends_with("\t\tPriority..............15\n\t\tSMState...............3\n"), "{smir}");
        let issm = run_on_first_node("sudo saquery -s").stdout;
        assert!(issm.starts_with("IsSM ports\nPortInfoRecord dump:\n\t\tEndPortLid..............1\n\t\tPortNum.................0\n"), "{issm}");
        assert!(issm.ends_with("\nIsSMdisabled ports\n"), "{issm}");
        assert_eq!(run_on_first_node("saquery").status, 255, "root's");
        assert!(run_on_first_node("sudo saquery -h")
            .stderr
            .contains("Supported query names (and aliases):\n  ClassPortInfo (CPI) \n  NodeRecord (NR) [lid]\n"));
        for other in ["sudo saquery -p", "sudo saquery PR", "sudo saquery --src-to-dst 100:108"] {
            assert_eq!(run_on_first_node(other).status, 1, "{other}");
        }
    }
}
