//! `sinfo`: partitions and node states from the model, in Slurm's default
//! layouts: the partition summary, `-N` (one line per node), `-l` (long),
//! `-R` (reasons), `-s` (summary counts), with `-p`, `-n`, `-t` filters and
//! `-h` (no header); `-o`/`--format` prints the fields a format names
//! (`%N %t`, `%10P %.6D`), grouping nodes whose fields are the same. The layouts are those of SchedMD's src/sinfo/opts.c,
//! the same from 17.11 to 25.11 but for `-l`, which shows the RESERVATION
//! column from 23.02 (`Versions::slurm_release`).

use super::format::{self, Part};
use super::{bad_option, compact_state, field, hostlist, long_state, reason_user, timestamp, PARTITION, TIME_LIMIT};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::node::SlurmShown;
use crate::model::Node;

pub struct Sinfo;

static SIGNATURE: Signature = Signature {
    name: "sinfo",
    summary: "view information about Slurm nodes and partitions",
    usage: "sinfo [OPTIONS]",
    flags: &[
        Flag { short: Some('e'), long: Some("exact"), value: None, help: "group nodes only on exactly identical configurations (they are here)" },
        Flag { short: Some('N'), long: Some("Node"), value: None, help: "one line per node" },
        Flag { short: Some('l'), long: Some("long"), value: None, help: "more information" },
        Flag { short: Some('R'), long: Some("list-reasons"), value: None, help: "why nodes are down, drained or failing" },
        Flag { short: Some('s'), long: Some("summarize"), value: None, help: "partition summary: allocated/idle/other/total" },
        Flag { short: Some('p'), long: Some("partition"), value: Some("PARTITION"), help: "only this partition" },
        Flag { short: Some('n'), long: Some("nodes"), value: Some("NODES"), help: "only these nodes (a hostlist)" },
        Flag { short: Some('t'), long: Some("states"), value: Some("STATES"), help: "only nodes in these states (idle,alloc,down,drain)" },
        Flag { short: Some('h'), long: Some("noheader"), value: None, help: "no header" },
        Flag { short: Some('a'), long: Some("all"), value: None, help: "all partitions" },
        Flag { short: Some('o'), long: Some("format"), value: Some("FORMAT"), help: "the fields to print, e.g. \"%N %t %E\"" },
    ],
    examples: &[
        Example { command: "sinfo", description: "partitions and node states" },
        Example { command: "sinfo -R", description: "why nodes are down or drained" },
        Example { command: "sinfo -N -l", description: "one line per node, with CPUs, memory and reason" },
        Example { command: "sinfo -N -o \"%N %t %E\"", description: "each node's state and reason" },
    ],
};

#[derive(Default)]
struct Options {
    per_node: bool,
    long: bool,
    reasons: bool,
    summarize: bool,
    header: bool,
    partition: Option<String>,
    nodes: Option<Vec<String>>,
    states: Option<Vec<String>>,
    format: Option<String>,
}

/// The fields `-o` knows, with their headers.
const FORMAT_FIELDS: &[(char, &str)] = &[
    ('a', "AVAIL"),
    ('c', "CPUS"),
    ('C', "CPUS(A/I/O/T)"),
    ('D', "NODES"),
    ('E', "REASON"),
    ('f', "AVAIL_FEATURES"),
    ('G', "GRES"),
    ('H', "TIMESTAMP"),
    ('l', "TIMELIMIT"),
    ('m', "MEMORY"),
    ('n', "HOSTNAMES"),
    ('N', "NODELIST"),
    ('P', "PARTITION"),
    ('R', "PARTITION"),
    ('t', "STATE"),
    ('T', "STATE"),
    ('u', "USER"),
    ('z', "S:C:T"),
];

