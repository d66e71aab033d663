//! `ibdiagnet`: NVIDIA's fabric-wide check (ibutils2), as its console
//! shows a run: the stages in their order, each with its retrieval lines
//! and a verdict, the errors and warnings of the checks that find
//! something, the Fabric Summary (nodes, links by width and speed, the
//! master SM) and the Summary table of warnings and errors per stage. The
//! run writes its log, the SM report and an ibnetdiscover topology under
//! the output directory (`/var/tmp/ibdiagnet2`).
//!
//! Layout from a real 2.7.0 console capture and the lines operators and
//! NVIDIA's own parsers quote (reference/fabric/SOURCES.md has the summary
//! excerpt): 45-dash stage separators, `-I-`/`-W-`/`-E-` prefixes, the
//! Summary's stage column 36 wide and the counts 11, node names as
//! `host/mlx5_1/P1` and `MF0;leaf-rail1:MQM9700/U1/P2`.
//!
//! What the checks see is the model's: the sweep (`discovery`) finds what
//! is up, the speed/width check compares each link with what both ends
//! support, the counters are the HCAs' (`ib_common::counters_now`) and
//! their leaf ports' (`Fabric::port_counters`), `-P`
//! reports counters at or above a threshold and the difference check those
//! that grew during the one-second pause between the two samples.
//!
//! Unverified (no capture, ibutils2 is not public): the `-h` text, the
//! wording of option errors and of a run without root, the exit status
//! (0 here, errors or not), the `(threshold=N)` suffix of a `-P` hit and
//! the enabled-speed list in a speed error; the Nodes Information stage
//! lists the HCAs only (the switches' PSIDs and firmware are not in the
//! model).

use crate::commands::fabric::discovery::{neighbour, port_count, switch_device_id, Found};
use crate::commands::fabric::ib_common::{base_lid, counters_now};
use crate::commands::fabric::ibnetdiscover::{discover, topology};
use crate::commands::fabric::sminfo::PRIORITY;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::fabric::{LaneSpeed, PortCounters};
use crate::model::switches::Fabric;
use crate::model::Cluster;

pub struct Ibdiagnet;

static SIGNATURE: Signature = Signature {
    name: "ibdiagnet",
    summary: "check the whole InfiniBand fabric: discovery, links, SM, port counters, firmware, speeds and widths",
    usage: "ibdiagnet [-i <dev-name>] [-p <port-num>] [-o <out-dir>] [-P <PM>=<value>] [--pc] [--pm_pause_time <sec>]",
    flags: &[
        Flag {
            short: Some('i'),
            long: Some("device"),
            value: Some("<dev-name>"),
            help: "Specifies the name of the device of the port used to connect to the IB fabric",
        },
        Flag {
            short: Some('p'),
            long: Some("port"),
            value: Some("<port-num>"),
            help: "Specifies the local device's port number used to connect to the IB fabric",
        },
        Flag {
            short: Some('o'),
            long: Some("output_path"),
            value: Some("<directory>"),
            help: "Specifies the directory where the output files will be placed (default=/var/tmp/ibdiagnet2/)",
        },
        Flag {
            short: Some('P'),
            long: Some("counter"),
            value: Some("<<PM>=<value>>"),
            help: "If any of the provided PM is greater or equal to its provided value, print it to screen (all=<value> for every counter)",
        },
        Flag { short: None, long: Some("pc"), value: None, help: "Reset all the fabric PM counters" },
        Flag {
            short: None,
            long: Some("pm_pause_time"),
            value: Some("<seconds>"),
            help: "Specifies the seconds to wait between first counters sample and second counters sample (default=1)",
        },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Prints this help information" },
        Flag { short: Some('V'), long: Some("version"), value: None, help: "Prints the version of the tool" },
    ],
    examples: &[
        Example { command: "sudo ibdiagnet", description: "the fabric sweep: links below their speed or width, SM, firmware" },
        Example { command: "sudo ibdiagnet -P all=1", description: "the same, listing every port with an error counter at 1 or more" },
        Example { command: "sudo ibdiagnet --pc", description: "clear every port's counters first, to watch what grows from now" },
    ],
};

