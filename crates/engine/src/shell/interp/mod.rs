//! Runs a parsed line as bash does: expansion (parameters, command
//! substitution, arithmetic, braces, tilde), `NAME=value cmd`, redirections,
//! pipelines, lists, compound commands, functions, builtins and the
//! emulated commands.
//!
//! An [`Interp`] works over a copy-on-write view of the cluster: a line that
//! changes nothing never copies it, and one that does copies only the nodes
//! it changes. The interactive [`Session`](super::Session) and every nested
//! line a command asks for ([`Nesting`]) run through the same code.
//!
//! Everything a line can make grow is bounded (`limits.rs`): how deep it
//! runs (functions, compound commands, nested lines share one depth), how
//! many commands it runs, how many bytes its expansions build, how large a
//! word, a variable store or a file may get.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::parse::{self, Command, Compound, CondItem, Connector, List, ParamOp, Part, Pipeline, Redirect, RedirectKind, TimeFormat, Word};
use super::session::Interactive;
use super::time::{self, CpuTime};
use super::{arith, builtins, condition, jobs, login_env, Stream, Transcript};
use crate::commands::execution::{ExecLog, Execution, Slot};
use crate::commands::{self, files, Call, Env, Invocation, Output, Runner};
use crate::limits::{self, MAX_BRACE_WORDS, MAX_NESTED_COMMANDS, MAX_OUTPUT_BYTES, MAX_SHELL_COMMANDS, MAX_SHELL_WORK_BYTES, MAX_WORD_BYTES};
use crate::model::change::Change;
use crate::model::Cluster;
use crate::pattern;

mod expand;
mod redirect;

use expand::*;

/// What a shell keeps between lines: where it runs, its variables, its
/// functions (as source text) and `$?`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellState {
    pub host: String,
    pub env: Env,
    pub last_status: i32,
    #[serde(default)]
    pub functions: BTreeMap<String, String>,
}

impl ShellState {
    /// A login shell on `host`.
    pub fn login(host: &str) -> ShellState {
        ShellState { host: host.to_string(), env: login_env(host), last_status: 0, functions: BTreeMap::new() }
    }

    /// The directory relative paths start from.
    pub fn cwd(&self) -> &str {
        self.env.get("PWD").map_or("/", String::as_str)
    }
}

/// Standard input of the command running now: what is left of it.
#[derive(Default)]
pub struct Input {
    text: String,
    at: usize,
}

impl Input {
    pub fn new(text: impl Into<String>) -> Input {
        Input { text: text.into(), at: 0 }
    }

    pub fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    /// The next line (without its newline); None at the end.
    pub fn read_line(&mut self) -> Option<String> {
        let rest = self.rest();
        if rest.is_empty() {
            return None;
        }
        let end = rest.find('\n').map_or(rest.len(), |at| at + 1);
        let line = rest[..end].trim_end_matches('\n').to_string();
        self.at += end;
        Some(line)
    }

    fn consume(&mut self) {
        self.at = self.text.len();
    }
}

/// Programs that read their standard input when given no file operands:
/// they use up what a loop reads from (`... | while read l; do cat; done`).
const STDIN_READERS: &[&str] = &["awk", "cat", "cut", "grep", "head", "sort", "ssh", "tail", "tee", "tr", "uniq", "wc"];

/// Where a redirected stream goes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sink {
    Stdout,
    Stderr,
    Discard,
    /// The n-th file opened by the redirections.
    File(usize),
}

/// Control flow that unwinds compound commands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Flow {
    Normal,
    Break(u32),
    Continue(u32),
    Return,
}

pub(crate) struct Interp<'c, 's> {
    pub cluster: Cow<'c, Cluster>,
    pub shell: &'s mut ShellState,
    /// The interactive session's own state (history, jobs, `ssh` logins);
    /// None in a nested, non-interactive shell.
    pub session: Option<&'s mut Interactive>,
    /// How deep this runs: nested command lines, function calls and
    /// compound commands together.
    pub depth: u32,
    /// The simulated time the line started at, in milliseconds since the epoch.
    started_ms: i64,
    /// How long the line has run so far on the simulated clock.
    line_ms: u64,
    /// The CPU its commands have used so far: what `time` reports.
    cpu: CpuTime,
    /// What the line changed in the cluster, in order.
    pub changes: Vec<Change>,
    /// Set by `exit` in a non-interactive shell, an interrupt or a limit:
    /// the rest of the line is skipped.
    exited: bool,
    /// Whether the output limit was reached (the notice is shown once).
    output_cut: bool,
    /// Ctrl-C at this many simulated milliseconds into the line: the
    /// command running then is stopped and nothing after it runs.
    interrupt_at_ms: Option<u64>,
    /// Whether the interrupt struck.
    pub interrupted: bool,
    /// `$1`, `$2`, ... of the function (or `bash -c`) running now, and `$0`.
    positional: Vec<String>,
    arg0: String,
    flow: Flow,
    /// Loops around the command running now (for `break` and `continue`).
    loops: u32,
    /// Functions running now (for `return` and `local`).
    functions: u32,
    /// Above zero while output is captured (command substitution, pipes,
    /// redirections): nothing reads the terminal.
    capturing: u32,
    /// Commands run so far in this line, nested lines included; bytes expanded.
    commands_run: CommandCount,
    work: u64,
    /// Bytes the shell's variables and functions hold.
    store_bytes: usize,
    /// The status of the last command substitution, for a command made of
    /// assignments only.
    substitution_status: Option<i32>,
    /// The files of the `<(...)` substitutions open now.
    process_files: Vec<String>,
    /// Servers other shells of the session started, (node, port): what one
    /// prints as a client here ends it goes to `diverted`, for its shell.
    pub servers_elsewhere: Vec<(String, u16)>,
    pub diverted: Vec<((String, u16), String)>,
    /// What a background job of this shell printed while the line's output
    /// went into a pipe or a file: it belongs on the terminal, after the line.
    pub to_terminal: String,
    /// What runs, for grading: shared with every nested line.
    pub log: ExecLog,
    /// Where the log stood when the command running now started, and its
    /// own record: an interrupt ends it there.
    running: (usize, Option<Slot>),
    /// The instant and the count of changes at which the batch scheduler
    /// last looked: nothing can start until one of them moves, so a loop
    /// of instant commands does not walk the history at each.
    scheduled: Option<(i64, usize)>,
}

