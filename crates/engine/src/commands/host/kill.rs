//! Signals to the node's processes (`model::service::processes`): `kill`
//! (procps-ng's, which `sudo kill` runs; bash's builtin shares
//! [`signal`] and words its errors its own way), `pgrep` and `pkill`
//! (procps-ng 3.3.17). What a signal does is the model's: a service's
//! main process that dies is restarted by systemd when its unit says
//! `Restart=always` (a new PID), otherwise the unit is inactive (SIGTERM,
//! a clean exit for systemd) or failed (SIGKILL); Fabric Manager stops.
//! A job's ranks are not signalled one by one here: `scancel` ends a job.

use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::node::ServiceState;
use crate::model::service::{self, processes, Process};
use crate::model::{Cluster, Node};

pub struct Kill;
pub struct Pgrep;
pub struct Pkill;

static KILL: Signature = Signature {
    name: "kill",
    summary: "send a signal to a process",
    usage: "kill [-s SIGNAL | -SIGNAL] PID...",
    flags: &[
        Flag { short: Some('s'), long: Some("signal"), value: Some("SIGNAL"), help: "the signal to send (TERM by default; KILL, HUP, INT)" },
        Flag { short: Some('l'), long: Some("list"), value: None, help: "list the signal names" },
    ],
    examples: &[Example { command: "sudo kill $(pgrep dcgm-exporter)", description: "stop a daemon by its process id" }],
};

static PGREP: Signature = Signature {
    name: "pgrep",
    summary: "look up processes by name and other attributes",
    usage: "pgrep [-f] [-x] [-l|-a] [-c] [-n|-o] [-u USER] PATTERN",
    flags: &[
        Flag { short: Some('f'), long: Some("full"), value: None, help: "match against the full command line" },
        Flag { short: Some('x'), long: Some("exact"), value: None, help: "match the name exactly" },
        Flag { short: Some('l'), long: Some("list-name"), value: None, help: "list the process name as well" },
        Flag { short: Some('a'), long: Some("list-full"), value: None, help: "list the full command line as well" },
        Flag { short: Some('c'), long: Some("count"), value: None, help: "count the matching processes" },
        Flag { short: Some('n'), long: Some("newest"), value: None, help: "only the newest" },
        Flag { short: Some('o'), long: Some("oldest"), value: None, help: "only the oldest" },
        Flag { short: Some('u'), long: Some("euid"), value: Some("USERS"), help: "only these users' processes" },
    ],
    examples: &[Example { command: "pgrep -a nv-", description: "NVIDIA's daemons with their command lines" }],
};

static PKILL: Signature = Signature {
    name: "pkill",
    summary: "signal processes by name and other attributes",
    usage: "pkill [-SIGNAL] [-f] [-x] [-u USER] PATTERN",
    flags: &[
        Flag { short: Some('f'), long: Some("full"), value: None, help: "match against the full command line" },
        Flag { short: Some('x'), long: Some("exact"), value: None, help: "match the name exactly" },
        Flag { short: Some('u'), long: Some("euid"), value: Some("USERS"), help: "only these users' processes" },
        Flag { short: Some('e'), long: Some("echo"), value: None, help: "say what was killed" },
    ],
    examples: &[Example { command: "sudo pkill dcgm-exporter", description: "signal a daemon by name" }],
};

/// The signals an operator sends, by number (their names: [`signal_name`]).
const SIGNALS: [u32; 4] = [1, 2, 9, 15];

fn signal_number(name: &str) -> Option<u32> {
    let name = name.trim_start_matches("SIG");
    name.parse::<u32>()
        .ok()
        .filter(|n| SIGNALS.contains(n))
        .or_else(|| SIGNALS.into_iter().find(|n| signal_name(*n).is_some_and(|known| known.eq_ignore_ascii_case(name))))
}