const VERSION: &str = "\"IBDIAGNET 2.7.0.MLNX20210617.4883fca\",\"IBDIAG 2.1.1.4883fca\",\"IBDM 2.1.1.4883fca\",\"IBIS 3.0.1.e1db3e0\"";
const RULE: &str = "---------------------------------------------";
const OUTPUT_DIRECTORY: &str = "/var/tmp/ibdiagnet2";

/// The PM counters ibdiagnet names, their PortCounters width in bits, and
/// where the model keeps them.
const COUNTERS: [(&str, u32, fn(&PortCounters) -> u64); 7] = [
    ("symbol_error_counter", 16, |c| c.symbol_errors),
    ("link_error_recovery_counter", 8, |c| c.link_error_recovery),
    ("link_downed_counter", 8, |c| c.link_downed),
    ("port_rcv_errors", 16, |c| c.rcv_errors),
    ("port_rcv_remote_physical_errors", 16, |c| c.rcv_remote_physical_errors),
    ("port_xmit_discard", 16, |c| c.xmit_discards),
    ("port_xmit_wait", 32, |c| c.xmit_wait),
];

/// What one stage found.
#[derive(Default)]
struct Stage {
    text: String,
    warnings: usize,
    errors: usize,
    /// Its findings, for the log file.
    log: String,
}

impl Stage {
    fn new(name: &str) -> Stage {
        Stage { text: format!("{RULE}\n{name}\n"), ..Stage::default() }
    }

    fn line(&mut self, line: &str) {
        self.text += line;
        self.text.push('\n');
    }

    /// A check's verdict, then its findings.
    fn check(&mut self, name: &str, errors: &[String], warnings: &[String]) {
        match (errors.is_empty(), warnings.is_empty()) {
            (true, true) => self.line(&format!("-I- {name} finished successfully")),
            (false, _) => self.line(&format!("-E- {name} finished with errors")),
            (true, false) => self.line(&format!("-W- {name} finished with warnings")),
        }
        for error in errors {
            self.line(&format!("-E- {error}"));
            self.log += &format!("-E- {error}\n");
        }
        for warning in warnings {
            self.line(&format!("-W- {warning}"));
            self.log += &format!("-W- {warning}\n");
        }
        self.errors += errors.len();
        self.warnings += warnings.len();
    }
}

/// The name ibdiagnet gives a node's port: its description with the
/// host's space as a slash, and the port.
fn port_name(cluster: &Cluster, fabric: &Fabric, at: Found, port: usize) -> String {
    let description = match at {
        Found::Ca { node, rail } => format!("{}/{}", cluster.nodes[node].hostname, cluster.nodes[node].hcas[rail].name),
        Found::Switch(index) => fabric.switches[index].name.clone(),
    };
    format!("{description}/P{port}")
}

/// ibdiagnet's name of a lane speed in Gb/s.
fn lane_gbps(speed: LaneSpeed) -> u32 {
    speed.gbps()
}

/// The link a host port makes with its leaf: (width, lane speed, max width,
/// max lane speed); a switch-to-switch link runs at the fabric's full rate.
fn link_of(cluster: &Cluster, fabric: &Fabric, a: Found, b: Found) -> (u8, LaneSpeed, u8, LaneSpeed) {
    match (a, b) {
        (Found::Ca { node, rail }, _) | (_, Found::Ca { node, rail }) => {
            let port = &cluster.nodes[node].hcas[rail].port;
            (port.width, port.lane_speed, port.max_width, port.max_lane_speed)
        }
        _ => (fabric.trunk.0, fabric.trunk.1, fabric.trunk.0, fabric.trunk.1),
    }
}