/// The most bytes of variables and functions one shell may hold.
const MAX_STORE_BYTES: usize = 8 << 20;

impl<'c, 's> Interp<'c, 's> {
    pub fn new(cluster: Cow<'c, Cluster>, shell: &'s mut ShellState, session: Option<&'s mut Interactive>, depth: u32, started_ms: i64) -> Self {
        let store_bytes = shell.env.iter().chain(shell.functions.iter()).map(|(k, v)| k.len() + v.len()).sum();
        Interp {
            cluster,
            shell,
            session,
            depth,
            started_ms,
            line_ms: 0,
            cpu: CpuTime::default(),
            changes: Vec::new(),
            exited: false,
            output_cut: false,
            interrupt_at_ms: None,
            interrupted: false,
            positional: Vec::new(),
            arg0: "-bash".to_string(),
            flow: Flow::Normal,
            loops: 0,
            functions: 0,
            capturing: 0,
            commands_run: CommandCount::default(),
            work: 0,
            store_bytes,
            substitution_status: None,
            process_files: Vec::new(),
            servers_elsewhere: Vec::new(),
            diverted: Vec::new(),
            to_terminal: String::new(),
            log: ExecLog::default(),
            running: (0, None),
            scheduled: None,
        }
    }

    /// Stops the line `at_ms` simulated milliseconds in, as Ctrl-C does.
    pub fn interrupt_at(mut self, at_ms: u64) -> Self {
        self.interrupt_at_ms = Some(at_ms);
        self
    }

    /// The cluster as the line left it, when the line changed it.
    pub fn into_changed_cluster(self) -> Option<Cluster> {
        match self.cluster {
            Cow::Owned(cluster) => Some(cluster),
            Cow::Borrowed(_) => None,
        }
    }

    /// The runner a command started from this shell gets.
    pub fn runner(&self) -> Nesting {
        Nesting { depth: self.depth, log: self.log.clone(), commands: self.commands_run.clone() }
    }

    fn stopped(&self) -> bool {
        self.exited || self.flow != Flow::Normal
    }

    /// Runs a line; `stdin` is its standard input.
    pub fn run_line(&mut self, line: &str, stdin: &str) -> Transcript {
        let mut transcript = Transcript::default();
        match parse::parse(line) {
            Ok(list) => {
                let mut input = Input::new(stdin);
                self.run_list(&list, &mut input, &mut transcript);
                if self.flow != Flow::Normal {
                    self.flow = Flow::Normal;
                }
            }
            Err(error) => self.syntax_error(&error, &mut transcript),
        }
        // Whatever is still open closes with the line.
        self.close_process_files(0);
        transcript.status = self.shell.last_status;
        transcript.duration_ms = self.line_ms;
        transcript
    }

    fn syntax_error(&mut self, error: &parse::SyntaxError, out: &mut Transcript) {
        out.push(Stream::Stderr, format!("-bash: {}\n", error.message()));
        self.shell.last_status = 2;
    }

    /// Prints a message on standard error and stops the whole line.
    fn stop_line(&mut self, out: &mut Transcript, message: String) -> i32 {
        if !self.exited {
            self.emit(out, Stream::Stderr, message);
        }
        self.exited = true;
        self.shell.last_status = 1;
        1
    }

    pub fn run_list(&mut self, list: &List, input: &mut Input, out: &mut Transcript) -> i32 {
        // `$?` decides each `&&` and `||`, whether or not the pipeline before ran:
        // `false && a || b` runs b.
        let mut run_next = true;
        for (pipeline, connector) in list {
            if self.stopped() {
                break;
            }
            if run_next && *connector == Connector::Background {
                match self.session.is_some() && self.capturing == 0 {
                    true => jobs::start_job(self, pipeline, out),
                    // `bash -c 'cmd &'` has no job control: cmd just runs.
                    false => {
                        self.run_pipeline(pipeline, input, out);
                    }
                }
                self.shell.last_status = 0;
            } else if run_next {
                self.shell.last_status = self.run_pipeline(pipeline, input, out);
            }
            run_next = match connector {
                Connector::Always | Connector::Background => true,
                Connector::IfSuccess => self.shell.last_status == 0,
                Connector::IfFailure => self.shell.last_status != 0,
            };
        }
        self.shell.last_status
    }

    pub fn run_pipeline(&mut self, pipeline: &Pipeline, input: &mut Input, out: &mut Transcript) -> i32 {
        let Some(format) = pipeline.timed else {
            return self.run_untimed_pipeline(pipeline, input, out);
        };
        let (started_ms, cpu) = (self.line_ms, self.cpu);
        let status = self.run_untimed_pipeline(pipeline, input, out);
        let timeformat = self.shell.env.get("TIMEFORMAT").cloned();
        let report = time::report(timeformat.as_deref(), format == TimeFormat::Posix, self.line_ms.saturating_sub(started_ms), self.cpu.since(cpu));
        self.emit(out, Stream::Stderr, report);
        status
    }

    fn run_untimed_pipeline(&mut self, pipeline: &Pipeline, input: &mut Input, out: &mut Transcript) -> i32 {
        let last = pipeline.commands.len() - 1;
        let mut status = 0;
        let mut piped: Option<Input> = None;
        for (position, command) in pipeline.commands.iter().enumerate() {
            if self.stopped() {
                break;
            }
            let mut stage_input = piped.take();
            let input: &mut Input = stage_input.as_mut().unwrap_or(&mut *input);
            if position == last {
                status = self.run_command_node(command, input, out, position == 0);
            } else {
                let (stdout, stage_status) = self.capture(out, &mut |interp, sub| interp.run_command_node(command, input, sub, false));
                status = stage_status;
                piped = Some(Input::new(stdout));
            }
        }
        if pipeline.negated {
            status = i32::from(status == 0);
        }
        status
    }

