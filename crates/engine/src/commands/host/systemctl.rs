//! `systemctl status|is-active|is-failed UNIT`, `start|stop|restart UNIT`,
//! `--failed`, `reboot`, and `status`/`is-system-running` for the whole
//! system (degraded while a unit has failed): the node image's services (`model::service`:
//! DCGM's host engine and exporter, nvidia-persistenced, slurmd, kubelet,
//! containerd, sshd and the rest), each started at boot and changed by
//! `Change::SetUnit` (a restart is a new process, with its journal lines),
//! and Fabric Manager, whose state its fault and repairs drive:
//! `restart`/`start` return `Change::RestartFabricManager`
//! (Fabric Manager comes up only when every GPU answers, as the model's
//! change does; otherwise systemctl reports the failed job); `stop` returns
//! `Change::StopFabricManager`. `status` takes the node's OS (`Versions::os`,
//! Ubuntu 22.04 with systemd 249, the only one the model has): the unit file
//! under `/lib/systemd/system`, `vendor preset: enabled`, no path unit that
//! triggers Fabric Manager, as in the Ubuntu capture
//! systemctl-status_nvidia-fabricmanager_failed-sigkill_abridged.txt; the
//! running form's lines follow systemctl-status_nvidia-fabricmanager_h100_active.txt
//! (a RHEL 9 host, whose Loaded and TriggeredBy lines differ). The journal
//! tail comes from journalctl.rs so that both tools agree.

use crate::commands::host::journalctl::{
    cpu_time, fabric_manager_entries, fabric_manager_run, unit_cpu_ms, unit_entries, unit_name, FABRIC_MANAGER_COMMAND, FABRIC_MANAGER_DESCRIPTION,
    FABRIC_MANAGER_UNIT,
};
use crate::commands::options::complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::node::ServiceState;
use crate::model::service::{self, Unit};
use crate::model::time::{ctime, EpochSeconds};
use crate::model::{Cluster, Node};

pub struct Systemctl;

static SIGNATURE: Signature = Signature {
    name: "systemctl",
    summary: "query and control systemd services: Fabric Manager, DCGM, slurmd, kubelet",
    usage: "systemctl [OPTIONS...] status|is-active|is-failed UNIT...\n       systemctl start|stop|restart UNIT...\n       systemctl status|is-system-running",
    flags: &[
        Flag { short: Some('l'), long: Some("full"), value: None, help: "Don't ellipsize unit names on output" },
        Flag { short: None, long: Some("no-pager"), value: None, help: "Do not pipe output into a pager" },
        Flag { short: None, long: Some("failed"), value: None, help: "Shortcut for --state=failed" },
        Flag { short: Some('t'), long: Some("type"), value: Some("TYPE"), help: "List units of a particular type" },
        Flag { short: None, long: Some("state"), value: Some("STATE"), help: "List units with particular LOAD or SUB or ACTIVE state" },
        Flag { short: Some('a'), long: Some("all"), value: None, help: "Show all units, including inactive ones" },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Show this help" },
    ],
    examples: &[
        Example { command: "systemctl status nvidia-fabricmanager", description: "whether Fabric Manager runs, and its last log lines" },
        Example { command: "systemctl is-active nvidia-fabricmanager", description: "one word: active, failed or inactive" },
    ],
};

/// systemctl's exit statuses (LSB): 3 = unit not active, 4 = no such unit.
const EXIT_NOT_ACTIVE: i32 = 3;
const EXIT_NO_SUCH_UNIT: i32 = 4;

/// The journal lines `status` shows at most.
const STATUS_JOURNAL_LINES: usize = 10;

