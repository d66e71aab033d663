//! `journalctl`: the systemd journal of a node, built from the model: the
//! Fabric Manager unit's lifecycle (`-u nvidia-fabricmanager`) and the kernel
//! ring buffer (`-k`), filtered by `-p`, `-g` (PCRE, case-insensitive unless
//! the pattern has a capital), `--since` and `--until` (`date -d`'s forms).
//! The unit's journal is shared with `systemctl status`.
//!
//! Line shape per journal_nvidia-fabricmanager_*.txt:
//! `Nov 05 13:55:26 node1 systemd[1]: Starting NVIDIA fabric manager service...`.

use crate::commands::options::complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::fault::Fault;
use crate::model::node::ServiceState;
use crate::model::service::{self, Unit};
use crate::model::time::{civil, EpochSeconds};
use crate::model::{Cluster, Node};
use crate::rng::Rng;

pub struct Journalctl;

static SIGNATURE: Signature = Signature {
    name: "journalctl",
    summary: "query the systemd journal: service logs and kernel messages",
    usage: "journalctl [OPTIONS...]",
    flags: &[
        Flag { short: Some('u'), long: Some("unit"), value: Some("UNIT"), help: "Show logs from the specified unit" },
        Flag { short: Some('k'), long: Some("dmesg"), value: None, help: "Show kernel message log from the current boot" },
        Flag { short: Some('b'), long: Some("boot"), value: None, help: "Show current boot (the only one this journal keeps)" },
        Flag { short: Some('n'), long: Some("lines"), value: Some("INTEGER"), help: "Number of journal entries to show" },
        Flag { short: Some('g'), long: Some("grep"), value: Some("PATTERN"), help: "Show entries with MESSAGE matching PATTERN" },
        Flag { short: Some('S'), long: Some("since"), value: Some("DATE"), help: "Show entries not older than the specified date" },
        Flag { short: Some('U'), long: Some("until"), value: Some("DATE"), help: "Show entries not newer than the specified date" },
        Flag { short: Some('e'), long: Some("pager-end"), value: None, help: "Immediately jump to the end in the pager" },
        Flag { short: Some('x'), long: Some("catalog"), value: None, help: "Add message explanations where available" },
        Flag { short: None, long: Some("no-pager"), value: None, help: "Do not pipe output into a pager" },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Show this help text" },
    ],
    examples: &[
        Example { command: "journalctl -u nvidia-fabricmanager", description: "Fabric Manager's start-up and failure messages" },
        Example { command: "journalctl -k -p err", description: "kernel errors in journal form" },
    ],
};

/// One journal entry.
pub struct Entry {
    pub at: EpochSeconds,
    /// `systemd[1]`, `nv-fabricmanager[2116]`, `kernel`.
    pub identifier: String,
    pub text: String,
    /// Syslog priority (3 = err, 6 = info).
    pub priority: u8,
}

impl Entry {
    /// `Mar 25 02:10:14 host systemd[1]: text`.
    pub fn render(&self, hostname: &str) -> String {
        format!("{} {hostname} {}: {}\n", short_time(self.at), self.identifier, self.text)
    }
}

pub const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The journal's short timestamp: `Nov 05 13:55:26` (zero-padded day).
pub fn short_time(at: EpochSeconds) -> String {
    let c = civil(at);
    let month = MONTHS.get(c.month as usize - 1).copied().unwrap_or("Jan");
    format!("{month} {:02} {:02}:{:02}:{:02}", c.day, c.hour, c.minute, c.second)
}

pub use crate::model::service::FABRIC_MANAGER_UNIT;
pub const FABRIC_MANAGER_DESCRIPTION: &str = "NVIDIA fabric manager service";
pub use crate::model::service::FABRIC_MANAGER_COMMAND;

/// The Fabric Manager process ids and CPU time of one node, stable per host.
pub struct FabricManagerRun {
    /// The ExecStart process (the daemon forks and exits).
    pub start_pid: u64,
    pub main_pid: u64,
    pub started: EpochSeconds,
    pub cpu_ms: u64,
    /// Its starts that refused the loaded driver (`fabric_manager_refused`).
    pub refused: Option<Vec<EpochSeconds>>,
}