    /// Runs `run` with its standard output captured: returns what it
    /// printed there; standard error goes on to `out`.
    fn capture(&mut self, out: &mut Transcript, run: &mut dyn FnMut(&mut Self, &mut Transcript) -> i32) -> (String, i32) {
        let mut sub = Transcript::default();
        self.capturing += 1;
        let status = run(self, &mut sub);
        self.capturing -= 1;
        let mut stdout = String::new();
        for (stream, text) in sub.chunks {
            match stream {
                Stream::Stdout | Stream::Pager(_) => stdout.push_str(&text),
                Stream::Stderr => self.emit(out, Stream::Stderr, text),
            }
        }
        out.timeline.push((self.line_ms, out.len()));
        (stdout, status)
    }

    fn run_command_node(&mut self, command: &Command, input: &mut Input, out: &mut Transcript, first: bool) -> i32 {
        if !self.count_command(out) {
            return 1;
        }
        match command {
            Command::Simple { words, redirects } => self.run_simple(words, redirects, input, out, first),
            Command::Compound { body, redirects } => {
                // `<(...)` in a compound command's words (`for f in <(...)`) closes with it.
                let opened = self.process_files.len();
                let status = if redirects.is_empty() {
                    self.run_compound(body, input, out)
                } else {
                    self.with_redirects(redirects, input, out, &mut |interp, input, sub| interp.run_compound(body, input, sub))
                };
                self.close_process_files(opened);
                status
            }
            Command::Function { name, body } => {
                let old = self.shell.functions.get(name).map_or(0, |b| name.len() + b.len());
                if self.store_bytes - old + name.len() + body.len() > MAX_STORE_BYTES {
                    self.emit(
                        out,
                        Stream::Stderr,
                        format!(
                            "-bash: {name}: cannot allocate memory (a simulated shell holds at most {} MiB of variables and functions)\n",
                            MAX_STORE_BYTES >> 20
                        ),
                    );
                    return 1;
                }
                self.store_bytes = self.store_bytes - old + name.len() + body.len();
                self.shell.functions.insert(name.clone(), body.clone());
                0
            }
        }
    }

    /// Counts one more command (or loop round) against the line's bound;
    /// false, with the line stopped, past it.
    fn count_command(&mut self, out: &mut Transcript) -> bool {
        if self.commands_run.add(1) > MAX_SHELL_COMMANDS {
            self.stop_line(out, too_many_commands());
            return false;
        }
        true
    }

    /// One level deeper, or the nesting error.
    fn enter(&mut self, out: &mut Transcript, what: &str) -> bool {
        if self.depth + 1 >= MAX_NESTED_COMMANDS {
            let message = match what {
                "" => limits::nesting_error("bash"),
                function => format!("-bash: {function}: maximum function nesting level exceeded ({MAX_NESTED_COMMANDS})\n"),
            };
            self.stop_line(out, message);
            return false;
        }
        self.depth += 1;
        true
    }

    fn run_compound(&mut self, body: &Compound, input: &mut Input, out: &mut Transcript) -> i32 {
        if !self.enter(out, "") {
            return 126;
        }
        let status = self.run_compound_inner(body, input, out);
        self.depth -= 1;
        status
    }

    fn run_compound_inner(&mut self, body: &Compound, input: &mut Input, out: &mut Transcript) -> i32 {
        match body {
            Compound::Group(list) => self.run_list(list, input, out),
            Compound::Subshell(list) => self.subshell(out, &mut |interp, out| interp.run_list(list, input, out)),
            Compound::If { branches, otherwise } => {
                for (condition, body) in branches {
                    let status = self.run_list(condition, input, out);
                    if self.stopped() {
                        return status;
                    }
                    if status == 0 {
                        return self.run_list(body, input, out);
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body, input, out),
                    None => 0,
                }
            }
            Compound::For { name, items, body } => {
                let items = match items {
                    Some(words) => match self.expand_words(words, out) {
                        Some(items) => items,
                        None => return 1,
                    },
                    None => self.positional.clone(),
                };
                let mut status = 0;
                self.loops += 1;
                for item in items {
                    if !self.assign(name, item, out) {
                        status = 1;
                        break;
                    }
                    status = self.run_list(body, input, out);
                    if !self.loop_goes_on() {
                        break;
                    }
                }
                self.loops -= 1;
                status
            }
            Compound::ArithFor { init, test, step, body } => {
                if self.arithmetic(init, out).is_none() {
                    return 1;
                }
                let mut status = 0;
                self.loops += 1;
                loop {
                    if !self.count_command(out) {
                        status = 1;
                        break;
                    }
                    let go_on = match self.arithmetic(test, out) {
                        Some(value) => value != 0 || test.parts.is_empty(),
                        None => {
                            status = 1;
                            break;
                        }
                    };
                    if !go_on {
                        break;
                    }
                    status = self.run_list(body, input, out);
                    if !self.loop_goes_on() {
                        break;
                    }
                    if self.arithmetic(step, out).is_none() {
                        status = 1;
                        break;
                    }
                }
                self.loops -= 1;
                status
            }
            Compound::While { condition, body, until } => {
                let mut status = 0;
                self.loops += 1;
                loop {
                    let test = self.run_list(condition, input, out);
                    if self.stopped() {
                        self.loop_goes_on();
                        break;
                    }
                    if (test == 0) == *until {
                        break;
                    }
                    status = self.run_list(body, input, out);
                    if !self.loop_goes_on() {
                        break;
                    }
                }
                self.loops -= 1;
                status
            }
            Compound::Case { subject, arms } => {
                let Some(subject) = self.expand_text(subject, out) else {
                    return 1;
                };
                for (patterns, body) in arms {
                    for word in patterns {
                        let Some(pattern) = self.expand_pattern(word, out) else {
                            return 1;
                        };
                        if pattern::matches(&pattern, &subject) {
                            return self.run_list(body, input, out);
                        }
                    }
                }
                0
            }
            Compound::Cond(items) => {
                let mut args = Vec::new();
                for item in items {
                    let (text, operator) = match item {
                        CondItem::Word(word) => {
                            // Only the right of `==`, `=` and `!=` is a pattern; each word
                            // expands once (a substitution in it runs once).
                            let is_pattern = args.last().is_some_and(|arg: &condition::Arg| !arg.operator && matches!(arg.text.as_str(), "==" | "=" | "!="));
                            let expanded = if is_pattern { self.expand_pattern(word, out) } else { self.expand_text(word, out) };
                            let Some(expanded) = expanded else {
                                return 1;
                            };
                            let arg = if is_pattern {
                                condition::Arg { text: unescape_pattern(&expanded), pattern: expanded, operator: false }
                            } else {
                                condition::Arg::word(expanded)
                            };
                            args.push(arg);
                            continue;
                        }
                        CondItem::And => ("&&", true),
                        CondItem::Or => ("||", true),
                        CondItem::Not => ("!", true),
                        CondItem::Open => ("(", true),
                        CondItem::Close => (")", true),
                    };
                    args.push(condition::Arg { text: text.into(), pattern: text.into(), operator });
                }
                match condition::extended(&args, &self.file_view()) {
                    Ok(value) => i32::from(!value),
                    Err(error) => {
                        if !error.0.is_empty() {
                            self.emit(out, Stream::Stderr, format!("-bash: {}\n", error.0));
                        }
                        2
                    }
                }
            }
            Compound::Arith(expression) => match self.arithmetic(expression, out) {
                Some(value) => i32::from(value == 0),
                None => 1,
            },
        }
    }

