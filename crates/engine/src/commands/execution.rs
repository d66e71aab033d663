//! What ran: every program the engine executes, recorded as data.
//!
//! Grading judges executions, never the typed text (`task` questions match
//! them), so each program is recorded wherever it runs: at the prompt, in a
//! pipeline, a loop or a function, under `sudo`, `ssh HOST CMD`, `pdsh`,
//! `clush`, `xargs`, `bash -c`, `watch`, and the programs `srun` and
//! `mpirun` spread over nodes. A record names the host, the program, its
//! options in one canonical form (`-N 3`, `-N3` and `--nodes=3` are all
//! `nodes=3`; host lists expanded), its operands, whether it ran as root,
//! its exit status and its simulated start and duration.
//!
//! The records go into an [`ExecLog`] that the shell owns and hands down
//! through the [`Runner`](super::Runner), so nested lines add to the same
//! log in the order they started. An [`Observer`] (the lab's) may note, as
//! each execution starts, which of the lab's facts held then, and which of
//! its output patterns the output matched: a task that must follow a fix is
//! judged on what held when it ran.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::scheduler::slurm::hostlist;
use super::Signature;
use crate::limits::MAX_EXECUTIONS_PER_LINE;
use crate::model::Cluster;

/// One program that ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// The host it ran on (for a launcher's program, the launching host).
    pub host: String,
    /// The nodes a launcher (`srun`, `mpirun`) spread it over; empty when it
    /// ran on `host` alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    pub program: String,
    /// Options in canonical form: the long name when the program declares
    /// one (else the letter), and the value, host lists expanded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<(String, Option<String>)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operands: Vec<String>,
    /// Whether it ran as root (under `sudo`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub root: bool,
    pub status: i32,
    /// When it started on the lab's clock (milliseconds since the epoch).
    pub at_ms: i64,
    #[serde(default)]
    pub duration_ms: u64,
    /// The lab's watched facts that held when it started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<String>,
    /// The lab's watched output patterns its standard output matched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched: Vec<String>,
}

/// The status a record has while its program runs (no real status is negative).
const RUNNING: i32 = -1;

/// Programs whose options end at their first operand: what follows is a
/// command with options of its own (`srun -N2 all_reduce_perf -g 1`).
const LAUNCHERS: &[&str] = &["srun", "mpirun", "sudo", "env", "xargs", "watch", "pdsh", "clush", "sbatch", "ssh", "timeout"];

/// Options whose value is a host list, by program and canonical name.
const HOST_LIST_OPTIONS: &[(&str, &str)] = &[
    ("srun", "nodelist"),
    ("srun", "exclude"),
    ("sbatch", "nodelist"),
    ("sbatch", "exclude"),
    ("pdsh", "w"),
    ("pdsh", "x"),
    ("clush", "w"),
    ("clush", "x"),
    ("mpirun", "host"),
];

impl Execution {
    /// The record of `argv` starting on `host` at `at_ms`, its options read
    /// against the program's declared flags.
    pub fn new(signature: Option<&Signature>, host: &str, argv: &[String], root: bool, at_ms: i64) -> Execution {
        let program = argv.first().map_or("", |name| name.rsplit('/').next().unwrap_or(name)).to_string();
        let (options, operands) = canonical(signature, &program, argv.get(1..).unwrap_or(&[]));
        Execution {
            host: host.to_string(),
            hosts: Vec::new(),
            program,
            options,
            operands,
            root,
            status: RUNNING,
            at_ms,
            duration_ms: 0,
            held: Vec::new(),
            matched: Vec::new(),
        }
    }

    /// Every host it ran on.
    pub fn ran_on(&self) -> Vec<&str> {
        if self.hosts.is_empty() {
            vec![self.host.as_str()]
        } else {
            self.hosts.iter().map(String::as_str).collect()
        }
    }

    /// The value of option `name` (canonical), the last one given.
    pub fn option(&self, name: &str) -> Option<Option<&str>> {
        self.options.iter().rev().find(|(given, _)| given == name).map(|(_, value)| value.as_deref())
    }