/// Every link among the found nodes, once, switch end first.
fn links(cluster: &Cluster, fabric: &Fabric, order: &[Found]) -> Vec<(Found, usize, Found, usize)> {
    let mut links = Vec::new();
    for &at in order {
        for port in 1..=port_count(fabric, at) {
            let Some((peer, peer_port)) = neighbour(cluster, fabric, at, port) else { continue };
            let first = match (at, peer) {
                (Found::Switch(a), Found::Switch(b)) => a < b,
                (Found::Switch(_), Found::Ca { .. }) => true,
                _ => false,
            };
            if first {
                links.push((at, port, peer, peer_port));
            }
        }
    }
    links
}

/// The speed and width checks: a link below what both its ends can do.
fn speed_width(cluster: &Cluster, fabric: &Fabric, links: &[(Found, usize, Found, usize)]) -> (Vec<String>, Vec<String>) {
    const ENABLED_SPEEDS: &str = "2.5 or 5 or 10 or 14 or 25 or 50 or 100";
    let (mut speed, mut width) = (Vec::new(), Vec::new());
    for &(a, port_a, b, port_b) in links {
        let (lanes, lane, max_lanes, max_lane) = link_of(cluster, fabric, a, b);
        let name = format!("Link: {}<-->{}", port_name(cluster, fabric, a, port_a), port_name(cluster, fabric, b, port_b));
        if lane < max_lane {
            speed.push(format!(
                "{name} - Unexpected actual link speed {} (enable_speed1=\"{ENABLED_SPEEDS}\", enable_speed2=\"{ENABLED_SPEEDS}\" therefore final speed should be {})",
                lane_gbps(lane),
                lane_gbps(max_lane)
            ));
        }
        if lanes < max_lanes {
            width.push(format!(
                "{name} - Unexpected width, actual link width is {lanes}x (enable_width1=\"1x or 2x or 4x\", enable_width2=\"1x or 2x or 4x\" therefore final width should be {max_lanes}x)"
            ));
        }
    }
    (speed, width)
}

/// The options a run takes.
struct Run {
    device: Option<String>,
    output: String,
    thresholds: Vec<(String, u64)>,
    clear: bool,
    pause_seconds: u64,
}

fn parse(invocation: &Invocation) -> Result<Run, Output> {
    let mut run = Run { device: None, output: OUTPUT_DIRECTORY.to_string(), thresholds: Vec::new(), clear: false, pause_seconds: 1 };
    let bad = |what: String| Output::error(format!("-E- {what}\n-I- For more info, run ibdiagnet --help\n"), 1);
    for arg in scan(&SIGNATURE, invocation.args()) {
        match arg {
            Arg::Flag(flag, value) => match (flag.short, flag.long) {
                (Some('i'), _) => run.device = value,
                (Some('o'), _) => run.output = value.unwrap_or_default().trim_end_matches('/').to_string(),
                (Some('P'), _) => {
                    let text = value.unwrap_or_default();
                    for pair in text.split(',') {
                        let parsed = pair.split_once('=').and_then(|(name, value)| Some((name.to_string(), value.parse::<u64>().ok()?)));
                        match parsed {
                            Some((name, value)) if name == "all" || COUNTERS.iter().any(|(known, ..)| *known == name) => run.thresholds.push((name, value)),
                            _ => return Err(bad(format!("Illegal argument value for option -P|--counter: {pair}"))),
                        }
                    }
                }
                (_, Some("pc")) => run.clear = true,
                (_, Some("pm_pause_time")) => match value.as_deref().map(str::parse::<u64>) {
                    Some(Ok(seconds)) if seconds <= 3600 => run.pause_seconds = seconds,
                    _ => return Err(bad(format!("Illegal argument value for option --pm_pause_time: {}", value.unwrap_or_default()))),
                },
                (Some('h'), _) => return Err(Output::ok(help())),
                (Some('V'), _) => return Err(Output::ok(format!("Running version: {VERSION}\n"))),
                _ => {}
            },
            Arg::Unknown(text) => return Err(bad(format!("Illegal argument: {text}"))),
            Arg::MissingValue(flag) => {
                return Err(bad(format!("Missing argument value for option -{}|--{}", flag.short.unwrap_or(' '), flag.long.unwrap_or(""))))
            }
            Arg::Positional(word) => return Err(bad(format!("Illegal argument: {word}"))),
        }
    }
    Ok(run)
}