    /// After a loop body: whether the loop runs on (`break`, `return` and
    /// `exit` end it; `continue` goes on).
    fn loop_goes_on(&mut self) -> bool {
        match self.flow {
            Flow::Normal => !self.exited,
            Flow::Break(levels) => {
                self.flow = if levels > 1 { Flow::Break(levels - 1) } else { Flow::Normal };
                false
            }
            Flow::Continue(levels) if levels > 1 => {
                self.flow = Flow::Continue(levels - 1);
                false
            }
            Flow::Continue(_) => {
                self.flow = Flow::Normal;
                !self.exited
            }
            Flow::Return => false,
        }
    }

    /// Runs `run` in a copy of the shell: what it sets and defines, where
    /// it `cd`s and whether it `exit`s stay inside.
    fn subshell(&mut self, out: &mut Transcript, run: &mut dyn FnMut(&mut Self, &mut Transcript) -> i32) -> i32 {
        let saved_shell = self.shell.clone();
        let saved_positional = self.positional.clone();
        let saved_arg0 = self.arg0.clone();
        let saved_store = self.store_bytes;
        let session = self.session.take();
        let status = run(self, out);
        self.session = session;
        let interrupted = self.interrupted;
        let limit_hit = self.commands_run.exceeded();
        *self.shell = saved_shell;
        self.positional = saved_positional;
        self.arg0 = saved_arg0;
        self.store_bytes = saved_store;
        if !interrupted && !limit_hit {
            self.exited = false;
            self.flow = Flow::Normal;
        }
        status
    }

    // ---- simple commands ----

    fn run_simple(&mut self, words: &[Word], redirects: &[Redirect], input: &mut Input, out: &mut Transcript, first: bool) -> i32 {
        let opened = self.process_files.len();
        let status = self.run_simple_command(words, redirects, input, out, first);
        // The command's `<(...)` files close with it.
        self.close_process_files(opened);
        status
    }

    /// Removes the `<(...)` files opened since the first `from`.
    fn close_process_files(&mut self, from: usize) {
        if self.process_files.len() <= from {
            return;
        }
        let host = self.shell.host.clone();
        let closed = self.process_files.split_off(from);
        if let Some(node) = self.cluster.to_mut().node_mut(&host) {
            for path in closed {
                node.files.remove(&path);
            }
        }
    }

    fn run_simple_command(&mut self, words: &[Word], redirects: &[Redirect], input: &mut Input, out: &mut Transcript, first: bool) -> i32 {
        // Assignments come first; their values are not split.
        let assignments = words.iter().take_while(|word| assignment_name(word).is_some()).count();
        let mut assigned = Vec::new();
        self.substitution_status = None;
        for word in &words[..assignments] {
            let name = assignment_name(word).expect("counted above");
            let Some(value) = self.expand_assignment_value(word, name.len() + 1, out) else {
                return 1;
            };
            assigned.push((name, value));
        }
        let Some(argv) = self.expand_words(&words[assignments..], out) else {
            return 1;
        };
        if redirects.is_empty() {
            return self.exec(assigned, &argv, input, out, first);
        }
        self.with_redirects(redirects, input, out, &mut |interp, input, sub| interp.exec(std::mem::take(&mut assigned), &argv, input, sub, false))
    }

    /// Runs argv with the assignments: for the command only, or for the
    /// shell when there is no command.
    fn exec(&mut self, assigned: Vec<(String, String)>, argv: &[String], input: &mut Input, out: &mut Transcript, first: bool) -> i32 {
        if argv.is_empty() {
            for (name, value) in assigned {
                if !self.assign(&name, value, out) {
                    return 1;
                }
            }
            return self.substitution_status.take().unwrap_or(0);
        }
        if let Some((name, _)) = assigned.iter().find(|(name, _)| builtins::is_readonly(name)) {
            self.emit(out, Stream::Stderr, format!("-bash: {name}: readonly variable\n"));
            return 1;
        }
        let saved = (!assigned.is_empty()).then(|| self.shell.env.clone());
        for (name, value) in assigned {
            self.shell.env.insert(name, value);
        }
        let status = self.dispatch(argv, input, out, first);
        if let Some(env) = saved {
            self.shell.env = env;
        }
        status
    }

    fn dispatch(&mut self, argv: &[String], input: &mut Input, out: &mut Transcript, first: bool) -> i32 {
        let name = argv[0].as_str();
        if let Some(body) = self.shell.functions.get(name).cloned() {
            return self.call_function(name, &body, &argv[1..], input, out);
        }
        if let Some(status) = self.run_shell_builtin(argv, input, out) {
            return status;
        }
        // Only the first command of a top-level interactive pipeline reads the terminal.
        let from_terminal = first && self.session.is_some() && self.capturing == 0 && input.rest().is_empty();
        let output = self.run_command(argv, input.rest(), from_terminal);
        if STDIN_READERS.contains(&name) {
            input.consume();
        }
        let started_ms = self.line_ms;
        let status = self.finish(output, out);
        self.cpu = self.cpu.add(CpuTime::of_command(name, self.line_ms.saturating_sub(started_ms)));
        status
    }