impl Command for Systemctl {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut words: Vec<String> = Vec::new();
        let (mut state, mut all, mut kind) = (None::<String>, false, None::<String>);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) if flag.long == Some("help") => return Output::ok(help()),
                Arg::Flag(flag, _) if flag.long == Some("failed") => state = Some("failed".to_string()),
                Arg::Flag(flag, value) if flag.long == Some("state") => state = value,
                Arg::Flag(flag, value) if flag.long == Some("type") => kind = value,
                Arg::Flag(flag, _) if flag.long == Some("all") => all = true,
                Arg::Flag(..) => {}
                Arg::Positional(word) => words.push(word),
                unknown => return Output::error(complaint("systemctl", &unknown), 1),
            }
        }
        if words.first().is_none_or(|verb| verb == "list-units") {
            // The node image's units are services: another type lists none.
            let services = kind.as_deref().is_none_or(|kind| kind.split(',').any(|k| k == "service"));
            return list_units(invocation.node, state.as_deref(), all, services);
        }
        let Some((verb, units)) = words.split_first() else {
            return Output::error("Too few arguments.\n", 1);
        };
        let cluster = invocation.cluster;
        let node = invocation.node;
        match verb.as_str() {
            "status" | "is-active" | "is-failed" if units.is_empty() && verb != "status" => Output::error("Too few arguments.\n", 1),
            "status" if units.is_empty() => system_status(cluster, node),
            "is-system-running" => {
                let state = system_state(failed_units(node));
                Output { stdout: format!("{state}\n"), status: i32::from(state != "running"), ..Output::default() }
            }
            "status" => status(cluster, node, units),
            "is-active" | "is-failed" => is_state(node, verb, units),
            "restart" | "start" | "stop" | "try-restart" | "reload-or-restart" if units.is_empty() => Output::error("Too few arguments.\n", 1),
            "restart" | "start" | "try-restart" | "reload-or-restart" | "stop" if !crate::commands::is_root(invocation.env) => {
                // Without a polkit agent (no password can be typed here) systemd refuses.
                let unit = unit_name(&units[0]);
                let hint = if verb == "stop" { String::new() } else { format!("See system logs and 'systemctl status {unit}' for details.\n") };
                Output::error(format!("Failed to {verb} {unit}: Interactive authentication required.\n{hint}"), 1)
            }
            "restart" | "start" | "try-restart" | "reload-or-restart" | "stop" => control(node, verb, units),
            "reboot" if !crate::commands::is_root(invocation.env) => Output::error(
                "Failed to reboot system via logind: Interactive authentication required.\nFailed to start reboot.target: Interactive authentication required.\nSee system logs and 'systemctl status reboot.target' for details.\n",
                1,
            ),
            "reboot" => super::reboot::reboot(invocation),
            other => Output::error(format!("Unknown command verb '{other}'.\n"), 1),
        }
    }
}

/// `systemctl [list-units] [--state=STATE|--failed] [--all]` (systemd
/// 249's table): the services loaded, active ones unless `--all`, with the
/// legend and the count after them; a failed unit is marked `●`.
fn list_units(node: &Node, state: Option<&str>, all: bool, services: bool) -> Output {
    let units = std::iter::once((FABRIC_MANAGER_UNIT, FABRIC_MANAGER_DESCRIPTION)).chain(service::units(node).map(|unit| (unit.name, unit.description)));
    let mut rows: Vec<(&str, &str, &str, &str)> = Vec::new();
    for (unit, description) in units.filter(|_| services) {
        let (active, sub) = match service_state(node, unit) {
            Some(ServiceState::Active) => ("active", "running"),
            Some(ServiceState::Failed) => ("failed", "failed"),
            _ => ("inactive", "dead"),
        };
        let shown = match state {
            Some(wanted) => wanted.split(',').any(|w| w == active || w == sub || w == "loaded"),
            None => all || active != "inactive",
        };
        if shown {
            rows.push((unit, active, sub, description));
        }
    }
    crate::sort::sort(&mut rows);
    if rows.is_empty() {
        return Output::ok("  UNIT LOAD ACTIVE SUB DESCRIPTION\n0 loaded units listed.\n");
    }
    let width = |column: usize, header: &str| rows.iter().map(|row| [row.0, row.1, row.2][column].len()).max().unwrap_or(0).max(header.len());
    let (unit_w, active_w, sub_w) = (width(0, "UNIT"), width(1, "ACTIVE"), width(2, "SUB"));
    let mut out = format!("  {:<unit_w$} LOAD   {:<active_w$} {:<sub_w$} DESCRIPTION\n", "UNIT", "ACTIVE", "SUB");
    for (unit, active, sub, description) in &rows {
        let mark = if *active == "failed" { '\u{25cf}' } else { ' ' };
        out += &format!("{mark} {unit:<unit_w$} loaded {active:<active_w$} {sub:<sub_w$} {description}\n");
    }
    out += "\nLOAD   = Reflects whether the unit definition was properly loaded.\nACTIVE = The high-level unit activation state, i.e. generalization of SUB.\nSUB    = The low-level unit activation state, values depend on unit type.\n";
    out += &format!("{} loaded units listed.", rows.len());
    match (state, all) {
        (Some(_), _) => out.push('\n'),
        (None, false) => out += " Pass --all to see loaded but inactive units, too.\nTo show all installed unit files use 'systemctl list-unit-files'.\n",
        (None, true) => out += "\nTo show all installed unit files use 'systemctl list-unit-files'.\n",
    }
    Output::ok(out)
}

