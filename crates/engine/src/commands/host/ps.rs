//! `ps` (procps-ng 3.3.17, Ubuntu 22.04) over the node's processes
//! (`model::service::processes`): the default form (this terminal's
//! processes), BSD `aux`, System V `-ef`, `-e`/`-A`, `-u USER`, `-p PID`,
//! `-C NAME`, `-o`/`o` with the usual keys, and `h`/`--no-headers`. Column
//! widths are procps's: a USER longer than 8 is cut to 7 and a `+`, the
//! last column is not padded, COMMAND is never cut (as through a pipe).
//! CPU and memory figures are seeded per process from its kind.

use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::service::{processes, Process};
use crate::model::time::{civil, EpochSeconds};
use crate::rng::Rng;

pub struct Ps;

static SIGNATURE: Signature = Signature {
    name: "ps",
    summary: "report a snapshot of the current processes",
    usage: "ps [aux | -ef | -e -o KEYS | -p PID | -C NAME | -u USER]",
    flags: &[
        Flag { short: Some('e'), long: None, value: None, help: "every process (also -A)" },
        Flag { short: Some('f'), long: None, value: None, help: "full format: UID PID PPID C STIME TTY TIME CMD" },
        Flag {
            short: Some('o'),
            long: Some("format"),
            value: Some("KEYS"),
            help: "these columns: pid,ppid,user,comm,args,etime,stat,tty,start,time,%cpu,%mem,rss",
        },
        Flag { short: Some('p'), long: Some("pid"), value: Some("PIDS"), help: "these processes" },
        Flag { short: Some('C'), long: None, value: Some("NAMES"), help: "processes whose command name is one of NAMES" },
        Flag { short: Some('u'), long: Some("user"), value: Some("USERS"), help: "processes of these users" },
        Flag { short: None, long: Some("no-headers"), value: None, help: "no header line" },
    ],
    examples: &[
        Example { command: "ps aux", description: "every process, BSD style, with CPU and memory" },
        Example { command: "ps -eo pid,user,etime,args", description: "chosen columns for every process" },
        Example { command: "ps -C nv-hostengine -o pid,etime,args", description: "one program's processes" },
    ],
};

/// The user's login shell and this `ps`: what plain `ps` shows.
const TTY: &str = "pts/0";

#[derive(Default)]
struct Options {
    every: bool,
    full: bool,
    bsd_user: bool,
    bsd_all: bool,
    header: bool,
    /// `-o` keys, each with the header it was given (`pid=` gives none).
    keys: Option<Vec<String>>,
    headers: Vec<(String, String)>,
    pids: Option<Vec<u32>>,
    names: Option<Vec<String>>,
    users: Option<Vec<String>>,
}

impl Command for Ps {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let options = match parse(invocation.args()) {
            Ok(options) => options,
            Err(message) => return Output::error(message, 1),
        };
        let cluster = invocation.cluster;
        let node = invocation.node;
        let mut list = processes(cluster, node);
        // ps itself, the newest process, under the login shell.
        if let Some(shell) = list.iter().find(|p| p.tty.is_some()).cloned() {
            let pid = list.iter().map(|p| p.pid).max().unwrap_or(1) + 7;
            let me = crate::commands::user(invocation.env).to_string();
            let args = std::iter::once("ps").chain(invocation.args().iter().map(String::as_str)).collect::<Vec<_>>().join(" ");
            list.push(Process {
                pid,
                ppid: shell.pid,
                user: me,
                started: cluster.now,
                comm: "ps".into(),
                args,
                gpus: Vec::new(),
                tty: shell.tty.clone(),
                unit: None,
                job: None,
            });
        }
        let selected: Vec<&Process> = list
            .iter()
            .filter(|p| {
                let chosen = options
                    .pids
                    .as_ref()
                    .map(|pids| pids.contains(&p.pid))
                    .or_else(|| options.names.as_ref().map(|names| names.contains(&p.comm)))
                    .or_else(|| options.users.as_ref().map(|users| users.contains(&p.user)));
                match chosen {
                    Some(chosen) => chosen,
                    None if options.every || options.bsd_all => true,
                    None => p.tty.as_deref() == Some(TTY),
                }
            })
            .collect();
        let keys: Vec<String> = match &options.keys {
            Some(keys) => keys.clone(),
            None if options.bsd_user => ["user", "pid", "%cpu", "%mem", "vsz", "rss", "tty", "stat", "start", "bsdtime", "args"].map(String::from).to_vec(),
            None if options.full => ["uid", "pid", "ppid", "c", "stime", "tty", "time", "cmd"].map(String::from).to_vec(),
            None => ["pid", "tty", "time", "cmd_comm"].map(String::from).to_vec(),
        };
        for key in &keys {
            if column(key).is_none() {
                return Output::error(format!("error: unknown user-defined format specifier \"{key}\"\n{USAGE_TAIL}"), 1);
            }
        }
        let header = |key: &str| match options.headers.iter().find(|(k, _)| k == key) {
            Some((_, given)) => given.clone(),
            None => column(key).map_or(String::new(), |(header, ..)| header.to_string()),
        };
        let mut out = String::new();
        // Headers all emptied (`-o pid=`) print no header line.
        if options.header && keys.iter().any(|key| !header(key).is_empty()) {
            out += &render(&keys, header);
        }
        let memory_kib = cluster.preset.host.memory_mib * 1024;
        for process in &selected {
            let used = usage(process, cluster.seed, &node.hostname);
            out += &render(&keys, |key| value(key, process, &used, cluster.now, memory_kib));
        }
        // Nothing matched a selection: ps says so by its status alone.
        let status = if selected.is_empty() { 1 } else { 0 };
        Output { stdout: out, status, duration_ms: 30, ..Output::default() }
    }
}