fn help() -> String {
    let mut out = String::from("Usage: ibdiagnet [options]\n\nOptions:\n");
    for flag in SIGNATURE.flags {
        let names = match (flag.short, flag.long) {
            (Some(short), Some(long)) => format!("-{short}|--{long}"),
            (None, Some(long)) => format!("--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, None) => String::new(),
        };
        out += &format!("    {names} {}\n        : {}.\n", flag.value.unwrap_or(""), flag.help);
    }
    out
}

impl Command for Ibdiagnet {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let run = match parse(invocation) {
            Ok(run) => run,
            Err(output) => return output,
        };
        let cluster = invocation.cluster;
        let at = crate::model::time::civil(cluster.now);
        let mut out = format!(
            "Running version: {VERSION}\nRunning command: {}\nTimestamp: {:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC +0000\n{RULE}\nLoad Plugins from:\n/usr/share/ibdiagnet2.1.1/plugins/\n(You can specify more paths to be looked in with \"IBDIAGNET_PLUGINS_PATH\" env variable)\n\nPlugin Name                                   Result     Comment\nlibibdiagnet_cable_diag_plugin-2.1.1          Succeeded  Plugin loaded\nlibibdiagnet_phy_diag_plugin-2.1.1            Succeeded  Plugin loaded\n\n",
            invocation.argv.join(" "),
            at.year,
            at.month,
            at.day,
            at.hour,
            at.minute,
            at.second
        );
        let (fabric, start, order) = match discover(invocation, "ibdiagnet", run.device.as_deref()) {
            Ok(found) => found,
            Err(_) => {
                out += &format!("{RULE}\nDiscovery\n-E- Failed to open the local port: umad_open_port failed (are you root?)\n");
                return Output { stdout: out, status: 1, duration_ms: 400, ..Output::default() };
            }
        };
        let switches = order.iter().filter(|found| matches!(found, Found::Switch(_))).count();
        let cas = order.len() - switches;
        let total = order.len();
        let retrieved = format!("-I- Retrieving ... {total}/{total} nodes ({switches}/{switches} Switches & {cas}/{cas} CA-s) retrieved.");
        let mut stages = Vec::new();

        let mut discovery = Stage::new("Discovery");
        discovery.line(&format!("-I- Discovering ... {total} nodes ({switches} Switches & {cas} CA-s) discovered."));
        discovery.line(&retrieved);
        discovery.line("-I- NodeDesc finished successfully");
        discovery.line("-I- Fabric Discover finished successfully\n");
        discovery.line(&format!("-I- Discovered {total} nodes ({switches} Switches & {cas} CA-s).\n"));
        for step in ["PortInfo", "VS Capability GMP", "VS Capability SMP", "VS ExtendedPortInfo", "Port Info Extended", "Switch Info retrieving"] {
            discovery.line(&retrieved);
            discovery.line(&format!("-I- {step} finished successfully\n"));
        }
        discovery.line("-I- Duplicated GUIDs detection finished successfully\n");
        discovery.line("-I- Duplicated Node Description detection finished successfully\n");
        stages.push(("Discovery", discovery));

        for (name, check) in [("Lids Check", "Lids Check"), ("Links Check", "Links Check")] {
            let mut stage = Stage::new(name);
            stage.check(check, &[], &[]);
            stage.line("");
            stages.push((name, stage));
        }

        let mut sm = Stage::new("Subnet Manager");
        sm.line("-I- SM Info retrieving finished successfully\n");
        sm.check("Subnet Manager Check", &[], &[]);
        sm.line("");
        stages.push(("Subnet Manager", sm));

        stages.push(("Port Counters", port_counters(cluster, &fabric, &order, &run, &retrieved, switches, cas)));
        stages.push(("Nodes Information", nodes_information(cluster, &order)));

        let links = links(cluster, &fabric, &order);
        let (speed_errors, width_errors) = speed_width(cluster, &fabric, &links);
        let mut checks = Stage::new("Speed / Width checks");
        checks.line("-I- Link Speed Check (Compare to supported link speed)");
        checks.check("Links Speed Check", &speed_errors, &[]);
        checks.line("");
        checks.line("-I- Link Width Check (Compare to supported link width)");
        checks.check("Links Width Check", &width_errors, &[]);
        checks.line("");
        stages.push(("Speed / Width checks", checks));

        for (name, verdicts) in [
            ("Virtualization", &["Virtualization", "Virtual ports retrieving"][..]),
            ("Partition Keys", &["Partition Keys retrieving", "Partition Keys"][..]),
            ("Temperature Sensing", &["Temperature Sensing"][..]),
        ] {
            let mut stage = Stage::new(name);
            if name != "Virtualization" {
                stage.line(&retrieved);
            }
            for verdict in verdicts {
                stage.line(&format!("-I- {verdict} finished successfully\n"));
            }
            stages.push((name, stage));
        }
        let mut topology_file = Stage::new("Create IBNetDiscover File");
        topology_file.line("-I- Writing of IBNetdDscover file finished successfully\n");
        stages.push(("Create IBNetDiscover File", topology_file));

        for (_, stage) in &stages {
            out += &stage.text;
        }
        out += &fabric_summary(cluster, &fabric, &order, &links, switches, cas);
        out += &format!("{RULE}\nSummary\n-I- {:<36}{:<11}{:<11}Comment\n", "Stage", "Warnings", "Errors");
        for (name, stage) in &stages {
            out += &format!("-I- {name:<36}{:<11}{}\n", stage.warnings, stage.errors);
        }
        let directory = &run.output;
        out += &format!("\n-I- You can find detailed errors/warnings in: {directory}/ibdiagnet2.log\n\n\n");
        let files = [
            ("Database", "db_csv"),
            ("LST", "lst"),
            ("Network dump", "net_dump"),
            ("Subnet Manager", "sm"),
            ("Ports Counters", "pm"),
            ("Nodes Information", "nodes_info"),
            ("Partition keys", "pkey"),
            ("IBNetDiscover", "ibnetdiscover"),
        ];
        for (label, extension) in files {
            out += &format!("-I- {label:<36}: {directory}/ibdiagnet2.{extension}\n");
        }
        out.push('\n');

        let host = invocation.node.hostname.clone();
        let write = |name: &str, text: String| Change::WriteFile { node: host.clone(), path: format!("{directory}/ibdiagnet2.{name}"), text, append: false };
        let log: String = stages.iter().map(|(_, stage)| stage.log.as_str()).collect();
        let master = fabric.subnet_manager();
        let mut changes = vec![
            write("log", log),
            write(
                "sm",
                format!(
                    "# This database file was automatically generated by IBDIAG\n\n\nibdiagnet fabric SM report\n\n  SM - master\n    Port=0 lid=0x{:04x} guid=0x{:016x} dev={} priority:{PRIORITY}\n\n",
                    master.lid,
                    master.guid,
                    switch_device_id(master)
                ),
            ),
        ];
        changes.push(write("ibnetdiscover", topology(cluster, &fabric, start, &order)));
        if run.clear {
            for found in &order {
                match *found {
                    Found::Ca { node, rail } => {
                        let node = &cluster.nodes[node];
                        changes.push(Change::ResetPortCounters { node: node.hostname.clone(), hca: node.hcas[rail].name.clone() });
                    }
                    Found::Switch(index) => changes.extend(fabric.clear_ports(cluster, index, 1..=fabric.switches[index].ports)),
                }
            }
        }
        Output { stdout: out, changes, duration_ms: 6_000 + 1_000 * run.pause_seconds + 40 * total as u64, ..Output::default() }
    }
}

