//! The login shell on a simulated node.
//!
//! - [`parse`] reads a line as bash does; [`arith`] and [`condition`] are
//!   bash's arithmetic and `test`/`[[ ]]`; glob patterns are
//!   [`crate::pattern`], shared with `find -name`.
//! - [`interp`] runs a parsed line over a view of the cluster: expansion,
//!   pipelines, lists, builtins and the emulated commands. It also runs the
//!   nested lines commands ask for (the [`Runner`](crate::commands::Runner)
//!   they are given), over a copy of the cluster that shares unchanged nodes.
//! - [`Session`] is the interactive shell a trainee types into: history,
//!   background jobs, `ssh` between nodes, the clock, and a snapshot of all
//!   of it that restores the session without running anything again.
//!
//! The shell depends on the commands, never the reverse.

mod arith;
mod builtins;
mod condition;
mod interp;
mod jobs;
pub mod parse;
mod session;
mod time;

pub use builtins::NAMES as BUILTINS;
pub use interp::ShellState;
pub use jobs::{Job, JobState};
pub use session::{Interactive, OtherShell, Session, SessionJson, SessionSnapshot, ShellView};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Which stream a piece of output went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stream {
    Stdout,
    Stderr,
    /// Standard output that a pager (`less`, `more`) shows on the terminal:
    /// the app pages it; everywhere else it is standard output.
    Pager(crate::commands::Pager),
}

/// What one command line printed, in order, and how it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript {
    pub chunks: Vec<(Stream, String)>,
    pub status: i32,
    pub duration_ms: u64,
    /// When the output was printed: after each command, (simulated
    /// milliseconds into the line, bytes printed so far). A terminal reveals
    /// each command's output over the time it ran.
    pub timeline: Vec<(u64, usize)>,
    /// The programs the line ran, in the order they started.
    pub executions: Vec<crate::commands::execution::Execution>,
}

impl Transcript {
    pub(crate) fn push(&mut self, stream: Stream, text: String) {
        if text.is_empty() {
            return;
        }
        match self.chunks.last_mut() {
            Some((last, existing)) if *last == stream => existing.push_str(&text),
            _ => self.chunks.push((stream, text)),
        }
    }

    /// Standard output, paged or not.
    pub fn stdout(&self) -> String {
        self.chunks.iter().filter(|(s, _)| *s != Stream::Stderr).map(|(_, text)| text.as_str()).collect()
    }

    pub fn stderr(&self) -> String {
        self.text_of(Stream::Stderr)
    }

    /// Everything, interleaved as a terminal shows it.
    pub fn text(&self) -> String {
        self.chunks.iter().map(|(_, text)| text.as_str()).collect()
    }

    /// How many bytes were printed.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|(_, text)| text.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    fn text_of(&self, stream: Stream) -> String {
        self.chunks.iter().filter(|(s, _)| *s == stream).map(|(_, text)| text.as_str()).collect()
    }
}

/// Runs one program on `host` as the shell would start it, with a login
/// environment: its raw output, with what it changes (not applied). None
/// when there is no such program.
pub fn run_program(cluster: &crate::model::Cluster, host: &str, argv: &[String]) -> Option<crate::commands::Output> {
    use crate::commands::{Call, Runner};
    let log = crate::commands::execution::ExecLog::default();
    interp::Nesting { depth: 0, log, commands: Default::default() }.run_program(Call { cluster, host, env: None, stdin: "" }, argv)
}

pub use crate::model::node::USER;

/// bash's prompt on `host` for a fresh login (PS1, `user@gpu-001:~$ `),
/// or its `> ` (PS2) while a command is incomplete.
pub fn prompt(host: &str, continuing: bool) -> String {
    prompt_in(host, &login_env(host), continuing)
}

/// Ubuntu's PS1 (`\u@\h:\w\$ `) for a shell with `env`: its user, the
/// working directory with the home shown as `~`, `#` for root.
pub fn prompt_in(host: &str, env: &crate::commands::Env, continuing: bool) -> String {
    if continuing {
        return "> ".to_string();
    }
    let user = crate::commands::user(env);
    let home = env.get("HOME").map_or("", String::as_str);
    let cwd = env.get("PWD").map_or(home, String::as_str);
    let shown = match cwd.strip_prefix(home) {
        Some("") if !home.is_empty() => "~".to_string(),
        Some(rest) if !home.is_empty() && rest.starts_with('/') => format!("~{rest}"),
        _ => cwd.to_string(),
    };
    let sigil = if crate::commands::is_root(env) { '#' } else { '$' };
    format!("{user}@{host}:{shown}{sigil} ")
}

/// The environment a login shell on `host` starts with.
pub fn login_env(host: &str) -> BTreeMap<String, String> {
    [
        ("HOME", crate::model::node::HOME.to_string()),
        ("USER", USER.to_string()),
        ("LOGNAME", USER.to_string()),
        ("SHELL", "/bin/bash".to_string()),
        ("PATH", "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games:/usr/local/games:/snap/bin".to_string()),
        ("PWD", crate::model::node::HOME.to_string()),
        ("LANG", "C.UTF-8".to_string()),
        ("TERM", "xterm-256color".to_string()),
        ("HOSTNAME", host.to_string()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect()
}