    /// The command as a trainee would read it: `sudo nvidia-smi --gpu-reset --id=3`.
    pub fn display(&self) -> String {
        let mut words = vec![self.program.clone()];
        for (name, value) in &self.options {
            let dash = if name.chars().count() == 1 { "-" } else { "--" };
            words.push(match value {
                Some(value) if dash == "-" => format!("-{name} {value}"),
                Some(value) => format!("--{name}={value}"),
                None => format!("{dash}{name}"),
            });
        }
        words.extend(self.operands.iter().cloned());
        let line = words.join(" ");
        if self.root {
            format!("sudo {line}")
        } else {
            line
        }
    }
}

/// The canonical name of a flag: its long name when declared, else its letter.
fn flag_name(flag: &super::Flag) -> String {
    match (flag.long, flag.short) {
        (Some(long), _) => long.to_string(),
        (None, Some(short)) => short.to_string(),
        (None, None) => String::new(),
    }
}

/// Reads `args` as getopt would against the declared flags, keeping what
/// it does not know as given (an unknown `--x=y` is `x` with `y`, an
/// unknown letter a flag without a value).
fn canonical(signature: Option<&Signature>, program: &str, args: &[String]) -> (Vec<(String, Option<String>)>, Vec<String>) {
    let flags = signature.map_or(&[][..], |s| s.flags);
    let stops_at_operand = LAUNCHERS.contains(&program);
    let (mut options, mut operands) = (Vec::new(), Vec::new());
    let mut at = 0;
    let mut only_operands = false;
    while at < args.len() {
        let arg = &args[at];
        at += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.clone());
            if stops_at_operand {
                only_operands = true;
            }
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        // `--long[=value]`, or a long option written with one dash (`-np 8`).
        let long = arg.strip_prefix("--").or_else(|| {
            let name = &arg[1..];
            let bare = name.split('=').next().unwrap_or(name);
            (bare.len() > 1 && flags.iter().any(|flag| flag.long == Some(bare) && flag.short.is_none())).then_some(name)
        });
        if let Some(long) = long {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (long, None),
            };
            match flags.iter().find(|flag| flag.long == Some(name)) {
                Some(flag) if flag.value.is_some() => {
                    let value = inline.or_else(|| {
                        let next = args.get(at).cloned();
                        at += usize::from(next.is_some());
                        next
                    });
                    options.push((flag_name(flag), value));
                }
                Some(flag) => options.push((flag_name(flag), inline)),
                None => options.push((name.to_string(), inline)),
            }
            continue;
        }
        let letters: Vec<char> = arg[1..].chars().collect();
        let mut from = 0;
        while from < letters.len() {
            let letter = letters[from];
            from += 1;
            match flags.iter().find(|flag| flag.short == Some(letter)) {
                Some(flag) if flag.value.is_some() => {
                    let attached: String = letters[from..].iter().collect();
                    from = letters.len();
                    let value = if attached.is_empty() {
                        let next = args.get(at).cloned();
                        at += usize::from(next.is_some());
                        next
                    } else {
                        Some(attached)
                    };
                    options.push((flag_name(flag), value));
                }
                Some(flag) => options.push((flag_name(flag), None)),
                None => options.push((letter.to_string(), None)),
            }
        }
    }
    for (name, value) in &mut options {
        if HOST_LIST_OPTIONS.contains(&(program, name.as_str())) {
            if let Some(list) = value.as_deref().map(|list| expand_hosts(program, list)) {
                *value = Some(list);
            }
        }
    }
    (options, operands)
}

/// A host list as names, comma-separated: `gpu-[001-002]` is
/// `gpu-001,gpu-002`; mpirun's `a:8,b:8` is `a,b`.
fn expand_hosts(program: &str, list: &str) -> String {
    let list =
        if program == "mpirun" { list.split(',').map(|host| host.split(':').next().unwrap_or(host)).collect::<Vec<_>>().join(",") } else { list.to_string() };
    hostlist::expand(&list).map_or(list, |names| names.join(","))
}