/// Linux's signals on x86_64 as bash names them (`kill -l`), without
/// `SIG`: 32 and 33 are glibc's own and not listed.
pub fn signal_name(number: u32) -> Option<String> {
    const CLASSIC: [&str; 31] = [
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP",
        "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
    ];
    match number {
        1..=31 => Some(CLASSIC[number as usize - 1].to_string()),
        34 => Some("RTMIN".to_string()),
        35..=49 => Some(format!("RTMIN+{}", number - 34)),
        50..=63 => Some(format!("RTMAX-{}", 64 - number)),
        64 => Some("RTMAX".to_string()),
        _ => None,
    }
}

/// bash's `kill -l [SIGSPEC...]`: every signal, five to a line, or each
/// SIGSPEC turned into its name (a number, or an exit status past 128) or
/// its number (a name).
pub fn list(specs: &[String]) -> Output {
    if specs.is_empty() {
        let mut out = String::new();
        let mut column = 0;
        for (number, name) in (1..=64).filter_map(|n| signal_name(n).map(|name| (n, name))) {
            out += &format!("{number:2}) SIG{name}");
            column += 1;
            if column < 5 {
                out.push('\t');
            } else {
                out.push('\n');
                column = 0;
            }
        }
        if column != 0 {
            out.push('\n');
        }
        return Output::ok(out);
    }
    let mut output = Output::default();
    for spec in specs {
        let answer = match spec.parse::<u32>() {
            Ok(number) => signal_name(if number > 128 { number - 128 } else { number }),
            Err(_) => {
                let name = spec.to_ascii_uppercase();
                let name = name.strip_prefix("SIG").unwrap_or(&name);
                (1..=64).find(|n| signal_name(*n).as_deref() == Some(name)).map(|n| n.to_string())
            }
        };
        match answer {
            Some(answer) => output.stdout += &format!("{answer}\n"),
            None => {
                output.stderr += &format!("-bash: kill: {spec}: invalid signal specification\n");
                output.status = 1;
            }
        }
    }
    output
}

/// Why a signal could not be sent.
pub enum Refused {
    NoSuchProcess,
    NotPermitted,
    /// A job's rank: this simulation ends jobs with scancel.
    Rank,
}

/// Sends `signal` to process `pid` on `node` as a user (`root` or not):
/// the changes it makes.
pub fn signal(cluster: &Cluster, node: &Node, pid: u32, signal: u32, root: bool, user: &str) -> Result<Vec<Change>, Refused> {
    let list = processes(cluster, node);
    let process = list.iter().find(|p| p.pid == pid).ok_or(Refused::NoSuchProcess)?;
    send(node, process, signal, root, user)
}

/// Sends `signal` to `process` if the user may (root, or its owner).
fn send(node: &Node, process: &Process, signal: u32, root: bool, user: &str) -> Result<Vec<Change>, Refused> {
    if !root && process.user != user {
        return Err(Refused::NotPermitted);
    }
    effect(node, process, signal)
}

fn effect(node: &Node, process: &Process, signal: u32) -> Result<Vec<Change>, Refused> {
    let host = node.hostname.clone();
    if process.pid == 1 || process.comm == "bash" || process.comm == "sshd" && process.unit.is_none() || process.comm == "kthreadd" {
        // init ignores them; the login shell and its session are the trainee's own.
        return Ok(Vec::new());
    }
    if signal == 1 || signal == 2 && process.unit.is_some() {
        // A daemon reloads on SIGHUP, or ignores an interrupt.
        return Ok(Vec::new());
    }
    match process.unit {
        Some(service::FABRIC_MANAGER_UNIT) => Ok(vec![Change::StopFabricManager { node: host }]),
        Some(name) => {
            let unit = service::unit(name).ok_or(Refused::NoSuchProcess)?;
            let state = match (unit.restarts, signal) {
                (true, _) => ServiceState::Active,
                (false, 9) => ServiceState::Failed,
                (false, _) => ServiceState::Inactive,
            };
            Ok(vec![Change::SetUnit { node: host, unit: name.to_string(), state }])
        }
        // A job's processes: its ranks on their GPUs, a server's API server
        // and engine core, which hold none.
        None if process.job.is_some() || !process.gpus.is_empty() => Err(Refused::Rank),
        None => Ok(Vec::new()),
    }
}