/// Whether a node is in one of `sinfo -t`'s state names.
fn in_states(node: &Node, now: crate::model::time::EpochSeconds, states: &[String]) -> bool {
    states.iter().any(|state| {
        let state = state.to_ascii_lowercase();
        let by_state = match SlurmShown::of(node) {
            SlurmShown::Idle => matches!(state.as_str(), "idle" | "i"),
            SlurmShown::Allocated => matches!(state.as_str(), "alloc" | "allocated"),
            SlurmShown::Down => state == "down",
            SlurmShown::Drained => matches!(state.as_str(), "drain" | "drained"),
            SlurmShown::Draining => matches!(state.as_str(), "drain" | "drng" | "draining"),
        };
        by_state || (!crate::model::service::slurmd_responds(node, now) && matches!(state.as_str(), "no_respond" | "not_responding"))
    })
}

/// Groups items by a key, keeping the order of first appearance.
fn group_by<'n, K: PartialEq>(nodes: &[&'n Node], key: impl Fn(&Node) -> K) -> Vec<(K, Vec<&'n Node>)> {
    let mut groups: Vec<(K, Vec<&Node>)> = Vec::new();
    for node in nodes {
        let k = key(node);
        match groups.iter_mut().find(|(existing, _)| *existing == k) {
            Some((_, members)) => members.push(node),
            None => groups.push((k, vec![node])),
        }
    }
    groups
}

fn names(nodes: &[&Node]) -> String {
    let names: Vec<&str> = nodes.iter().map(|node| node.hostname.as_str()).collect();
    hostlist::compress(&names)
}

/// One line of the default partition view (`%#P %.5a %.10l %.6D %.6t %N`).
pub fn partition_line(partition_width: usize, partition: &str, count: usize, state: &str, nodelist: &str) -> String {
    format!(
        "{} {} {} {} {} {}",
        field(partition, partition_width, false),
        field("up", 5, true),
        field(TIME_LIMIT, 10, true),
        format_args!("{count:>6}"),
        field(state, 6, true),
        nodelist
    )
}