    /// Prints what a command printed and applies what it changed, as the
    /// simulated clock reaches its end (or stops it at the interrupt).
    fn finish(&mut self, output: Output, out: &mut Transcript) -> i32 {
        if let Some(at) = self.interrupt_at_ms.filter(|at| self.line_ms.saturating_add(output.duration_ms) > *at) {
            // SIGINT: the command dies where the clock stood. It printed
            // its lines evenly over the time it ran, so the share of
            // them up to the interrupt shows; what it would have printed
            // after, and changed at its end, never happens.
            let at = at.max(self.line_ms);
            let ran = at - self.line_ms;
            let lines: Vec<&str> = output.stdout.split_inclusive('\n').collect();
            let shown = (lines.len() as u128 * u128::from(ran) / u128::from(output.duration_ms.max(1))) as usize;
            self.emit(out, Stream::Stderr, output.started_stderr);
            self.emit(out, Stream::Stdout, lines[..shown.min(lines.len())].concat());
            self.emit(out, Stream::Stderr, output.interrupt_stderr);
            let (mark, slot) = std::mem::take(&mut self.running);
            self.log.interrupt(mark, slot, ran);
            self.line_ms = at;
            out.timeline.push((self.line_ms, out.len()));
            self.interrupted = true;
            self.exited = true;
            return 130;
        }
        self.apply(&output.changes, output.duration_ms);
        self.emit(out, Stream::Stderr, output.started_stderr);
        self.emit(out, Stream::Stderr, output.stderr);
        self.line_ms = self.line_ms.saturating_add(output.duration_ms);
        if output.changes.iter().any(|change| matches!(change, Change::Reboot { node, .. } if *node == self.shell.host)) {
            self.drop_connection(out);
        }
        // A pager pages only what reaches the terminal (`less f | grep x` does not).
        let to_terminal = self.session.is_some() && self.capturing == 0;
        let stream = match output.pager {
            Some(pager) if to_terminal => Stream::Pager(pager),
            _ => Stream::Stdout,
        };
        self.emit(out, stream, output.stdout);
        let ended = output.changes.iter().find_map(|change| match change {
            Change::StopListening { node, port } => Some((node.clone(), *port)),
            _ => None,
        });
        let ended_elsewhere = ended.as_ref().filter(|server| self.servers_elsewhere.contains(server));
        // A server this shell started at an earlier prompt prints to the terminal, not
        // into this command's pipe (one started in this line shares its output).
        let started_earlier = ended.as_ref().is_some_and(|server| self.session.as_ref().is_some_and(|s| s.serving.contains(server)));
        match ended_elsewhere {
            Some(server) if !output.background.is_empty() => self.diverted.push((server.clone(), output.background)),
            _ if started_earlier && self.capturing > 0 => self.to_terminal.push_str(&output.background),
            _ => self.emit(out, Stream::Stdout, output.background),
        }
        out.timeline.push((self.line_ms, out.len()));
        output.status
    }

    /// The node this shell is on rebooted: the ssh session to it ends, back
    /// on the node it came from. The lab's first shell has nowhere to go
    /// back to: the trainee logs in again once the node has booted.
    fn drop_connection(&mut self, out: &mut Transcript) {
        if self.session.is_none() {
            self.exited = true;
            return;
        }
        let host = self.shell.host.clone();
        match self.leave_ssh() {
            Some(_) => {
                self.emit(out, Stream::Stderr, format!("Connection to {host} closed by remote host.\nConnection to {host} closed.\n"));
            }
            None => {
                self.emit(out, Stream::Stderr, format!("Connection to {host} closed by remote host.\n"));
                let booted = self.cluster.node(&host).map_or(0, |node| node.booted_at);
                let now_ms = self.started_ms.saturating_add(self.line_ms as i64);
                self.line_ms = self.line_ms.saturating_add(u64::try_from(booted.saturating_mul(1000).saturating_sub(now_ms)).unwrap_or(0));
            }
        }
        self.exited = true;
    }

    /// Back from an `ssh` session to the host it was opened from (by `exit`
    /// or a dropped connection): the host left, or None when the shell is
    /// on its first host.
    pub(super) fn leave_ssh(&mut self) -> Option<String> {
        let session = self.session.as_deref_mut()?;
        // Root shells opened on the host being left end with it.
        let depth = session.ssh_stack.len();
        if let Some(first) = session.root_shells.iter().position(|root| root.depth >= depth) {
            self.shell.env = session.root_shells[first].env.clone();
            session.root_shells.truncate(first);
        }
        let previous = session.ssh_stack.pop()?;
        self.shell.env.insert("HOSTNAME".to_string(), previous.clone());
        Some(std::mem::replace(&mut self.shell.host, previous))
    }

    fn call_function(&mut self, name: &str, body: &str, args: &[String], input: &mut Input, out: &mut Transcript) -> i32 {
        let command = match parse::parse(body) {
            Ok(list) => list,
            Err(error) => {
                self.syntax_error(&error, out);
                return 2;
            }
        };
        if !self.enter(out, name) {
            return 1;
        }
        let saved = std::mem::replace(&mut self.positional, args.to_vec());
        self.functions += 1;
        // The body is one compound command; the call is its level of depth.
        let status = match command.as_slice() {
            [(pipeline, _)] if pipeline.commands.len() == 1 => match &pipeline.commands[0] {
                Command::Compound { body, redirects } if redirects.is_empty() => self.run_compound_inner(body, input, out),
                _ => self.run_list(&command, input, out),
            },
            _ => self.run_list(&command, input, out),
        };
        self.functions -= 1;
        self.positional = saved;
        self.depth -= 1;
        if self.flow == Flow::Return {
            self.flow = Flow::Normal;
            return self.shell.last_status;
        }
        status
    }