/// `kill`'s arguments: the signal and the PIDs, or the answer to give.
fn arguments(args: &[String]) -> Result<(u32, Vec<String>), Output> {
    let mut signal = 15;
    let mut targets = Vec::new();
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        match arg.as_str() {
            "-l" | "-L" | "--list" => {
                return Err(Output::ok(" 1) SIGHUP\t 2) SIGINT\t 3) SIGQUIT\t 4) SIGILL\t 5) SIGTRAP\n 6) SIGABRT\t 7) SIGBUS\t 8) SIGFPE\t 9) SIGKILL\t10) SIGUSR1\n11) SIGSEGV\t12) SIGUSR2\t13) SIGPIPE\t14) SIGALRM\t15) SIGTERM\n"))
            }
            "-s" | "--signal" | "-n" => {
                let name = args.get(at).cloned().unwrap_or_default();
                at += 1;
                signal = signal_number(&name).ok_or_else(|| Output::error(format!("kill: unknown signal: {name}\n"), 1))?;
            }
            "--" => targets.extend(args[at..].iter().cloned()),
            _ if arg.starts_with('-') && arg.len() > 1 && targets.is_empty() => {
                signal = signal_number(&arg[1..]).ok_or_else(|| Output::error(format!("kill: unknown signal: {}\n", &arg[1..]), 1))?;
            }
            _ => targets.push(arg.clone()),
        }
        if arg == "--" {
            break;
        }
    }
    Ok((signal, targets))
}

/// `kill` as bash's builtin does it for a PID (jobs are the shell's own):
/// its errors are bash's, `-bash: kill: (PID) - No such process`.
pub fn builtin(cluster: &Cluster, node: &Node, pid: &str, root: bool, user: &str, signal_name: Option<&str>) -> Output {
    let number = match signal_name {
        Some(name) => match signal_number(name) {
            Some(number) => number,
            None => return Output::error(format!("-bash: kill: {name}: invalid signal specification\n"), 1),
        },
        None => 15,
    };
    let Ok(id) = pid.parse::<u32>() else {
        return Output::error(format!("-bash: kill: {pid}: arguments must be process or job IDs\n"), 1);
    };
    match signal(cluster, node, id, number, root, user) {
        Ok(changes) => Output { changes, ..Output::default() },
        Err(Refused::NoSuchProcess) => Output::error(format!("-bash: kill: ({pid}) - No such process\n"), 1),
        Err(Refused::NotPermitted) => Output::error(format!("-bash: kill: ({pid}) - Operation not permitted\n"), 1),
        Err(Refused::Rank) => Output::error(rank_refusal(pid), 1),
    }
}

fn rank_refusal(pid: &str) -> String {
    format!("kill: ({pid}) is a rank of a Slurm job: in this simulation, end the job with scancel JOBID\n")
}