/// What the lab watches as programs run: which of its facts hold, which of
/// its output patterns match. Implemented by the lab's grading, so that
/// commands know nothing of labs.
pub trait Observer {
    /// The ids of the watched facts that hold on `cluster` now, of those
    /// that matter to a run of `program` (each fact is watched for the
    /// task whose program it must precede: a loop of `echo`s costs nothing).
    fn facts(&self, cluster: &Cluster, program: &str) -> Vec<String>;
    /// The ids of the watched output patterns that `stdout` matches.
    fn outputs(&self, stdout: &str) -> Vec<String>;
}

/// The executions of one command line, in the order they started; shared
/// by the shell and every nested line it runs.
#[derive(Clone, Default)]
pub struct ExecLog(Rc<RefCell<Log>>);

#[derive(Default)]
struct Log {
    records: Vec<Execution>,
    observer: Option<Rc<dyn Observer>>,
}

/// Where a started execution is in its log, to be finished there.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot(Option<usize>);

impl ExecLog {
    pub fn new(observer: Option<Rc<dyn Observer>>) -> ExecLog {
        ExecLog(Rc::new(RefCell::new(Log { records: Vec::new(), observer })))
    }

    /// Records `execution` as starting now on `cluster` (noting the facts
    /// that hold). Past [`MAX_EXECUTIONS_PER_LINE`] nothing more is kept.
    pub fn start(&self, cluster: &Cluster, mut execution: Execution) -> Slot {
        let mut log = self.0.borrow_mut();
        if log.records.len() >= MAX_EXECUTIONS_PER_LINE {
            return Slot(None);
        }
        if let Some(observer) = &log.observer {
            execution.held = observer.facts(cluster, &execution.program);
        }
        log.records.push(execution);
        Slot(Some(log.records.len() - 1))
    }

    /// The execution in `slot` ended with `status`, after `duration_ms`,
    /// having printed `stdout`.
    pub fn finish(&self, slot: Slot, status: i32, duration_ms: u64, stdout: &str) {
        let mut log = self.0.borrow_mut();
        let matched = log.observer.as_ref().map(|observer| observer.outputs(stdout)).unwrap_or_default();
        if let Some(record) = slot.0.and_then(|at| log.records.get_mut(at)) {
            record.status = status;
            record.duration_ms = duration_ms;
            record.matched = matched;
        }
    }