pub fn fabric_manager_run(cluster: &Cluster, node: &Node) -> FabricManagerRun {
    let mut rng = Rng::derive(cluster.seed, &[&node.hostname, "nvidia-fabricmanager"]);
    // A running unit started at `fabric_manager_since`; a failed one started
    // at boot and died at `fabric_manager_since`.
    let started = match node.fabric_manager {
        ServiceState::Active => node.fabric_manager_since,
        ServiceState::Failed | ServiceState::Inactive => (node.booted_at + 41).min(node.fabric_manager_since),
    };
    // Each start is a new process (the ExecStart one forks the daemon).
    let main_pid = u64::from(crate::model::service::pid(cluster.seed, node, FABRIC_MANAGER_UNIT, started));
    let start_pid = main_pid.saturating_sub(2);
    let refused = fabric_manager_refused(cluster, node);
    // It ran until now, until it died, or until the update stopped it.
    let ended = match node.fabric_manager {
        ServiceState::Active => cluster.now,
        _ => refused.as_ref().map_or(node.fabric_manager_since, |attempts| attempts[0]),
    };
    let alive_s = (ended - started).max(1) as u64;
    // About 3 ms of CPU per minute alive, plus start-up.
    let cpu_ms = 400 + alive_s / 20 + rng.range_u64(0, 99);
    FabricManagerRun { start_pid, main_pid, started, cpu_ms, refused }
}

/// Seconds as systemd prints CPU time: `4.847s`, `1min 3.201s`.
pub fn cpu_time(ms: u64) -> String {
    let minutes = ms / 60_000;
    let rest = ms % 60_000;
    let seconds = format!("{}.{:03}s", rest / 1000, rest % 1000);
    if minutes > 0 {
        format!("{minutes}min {seconds}")
    } else {
        seconds
    }
}

/// What the Fabric Manager unit left in the journal.
pub fn fabric_manager_entries(cluster: &Cluster, node: &Node) -> Vec<Entry> {
    let run = fabric_manager_run(cluster, node);
    let systemd = |at, text: String, priority| Entry { at, identifier: "systemd[1]".to_string(), text, priority };
    let daemon = |at, text: &str| Entry { at, identifier: format!("nv-fabricmanager[{}]", run.main_pid), text: text.to_string(), priority: 6 };
    if node.fabric_manager == ServiceState::Inactive {
        return Vec::new();
    }
    let mut entries = vec![
        systemd(run.started - 1, format!("Starting {FABRIC_MANAGER_DESCRIPTION}..."), 6),
        daemon(run.started, "Connected to 1 node."),
        daemon(
            run.started,
            "Successfully configured all the available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer support will be enabled once the GPUs are successfully registered with the NVLink fabric.",
        ),
        systemd(run.started, format!("Started {FABRIC_MANAGER_DESCRIPTION}."), 6),
    ];
    if let Some(attempts) = &run.refused {
        // The update's packages stopped the unit and started their new
        // build, which refuses the old module, as every start since has
        // (journal_nvidia-fabricmanager_version-mismatch.txt; the lines
        // after `Control process exited` are systemd's for a failed start).
        let stopped = attempts[0];
        entries.push(systemd(stopped, format!("Stopping {FABRIC_MANAGER_DESCRIPTION}..."), 6));
        entries.push(systemd(stopped, format!("{FABRIC_MANAGER_UNIT}: Deactivated successfully."), 6));
        entries.push(systemd(stopped, format!("Stopped {FABRIC_MANAGER_DESCRIPTION}."), 6));
        entries.push(systemd(stopped, format!("{FABRIC_MANAGER_UNIT}: Consumed {} CPU time.", cpu_time(run.cpu_ms)), 6));
        for &at in attempts {
            let pid = service::pid(cluster.seed, node, FABRIC_MANAGER_UNIT, at);
            entries.push(systemd(at, format!("Starting {FABRIC_MANAGER_DESCRIPTION}..."), 6));
            entries.push(Entry {
                at,
                identifier: format!("nv-fabricmanager[{pid}]"),
                text: format!(
                    "fabric manager NVIDIA GPU driver interface version {} don't match with driver version {}. Please update with matching NVIDIA driver package.",
                    node.driver_installed, node.driver_loaded
                ),
                priority: 3,
            });
            entries.push(systemd(at, format!("{FABRIC_MANAGER_UNIT}: Control process exited, code=exited, status=1/FAILURE"), 6));
            entries.push(systemd(at, format!("{FABRIC_MANAGER_UNIT}: Failed with result 'exit-code'."), 4));
            entries.push(systemd(at, format!("Failed to start {FABRIC_MANAGER_DESCRIPTION}."), 3));
        }
        return entries;
    }
    if node.fabric_manager == ServiceState::Failed {
        // The model records that the daemon died, not why: it reads as the
        // SIGKILL of systemctl-status_nvidia-fabricmanager_failed-sigkill_abridged.txt.
        let at = node.fabric_manager_since;
        entries.push(systemd(at, format!("{FABRIC_MANAGER_UNIT}: Main process exited, code=killed, status=9/KILL"), 6));
        entries.push(systemd(at, format!("{FABRIC_MANAGER_UNIT}: Failed with result 'signal'."), 4));
        entries.push(systemd(at, format!("{FABRIC_MANAGER_UNIT}: Consumed {} CPU time.", cpu_time(run.cpu_ms)), 6));
    }
    entries
}