impl Command for Kill {
    fn signature(&self) -> &'static Signature {
        &KILL
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (number, targets) = match arguments(invocation.args()) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        if targets.is_empty() {
            return Output::error("\nUsage:\n kill [options] <pid> [...]\n\nOptions:\n <pid> [...]            send signal to every <pid> listed\n -<signal>, -s, --signal <signal>\n                        specify the <signal> to be sent\n -l, --list=[<signal>]  list all signal names, or convert one to a name\n -L, --table            list all signal names in a nice table\n\n -h, --help     display this help and exit\n -V, --version  output version information and exit\n\nFor more details see kill(1).\n", 1);
        }
        let root = is_root(invocation.env);
        let user = crate::commands::user(invocation.env);
        let mut out = Output::default();
        for target in &targets {
            let result = match target.parse::<u32>() {
                Ok(pid) => signal(invocation.cluster, invocation.node, pid, number, root, user),
                Err(_) => {
                    out.stderr += &format!("kill: failed to parse argument: '{target}'\n");
                    out.status = 1;
                    continue;
                }
            };
            match result {
                Ok(changes) => out.changes.extend(changes),
                Err(Refused::NoSuchProcess) => out.stderr += &format!("kill: ({target}): No such process\n"),
                Err(Refused::NotPermitted) => out.stderr += &format!("kill: ({target}): Operation not permitted\n"),
                Err(Refused::Rank) => out.stderr += &rank_refusal(target),
            }
            if !out.stderr.is_empty() {
                out.status = 1;
            }
        }
        out
    }
}

/// pgrep's and pkill's selection.
struct Selection {
    full: bool,
    exact: bool,
    users: Option<Vec<String>>,
    pattern: String,
}

impl Selection {
    fn matches(&self, process: &Process, regex: &crate::commands::text::regex::Regex) -> bool {
        if self.users.as_ref().is_some_and(|users| !users.contains(&process.user)) {
            return false;
        }
        let text = if self.full { &process.args } else { &process.comm };
        if self.exact {
            return *text == self.pattern;
        }
        regex.is_match(&text.chars().collect::<Vec<_>>())
    }
}

/// The processes a pgrep or pkill selects, oldest first, leaving out the
/// command itself; or its usage error (status 2).
fn select(invocation: &Invocation, name: &str, selection: &Selection) -> Result<Vec<Process>, Output> {
    let regex = crate::commands::text::regex::Regex::new(&selection.pattern, crate::commands::text::regex::Syntax::Extended, false)
        .map_err(|error| Output::error(format!("{name}: {}\n", error.message), 2))?;
    let mut found: Vec<Process> = processes(invocation.cluster, invocation.node).into_iter().filter(|p| selection.matches(p, &regex)).collect();
    crate::sort::sort_by(&mut found, |a, b| a.started.cmp(&b.started).then(a.pid.cmp(&b.pid)));
    Ok(found)
}

/// pgrep's and pkill's command line: `-u USERS` and the one pattern here,
/// each other option through `option`.
fn selection(name: &str, args: &[String], mut option: impl FnMut(&str, &mut Selection) -> Result<(), Output>) -> Result<Selection, Output> {
    let mut selection = Selection { full: false, exact: false, users: None, pattern: String::new() };
    let mut patterns = Vec::new();
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        match arg.as_str() {
            "-u" | "--euid" | "-U" => {
                selection.users = args.get(at).map(|v| v.split(',').map(str::to_string).collect());
                at += 1;
            }
            _ if arg.starts_with('-') && arg.len() > 1 => option(arg, &mut selection)?,
            _ => patterns.push(arg.clone()),
        }
    }
    match patterns.as_slice() {
        [] => Err(Output::error(format!("{name}: no matching criteria specified\nTry `{name} --help' for more information.\n"), 2)),
        [pattern] => {
            selection.pattern = pattern.clone();
            Ok(selection)
        }
        _ => Err(Output::error(format!("{name}: only one pattern can be provided\nTry `{name} --help' for more information.\n"), 2)),
    }
}