    /// How many records the log holds.
    pub fn len(&self) -> usize {
        self.0.borrow().records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ctrl-C stopped the command that started when the log held `mark`
    /// records (its own record in `slot`, if it is a program): it ends with
    /// 130. What it ran before the interrupt (a watch's earlier refreshes,
    /// whose output the trainee saw) stands; what it would have started
    /// after never happened as far as grading goes. (The interrupted
    /// command's changes are not applied.)
    pub fn interrupt(&self, mark: usize, slot: Option<Slot>, duration_ms: u64) {
        let mut log = self.0.borrow_mut();
        let own = slot.and_then(|slot| slot.0).filter(|at| *at == mark);
        let first_nested = mark + usize::from(own.is_some());
        // The instant Ctrl-C struck: what the command ran before it (a
        // watch's earlier refreshes) stands, what was running then is
        // killed, what would have started after never ran.
        match own.and_then(|at| log.records.get(at)).map(|record| record.at_ms.saturating_add(i64::try_from(duration_ms).unwrap_or(i64::MAX))) {
            Some(struck) => {
                let from = first_nested.min(log.records.len());
                let nested = log.records.split_off(from);
                for mut record in nested.into_iter().filter(|record| record.at_ms < struck) {
                    if record.at_ms.saturating_add(i64::try_from(record.duration_ms).unwrap_or(i64::MAX)) > struck {
                        record.status = 130;
                        record.duration_ms = u64::try_from(struck - record.at_ms).unwrap_or(0);
                        record.matched.clear();
                    }
                    log.records.push(record);
                }
            }
            None => log.records.truncate(first_nested),
        }
        if let Some(record) = own.and_then(|at| log.records.get_mut(at)) {
            record.status = 130;
            record.duration_ms = duration_ms;
            // Output it never printed matches nothing.
            record.matched.clear();
        }
    }

    /// `timeout` killed what started since the log held `mark` records:
    /// each ends as SIGTERM ends it (143), and its output proves nothing.
    pub fn terminate(&self, mark: usize) {
        let mut log = self.0.borrow_mut();
        for record in log.records.iter_mut().skip(mark) {
            record.status = 143;
            record.matched.clear();
        }
    }

    /// The records so far, leaving the log empty. A record still running
    /// (a line cut short by a limit) counts as failed.
    pub fn take(&self) -> Vec<Execution> {
        let mut records = std::mem::take(&mut self.0.borrow_mut().records);
        for record in &mut records {
            if record.status == RUNNING {
                record.status = 1;
            }
        }
        records
    }

    /// A log for another line, with the same observer.
    pub fn fresh(&self) -> ExecLog {
        ExecLog::new(self.0.borrow().observer.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::find;

    fn parsed(line: &str) -> Execution {
        let argv: Vec<String> = line.split_whitespace().map(String::from).collect();
        Execution::new(find(&argv[0]).map(|c| c.signature()), "gpu-001", &argv, false, 0)
    }

    #[test]
    fn options_have_one_canonical_form() {
        for line in
            ["srun -N 3 all_reduce_perf -g 8", "srun -N3 all_reduce_perf -g 8", "srun --nodes=3 all_reduce_perf -g 8", "srun --nodes 3 all_reduce_perf -g 8"]
        {
            let run = parsed(line);
            assert_eq!(run.options, [("nodes".to_string(), Some("3".to_string()))], "{line}");
            assert_eq!(run.operands, ["all_reduce_perf", "-g", "8"], "{line}");
        }
        let listed = parsed("srun -w gpu-[001-003] hostname");
        assert_eq!(listed.option("nodelist"), Some(Some("gpu-001,gpu-002,gpu-003")));
        let reset = parsed("nvidia-smi -r -i 3");
        assert_eq!(reset.option("gpu-reset"), Some(None));
        assert_eq!(reset.option("id"), Some(Some("3")));
        assert_eq!(parsed("nvidia-smi --gpu-reset --id=3").options, reset.options);
        let diag = parsed("dcgmi diag -r 2");
        assert_eq!((diag.operands.as_slice(), diag.option("run")), (&["diag".to_string()][..], Some(Some("2"))));
        let mpi = parsed("mpirun -np 16 -H gpu-001:8,gpu-002:8 all_reduce_perf -g 1");
        assert_eq!(mpi.option("np"), Some(Some("16")));
        assert_eq!(mpi.option("host"), Some(Some("gpu-001,gpu-002")));
        assert_eq!(parsed("ls -la --color=never /tmp").options.len(), 3);
    }

    #[test]
    fn the_log_keeps_start_order_and_what_ran_before_an_interrupt() {
        let cluster = crate::testing::lab().instantiate(1);
        let log = ExecLog::default();
        let outer = log.start(&cluster, parsed("sudo nvidia-smi -r -i 0"));
        let inner = log.start(&cluster, parsed("nvidia-smi -r -i 0"));
        log.finish(inner, 0, 10, "");
        log.finish(outer, 0, 10, "");
        let taken = log.take();
        assert_eq!(taken.iter().map(|e| e.program.as_str()).collect::<Vec<_>>(), ["sudo", "nvidia-smi"]);
        // A watch stopped at 2.5 s: the refresh that ended stands, the one
        // running is killed, the one after never started.
        let outer = log.start(&cluster, parsed("watch nvidia-smi"));
        for (at_ms, duration_ms) in [(0, 100), (2_000, 1_000), (4_000, 100)] {
            let inner = log.start(&cluster, Execution { at_ms, ..parsed("nvidia-smi") });
            log.finish(inner, 0, duration_ms, "");
        }
        log.interrupt(0, Some(outer), 2_500);
        let taken: Vec<(i32, i64, u64)> = log.take().iter().map(|e| (e.status, e.at_ms, e.duration_ms)).collect();
        assert_eq!(taken, [(130, 0, 2_500), (0, 0, 100), (130, 2_000, 500)]);
    }
}