    /// Builtins that act on the running shell itself: control flow,
    /// conditions, `read`, `eval`, `source`, `bash -c`. None when argv is
    /// none of them.
    fn run_shell_builtin(&mut self, argv: &[String], input: &mut Input, out: &mut Transcript) -> Option<i32> {
        let args = &argv[1..];
        let status = match argv[0].as_str() {
            ":" => 0,
            "test" | "[" => {
                let mut args: Vec<condition::Arg> = args.iter().cloned().map(condition::Arg::word).collect();
                if argv[0] == "[" {
                    if args.last().map(|a| a.text.as_str()) != Some("]") {
                        self.emit(out, Stream::Stderr, "-bash: [: missing `]'\n".into());
                        return Some(2);
                    }
                    args.pop();
                }
                match condition::test(&args, &self.file_view()) {
                    Ok(value) => i32::from(!value),
                    Err(error) => {
                        self.emit(out, Stream::Stderr, format!("-bash: {}: {}\n", argv[0], error.0));
                        2
                    }
                }
            }
            "break" | "continue" => {
                let levels = match args.first().map(|n| n.parse::<u32>()) {
                    None => 1,
                    Some(Ok(n)) if n > 0 => n,
                    Some(_) => {
                        self.emit(out, Stream::Stderr, format!("-bash: {}: {}: loop count out of range\n", argv[0], args[0]));
                        return Some(1);
                    }
                };
                if self.loops == 0 {
                    self.emit(out, Stream::Stderr, format!("-bash: {}: only meaningful in a `for', `while', or `until' loop\n", argv[0]));
                    return Some(0);
                }
                let levels = levels.min(self.loops);
                self.flow = if argv[0] == "break" { Flow::Break(levels) } else { Flow::Continue(levels) };
                0
            }
            "return" => {
                if self.functions == 0 {
                    self.emit(out, Stream::Stderr, "-bash: return: can only `return' from a function or sourced script\n".into());
                    return Some(2);
                }
                let status = match args.first() {
                    None => self.shell.last_status,
                    Some(n) => match n.parse::<i64>() {
                        Ok(n) => (n & 0xff) as i32,
                        Err(_) => {
                            self.emit(out, Stream::Stderr, format!("-bash: return: {n}: numeric argument required\n"));
                            2
                        }
                    },
                };
                self.flow = Flow::Return;
                self.shell.last_status = status;
                status
            }
            "shift" => {
                let count = match args.first().map(|n| n.parse::<usize>()) {
                    None => 1,
                    Some(Ok(n)) => n,
                    Some(Err(_)) => {
                        self.emit(out, Stream::Stderr, format!("-bash: shift: {}: numeric argument required\n", args[0]));
                        return Some(1);
                    }
                };
                if count > self.positional.len() {
                    return Some(1);
                }
                self.positional.drain(..count);
                0
            }
            "local" => {
                if self.functions == 0 {
                    self.emit(out, Stream::Stderr, "-bash: local: can only be used in a function\n".into());
                    return Some(1);
                }
                for arg in args {
                    let (name, value) = arg.split_once('=').unwrap_or((arg, ""));
                    if !parse::is_name(name) {
                        self.emit(out, Stream::Stderr, format!("-bash: local: `{arg}': not a valid identifier\n"));
                        return Some(1);
                    }
                    if !self.assign(name, value.to_string(), out) {
                        return Some(1);
                    }
                }
                0
            }
            "read" => self.read(args, input, out),
            "eval" => {
                let line = args.join(" ");
                self.run_source(&line, input, out)
            }
            "source" | "." => match args.first() {
                None => {
                    self.emit(
                        out,
                        Stream::Stderr,
                        format!("-bash: {}: filename argument required\n{}: usage: {} filename [arguments]\n", argv[0], argv[0], argv[0]),
                    );
                    2
                }
                Some(path) => match self.read_file(path) {
                    Ok(text) => {
                        let saved = std::mem::replace(&mut self.positional, args[1..].to_vec());
                        let status = self.run_source(&text, input, out);
                        self.positional = saved;
                        status
                    }
                    Err(reason) => {
                        self.emit(out, Stream::Stderr, format!("-bash: {path}: {reason}\n"));
                        1
                    }
                },
            },
            "bash" | "sh" => self.bash(&argv[0], args, input, out),
            _ => return None,
        };
        Some(status)
    }

    /// Parses and runs `text` in this shell (`eval`, `source`).
    fn run_source(&mut self, text: &str, input: &mut Input, out: &mut Transcript) -> i32 {
        match parse::parse(text) {
            Ok(list) => {
                if !self.enter(out, "") {
                    return 126;
                }
                let status = self.run_list(&list, input, out);
                self.depth -= 1;
                status
            }
            Err(error) => {
                self.syntax_error(&error, out);
                2
            }
        }
    }