const USAGE_TAIL: &str = "\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n";

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options { header: true, ..Options::default() };
    let split = |value: &str| value.split([',', ' ']).filter(|v| !v.is_empty()).map(str::to_string).collect::<Vec<_>>();
    let keys = |options: &mut Options, value: &str| {
        let mut list = Vec::new();
        for item in split(value) {
            match item.split_once('=') {
                Some((key, header)) => {
                    options.headers.push((key.to_string(), header.to_string()));
                    list.push(key.to_string());
                }
                None => list.push(item),
            }
        }
        options.keys.get_or_insert_with(Vec::new).extend(list);
    };
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        let mut value = |inline: &str| -> Result<String, String> {
            if !inline.is_empty() {
                return Ok(inline.to_string());
            }
            let next = args.get(at).cloned().ok_or_else(|| format!("error: list of {} must follow {arg}\n{USAGE_TAIL}", list_name(arg)))?;
            at += 1;
            Ok(next)
        };
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = long.split_once('=').unwrap_or((long, ""));
            match name {
                "no-headers" | "no-heading" => options.header = false,
                "format" => keys(&mut options, &value(inline)?),
                "pid" => options.pids = Some(pids(&value(inline)?)?),
                "user" => options.users = Some(split(&value(inline)?)),
                "help" => return Err(USAGE_TAIL.trim_start().to_string()),
                _ => return Err(format!("error: unknown gnu long option\n{USAGE_TAIL}")),
            }
        } else if let Some(flags) = arg.strip_prefix('-') {
            for (i, c) in flags.char_indices() {
                let rest = &flags[i + c.len_utf8()..];
                match c {
                    'e' | 'A' => options.every = true,
                    'f' => options.full = true,
                    'o' => {
                        keys(&mut options, &value(rest)?);
                        break;
                    }
                    'p' => {
                        options.pids = Some(pids(&value(rest)?)?);
                        break;
                    }
                    'C' => {
                        options.names = Some(split(&value(rest)?));
                        break;
                    }
                    'u' | 'U' => {
                        options.users = Some(split(&value(rest)?));
                        break;
                    }
                    'w' | 'l' | 'F' | 'H' | 'y' => {}
                    other => return Err(format!("error: unsupported SysV option\n{USAGE_TAIL}").replace("SysV option", &format!("option (-{other})"))),
                }
            }
        } else {
            // BSD options, without a dash: `aux`, `axo pid,comm`, `h`.
            for (i, c) in arg.char_indices() {
                match c {
                    'a' | 'x' => options.bsd_all = true,
                    'u' => options.bsd_user = true,
                    'h' => options.header = false,
                    'w' | 'f' => {}
                    'o' => {
                        let rest = &arg[i + 1..];
                        keys(&mut options, &value(rest)?);
                        break;
                    }
                    _ => return Err(format!("error: unsupported option (BSD syntax)\n{USAGE_TAIL}")),
                }
            }
        }
    }
    Ok(options)
}

fn list_name(option: &str) -> &'static str {
    match option.trim_start_matches('-') {
        "p" | "pid" => "process IDs",
        "C" => "command names",
        "u" | "U" | "user" => "users",
        _ => "format specifiers",
    }
}