/// The model's view of a unit, or `None` for a unit this node lacks.
fn service_state(node: &Node, unit: &str) -> Option<ServiceState> {
    if unit == FABRIC_MANAGER_UNIT {
        return Some(node.fabric_manager);
    }
    service::state_of(node, unit).map(|(state, _)| state)
}

fn is_state(node: &Node, verb: &str, units: &[String]) -> Output {
    let mut out = String::new();
    let mut matched = false;
    for unit in units {
        let word = match service_state(node, &unit_name(unit)) {
            Some(ServiceState::Active) => "active",
            Some(ServiceState::Failed) => "failed",
            Some(ServiceState::Inactive) | None => "inactive",
        };
        matched |= if verb == "is-active" { word == "active" } else { word == "failed" };
        out += word;
        out.push('\n');
    }
    Output { status: if matched { 0 } else { EXIT_NOT_ACTIVE }, ..Output::ok(out) }
}

fn status(cluster: &Cluster, node: &Node, units: &[String]) -> Output {
    let mut stdout = Vec::new();
    let mut stderr = String::new();
    let mut status = 0;
    for unit in units {
        let unit = unit_name(unit);
        match service_state(node, &unit) {
            Some(state) => {
                stdout.push(match service::unit_on(node, &unit) {
                    Some(unit) => unit_status(cluster, node, unit),
                    None => fabric_manager_status(cluster, node, state),
                });
                if state != ServiceState::Active {
                    status = status.max(EXIT_NOT_ACTIVE);
                }
            }
            None => {
                stderr += &format!("Unit {unit} could not be found.\n");
                status = EXIT_NO_SUCH_UNIT;
            }
        }
    }
    Output { stdout: stdout.join("\n"), stderr, status, duration_ms: 40, ..Output::default() }
}

/// How many of the node image's units have failed (Fabric Manager's among them).
fn failed_units(node: &Node) -> usize {
    std::iter::once(FABRIC_MANAGER_UNIT)
        .chain(service::units(node).map(|unit| unit.name))
        .filter(|unit| service_state(node, unit) == Some(ServiceState::Failed))
        .count()
}

/// The system's state as systemd sums it up: `degraded` while a unit has failed.
fn system_state(failed: usize) -> &'static str {
    if failed > 0 {
        "degraded"
    } else {
        "running"
    }
}