    /// `bash -c 'line' [name args...]`, `bash script [args...]`, `bash < script`.
    fn bash(&mut self, name: &str, args: &[String], input: &mut Input, out: &mut Transcript) -> i32 {
        let mut rest = args.iter();
        let mut script = None;
        let mut positional = Vec::new();
        let mut arg0 = name.to_string();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "-c" => match rest.next() {
                    Some(line) => {
                        script = Some((line.clone(), format!("{name}: -c: line 1: ")));
                        // `bash -c line NAME ARGS`: $0 is NAME, $1... the rest.
                        if let Some(name) = rest.next() {
                            arg0 = name.clone();
                        }
                        positional = rest.by_ref().cloned().collect();
                        break;
                    }
                    None => {
                        self.emit(out, Stream::Stderr, format!("{name}: -c: option requires an argument\n"));
                        return 2;
                    }
                },
                "-e" | "-x" | "-u" | "-l" | "--login" | "--norc" | "--noprofile" | "-o" => {}
                option if option.starts_with('-') && option.len() > 1 => {
                    self.emit(out, Stream::Stderr, format!("{name}: {option}: invalid option\n"));
                    return 2;
                }
                path => {
                    match self.read_file(path) {
                        Ok(text) => script = Some((text, format!("{path}: line 1: "))),
                        Err(reason) => {
                            self.emit(out, Stream::Stderr, format!("{name}: {path}: {reason}\n"));
                            return 127;
                        }
                    }
                    positional = rest.by_ref().cloned().collect();
                    arg0 = path.to_string();
                    break;
                }
            }
        }
        let (text, prefix) = match script {
            Some(script) => script,
            None => {
                let text = input.rest().to_string();
                input.consume();
                (text, format!("{name}: line 1: "))
            }
        };
        let list = match parse::parse(&text) {
            Ok(list) => list,
            Err(error) => {
                self.emit(out, Stream::Stderr, format!("{prefix}{}\n", error.message()));
                return 2;
            }
        };
        self.subshell(out, &mut |interp, out| {
            if !interp.enter(out, "") {
                return 126;
            }
            interp.positional = std::mem::take(&mut positional);
            interp.arg0 = std::mem::take(&mut arg0);
            let mut script_input = Input::new(input.rest());
            let status = interp.run_list(&list, &mut script_input, out);
            interp.depth -= 1;
            status
        })
    }

    /// `read [-r] [-p prompt] [name ...]`: one line of input into variables.
    fn read(&mut self, args: &[String], input: &mut Input, out: &mut Transcript) -> i32 {
        let mut names = Vec::new();
        let mut raw = false;
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "-r" => raw = true,
                "-p" | "-t" | "-u" | "-n" | "-d" => {
                    rest.next();
                }
                "-s" | "-e" => {}
                name => names.push(name.to_string()),
            }
        }
        for name in &names {
            if !parse::is_name(name) {
                self.emit(out, Stream::Stderr, format!("-bash: read: `{name}': not a valid identifier\n"));
                return 1;
            }
        }
        let Some(mut line) = input.read_line() else {
            return 1;
        };
        if !raw {
            line = line.replace('\\', "");
        }
        if names.is_empty() {
            return i32::from(!self.assign("REPLY", line, out));
        }
        let mut fields = line.split_whitespace();
        let mut remaining = line.trim_start();
        for (at, name) in names.iter().enumerate() {
            let value = if at + 1 == names.len() {
                remaining.trim_end().to_string()
            } else {
                let field = fields.next().unwrap_or("");
                remaining = remaining[remaining.find(field).map_or(remaining.len(), |i| i + field.len())..].trim_start();
                field.to_string()
            };
            if !self.assign(name, value, out) {
                return 1;
            }
        }
        0
    }

    /// Runs one simple command: a builtin or a program. What it changes is
    /// in its output, applied by the caller once it has ended.
    pub fn run_command(&mut self, argv: &[String], stdin: &str, from_terminal: bool) -> Output {
        let Some(name) = argv.first() else {
            return Output::default();
        };
        // The clock runs through the line: each command starts when the one
        // before it ended (`date; sleep 60; date` shows a minute go by).
        let now = (self.started_ms + self.line_ms as i64).div_euclid(1000);
        if self.cluster.now != now {
            self.cluster.to_mut().advance_to(now);
        }
        self.start_waiting_batch_jobs();
        self.running = (self.log.len(), None);
        if let Some(output) = builtins::run(self, argv, stdin, from_terminal) {
            return output;
        }
        let Some(command) = commands::find(name) else {
            return Output::error(format!("-bash: {name}: command not found\n"), 127);
        };
        let runner = self.runner();
        let cluster: &Cluster = &self.cluster;
        let Some(node) = cluster.node(&self.shell.host) else {
            return Output::error(format!("-bash: {name}: host {} is not in this lab\n", self.shell.host), 1);
        };
        let started =
            Execution::new(Some(command.signature()), &self.shell.host, argv, commands::is_root(&self.shell.env), now_ms(self.started_ms, self.line_ms));
        let slot = self.log.start(cluster, started);
        let to_terminal = self.session.is_some() && self.capturing == 0;
        let invocation = Invocation { cluster, node, argv, env: &self.shell.env, stdin, runner: &runner, to_terminal };
        let output = command.run(&invocation);
        self.log.finish(slot, output.status, output.duration_ms, &output.stdout);
        self.running.1 = Some(slot);
        output
    }

    /// Slurm's scheduler, as the clock reaches each command of the
    /// interactive shell: the batch jobs waiting for nodes that are free
    /// now start, one after another (each takes its nodes before the next
    /// is placed). Nested shells leave it to the one that runs them.
    fn start_waiting_batch_jobs(&mut self) {
        let now = (self.cluster.now, self.changes.len());
        if self.session.is_none() || self.scheduled == Some(now) {
            return;
        }
        for _ in 0..limits::MAX_PENDING_BATCH_JOBS {
            let runner = self.runner();
            let Some(changes) = commands::scheduler::slurm::sbatch::start_next_pending(&runner, &self.cluster) else {
                break;
            };
            self.apply(&changes, 0);
        }
        self.scheduled = Some((self.cluster.now, self.changes.len()));
    }

    /// Applies what a command changed, at the time it ended.
    pub fn apply(&mut self, changes: &[Change], duration_ms: u64) {
        if changes.is_empty() {
            return;
        }
        let at = (self.started_ms + self.line_ms.saturating_add(duration_ms) as i64).div_euclid(1000);
        let cluster = self.cluster.to_mut();
        // The faults due by then strike first, as a restored session replays them.
        cluster.advance_to(at);
        for change in changes {
            cluster.apply_change(change, at);
        }
        self.changes.extend(changes.iter().cloned());
    }

    /// Adds output to the transcript, up to the line's output limit.
    fn emit(&mut self, transcript: &mut Transcript, stream: Stream, mut text: String) {
        if self.output_cut || text.is_empty() {
            return;
        }
        let room = MAX_OUTPUT_BYTES.saturating_sub(transcript.len());
        if limits::truncate_to(&mut text, room) {
            self.output_cut = true;
            transcript.push(stream, text);
            transcript.push(Stream::Stderr, limits::output_cut_notice());
            return;
        }
        transcript.push(stream, text);
    }

    /// Sets a shell variable, within the shell's memory bound.
    fn assign(&mut self, name: &str, value: String, out: &mut Transcript) -> bool {
        if builtins::is_readonly(name) {
            self.emit(out, Stream::Stderr, format!("-bash: {name}: readonly variable\n"));
            return false;
        }
        let old = self.shell.env.get(name).map_or(0, |v| name.len() + v.len());
        let new = name.len() + value.len();
        if self.store_bytes - old + new > MAX_STORE_BYTES {
            self.emit(
                out,
                Stream::Stderr,
                format!("-bash: {name}: cannot allocate memory (a simulated shell holds at most {} MiB of variables and functions)\n", MAX_STORE_BYTES >> 20),
            );
            return false;
        }
        self.store_bytes = self.store_bytes - old + new;
        self.shell.env.insert(name.to_string(), value);
        true
    }

    /// `exit` in a non-interactive shell: stop after this command.
    pub fn exit(&mut self) {
        self.exited = true;
    }
}