impl Command for Sinfo {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut options = Options { header: true, ..Options::default() };
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('N') => options.per_node = true,
                    Some('l') => options.long = true,
                    Some('R') => options.reasons = true,
                    Some('s') => options.summarize = true,
                    Some('h') => options.header = false,
                    Some('p') => options.partition = value,
                    Some('n') => {
                        let list = value.unwrap_or_default();
                        match hostlist::expand(&list) {
                            Some(names) => options.nodes = Some(names),
                            None => return Output::error(format!("sinfo: error: Invalid node name specified: {list}\n"), 1),
                        }
                    }
                    Some('t') => options.states = Some(value.unwrap_or_default().split(',').map(String::from).collect()),
                    Some('o') => options.format = value,
                    _ => {}
                },
                Arg::Unknown(flag) => return bad_option("sinfo", &flag),
                Arg::MissingValue(flag) => {
                    let complaint = crate::commands::options::requires_argument("sinfo", flag.short, flag.long);
                    return Output::error(format!("{complaint}Try \"sinfo --help\" for more information\n"), 1);
                }
                Arg::Positional(_) => {}
            }
        }
        let cluster = invocation.cluster;
        let partition_shown = format!("{PARTITION}*");
        let wanted_partition = options.partition.as_deref().is_none_or(|p| p.split(',').any(|p| p == PARTITION));
        let nodes: Vec<&Node> = cluster
            .nodes
            .iter()
            .map(AsRef::as_ref)
            .filter(|_| wanted_partition)
            .filter(|node| options.nodes.as_ref().is_none_or(|names| names.contains(&node.hostname)))
            .filter(|node| options.states.as_ref().is_none_or(|states| in_states(node, cluster.now, states)))
            .collect();
        if let Some(format) = &options.format {
            return match format::parse(format, FORMAT_FIELDS, "node") {
                Ok(parts) => Output::ok(formatted(&parts, &nodes, cluster, &options)),
                Err(message) => Output::error(format!("sinfo: error: {message}\n"), 1),
            };
        }
        let mut out = String::new();
        if options.long && !options.reasons {
            out.push_str(&crate::model::time::ctime(cluster.now));
            out.push('\n');
        }

        if options.reasons {
            // `%20E %9u %19H %N`: only nodes that carry a reason.
            if options.header {
                out.push_str("REASON               USER      TIMESTAMP           NODELIST\n");
            }
            let flagged: Vec<&Node> = nodes.iter().copied().filter(|node| node.scheduler_reason.is_some()).collect();
            for ((reason, since), members) in group_by(&flagged, |node| (node.scheduler_reason.clone().unwrap_or_default(), node.scheduler_reason_since)) {
                out.push_str(&format!(
                    "{} {} {} {}\n",
                    field(&reason, 20, false),
                    field(reason_user(&reason), 9, false),
                    field(&timestamp(since), 19, false),
                    names(&members)
                ));
            }
            return Output::ok(out);
        }

        if options.per_node {
            let host = &cluster.preset.host;
            let node_width = nodes.iter().map(|n| n.hostname.chars().count()).max().unwrap_or(0).max(8);
            let partition_width = partition_shown.len().max(9);
            if options.long {
                if options.header {
                    out.push_str(&format!(
                        "{} {} {} {} {} {} {} {} {} {} {}\n",
                        field("NODELIST", node_width, false),
                        field("NODES", 6, true),
                        field("PARTITION", partition_width, false),
                        field("STATE", 11, true),
                        field("CPUS", 4, true),
                        field("S:C:T", 8, true),
                        field("MEMORY", 6, true),
                        field("TMP_DISK", 8, true),
                        field("WEIGHT", 6, true),
                        field("AVAIL_FE", 8, true),
                        field("REASON", 20, false),
                    ));
                }
                let sct = format!("{}:{}:{}", host.sockets, host.cores_per_socket, host.threads_per_core);
                for node in &nodes {
                    let reason = node.scheduler_reason.clone().unwrap_or_else(|| "none".to_string());
                    out.push_str(&format!(
                        "{} {} {} {} {} {} {} {} {} {} {}\n",
                        field(&node.hostname, node_width, false),
                        field("1", 6, true),
                        field(&partition_shown, partition_width, false),
                        field(&long_state(node, cluster.now), 11, true),
                        format_args!("{:>4}", host.cpus()),
                        field(&sct, 8, true),
                        format_args!("{:>6}", host.memory_mib),
                        field("0", 8, true),
                        field("1", 6, true),
                        field("(null)", 8, true),
                        field(&reason, 20, false),
                    ));
                }
            } else {
                if options.header {
                    out.push_str(&format!(
                        "{} {} {} {}\n",
                        field("NODELIST", node_width, false),
                        field("NODES", 6, true),
                        field("PARTITION", partition_width, false),
                        field("STATE", 6, false),
                    ));
                }
                for node in &nodes {
                    out.push_str(&format!(
                        "{} {} {} {}\n",
                        field(&node.hostname, node_width, false),
                        field("1", 6, true),
                        field(&partition_shown, partition_width, false),
                        field(&compact_state(node, cluster.now), 6, false),
                    ));
                }
            }
            return Output::ok(out);
        }

        let partition_width = partition_shown.len().max(9);
        if options.summarize {
            if options.header {
                out.push_str(&format!("{} AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n", field("PARTITION", partition_width, false)));
            }
            if !nodes.is_empty() || wanted_partition {
                let count =
                    |state: SlurmShown| nodes.iter().filter(|n| SlurmShown::of(n) == state && crate::model::service::slurmd_responds(n, cluster.now)).count();
                let allocated = count(SlurmShown::Allocated);
                let idle = count(SlurmShown::Idle);
                let total = nodes.len();
                let other = total - allocated - idle;
                out.push_str(&format!(
                    "{} {} {} {} {}\n",
                    field(&partition_shown, partition_width, false),
                    field("up", 5, true),
                    field(TIME_LIMIT, 10, true),
                    field(&format!("{allocated}/{idle}/{other}/{total}"), 16, true),
                    names(&nodes)
                ));
            }
            return Output::ok(out);
        }

        if options.long {
            // 23.02 added the reservation (`%.11reservation`) before the node list.
            let reservation = cluster.versions.slurm_release() >= (23, 2);
            if options.header {
                out.push_str(&format!(
                    "{} AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE {}NODELIST\n",
                    field("PARTITION", partition_width, false),
                    if reservation { "RESERVATION " } else { "" }
                ));
            }
            for (state, members) in group_by(&nodes, |node| long_state(node, cluster.now)) {
                out.push_str(&format!(
                    "{} {} {} {} {} {} {} {} {} {}{}\n",
                    field(&partition_shown, partition_width, false),
                    field("up", 5, true),
                    field(TIME_LIMIT, 10, true),
                    field("1-infinite", 10, true),
                    field("no", 4, true),
                    field("NO", 8, true),
                    field("all", 10, true),
                    format_args!("{:>6}", members.len()),
                    field(&state, 11, true),
                    // The model has no reservations: the column is empty.
                    if reservation { format!("{} ", field("", 11, true)) } else { String::new() },
                    names(&members)
                ));
            }
            return Output::ok(out);
        }

        if options.header {
            out.push_str(&format!("{} AVAIL  TIMELIMIT  NODES  STATE NODELIST\n", field("PARTITION", partition_width, false)));
        }
        let groups = group_by(&nodes, |node| compact_state(node, cluster.now));
        if groups.is_empty() && wanted_partition && options.nodes.is_none() && options.states.is_none() {
            // A partition with no nodes still has a line.
            out.push_str(&partition_line(partition_width, &partition_shown, 0, "n/a", ""));
            out.push('\n');
        }
        for (state, members) in groups {
            out.push_str(&partition_line(partition_width, &partition_shown, members.len(), &state, &names(&members)));
            out.push('\n');
        }
        Output::ok(out)
    }
}