/// When Fabric Manager tried to start and refused the loaded driver, first
/// to last: the package update's restart, then each restart since. None
/// unless it failed so.
fn fabric_manager_refused(cluster: &Cluster, node: &Node) -> Option<Vec<EpochSeconds>> {
    if node.fabric_manager != ServiceState::Failed || !node.driver_mismatch() {
        return None;
    }
    let update = cluster.injected.iter().find(|i| matches!(&i.fault, Fault::DriverMismatch { node: at, .. } if *at == node.hostname))?;
    let struck = cluster.struck_at(update).max(node.booted_at + 42);
    let restarts = cluster
        .changes()
        .iter()
        .filter(|(at, change)| *at > struck && matches!(change, Change::RestartFabricManager { node: at } if *at == node.hostname))
        .map(|(at, _)| *at);
    Some(std::iter::once(struck).chain(restarts).collect())
}

/// What one of the node image's other services left in the journal this
/// boot: its start, and how it was last stopped, killed or restarted.
pub fn unit_entries(cluster: &Cluster, node: &Node, unit: &Unit) -> Vec<Entry> {
    let systemd = |at, text: String, priority| Entry { at, identifier: "systemd[1]".to_string(), text, priority };
    let (state, since) = service::state(node, unit);
    let booted = node.booted_at + unit.after_boot;
    let (name, description) = (unit.name, unit.description);
    let mut entries = Vec::new();
    if booted <= cluster.now {
        entries.push(systemd(booted, format!("Started {description}."), 6));
    }
    if since == booted {
        return entries;
    }
    let cpu = cpu_time(unit_cpu_ms(cluster, node, unit, booted, since));
    if state == ServiceState::Failed {
        entries.push(systemd(since, format!("{name}: Main process exited, code=killed, status=9/KILL"), 6));
        entries.push(systemd(since, format!("{name}: Failed with result 'signal'."), 4));
    } else {
        // Stopped, and for a restart started again.
        entries.push(systemd(since, format!("Stopping {description}..."), 6));
        entries.push(systemd(since, format!("{name}: Deactivated successfully."), 6));
        entries.push(systemd(since, format!("Stopped {description}."), 6));
    }
    entries.push(systemd(since, format!("{name}: Consumed {cpu} CPU time."), 6));
    if state == ServiceState::Active {
        entries.push(systemd(since, format!("Started {description}."), 6));
    }
    entries
}

/// CPU time a unit's process used from `from` to `to`: a few ms a minute.
pub fn unit_cpu_ms(cluster: &Cluster, node: &Node, unit: &Unit, from: EpochSeconds, to: EpochSeconds) -> u64 {
    let mut rng = Rng::derive(cluster.seed, &[&node.hostname, unit.name, "cpu"]);
    200 + (to - from).max(0) as u64 * u64::from(unit.tasks.min(40)) / 10 + rng.range_u64(0, 99)
}

/// `nvidia-fabricmanager` → `nvidia-fabricmanager.service`, as systemd completes unit names.
pub fn unit_name(name: &str) -> String {
    let known_suffix = [".service", ".socket", ".target", ".path", ".timer", ".mount", ".slice", ".scope", ".device"];
    if known_suffix.iter().any(|suffix| name.ends_with(suffix)) {
        name.to_string()
    } else {
        format!("{name}.service")
    }
}