/// The Port Counters stage: two samples `pause_seconds` apart, the value
/// check (a counter at its maximum, or at a `-P` threshold) and the
/// difference check (an error counter that grew between the samples).
fn port_counters(cluster: &Cluster, fabric: &Fabric, order: &[Found], run: &Run, retrieved: &str, switches: usize, cas: usize) -> Stage {
    let total = switches + cas;
    let mut stage = Stage::new("Port Counters");
    for what in ["PMClassPortInfo", "PMPortSampleControl"] {
        stage.line(&format!("-I- Retrieving {what} ... {total}/{total} nodes ({switches}/{switches} Switches & {cas}/{cas} CA-s) retrieved."));
    }
    stage.line(retrieved);
    stage.line("-I- Ports counters retrieving finished successfully\n");
    let seconds = run.pause_seconds;
    stage.line(&format!("-I- Going to sleep for {seconds} seconds until next counters sample"));
    stage.line(&format!("-I- Time left to sleep ... {seconds} seconds.\n"));
    stage.line(retrieved);
    stage.line("-I- Ports counters retrieving (second time) finished successfully\n");
    let mut later = cluster.clone();
    later.now = cluster.now.saturating_add(seconds as i64);
    let (mut values, mut differences) = (Vec::new(), Vec::new());
    for &found in order {
        // Each port the node answers for: (its name's port, lid, device, now, `seconds` later).
        let ports: Vec<(usize, u16, u32, PortCounters, PortCounters)> = match found {
            Found::Ca { node, rail } => {
                let hca = &cluster.nodes[node].hcas[rail];
                let port = &hca.port;
                vec![(usize::from(port.number), base_lid(port), hca.part_id, counters_now(cluster, port), counters_now(&later, port))]
            }
            Found::Switch(index) => {
                let switch = &fabric.switches[index];
                (1..=switch.ports)
                    .map(|p| (p, switch.lid, switch_device_id(switch), fabric.port_counters(cluster, index, p), fabric.port_counters(&later, index, p)))
                    .collect()
            }
        };
        for (port, lid, device, first, second) in ports {
            let name = port_name(cluster, fabric, found, port);
            let header = format!("lid=0x{lid:04x} dev={device} {name}");
            let mut rows = String::new();
            for (counter, bits, read) in COUNTERS {
                let value = read(&first).min((1u64 << bits) - 1);
                let threshold = run.thresholds.iter().find(|(name, _)| name == counter || name == "all").map(|(_, at)| *at);
                if value == (1u64 << bits) - 1 {
                    rows += &format!("\n        {counter:<36}: {value} (overflow)");
                } else if let Some(at) = threshold.filter(|at| value >= *at && *at > 0) {
                    rows += &format!("\n        {counter:<36}: {value} (threshold={at})");
                }
                let grown = read(&second).saturating_sub(read(&first));
                if grown >= 1 && counter != "port_xmit_wait" {
                    differences.push(format!("{name} - \"{counter}\" increased during the run (difference value={grown},difference allowed threshold=1)"));
                }
            }
            if !rows.is_empty() {
                values.push(format!("{header}\n        {:<36}: Value{rows}", "Performance Monitor counter"));
            }
        }
    }
    stage.check("Ports counters value Check", &values, &[]);
    stage.line("");
    stage.check("Ports counters Difference Check (during run)", &differences, &[]);
    stage.line("");
    stage
}

