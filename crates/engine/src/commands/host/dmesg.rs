//! `dmesg`: the node's kernel ring buffer (util-linux).
//!
//! Prefixes per ../shared/reference/gpu/FACTS.md §8: `[ 1843.308145] ` (the
//! uptime right-aligned in 12 columns), or `[Fri Mar  3 04:23:22 2023] ` with
//! `-T`/`--ctime`. Continuation lines of a multi-line message are indented by
//! the width of the prefix, as in dmesg_fallen-off-bus_no-xid_drv570.txt.

use crate::commands::options::complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::node::KernelLine;
use crate::model::time::ctime;
use crate::model::Node;

pub struct Dmesg;

static SIGNATURE: Signature = Signature {
    name: "dmesg",
    summary: "print the kernel ring buffer: driver messages, Xid errors, PCIe warnings",
    usage: "dmesg [options]",
    flags: &[
        Flag { short: Some('T'), long: Some("ctime"), value: None, help: "show human-readable timestamps" },
        Flag { short: Some('l'), long: Some("level"), value: Some("LIST"), help: "only print messages of these levels (err,warn,...)" },
        Flag { short: Some('x'), long: Some("decode"), value: None, help: "print facility and level as text" },
        Flag { short: Some('k'), long: Some("kernel"), value: None, help: "only print kernel messages" },
        Flag { short: Some('t'), long: Some("notime"), value: None, help: "do not print timestamps" },
        Flag { short: Some('H'), long: Some("human"), value: None, help: "accepted; output is not paged here" },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "display this help" },
    ],
    examples: &[
        Example { command: "sudo dmesg -T", description: "the kernel log with wall-clock times" },
        Example { command: "sudo dmesg -l err", description: "only error-level messages, such as Xid reports" },
        Example { command: "sudo dmesg --level=err,warn", description: "errors and warnings" },
    ],
};

/// Syslog level names in priority order, as `--level` takes them.
const LEVELS: [&str; 8] = ["emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"];

impl Command for Dmesg {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut clock = Clock::Uptime;
        let mut levels: Option<Vec<u8>> = None;
        let mut decode = false;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match (flag.long, value) {
                    (Some("help"), _) => return Output::ok(help()),
                    (Some("ctime"), _) => clock = Clock::Wall,
                    (Some("notime"), _) => clock = Clock::None,
                    (Some("decode"), _) => decode = true,
                    (Some("level"), Some(list)) => match parse_levels(&list) {
                        Ok(parsed) => levels = Some(parsed),
                        Err(name) => return usage_error(&format!("dmesg: unknown level '{name}'\n")),
                    },
                    _ => {}
                },
                Arg::Positional(_) => return usage_error("dmesg: bad usage\n"),
                unknown => return usage_error(&complaint("dmesg", &unknown)),
            }
        }
        // Ubuntu sets kernel.dmesg_restrict=1: the ring buffer is root's
        // (members of adm read the same lines in /var/log/kern.log).
        if !crate::commands::is_root(invocation.env) {
            return Output::error("dmesg: read kernel buffer failed: Operation not permitted\n", 1);
        }
        let node = invocation.node;
        let text: String = node
            .kernel_log
            .iter()
            .filter(|line| levels.as_ref().is_none_or(|levels| levels.contains(&line.level)))
            .map(|line| format_line(node, line, clock, decode))
            .collect();
        Output::ok(text)
    }
}

#[derive(Clone, Copy)]
enum Clock {
    Uptime,
    Wall,
    None,
}

fn usage_error(message: &str) -> Output {
    Output::error(format!("{message}Try 'dmesg --help' for more information.\n"), 1)
}

fn parse_levels(list: &str) -> Result<Vec<u8>, String> {
    list.split(',')
        .map(|name| {
            // util-linux accepts `warning` for `warn` and a bare number.
            let name = if name == "warning" { "warn" } else { name };
            LEVELS
                .iter()
                .position(|level| *level == name)
                .map(|at| at as u8)
                .or_else(|| name.parse::<u8>().ok().filter(|number| usize::from(*number) < LEVELS.len()))
                .ok_or_else(|| name.to_string())
        })
        .collect()
}