/// A field's value for a group of nodes (all alike in every field but the node lists).
fn value(kind: char, members: &[&Node], cluster: &crate::model::Cluster) -> String {
    let host = &cluster.preset.host;
    let first = members[0];
    match kind {
        'a' => "up".to_string(),
        'c' => host.cpus().to_string(),
        'C' => {
            let cpus = host.cpus() as usize * members.len();
            let allocated = members.iter().filter(|n| matches!(SlurmShown::of(n), SlurmShown::Allocated | SlurmShown::Draining)).count() * host.cpus() as usize;
            let other = members
                .iter()
                .filter(|n| {
                    SlurmShown::of(n) == SlurmShown::Drained || SlurmShown::of(n) == SlurmShown::Down || !crate::model::service::slurmd_responds(n, cluster.now)
                })
                .count()
                * host.cpus() as usize;
            format!("{allocated}/{}/{other}/{cpus}", cpus - allocated - other)
        }
        'D' => members.len().to_string(),
        'E' => first.scheduler_reason.clone().unwrap_or_else(|| "none".to_string()),
        'f' | 'G' => "(null)".to_string(),
        'H' => first.scheduler_reason.as_ref().map_or_else(|| "Unknown".to_string(), |_| timestamp(first.scheduler_reason_since)),
        'l' => TIME_LIMIT.to_string(),
        'm' => host.memory_mib.to_string(),
        'n' | 'N' => names(members),
        'P' => format!("{PARTITION}*"),
        'R' => PARTITION.to_string(),
        't' => compact_state(first, cluster.now),
        'T' => long_state(first, cluster.now),
        'u' => first.scheduler_reason.as_deref().map_or_else(|| "Unknown".to_string(), |reason| reason_user(reason).to_string()),
        'z' => format!("{}:{}:{}", host.sockets, host.cores_per_socket, host.threads_per_core),
        _ => String::new(),
    }
}