fn pids(value: &str) -> Result<Vec<u32>, String> {
    value
        .split([',', ' '])
        .filter(|v| !v.is_empty())
        .map(|v| v.parse::<u32>().map_err(|_| format!("error: process ID list syntax error\n{USAGE_TAIL}")))
        .collect()
}

/// A key's header, width and whether it is left-aligned.
fn column(key: &str) -> Option<(&'static str, usize, bool)> {
    Some(match key {
        "pid" => ("PID", 7, false),
        "ppid" => ("PPID", 7, false),
        "user" | "euser" | "uname" => ("USER", 8, true),
        "uid" => ("UID", 8, true),
        "c" => ("C", 2, false),
        "%cpu" | "pcpu" => ("%CPU", 4, false),
        "%mem" | "pmem" => ("%MEM", 4, false),
        "vsz" => ("VSZ", 6, false),
        "rss" => ("RSS", 5, false),
        "tty" | "tt" => ("TTY", 8, true),
        "stat" => ("STAT", 4, true),
        "start" | "stime" => (if key == "start" { "START" } else { "STIME" }, 5, false),
        "time" => ("TIME", 8, false),
        "bsdtime" => ("TIME", 6, false),
        "etime" => ("ELAPSED", 11, false),
        "etimes" => ("ELAPSED", 7, false),
        "comm" | "ucmd" => ("COMMAND", 15, true),
        "cmd_comm" => ("CMD", 15, true),
        "args" | "command" => ("COMMAND", 27, true),
        "cmd" => ("CMD", 27, true),
        _ => return None,
    })
}

/// One line: each column padded to its width, the last one not padded.
fn render(keys: &[String], text: impl Fn(&str) -> String) -> String {
    let mut cells = Vec::new();
    for (at, key) in keys.iter().enumerate() {
        let Some((_, width, left)) = column(key) else { continue };
        let cell = text(key);
        let last = at + 1 == keys.len();
        cells.push(match (left, last) {
            (true, true) => cell,
            (true, false) => format!("{cell:<width$}"),
            (false, _) => format!("{cell:>width$}"),
        });
    }
    format!("{}\n", cells.join(" ").trim_end())
}

/// What the process uses: seeded per process from what it is.
struct Usage {
    cpu_percent: f64,
    vsz_kib: u64,
    rss_kib: u64,
}

fn usage(process: &Process, seed: u64, host: &str) -> Usage {
    let mut rng = Rng::derive(seed, &[host, "ps", &process.pid.to_string()]);
    let (cpu, vsz, rss) = match process.comm.as_str() {
        "python3" => (98.0 + 4.0 * rng.unit_f64(), 62_000_000 + rng.range_u64(0, 900_000), 9_800_000 + rng.range_u64(0, 400_000)),
        "nv-hostengine" | "dcgm-exporter" => (0.5 + 0.6 * rng.unit_f64(), 1_900_000 + rng.range_u64(0, 90_000), 41_000 + rng.range_u64(0, 9_000)),
        "kubelet" | "containerd" => (0.8 + 0.8 * rng.unit_f64(), 2_400_000 + rng.range_u64(0, 90_000), 88_000 + rng.range_u64(0, 9_000)),
        "nv-fabricmanage" => (0.0, 520_000 + rng.range_u64(0, 9_000), 18_000 + rng.range_u64(0, 900)),
        "ps" => (0.0, 13_000 + rng.range_u64(0, 400), 3_500 + rng.range_u64(0, 200)),
        _ => (0.1 * rng.unit_f64(), 17_000 + rng.range_u64(0, 160_000), 4_000 + rng.range_u64(0, 9_000)),
    };
    Usage { cpu_percent: cpu, vsz_kib: vsz, rss_kib: rss }
}

fn value(key: &str, process: &Process, use_: &Usage, now: EpochSeconds, memory_kib: u64) -> String {
    let alive = (now - process.started).max(0);
    let cpu_seconds = (alive as f64 * use_.cpu_percent / 100.0) as i64;
    match key {
        "pid" => process.pid.to_string(),
        "ppid" => process.ppid.to_string(),
        "user" | "euser" | "uname" | "uid" => user(&process.user),
        "c" => format!("{}", use_.cpu_percent.min(99.0) as u32),
        "%cpu" | "pcpu" => format!("{:.1}", use_.cpu_percent),
        "%mem" | "pmem" => format!("{:.1}", use_.rss_kib as f64 / memory_kib.max(1) as f64 * 100.0),
        "vsz" => use_.vsz_kib.to_string(),
        "rss" => use_.rss_kib.to_string(),
        "tty" | "tt" => process.tty.clone().unwrap_or_else(|| "?".to_string()),
        "stat" => stat(process),
        "start" | "stime" => start(process.started, now),
        "time" => clock(cpu_seconds),
        "bsdtime" => format!("{}:{:02}", cpu_seconds / 60, cpu_seconds % 60),
        "etime" => elapsed(alive),
        "etimes" => alive.to_string(),
        "comm" | "ucmd" | "cmd_comm" => process.comm.clone(),
        _ => process.args.clone(),
    }
}