/// `systemctl status` without a unit (systemd 249): the host, the
/// system's state, its failed units, the boot, and the control group tree
/// of every process (`service::processes`): init's scope, each service
/// under system.slice, the jobs' ranks under slurmstepd's scope, the
/// login session under user.slice.
fn system_status(cluster: &Cluster, node: &Node) -> Output {
    let failed = failed_units(node);
    let state = system_state(failed);
    let mut out = format!("\u{25cf} {}\n    State: {state}\n     Jobs: 0 queued\n   Failed: {failed} units\n", node.hostname);
    out += &format!("    Since: {}; {}\n   CGroup: /\n", long_time(node.booted_at), ago(cluster.now - node.booted_at));
    let processes = service::processes(cluster, node);
    // (slice, scope or service, processes), in systemd's order.
    let mut groups: Vec<(&str, String, Vec<String>)> = Vec::new();
    let mut add = |slice: &'static str, group: String, line: String| match groups.iter_mut().find(|(s, g, _)| *s == slice && *g == group) {
        Some((_, _, lines)) => lines.push(line),
        None => groups.push((slice, group, vec![line])),
    };
    for process in processes.iter().filter(|p| p.ppid != 0 || p.pid == 1) {
        let line = format!("{} {}", process.pid, process.args);
        match (process.unit, process.pid, process.user.as_str()) {
            (Some(unit), _, _) => add("system.slice", unit.to_string(), line),
            (None, 1, _) => add("", "init.scope".to_string(), line),
            (None, _, user) if process.gpus.is_empty() && (user == crate::model::node::USER || process.comm == "sshd") => {
                add("user.slice", "user-1000.slice/session-1.scope".to_string(), line)
            }
            (None, _, _) => add("system.slice", "slurmstepd.scope".to_string(), line),
        }
    }
    crate::sort::sort_by(&mut groups, |a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    // Top level: init.scope, then each slice with its groups.
    let mut top: Vec<(String, Vec<(String, Vec<String>)>)> = Vec::new();
    for (slice, group, lines) in groups {
        if slice.is_empty() {
            top.push((group, vec![(String::new(), lines)]));
        } else if let Some((_, members)) = top.iter_mut().find(|(name, _)| name == slice) {
            members.push((group, lines));
        } else {
            top.push((slice.to_string(), vec![(group, lines)]));
        }
    }
    let indent = "           ";
    for (i, (name, members)) in top.iter().enumerate() {
        let last_top = i + 1 == top.len();
        out += &format!("{indent}{}{name}\n", if last_top { "\u{2514}\u{2500}" } else { "\u{251c}\u{2500}" });
        let bar = if last_top { "  " } else { "\u{2502} " };
        for (j, (group, lines)) in members.iter().enumerate() {
            let last_member = j + 1 == members.len();
            // A scope straight under the root lists its processes itself.
            let deeper = if group.is_empty() {
                bar.to_string()
            } else {
                out += &format!("{indent}{bar}{}{group}\n", if last_member { "\u{2514}\u{2500}" } else { "\u{251c}\u{2500}" });
                format!("{bar}{}", if last_member { "  " } else { "\u{2502} " })
            };
            for (k, line) in lines.iter().enumerate() {
                let branch = if k + 1 == lines.len() { "\u{2514}\u{2500}" } else { "\u{251c}\u{2500}" };
                out += &format!("{indent}{deeper}{branch}{line}\n");
            }
        }
    }
    Output { stdout: out, status: 0, duration_ms: 40, ..Output::default() }
}

/// `restart`/`start`: Fabric Manager (re)starts, and fails again while a GPU
/// does not answer (the model's `RestartFabricManager` rule).
fn control(node: &Node, verb: &str, units: &[String]) -> Output {
    let mut changes = Vec::new();
    for unit in units {
        let unit = unit_name(unit);
        let Some(state) = service_state(node, &unit) else {
            return Output::error(format!("Failed to {verb} {unit}: Unit {unit} not found.\n"), 5);
        };
        // What systemd leaves alone: stopping a stopped unit, starting a
        // running one, try-restarting one that does not run.
        let nothing_to_do = match verb {
            "stop" => state == ServiceState::Inactive,
            "start" => state == ServiceState::Active,
            "try-restart" => state != ServiceState::Active,
            _ => false,
        };
        if nothing_to_do {
            continue;
        }
        if service::unit_on(node, &unit).is_some() {
            let to = if verb == "stop" { ServiceState::Inactive } else { ServiceState::Active };
            changes.push(Change::SetUnit { node: node.hostname.clone(), unit: unit.clone(), state: to });
        } else if verb == "stop" {
            changes.push(Change::StopFabricManager { node: node.hostname.clone() });
        } else {
            changes.push(Change::RestartFabricManager { node: node.hostname.clone() });
            if !node.fabric_manager_can_start() {
                return Output {
                    stderr: format!("Job for {unit} failed because the control process exited with error code.\nSee \"systemctl status {unit}\" and \"journalctl -xeu {unit}\" for details.\n"),
                    status: 1,
                    duration_ms: 1500,
                    changes,
                    ..Output::default()
                };
            }
        }
    }
    Output { duration_ms: 1500, changes, ..Output::default() }
}