/// `[    4.123456] ` or `[Fri Mar  3 04:23:22 2023] `.
pub fn prefix(node: &Node, line: &KernelLine, wall: bool) -> String {
    if wall {
        let at = node.booted_at + (line.uptime_us / 1_000_000) as i64;
        format!("[{}] ", ctime(at))
    } else {
        let stamp = format!("{}.{:06}", line.uptime_us / 1_000_000, line.uptime_us % 1_000_000);
        format!("[{stamp:>12}] ")
    }
}

fn format_line(node: &Node, line: &KernelLine, clock: Clock, decode: bool) -> String {
    let mut head = String::new();
    if decode {
        // The model's kernel lines all come from the kernel facility.
        let level = LEVELS.get(usize::from(line.level)).copied().unwrap_or("debug");
        head += &format!("kern  :{:<6}: ", level);
    }
    match clock {
        Clock::Uptime => head += &prefix(node, line, false),
        Clock::Wall => head += &prefix(node, line, true),
        Clock::None => {}
    }
    let indent = " ".repeat(head.chars().count());
    let mut out = String::new();
    for (at, part) in line.text.split('\n').enumerate() {
        out += if at == 0 { &head } else { &indent };
        out += part;
        out.push('\n');
    }
    out
}

fn help() -> String {
    let mut out = String::from("\nUsage:\n dmesg [options]\n\nDisplay or control the kernel ring buffer.\n\nOptions:\n");
    for flag in SIGNATURE.flags {
        let mut name = match (flag.short, flag.long) {
            (Some(short), Some(long)) => format!("-{short}, --{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, Some(long)) => format!("    --{long}"),
            (None, None) => String::new(),
        };
        if let Some(value) = flag.value {
            name += &format!(" <{}>", value.to_ascii_lowercase());
        }
        out += &format!(" {name:<26}{}\n", flag.help);
    }
    out += "\nSupported log levels (priorities):\n";
    for (at, level) in LEVELS.iter().enumerate() {
        out += &format!("   {level:>6} - {at}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    #[test]
    fn a_plain_user_may_not_read_the_ring_buffer() {
        let out = run_on_first_node("dmesg");
        assert_eq!((out.stderr.as_str(), out.status), ("dmesg: read kernel buffer failed: Operation not permitted\n", 1));
        // The same lines are in kern.log, which the adm group reads.
        assert!(run_on_first_node("grep -c NVRM /var/log/kern.log").stdout.trim() != "0");
    }

    #[test]
    fn plain_lines_carry_a_twelve_column_uptime() {
        let out = run_on_first_node("sudo dmesg");
        assert_eq!(out.status, 0);
        let first = out.stdout.lines().next().expect("a boot line");
        assert!(first.starts_with("[    4."), "{first}");
        assert_eq!(first.find("] "), Some(13));
    }

    #[test]
    fn ctime_and_level_filter_show_an_xid() {
        let mut cluster = cluster();
        Fault::GpuXid { node: "gpu-001".into(), gpu: 2, xid: 79 }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        let errors = session.run("sudo dmesg -l err").stdout();
        assert_eq!(errors.lines().count(), 1);
        assert!(errors.contains("NVRM: Xid (PCI:0000:43:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."));
        let wall = session.run("sudo dmesg -T").stdout();
        let xid = wall.lines().find(|l| l.contains("Xid")).unwrap();
        assert_eq!(xid.find("] "), Some(25), "{xid}");
        assert!(session.run("sudo dmesg --level=err,warn -x").stdout().starts_with("kern  :err   : ["));
    }

    #[test]
    fn bad_options_answer_as_util_linux() {
        let out = run_on_first_node("sudo dmesg --x");
        assert_eq!(out.stderr, "dmesg: unrecognized option '--x'\nTry 'dmesg --help' for more information.\n");
        assert_eq!(out.status, 1);
        let out = run_on_first_node("sudo dmesg -z");
        assert_eq!(out.stderr, "dmesg: invalid option -- 'z'\nTry 'dmesg --help' for more information.\n");
        let out = run_on_first_node("sudo dmesg -l bogus");
        assert_eq!(out.stderr, "dmesg: unknown level 'bogus'\nTry 'dmesg --help' for more information.\n");
        let out = run_on_first_node("sudo dmesg -l");
        assert_eq!((out.status, out.stdout.is_empty()), (1, true));
        assert!(run_on_first_node("sudo dmesg --help").stdout.contains("--level"));
    }
}