fn kernel_entries(node: &Node) -> Vec<Entry> {
    node.kernel_log
        .iter()
        .map(|line| Entry {
            at: node.booted_at + (line.uptime_us / 1_000_000) as i64,
            identifier: "kernel".to_string(),
            text: line.text.replace('\n', " "),
            priority: line.level,
        })
        .collect()
}

const PRIORITIES: [&str; 8] = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];

/// `-p err` keeps `err` and everything more severe; `-p 3` is the same.
fn parse_priority(text: &str) -> Option<u8> {
    PRIORITIES
        .iter()
        .position(|name| *name == text)
        .map(|at| at as u8)
        .or_else(|| text.parse::<u8>().ok().filter(|number| usize::from(*number) < PRIORITIES.len()))
}

impl Command for Journalctl {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut units: Vec<String> = Vec::new();
        let mut kernel = false;
        let mut lines: Option<usize> = None;
        let mut priority: Option<u8> = None;
        let (mut grep, mut since, mut until) = (None::<crate::commands::text::regex::Regex>, None::<EpochSeconds>, None::<EpochSeconds>);
        let now = invocation.cluster.now;
        let (mut no_pager, mut at_end) = (false, false);
        let args = invocation.args();
        // `-p` is scanned here because it shares a letter with nothing else.
        let mut rest: Vec<String> = Vec::new();
        let mut at = 0;
        while let Some(arg) = args.get(at) {
            let value = if arg == "-p" || arg == "--priority" {
                at += 1;
                match args.get(at) {
                    Some(value) => Some(value.clone()),
                    None => return usage_error("journalctl: option requires an argument -- 'p'\n"),
                }
            } else {
                arg.strip_prefix("--priority=").or_else(|| arg.strip_prefix("-p").filter(|v| !v.is_empty())).map(str::to_string)
            };
            match value {
                Some(value) => match parse_priority(&value) {
                    Some(level) => priority = Some(level),
                    None => return Output::error(format!("Failed to parse priority value: {value}\n"), 1),
                },
                None => rest.push(arg.clone()),
            }
            at += 1;
        }
        for arg in scan(&SIGNATURE, &rest) {
            match arg {
                Arg::Flag(flag, value) => match (flag.long, value) {
                    (Some("help"), _) => return Output::ok(help()),
                    (Some("unit"), Some(unit)) => units.push(unit_name(&unit)),
                    (Some("dmesg"), _) => kernel = true,
                    (Some("no-pager"), _) => no_pager = true,
                    (Some("pager-end"), _) => at_end = true,
                    (Some("grep"), Some(pattern)) => {
                        // Case-insensitive unless the pattern has a capital, as journalctl decides.
                        let fold = !pattern.chars().any(char::is_uppercase);
                        match crate::commands::text::regex::Regex::new_perlish(&pattern, fold) {
                            Ok(regex) => grep = Some(regex),
                            Err(_) => return Output::error(format!("Bad pattern \"{pattern}\"\n"), 1),
                        }
                    }
                    (Some(bound @ ("since" | "until")), Some(date)) => match crate::commands::host::date::parse_date(&date, now) {
                        Some(at) if bound == "since" => since = Some(at),
                        Some(at) => until = Some(at),
                        None => return Output::error(format!("Failed to parse timestamp: {date}\n"), 1),
                    },
                    (Some("lines"), Some(count)) => match count.parse() {
                        Ok(count) => lines = Some(count),
                        Err(_) => return Output::error(format!("Failed to parse lines '{count}'\n"), 1),
                    },
                    _ => {}
                },
                Arg::Positional(_) => {
                    return Output::error("Failed to add match: Invalid argument\n", 1);
                }
                unknown => return usage_error(&complaint("journalctl", &unknown)),
            }
        }
        let cluster = invocation.cluster;
        let node = invocation.node;
        let mut entries: Vec<Entry> = Vec::new();
        if units.iter().any(|unit| unit == FABRIC_MANAGER_UNIT) || (units.is_empty() && !kernel) {
            entries.extend(fabric_manager_entries(cluster, node));
        }
        for unit in service::units(node).filter(|unit| units.iter().any(|name| name == unit.name) || (units.is_empty() && !kernel)) {
            entries.extend(unit_entries(cluster, node, unit));
        }
        if kernel || (units.is_empty()) {
            entries.extend(kernel_entries(node));
        }
        if let Some(level) = priority {
            entries.retain(|entry| entry.priority <= level);
        }
        entries.retain(|entry| since.is_none_or(|at| entry.at >= at) && until.is_none_or(|at| entry.at <= at));
        if let Some(regex) = &grep {
            entries.retain(|entry| regex.is_match(&entry.text.chars().collect::<Vec<_>>()));
        }
        // A stable sort keeps each source's order for entries of the same second.
        crate::sort::sort_by_key(&mut entries, |entry| entry.at);
        if let Some(count) = lines {
            let skip = entries.len().saturating_sub(count);
            entries.drain(..skip);
        }
        if entries.is_empty() {
            return Output::ok("-- No entries --\n");
        }
        let mut output = Output::ok(entries.iter().map(|entry| entry.render(&node.hostname)).collect::<String>());
        // systemd pages through less with LESS=FRSXMK: a short journal is just printed.
        if !no_pager {
            output.pager = Some(crate::commands::Pager::Less { quit_if_one_screen: true, at_end });
        }
        output
    }
}