/// procps's user column: a name longer than 8 is cut to 7 and a `+`.
fn user(name: &str) -> String {
    if name.chars().count() > 8 {
        name.chars().take(7).collect::<String>() + "+"
    } else {
        name.to_string()
    }
}

fn stat(process: &Process) -> String {
    match (process.comm.as_str(), process.tty.is_some()) {
        ("ps", _) => "R+".to_string(),
        ("bash", _) => "Ss".to_string(),
        ("systemd" | "kthreadd", false) => "Ss".to_string(),
        ("python3", _) => "Rl".to_string(),
        (_, false) if process.unit.is_some() => "Ssl".to_string(),
        _ => "S".to_string(),
    }
}

/// START: `HH:MM` for a process started in the last 24 hours, else `Mar09`.
fn start(started: EpochSeconds, now: EpochSeconds) -> String {
    let c = civil(started);
    if now - started < 86_400 {
        format!("{:02}:{:02}", c.hour, c.minute)
    } else {
        format!("{}{:02}", crate::commands::host::journalctl::MONTHS[(c.month as usize).saturating_sub(1) % 12], c.day)
    }
}

/// TIME: `[DD-]HH:MM:SS` of CPU time.
fn clock(seconds: i64) -> String {
    let (days, hours, minutes, secs) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    if days > 0 {
        format!("{days}-{hours:02}:{minutes:02}:{secs:02}")
    } else {
        format!("{hours:02}:{minutes:02}:{secs:02}")
    }
}

/// ELAPSED: `[[DD-]HH:]MM:SS`.
fn elapsed(seconds: i64) -> String {
    let (days, hours, minutes, secs) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    match (days, hours) {
        (0, 0) => format!("{minutes:02}:{secs:02}"),
        (0, _) => format!("{hours:02}:{minutes:02}:{secs:02}"),
        _ => format!("{days}-{hours:02}:{minutes:02}:{secs:02}"),
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn the_forms_operators_type() {
        let plain = run_on_first_node("ps").stdout;
        let lines: Vec<&str> = plain.lines().collect();
        assert_eq!(lines[0], "    PID TTY          TIME CMD");
        assert!(lines[1].ends_with(" pts/0    00:00:00 bash") && lines[2].ends_with(" pts/0    00:00:00 ps"), "{plain}");
        let aux = run_on_first_node("ps aux").stdout;
        assert!(aux.starts_with("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\nroot           1 "), "{aux}");
        assert!(aux.contains("nvidia-+"), "long user names are cut: {aux}");
        assert!(aux.contains(" /usr/bin/nv-hostengine -n --service-account nvidia-dcgm\n"));
        let ef = run_on_first_node("ps -ef").stdout;
        assert!(ef.starts_with("UID          PID    PPID  C STIME TTY          TIME CMD\nroot           1       0 "), "{ef}");
        let one = run_on_first_node("ps -C dcgm-exporter -o pid=,comm=").stdout;
        assert!(one.is_empty() || one.contains("dcgm-exporter"));
        assert_eq!(run_on_first_node("ps -C nosuch -o pid").status, 1);
        assert!(run_on_first_node("ps -o bogus").stderr.starts_with("error: unknown user-defined format specifier \"bogus\""));
    }

    #[test]
    fn a_restart_gives_a_new_pid() {
        let mut shell = session();
        let before = shell.run("ps -C nv-hostengine -o pid --no-headers").stdout();
        shell.run("sudo systemctl restart nvidia-dcgm");
        let after = shell.run("ps -C nv-hostengine -o pid --no-headers").stdout();
        assert_ne!(before, after);
        assert!(after.trim().parse::<u32>().unwrap() > before.trim().parse::<u32>().unwrap());
        shell.run("sudo systemctl stop nvidia-dcgm");
        assert_eq!(shell.run("pgrep -x nv-hostengine").status, 1);
    }
}