/// When a command starts: the line's start plus the time it has run.
fn now_ms(started_ms: i64, line_ms: u64) -> i64 {
    started_ms.saturating_add(i64::try_from(line_ms).unwrap_or(i64::MAX))
}

/// The [`Runner`] commands get: nested lines run in a fresh non-interactive
/// shell one level deeper, over the view of the cluster the call gives,
/// and record what they run in the same log.
pub(crate) struct Nesting {
    pub depth: u32,
    pub log: ExecLog,
    /// The line's command count, shared with every line and program it starts.
    pub commands: CommandCount,
}

/// Commands a line has run, its nested lines and programs included: they
/// share the line's bound (`MAX_SHELL_COMMANDS`), so repeating commands
/// inside each other (watch in watch, pdsh in a loop) cannot multiply it.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommandCount(Rc<Cell<u64>>);

impl CommandCount {
    /// Counts `n` more; the count so far.
    fn add(&self, n: u64) -> u64 {
        let count = self.0.get().saturating_add(n);
        self.0.set(count);
        count
    }

    fn exceeded(&self) -> bool {
        self.0.get() > MAX_SHELL_COMMANDS
    }
}

fn too_many_commands() -> String {
    format!("-bash: this command line ran {MAX_SHELL_COMMANDS} commands, the most a simulated line runs; it was stopped\n")
}

impl Nesting {
    fn deeper(&self) -> Option<u32> {
        let depth = self.depth + 1;
        (depth < MAX_NESTED_COMMANDS).then_some(depth)
    }
}

impl Runner for Nesting {
    fn run_line(&self, call: Call, line: &str) -> Output {
        let Some(depth) = self.deeper() else {
            return Output::error(limits::nesting_error("bash"), 126);
        };
        let env = call.env.cloned().unwrap_or_else(|| login_env(call.host));
        let mut shell = ShellState { host: call.host.to_string(), env, last_status: 0, functions: BTreeMap::new() };
        let mut interp = Interp::new(Cow::Borrowed(call.cluster), &mut shell, None, depth, call.cluster.now * 1000);
        interp.log = self.log.clone();
        interp.commands_run = self.commands.clone();
        let transcript = interp.run_line(line, call.stdin);
        Output {
            stdout: transcript.stdout(),
            stderr: transcript.stderr(),
            status: transcript.status,
            duration_ms: transcript.duration_ms,
            changes: interp.changes,
            ..Output::default()
        }
    }

    fn run_program(&self, call: Call, argv: &[String]) -> Option<Output> {
        // ssh is a program on a real host (`xargs ssh`, `sudo ssh`); here the
        // shell implements it, so it runs as the one-word line it would be.
        if argv.first().is_some_and(|name| name == "ssh") {
            let quoted: Vec<String> = argv.iter().map(|word| format!("'{}'", word.replace('\'', "'\\''"))).collect();
            return Some(self.run_line(call, &quoted.join(" ")));
        }
        let command = commands::find(argv.first()?)?;
        let Some(depth) = self.deeper() else {
            return Some(Output::error(limits::nesting_error(&argv[0]), 126));
        };
        let Some(node) = call.cluster.node(call.host) else {
            return Some(Output::error(format!("{}: host {} is not in this lab\n", argv[0], call.host), 1));
        };
        if self.commands.add(1) > MAX_SHELL_COMMANDS {
            return Some(Output::error(too_many_commands(), 1));
        }
        let env = call.env.cloned().unwrap_or_else(|| login_env(call.host));
        let started = Execution::new(Some(command.signature()), call.host, argv, commands::is_root(&env), call.cluster.now * 1000);
        let slot = self.log.start(call.cluster, started);
        let invocation = Invocation {
            cluster: call.cluster,
            node,
            argv,
            env: &env,
            stdin: call.stdin,
            runner: &Nesting { depth, log: self.log.clone(), commands: self.commands.clone() },
            to_terminal: false,
        };
        let output = command.run(&invocation);
        self.log.finish(slot, output.status, output.duration_ms, &output.stdout);
        Some(output)
    }

    fn executions(&self) -> &ExecLog {
        &self.log
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn nested_lines_see_the_whole_cluster() {
        let mut shell = session();
        let sinfo = shell.run("pdsh -w gpu-001 sinfo").stdout();
        assert!(sinfo.ends_with("gpu-001: gpu*         up   infinite      2   idle gpu-[001-002]\n"), "{sinfo}");
        let ping = shell.run("pdsh -w gpu-001 ping -c 1 gpu-002");
        assert_eq!(ping.status, 0, "{}", ping.text());
    }

    #[test]
    fn nesting_is_bounded() {
        let mut shell = session();
        let deep = "sudo ".repeat(100) + "hostname";
        let out = shell.run(&deep);
        assert_eq!(out.status, 126, "{}", out.text());
        assert!(out.stderr().contains("at most 32 deep"), "{}", out.stderr());
        let env = "env ".repeat(20_000) + "hostname";
        assert_eq!(shell.run(&env).status, 126);
        let ssh = "pdsh -w gpu-001 ".repeat(40) + "hostname";
        assert!(shell.run(&ssh).text().contains("at most 32 deep"));
        assert_eq!(shell.run(&("sudo ".repeat(10) + "hostname")).stdout(), "gpu-001\n");
        let recursion = shell.run("f() { f; }; f");
        assert_eq!(recursion.stderr(), "-bash: f: maximum function nesting level exceeded (32)\n");
    }

    #[test]
    fn changes_in_a_nested_line_are_seen_later_in_that_line_and_returned() {
        let mut shell = session();
        let out = shell.run("ssh gpu-002 'sudo scontrol update nodename=gpu-002 state=drain reason=x; sinfo -N'");
        assert!(out.stdout().contains("gpu-002       1 gpu*      drain"), "{}", out.text());
        assert!(shell.run("sinfo -N").stdout().contains("gpu-002       1 gpu*      drain"));
    }
}