/// The Nodes Information stage: each HCA kind's newest firmware, and a
/// warning for every HCA that runs an older one than its peers.
fn nodes_information(cluster: &Cluster, order: &[Found]) -> Stage {
    let mut stage = Stage::new("Nodes Information");
    let hcas: Vec<_> = order
        .iter()
        .filter_map(|found| match found {
            Found::Ca { node, rail } => Some((&cluster.nodes[*node].hostname, &cluster.nodes[*node].hcas[*rail])),
            Found::Switch(_) => None,
        })
        .collect();
    // Each kind of HCA (device id and PSID) and the newest firmware it runs here.
    let mut kinds: Vec<(u32, &str, &str)> = Vec::new();
    for (_, hca) in &hcas {
        if !kinds.iter().any(|(part, psid, _)| *part == hca.part_id && *psid == hca.board_id) {
            let latest = hcas
                .iter()
                .filter(|(_, other)| other.part_id == hca.part_id && other.board_id == hca.board_id)
                .max_by_key(|(_, other)| firmware_key(&other.firmware))
                .map_or("", |(_, other)| other.firmware.as_str());
            kinds.push((hca.part_id, hca.board_id.as_str(), latest));
        }
    }
    for (part, psid, latest) in &kinds {
        stage.line(&format!("-I- Devid: {part}(0x{part:x}), PSID: {psid}, Latest FW Version:{latest}"));
    }
    let warnings: Vec<String> = hcas
        .iter()
        .filter_map(|(host, hca)| {
            let latest = kinds.iter().find(|(part, psid, _)| *part == hca.part_id && *psid == hca.board_id).map_or("", |(_, _, latest)| latest);
            (firmware_key(&hca.firmware) < firmware_key(latest)).then(|| {
                format!(
                    "{host}/{} - Node with Devid:{}(0x{:x}),PSID:{} has FW version {} while the latest FW version for the same Devid/PSID on this fabric is {latest}",
                    hca.name, hca.part_id, hca.part_id, hca.board_id, hca.firmware
                )
            })
        })
        .collect();
    stage.check("FW Check", &[], &warnings);
    stage.line("");
    stage
}