impl Command for Pgrep {
    fn signature(&self) -> &'static Signature {
        &PGREP
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut list_name, mut list_full, mut count, mut newest, mut oldest) = (false, false, false, false, false);
        let parsed = selection("pgrep", invocation.args(), |arg, selection| {
            for flag in arg[1..].chars() {
                match flag {
                    'f' => selection.full = true,
                    'x' => selection.exact = true,
                    'l' => list_name = true,
                    'a' => list_full = true,
                    'c' => count = true,
                    'n' => newest = true,
                    'o' => oldest = true,
                    other => return Err(Output::error(format!("pgrep: invalid option -- '{other}'\nUsage: pgrep [options] <pattern>\n"), 2)),
                }
            }
            Ok(())
        });
        let selection = match parsed {
            Ok(selection) => selection,
            Err(output) => return output,
        };
        let mut found = match select(invocation, "pgrep", &selection) {
            Ok(found) => found,
            Err(output) => return output,
        };
        if newest {
            found = found.into_iter().last().into_iter().collect();
        } else if oldest {
            found.truncate(1);
        }
        let status = if found.is_empty() { 1 } else { 0 };
        let stdout = if count {
            format!("{}\n", found.len())
        } else {
            found
                .iter()
                .map(|p| match (list_full, list_name) {
                    (true, _) => format!("{} {}\n", p.pid, p.args),
                    (false, true) => format!("{} {}\n", p.pid, p.comm),
                    _ => format!("{}\n", p.pid),
                })
                .collect()
        };
        Output { stdout, status, ..Output::default() }
    }
}

impl Command for Pkill {
    fn signature(&self) -> &'static Signature {
        &PKILL
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut number, mut echo) = (15, false);
        let parsed = selection("pkill", invocation.args(), |arg, selection| {
            match arg {
                "-f" | "--full" => selection.full = true,
                "-x" | "--exact" => selection.exact = true,
                "-e" | "--echo" => echo = true,
                _ => match signal_number(&arg[1..]) {
                    Some(n) => number = n,
                    None => return Err(Output::error(format!("pkill: unknown signal name {}.\n", &arg[1..]), 2)),
                },
            }
            Ok(())
        });
        let selection = match parsed {
            Ok(selection) => selection,
            Err(output) => return output,
        };
        let found = match select(invocation, "pkill", &selection) {
            Ok(found) => found,
            Err(output) => return output,
        };
        let root = is_root(invocation.env);
        let user = crate::commands::user(invocation.env);
        let mut out = Output { status: 1, ..Output::default() };
        for process in &found {
            match send(invocation.node, process, number, root, user) {
                Ok(changes) => {
                    out.changes.extend(changes);
                    out.status = 0;
                    if echo {
                        out.stdout += &format!("{} killed (pid {})\n", process.comm, process.pid);
                    }
                }
                Err(Refused::NotPermitted) => out.stderr += &format!("pkill: killing pid {} failed: Operation not permitted\n", process.pid),
                Err(Refused::Rank) => out.stderr += &rank_refusal(&process.pid.to_string()),
                Err(Refused::NoSuchProcess) => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn killing_a_daemon_is_what_systemd_makes_of_it() {
        let mut shell = session();
        let pid = shell.run("pgrep -x dcgm-exporter").stdout();
        assert_eq!(shell.run(&format!("kill {}", pid.trim())).stderr(), format!("-bash: kill: ({}) - Operation not permitted\n", pid.trim()));
        // Restart=always: a new process takes its place.
        assert_eq!(shell.run(&format!("sudo kill {}", pid.trim())).status, 0);
        let again = shell.run("pgrep -x dcgm-exporter").stdout();
        assert!(!again.is_empty() && again != pid);
        assert_eq!(shell.run("pgrep -c nv-").stdout(), "2\n", "nv-hostengine and nv-fabricmanager");
        // nv-hostengine does not come back: SIGKILL leaves its unit failed.
        shell.run("sudo pkill -9 nv-hostengine");
        assert_eq!(shell.run("systemctl is-failed nvidia-dcgm").stdout(), "failed\n");
        assert!(shell.run("systemctl --failed").stdout().contains("nvidia-dcgm.service"));
        assert_eq!(shell.run("kill 4194000").stderr(), "-bash: kill: (4194000) - No such process\n");
        assert_eq!(shell.run("sudo kill 4194000").stderr(), "kill: (4194000): No such process\n");
        assert_eq!(shell.run("pgrep").status, 2);
    }
}