/// `Tue 2025-03-25 02:10:15 UTC`.
fn long_time(at: EpochSeconds) -> String {
    let text = ctime(at);
    let c = crate::model::time::civil(at);
    format!("{} {}-{:02}-{:02} {:02}:{:02}:{:02} UTC", text.get(..3).unwrap_or(""), c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// systemd's relative time: `5 days ago`, `2h 37min ago`, `2 weeks 3 days ago`.
pub fn ago(seconds: i64) -> String {
    let s = seconds.max(0) as u64;
    const MIN: u64 = 60;
    const HOUR: u64 = 3600;
    const DAY: u64 = 86_400;
    const WEEK: u64 = 7 * DAY;
    const MONTH: u64 = 2_629_800;
    const YEAR: u64 = 31_557_600;
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if s >= YEAR {
        format!("{} {} ago", plural(s / YEAR, "year", "years"), plural(s % YEAR / MONTH, "month", "months"))
    } else if s >= MONTH {
        format!("{} {} ago", plural(s / MONTH, "month", "months"), plural(s % MONTH / DAY, "day", "days"))
    } else if s >= WEEK {
        format!("{} {} ago", plural(s / WEEK, "week", "weeks"), plural(s % WEEK / DAY, "day", "days"))
    } else if s >= 2 * DAY {
        format!("{} days ago", s / DAY)
    } else if s >= 25 * HOUR {
        format!("1 day {}h ago", (s - DAY) / HOUR)
    } else if s >= 6 * HOUR {
        format!("{}h ago", s / HOUR)
    } else if s >= HOUR {
        format!("{}h {}min ago", s / HOUR, s % HOUR / MIN)
    } else if s >= 5 * MIN {
        format!("{}min ago", s / MIN)
    } else if s >= MIN {
        format!("{}min {}s ago", s / MIN, s % MIN)
    } else {
        format!("{s}s ago")
    }
}

fn fabric_manager_status(cluster: &Cluster, node: &Node, state: ServiceState) -> String {
    let run = fabric_manager_run(cluster, node);
    let since = node.fabric_manager_since;
    let when = format!("since {}; {}", long_time(since), ago(cluster.now - since));
    let bullet = bullet(state);
    let os = cluster.versions.os;
    let mut out = format!("{bullet} {FABRIC_MANAGER_UNIT} - {FABRIC_MANAGER_DESCRIPTION}\n");
    out += &format!("     Loaded: loaded ({}/{FABRIC_MANAGER_UNIT}; enabled; {})\n", os.unit_dir, os.preset);
    match state {
        ServiceState::Active => {
            out += &format!("     Active: active (running) {when}\n");
            out += &format!("    Process: {} ExecStart={FABRIC_MANAGER_COMMAND} (code=exited, status=0/SUCCESS)\n", run.start_pid);
            out += &format!("   Main PID: {} (nv-fabricmanage)\n", run.main_pid);
            out += &format!("      Tasks: 18 (limit: {})\n", os.tasks_max);
            out += "     Memory: 18.1M\n";
            out += &format!("        CPU: {}\n", cpu_time(run.cpu_ms));
            out += &format!("     CGroup: /system.slice/{FABRIC_MANAGER_UNIT}\n");
            out += &format!("             └─{} {FABRIC_MANAGER_COMMAND}\n", run.main_pid);
        }
        ServiceState::Failed => match run.refused.as_ref().and_then(|attempts| attempts.last().copied()) {
            // Its start failed: the control process exited, no main process ran.
            Some(last) => {
                let pid = crate::model::service::pid(cluster.seed, node, FABRIC_MANAGER_UNIT, last);
                out += &format!("     Active: failed (Result: exit-code) {when}\n");
                out += &format!("    Process: {pid} ExecStart={FABRIC_MANAGER_COMMAND} (code=exited, status=1/FAILURE)\n");
                out += &format!("        CPU: {}ms\n", 18 + pid % 9);
            }
            None => {
                out += &format!("     Active: failed (Result: signal) {when}\n");
                out += &format!("   Main PID: {} (code=killed, signal=KILL)\n", run.main_pid);
                out += &format!("        CPU: {}\n", cpu_time(run.cpu_ms));
            }
        },
        ServiceState::Inactive => {
            // Stopped at `fabric_manager_since`: systemd says since when.
            out += &format!("     Active: inactive (dead) {when}\n");
        }
    }
    out + &journal_tail(&fabric_manager_entries(cluster, node), &node.hostname)
}

/// systemd's glyph for a unit's state: active, failed, inactive.
fn bullet(state: ServiceState) -> char {
    match state {
        ServiceState::Active => '●',
        ServiceState::Failed => '×',
        ServiceState::Inactive => '○',
    }
}

/// The last lines of a unit's journal that `status` shows, after a blank line.
fn journal_tail(entries: &[crate::commands::host::journalctl::Entry], hostname: &str) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let skip = entries.len().saturating_sub(STATUS_JOURNAL_LINES);
    std::iter::once("\n".to_string()).chain(entries.iter().skip(skip).map(|entry| entry.render(hostname))).collect()
}

/// `systemctl status` of one of the node image's other services (systemd
/// 249's layout, as for Fabric Manager above), with its journal lines.
fn unit_status(cluster: &Cluster, node: &Node, unit: &Unit) -> String {
    let (state, since) = service::state(node, unit);
    let os = cluster.versions.os;
    let bullet = bullet(state);
    let when = format!("since {}; {}", long_time(since), ago(cluster.now - since));
    let pid = service::pid(cluster.seed, node, unit.name, since);
    let mut out = format!("{bullet} {} - {}\n", unit.name, unit.description);
    out += &format!("     Loaded: loaded ({}/{}; enabled; {})\n", os.unit_dir, unit.name, os.preset);
    match state {
        ServiceState::Active => {
            out += &format!("     Active: active (running) {when}\n");
            out += &format!("   Main PID: {pid} ({})\n", unit.comm);
            out += &format!("      Tasks: {} (limit: {})\n", unit.tasks, os.tasks_max);
            out += &format!("     Memory: {}\n", unit.memory);
            out += &format!("        CPU: {}\n", cpu_time(unit_cpu_ms(cluster, node, unit, since, cluster.now)));
            out += &format!("     CGroup: /system.slice/{}\n", unit.name);
            out += &format!("             └─{pid} {}\n", unit.command);
        }
        ServiceState::Failed => {
            out += &format!("     Active: failed (Result: signal) {when}\n");
            out += "   Main PID: (code=killed, signal=KILL)\n";
        }
        ServiceState::Inactive => out += &format!("     Active: inactive (dead) {when}\n"),
    }
    out + &journal_tail(&unit_entries(cluster, node, unit), &node.hostname)
}

fn help() -> String {
    let mut out = String::from("systemctl [OPTIONS...] COMMAND ...\n\nQuery or send control commands to the system manager.\n\n");
    out += "Unit Commands:\n  status [PATTERN...|PID...]  Show runtime status of one or more units\n";
    out += "  is-active PATTERN...        Check whether units are active\n";
    out += "  is-failed PATTERN...        Check whether units are failed\n";
    out += "  start UNIT...               Start (activate) one or more units\n";
    out += "  stop UNIT...                Stop (deactivate) one or more units\n";
    out += "  restart UNIT...             Start or restart one or more units\n\nOptions:\n";
    for flag in SIGNATURE.flags {
        out += &format!("  {:<26}{}\n", flag.display(), flag.help);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fault::Fault;
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    #[test]
    fn the_system_status_sums_up_and_draws_the_control_groups() {
        let mut cluster = crate::testing::cluster();
        crate::model::fault::Fault::FabricManagerDown { node: "gpu-001".into() }.apply(&mut cluster).unwrap();
        let mut shell = crate::testing::shell(cluster);
        let out = shell.run("systemctl status").stdout();
        assert!(out.starts_with("\u{25cf} gpu-001\n    State: degraded\n     Jobs: 0 queued\n   Failed: 1 units\n    Since: "), "{out}");
        assert!(out.contains("\n   CGroup: /\n           \u{251c}\u{2500}init.scope\n           \u{2502} \u{2514}\u{2500}1 /sbin/init\n"), "{out}");
        assert!(out.contains("\u{2502} \u{251c}\u{2500}nvidia-dcgm.service\n"), "{out}");
        let state = shell.run("systemctl is-system-running");
        assert_eq!((state.stdout(), state.status), ("degraded\n".to_string(), 1));
        assert_eq!(crate::testing::run_on_first_node("systemctl is-system-running").stdout, "running\n");
    }

    #[test]
    fn the_schedulers_hear_from_their_daemons() {
        let mut shell = crate::testing::session();
        shell.run("sudo systemctl stop slurmd");
        assert_eq!(shell.run("sinfo -n gpu-001 -h -o %t").stdout(), "idle*\n");
        assert_eq!(shell.run("srun -w gpu-001 hostname").status, 1, "no step lands where slurmd is gone");
        shell.run("sudo systemctl start slurmd");
        assert_eq!(shell.run("sinfo -n gpu-001 -h -o %t").stdout(), "idle\n");
        shell.run("sudo systemctl stop kubelet; sleep 60");
        assert!(shell.run("kubectl get node gpu-001").stdout().contains("NotReady"));
        assert!(shell.run("kubectl get events").stdout().contains("NodeNotReady"));
        let listed = shell.run("systemctl list-units --type=service").stdout();
        assert!(listed.starts_with("  UNIT ") && listed.contains("  slurmd.service ") && !listed.contains("kubelet.service"), "{listed}");
        assert!(shell
            .run("systemctl --all")
            .stdout()
            .contains("  kubelet.service                  loaded inactive dead    kubelet: The Kubernetes Node Agent\n"));
    }

    #[test]
    fn failed_lists_the_failed_units() {
        assert_eq!(crate::testing::run_on_first_node("systemctl --failed").stdout, "  UNIT LOAD ACTIVE SUB DESCRIPTION\n0 loaded units listed.\n");
        let mut cluster = crate::testing::cluster();
        cluster.inject(crate::model::fault::Fault::FabricManagerDown { node: "gpu-001".into() }, Vec::new()).expect("the fault applies");
        let out = crate::testing::shell(cluster).run("systemctl list-units --failed").stdout();
        assert!(
            out.starts_with("  UNIT                         LOAD   ACTIVE SUB    DESCRIPTION\n\u{25cf} nvidia-fabricmanager.service loaded failed failed "),
            "{out}"
        );
        assert!(out.ends_with("\n1 loaded units listed.\n"));
    }

    #[test]
    fn healthy_fabric_manager_is_active() {
        let out = run_on_first_node("systemctl status nvidia-fabricmanager");
        assert_eq!(out.status, 0);
        assert!(out.stdout.starts_with("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"));
        assert!(out.stdout.contains("     Active: active (running) since "));
        assert_eq!(run_on_first_node("systemctl is-active nvidia-fabricmanager").stdout, "active\n");
    }

    #[test]
    fn failed_fabric_manager_reads_failed() {
        let mut cluster = cluster();
        Fault::FabricManagerDown { node: "gpu-001".into() }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        let out = session.run("systemctl status nvidia-fabricmanager.service");
        assert_eq!(out.status, 3);
        let text = out.stdout();
        assert!(text.starts_with("× nvidia-fabricmanager.service"));
        assert!(text.contains("     Active: failed (Result: signal) since "));
        assert!(text.contains("   Main PID: "));
        let out = session.run("systemctl is-active nvidia-fabricmanager");
        assert_eq!((out.stdout(), out.status), ("failed\n".to_string(), 3));
    }

    #[test]
    fn restart_brings_fabric_manager_back_once_the_gpus_answer() {
        let mut cluster = cluster();
        Fault::FabricManagerDown { node: "gpu-001".into() }.apply(&mut cluster).unwrap();
        Fault::GpuXid { node: "gpu-001".into(), gpu: 2, xid: 119 }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        let denied = session.run("systemctl restart nvidia-fabricmanager");
        assert_eq!(
            (denied.stderr().as_str(), denied.status),
            ("Failed to restart nvidia-fabricmanager.service: Interactive authentication required.\nSee system logs and 'systemctl status nvidia-fabricmanager.service' for details.\n", 1)
        );
        let out = session.run("sudo systemctl restart nvidia-fabricmanager");
        assert_eq!(out.status, 1);
        assert!(out.stderr().starts_with("Job for nvidia-fabricmanager.service failed because"));
        assert_eq!(session.run("systemctl is-active nvidia-fabricmanager").stdout(), "failed\n");
        session.cluster.apply_change(&Change::ResetGpu { node: "gpu-001".into(), gpu: 2 }, 0);
        assert_eq!(session.run("sudo systemctl restart nvidia-fabricmanager.service").status, 0);
        assert_eq!(session.run("systemctl is-active nvidia-fabricmanager").stdout(), "active\n");
        // The failed restart, the reset applied above, the restart.
        assert_eq!(session.changes().len(), 3);
        assert_eq!(session.run("sudo systemctl start nvidia-fabricmanager").status, 0);
        assert_eq!(session.changes().len(), 3, "start of an active unit does nothing");
        assert_eq!(session.run("sudo systemctl restart apache2").status, 5);
        assert_eq!(session.run("sudo systemctl stop nvidia-fabricmanager").status, 0);
        assert_eq!(session.run("systemctl is-active nvidia-fabricmanager").stdout(), "inactive\n");
        assert!(session.run("systemctl status nvidia-fabricmanager").stdout().contains("Active: inactive (dead)"));
    }

    #[test]
    fn unknown_units_and_verbs() {
        let out = run_on_first_node("systemctl status apache2");
        assert_eq!((out.stderr.as_str(), out.status), ("Unit apache2.service could not be found.\n", 4));
        // Ubuntu's ssh unit answers to its alias.
        assert!(run_on_first_node("systemctl status sshd").stdout.starts_with("● ssh.service - OpenBSD Secure Shell server\n"));
        let out = run_on_first_node("systemctl frobnicate x");
        assert_eq!((out.stderr.as_str(), out.status), ("Unknown command verb 'frobnicate'.\n", 1));
        assert_eq!(run_on_first_node("systemctl --bogus").status, 1);
        // Without a verb, systemctl lists the units.
        assert!(run_on_first_node("systemctl").stdout.contains(" loaded units listed."));
    }

    #[test]
    fn relative_times_read_like_systemd() {
        assert_eq!(ago(2 * 3600 + 37 * 60 + 5), "2h 37min ago");
        assert_eq!(ago(5 * 86_400 + 300), "5 days ago");
        assert_eq!(ago(17 * 86_400), "2 weeks 3 days ago");
        assert_eq!(ago(90), "1min 30s ago");
    }
}