/// A firmware version as numbers, to compare `28.39.1002` with `28.37.1014`.
fn firmware_key(version: &str) -> Vec<u64> {
    version.split('.').map(|part| part.parse().unwrap_or(0)).collect()
}

fn fabric_summary(cluster: &Cluster, fabric: &Fabric, order: &[Found], links: &[(Found, usize, Found, usize)], switches: usize, cas: usize) -> String {
    let mut out = format!("{RULE}\nFabric Summary\n\n");
    for (label, count) in
        [("Total Nodes", order.len()), ("IB Switches", switches), ("IB Channel Adapters", cas), ("IB Aggregation Nodes", 0), ("IB Routers", 0)]
    {
        out += &format!("{label:<24}: {count}\n");
    }
    out += &format!("\n{:<24}: {}\n", "Total number of links", links.len());
    // Links by width (widest first), then lane speed.
    let mut kinds: Vec<(u8, u32, usize)> = Vec::new();
    for &(a, _, b, _) in links {
        let (lanes, lane, ..) = link_of(cluster, fabric, a, b);
        match kinds.iter_mut().find(|(w, s, _)| *w == lanes && *s == lane_gbps(lane)) {
            Some(kind) => kind.2 += 1,
            None => kinds.push((lanes, lane_gbps(lane), 1)),
        }
    }
    crate::sort::sort_by(&mut kinds, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (lanes, gbps, count) in kinds {
        out += &format!("{:<24}: {count}\n", format!("Links at {lanes}x{gbps}"));
    }
    let sm = fabric.subnet_manager();
    out += &format!(
        "\nMaster SM: Port=0 LID={} GUID=0x{:016x} devid={} Priority:{PRIORITY} Node_Type=SW Node_Description={}\nStandby SM : No Standby SM\n\n",
        sm.lid,
        sm.guid,
        switch_device_id(sm),
        sm.name
    );
    out
}

#[cfg(test)]
mod tests {
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::{cluster, run_on_first_node, shell};

    #[test]
    fn a_healthy_fabric_passes_every_stage() {
        let out = run_on_first_node("sudo ibdiagnet").stdout;
        assert!(out.starts_with("Running version: \"IBDIAGNET 2.7.0."), "{out}");
        assert!(
            out.contains("\n---------------------------------------------\nDiscovery\n-I- Discovering ... 28 nodes (12 Switches & 16 CA-s) discovered.\n"),
            "{out}"
        );
        assert!(out.contains("\nTotal Nodes             : 28\nIB Switches             : 12\nIB Channel Adapters     : 16\nIB Aggregation Nodes    : 0\nIB Routers              : 0\n"), "{out}");
        // 16 host links and each of 8 leaves' 32 uplinks.
        assert!(out.contains("\nTotal number of links   : 272\nLinks at 4x100          : 272\n"), "{out}");
        assert!(out.contains("\nMaster SM: Port=0 LID=1 GUID=0x506b4b03"), "{out}");
        assert!(
            out.contains(
                "\nSummary\n-I- Stage                               Warnings   Errors     Comment\n-I- Discovery                           0          0\n"
            ),
            "{out}"
        );
        assert!(!out.contains("-E- ") && !out.contains("-W- "), "{out}");
        assert!(out.contains("-I- Devid: 4129(0x1021), PSID: MT_0000000838, Latest FW Version:28.39.1002\n"), "{out}");
    }

    #[test]
    fn faults_show_as_the_checks_that_catch_them() {
        let mut cluster = cluster();
        Fault::HcaLinkDegraded { node: "gpu-002".into(), hca: "mlx5_1".into(), rate: Some(200), width: None }.apply(&mut cluster).unwrap();
        Fault::HcaLinkDegraded { node: "gpu-002".into(), hca: "mlx5_2".into(), rate: None, width: Some(2) }.apply(&mut cluster).unwrap();
        Fault::HcaPortDown { node: "gpu-002".into(), hca: "mlx5_3".into(), state: PortDown::Down }.apply(&mut cluster).unwrap();
        Fault::HcaSymbolErrors { node: "gpu-002".into(), hca: "mlx5_4".into(), count: 250 }.apply(&mut cluster).unwrap();
        let mut shell = shell(cluster);
        let out = shell.run("sudo ibdiagnet -P all=1").stdout();
        assert!(out.contains("(12 Switches & 15 CA-s) discovered."), "the down port's HCA is not found: {out}");
        assert!(out.contains("-E- Link: MF0;leaf-rail1:MQM9700/U1/P2<-->gpu-002/mlx5_1/P1 - Unexpected actual link speed 50 (enable_speed1=\""), "{out}");
        assert!(out.contains("-E- Link: MF0;leaf-rail2:MQM9700/U1/P2<-->gpu-002/mlx5_2/P1 - Unexpected width, actual link width is 2x"), "{out}");
        assert!(out.contains("-E- Ports counters value Check finished with errors\n-E- lid=0x"), "{out}");
        assert!(out.contains(" dev=4129 gpu-002/mlx5_4/P1\n        Performance Monitor counter         : Value\n        symbol_error_counter                : 250 (threshold=1)\n"), "{out}");
        assert!(out.contains("\n-I- Speed / Width checks                0          2\n"), "{out}");
        assert!(shell.run("cat /var/tmp/ibdiagnet2/ibdiagnet2.log").stdout().contains("Unexpected width"));
        assert!(shell.run("cat /var/tmp/ibdiagnet2/ibdiagnet2.ibnetdiscover").stdout().starts_with("#\n# Topology file"));
        let refused = shell.run("ibdiagnet");
        assert_eq!(refused.status, 1);
        assert_eq!(shell.run("sudo ibdiagnet --bogus").status, 1);
    }
}