fn usage_error(message: &str) -> Output {
    Output::error(message.to_string(), 1)
}

fn help() -> String {
    let mut out = String::from("journalctl [OPTIONS...] [MATCHES...]\n\nQuery the journal.\n\nOptions:\n");
    for flag in SIGNATURE.flags {
        out += &format!("  {:<26}{}\n", flag.display(), flag.help);
    }
    out += &format!("  {:<26}{}\n", "-p, --priority=RANGE", "Show entries with the specified priority");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fault::Fault;
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    #[test]
    fn grep_since_and_until_filter_entries() {
        use crate::testing::run_on_first_node;
        assert_eq!(run_on_first_node("journalctl -k -g 'nvrm: loading' --no-pager").stdout.lines().count(), 1);
        assert_eq!(run_on_first_node("journalctl -k -g 'NVRM: LOADING' --no-pager").stdout, "-- No entries --\n");
        assert_eq!(run_on_first_node("journalctl -k --since today --until yesterday --no-pager").stdout, "-- No entries --\n");
        assert!(run_on_first_node("journalctl -k --since '2000-01-01' --no-pager").stdout.contains("kernel: "));
        let out = run_on_first_node("journalctl --since never");
        assert_eq!((out.stderr.as_str(), out.status), ("Failed to parse timestamp: never\n", 1));
    }

    #[test]
    fn fabric_manager_journal_shows_start_and_failure() {
        let healthy = run_on_first_node("journalctl -u nvidia-fabricmanager");
        assert_eq!(healthy.stdout.lines().count(), 4);
        assert!(healthy.stdout.lines().next().unwrap().ends_with(" gpu-001 systemd[1]: Starting NVIDIA fabric manager service..."));
        let mut cluster = cluster();
        Fault::FabricManagerDown { node: "gpu-001".into() }.apply(&mut cluster).unwrap();
        let failed = shell(cluster).run("journalctl -u nvidia-fabricmanager.service").stdout();
        assert!(failed.contains("systemd[1]: nvidia-fabricmanager.service: Failed with result 'signal'.\n"));
    }

    #[test]
    fn other_units_have_no_entries_and_kernel_lines_filter_by_priority() {
        assert_eq!(run_on_first_node("journalctl -u apache2").stdout, "-- No entries --\n");
        let kernel = run_on_first_node("journalctl -k").stdout;
        assert!(kernel.lines().all(|line| line.contains(" gpu-001 kernel: ")));
        assert_eq!(run_on_first_node("journalctl -k -p err").stdout, "-- No entries --\n");
        assert_eq!(run_on_first_node("journalctl -n 1 -k").stdout.lines().count(), 1);
    }

    #[test]
    fn bad_options_answer_as_journalctl() {
        let out = run_on_first_node("journalctl --bogus");
        assert_eq!((out.stderr.as_str(), out.status), ("journalctl: unrecognized option '--bogus'\n", 1));
        assert_eq!(run_on_first_node("journalctl -p loud").status, 1);
        assert_eq!(run_on_first_node("journalctl -p").status, 1);
    }

    #[test]
    fn cpu_time_reads_like_systemd() {
        assert_eq!(cpu_time(4_847), "4.847s");
        assert_eq!(cpu_time(63_201), "1min 3.201s");
    }
}