/// `-o FORMAT`: a header from the fields' names, then one line for each
/// group of nodes alike in every field but the node lists (each node its own
/// line with `-N`).
fn formatted(parts: &[Part], nodes: &[&Node], cluster: &crate::model::Cluster, options: &Options) -> String {
    let mut out = String::new();
    if options.header {
        out += &format::header(parts, FORMAT_FIELDS);
    }
    let kinds: Vec<char> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Field { kind, .. } if !matches!(kind, 'n' | 'N' | 'D' | 'C') => Some(*kind),
            _ => None,
        })
        .collect();
    let groups: Vec<Vec<&Node>> = if options.per_node {
        nodes.iter().map(|node| vec![*node]).collect()
    } else {
        group_by(nodes, |node| kinds.iter().map(|kind| value(*kind, &[node], cluster)).collect::<Vec<_>>()).into_iter().map(|(_, members)| members).collect()
    };
    for members in groups {
        out += &format::render(parts, |kind| value(kind, &members, cluster));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_on_first_node;

    const CAPTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/reference/fabric/slurm_sinfo_gpu_partition_drng_fail_maint.txt");

    #[test]
    fn default_view() {
        assert_eq!(
            run_on_first_node("sinfo").stdout,
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ngpu*         up   infinite      2   idle gpu-[001-002]\n"
        );
        assert_eq!(run_on_first_node("sinfo -R").stdout, "REASON               USER      TIMESTAMP           NODELIST\n");
        assert_eq!(run_on_first_node("sinfo -p cpu").stdout, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n");
        assert_eq!(
            run_on_first_node("sinfo -s").stdout,
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\ngpu*         up   infinite          0/2/0/2 gpu-[001-002]\n"
        );
        assert_eq!(run_on_first_node("sinfo -Z").status, 1);
    }

    #[test]
    fn formats_name_their_fields() {
        assert_eq!(run_on_first_node("sinfo -o \"%N %t\"").stdout, "NODELIST STATE\ngpu-[001-002] idle\n");
        assert_eq!(run_on_first_node("sinfo -N -h -o '%10n|%.6t|%c'").stdout, "gpu-001   |  idle|224\ngpu-002   |  idle|224\n");
        assert_eq!(run_on_first_node("sinfo --format='%P %.5a %D %%'").stdout, "PARTITION AVAIL NODES %\ngpu*    up 2 %\n");
        let bad = run_on_first_node("sinfo -o %Q");
        assert_eq!((bad.stderr.as_str(), bad.status), ("sinfo: error: Invalid node format specification: Q\n", 1));
        assert_eq!(run_on_first_node("sinfo -h -o %99999999999999999999N").stdout.len(), 1025);
    }

    /// Every row of the real capture, rebuilt from its own values with this
    /// module's formatter and hostlist compression (the time limit is fixed
    /// here, so rows are compared with it substituted).
    #[test]
    fn rows_match_the_capture() {
        let Ok(capture) = std::fs::read_to_string(CAPTURE) else {
            eprintln!("capture not found: {CAPTURE}");
            return;
        };
        let mut lines = capture.lines();
        assert_eq!(lines.next(), Some("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST"));
        for line in lines {
            let columns: Vec<&str> = line.split_whitespace().collect();
            let [partition, _avail, limit, count, state, list] = columns[..] else { panic!("{line}") };
            let expanded = hostlist::expand(list).expect("capture hostlists parse");
            assert_eq!(expanded.len().to_string(), count, "{line}");
            let rebuilt = partition_line(9, partition, expanded.len(), state, &hostlist::compress(&expanded));
            let expected = line.replacen(&format!("{limit:>10}"), &format!("{TIME_LIMIT:>10}"), 1);
            assert_eq!(rebuilt, expected);
        }
    }
}
