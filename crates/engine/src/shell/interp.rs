//! Runs a parsed line as bash does: expansion, `NAME=value cmd`, pipelines,
//! `;`/`&&`/`||`/`&` lists, builtins and the emulated commands.
//!
//! An [`Interp`] works over a copy-on-write view of the cluster: a line that
//! changes nothing never copies it, and one that does copies only the nodes
//! it changes. The interactive [`Session`](super::Session) and every nested
//! line a command asks for ([`Nesting`]) run through the same code.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::parse::{self, Connector, Part, Pipeline, Word};
use super::session::Interactive;
use super::{builtins, jobs, login_env, Stream, Transcript};
use crate::commands::{self, Call, Env, Invocation, Output, Runner};
use crate::limits::{self, MAX_NESTED_COMMANDS, MAX_OUTPUT_BYTES};
use crate::model::change::Change;
use crate::model::Cluster;

/// What a shell keeps between lines: where it runs, its variables and `$?`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellState {
    pub host: String,
    pub env: Env,
    pub last_status: i32,
}

impl ShellState {
    /// A login shell on `host`.
    pub fn login(host: &str) -> ShellState {
        ShellState { host: host.to_string(), env: login_env(host), last_status: 0 }
    }
}

pub(crate) struct Interp<'c, 's> {
    pub cluster: Cow<'c, Cluster>,
    pub shell: &'s mut ShellState,
    /// The interactive session's own state (history, jobs, `ssh` logins);
    /// None in a nested, non-interactive shell.
    pub session: Option<&'s mut Interactive>,
    /// How many command lines this one runs inside.
    pub depth: u32,
    /// The simulated time the line started at, in milliseconds since the epoch.
    started_ms: i64,
    /// How long the line has run so far on the simulated clock.
    line_ms: u64,
    /// What the line changed in the cluster, in order.
    pub changes: Vec<Change>,
    /// Set by `exit` in a non-interactive shell: the rest of the line is skipped.
    exited: bool,
    /// Whether the output limit was reached (the notice is shown once).
    output_cut: bool,
    /// Ctrl-C at this many simulated milliseconds into the line: the
    /// command running then is stopped and nothing after it runs.
    interrupt_at_ms: Option<u64>,
    /// Whether the interrupt struck.
    pub interrupted: bool,
}

impl<'c, 's> Interp<'c, 's> {
    pub fn new(cluster: Cow<'c, Cluster>, shell: &'s mut ShellState, session: Option<&'s mut Interactive>, depth: u32, started_ms: i64) -> Self {
        Interp {
            cluster,
            shell,
            session,
            depth,
            started_ms,
            line_ms: 0,
            changes: Vec::new(),
            exited: false,
            output_cut: false,
            interrupt_at_ms: None,
            interrupted: false,
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
        Nesting { depth: self.depth }
    }

    /// Runs a line; `stdin` feeds the first command of the first pipeline.
    pub fn run_line(&mut self, line: &str, stdin: &str) -> Transcript {
        let mut transcript = Transcript::default();
        let list = match parse::parse(line) {
            Ok(list) => list,
            Err(error) => {
                transcript.push(Stream::Stderr, format!("-bash: {}\n", error.message()));
                if matches!(error, parse::SyntaxError::UnterminatedQuote(_)) {
                    transcript.push(Stream::Stderr, "-bash: syntax error: unexpected end of file\n".to_string());
                }
                self.shell.last_status = 2;
                transcript.status = 2;
                return transcript;
            }
        };
        let mut stdin = Some(stdin);
        // `$?` decides each `&&` and `||`, whether or not the pipeline before ran:
        // `false && a || b` runs b.
        let mut run_next = true;
        for (pipeline, connector) in list {
            if self.exited {
                break;
            }
            let input = stdin.take().unwrap_or("");
            if run_next && connector == Connector::Background {
                match self.session.is_some() {
                    true => jobs::start_job(self, &pipeline, &mut transcript),
                    // `bash -c 'cmd &'` has no job control: cmd just runs.
                    false => {
                        self.run_pipeline(&pipeline, input, &mut transcript);
                    }
                }
                self.shell.last_status = 0;
            } else if run_next {
                self.shell.last_status = self.run_pipeline(&pipeline, input, &mut transcript);
            }
            run_next = match connector {
                Connector::Always | Connector::Background => true,
                Connector::IfSuccess => self.shell.last_status == 0,
                Connector::IfFailure => self.shell.last_status != 0,
            };
        }
        transcript.status = self.shell.last_status;
        transcript.duration_ms = self.line_ms;
        transcript
    }

    pub fn run_pipeline(&mut self, pipeline: &Pipeline, stdin: &str, transcript: &mut Transcript) -> i32 {
        let mut input = stdin.to_string();
        let mut status = 0;
        let last = pipeline.len().saturating_sub(1);
        for (position, words) in pipeline.iter().enumerate() {
            if self.interrupted {
                break;
            }
            let argv = self.expand(words);
            // Only the first command of a top-level interactive pipeline reads the terminal.
            let from_terminal = position == 0 && self.session.is_some() && stdin.is_empty();
            let output = self.run_command(&argv, &input, from_terminal);
            if let Some(at) = self.interrupt_at_ms.filter(|at| self.line_ms.saturating_add(output.duration_ms) > *at) {
                // SIGINT: the command dies where the clock stood. It printed
                // its lines evenly over the time it ran, so the share of
                // them up to the interrupt shows; what it would have printed
                // after, and changed at its end, never happens.
                let at = at.max(self.line_ms);
                let ran = at - self.line_ms;
                let lines: Vec<&str> = output.stdout.split_inclusive('\n').collect();
                let shown = (lines.len() as u128 * u128::from(ran) / u128::from(output.duration_ms.max(1))) as usize;
                self.emit(transcript, Stream::Stdout, lines[..shown.min(lines.len())].concat());
                self.line_ms = at;
                transcript.timeline.push((self.line_ms, transcript.len()));
                self.interrupted = true;
                self.exited = true;
                return 130;
            }
            self.apply(&output);
            self.emit(transcript, Stream::Stderr, output.stderr);
            self.line_ms = self.line_ms.saturating_add(output.duration_ms);
            status = output.status;
            if position == last {
                self.emit(transcript, Stream::Stdout, output.stdout);
            } else {
                input = output.stdout;
            }
            self.emit(transcript, Stream::Stdout, output.background);
            transcript.timeline.push((self.line_ms, transcript.len()));
        }
        status
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

    /// Runs one simple command: assignments, a builtin or a program. What it
    /// changes is in its output, applied by the caller once it has ended.
    pub fn run_command(&mut self, argv: &[String], stdin: &str, from_terminal: bool) -> Output {
        // `NAME=value cmd`: the assignments hold for this command only.
        let assignments = argv.iter().take_while(|word| builtins::assignment(word).is_some()).count();
        if assignments > 0 {
            let (names, rest) = argv.split_at(assignments);
            let saved = (!rest.is_empty()).then(|| self.shell.env.clone());
            for word in names {
                if let Some((name, value)) = builtins::assignment(word) {
                    self.shell.env.insert(name.to_string(), value.to_string());
                }
            }
            let Some(saved) = saved else {
                return Output::default();
            };
            let output = self.run_command(rest, stdin, from_terminal);
            self.shell.env = saved;
            return output;
        }
        let Some(name) = argv.first() else {
            return Output::default();
        };
        if let Some(output) = builtins::run(self, argv, stdin, from_terminal) {
            return output;
        }
        let Some(command) = commands::find(name) else {
            return Output::error(format!("-bash: {name}: command not found\n"), 127);
        };
        let runner = self.runner();
        let output = {
            let cluster: &Cluster = &self.cluster;
            let Some(node) = cluster.node(&self.shell.host) else {
                return Output::error(format!("-bash: {name}: host {} is not in this lab\n", self.shell.host), 1);
            };
            let invocation = Invocation { cluster, node, argv, env: &self.shell.env, stdin, runner: &runner };
            command.run(&invocation)
        };
        output
    }

    /// Applies what a command changed, at the time it ended.
    pub fn apply(&mut self, output: &Output) {
        if output.changes.is_empty() {
            return;
        }
        let at = (self.started_ms + self.line_ms.saturating_add(output.duration_ms) as i64).div_euclid(1000);
        let cluster = self.cluster.to_mut();
        for change in &output.changes {
            cluster.apply_change(change, at);
        }
        self.changes.extend(output.changes.iter().cloned());
    }

    /// Parameter expansion and word splitting, as bash does for simple words.
    pub fn expand(&self, words: &[Word]) -> Vec<String> {
        let mut argv = Vec::new();
        for word in words {
            let mut fields: Vec<String> = vec![String::new()];
            let mut has_text = word.quoted;
            for part in &word.parts {
                match part {
                    Part::Literal(text) => {
                        fields.last_mut().expect("fields is never empty").push_str(text);
                        has_text = true;
                    }
                    Part::Parameter { name, quoted } => {
                        let value = self.parameter(name);
                        if *quoted {
                            fields.last_mut().expect("fields is never empty").push_str(&value);
                            continue;
                        }
                        // Unquoted: split on blanks, so `$A` holding "x y" gives two words.
                        for (at, piece) in value.split([' ', '\t', '\n']).enumerate() {
                            if at > 0 {
                                fields.push(String::new());
                            }
                            fields.last_mut().expect("fields is never empty").push_str(piece);
                            has_text |= !piece.is_empty();
                        }
                    }
                }
            }
            if has_text {
                argv.extend(fields.into_iter().filter(|f| !f.is_empty() || word.quoted));
            }
        }
        argv
    }

    fn parameter(&self, name: &str) -> String {
        match name {
            "?" => self.shell.last_status.to_string(),
            "$" => "4242".to_string(),
            "#" => "0".to_string(),
            "0" => "-bash".to_string(),
            _ => self.shell.env.get(name).cloned().unwrap_or_default(),
        }
    }

    /// `exit` in a non-interactive shell: stop after this command.
    pub fn exit(&mut self) {
        self.exited = true;
    }
}

/// The [`Runner`] commands get: nested lines run in a fresh non-interactive
/// shell one level deeper, over the view of the cluster the call gives.
pub(crate) struct Nesting {
    pub depth: u32,
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
        let mut shell = ShellState { host: call.host.to_string(), env, last_status: 0 };
        let mut interp = Interp::new(Cow::Borrowed(call.cluster), &mut shell, None, depth, call.cluster.now * 1000);
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
        let command = commands::find(argv.first()?)?;
        let Some(depth) = self.deeper() else {
            return Some(Output::error(limits::nesting_error(&argv[0]), 126));
        };
        let Some(node) = call.cluster.node(call.host) else {
            return Some(Output::error(format!("{}: host {} is not in this lab\n", argv[0], call.host), 1));
        };
        let env = call.env.cloned().unwrap_or_else(|| login_env(call.host));
        let invocation =
            Invocation { cluster: call.cluster, node, argv, env: &env, stdin: call.stdin, runner: &Nesting { depth } };
        Some(command.run(&invocation))
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
    }

    #[test]
    fn changes_in_a_nested_line_are_seen_later_in_that_line_and_returned() {
        let mut shell = session();
        let out = shell.run("ssh gpu-002 'sudo scontrol update nodename=gpu-002 state=drain reason=x; sinfo -N'");
        assert!(out.stdout().contains("gpu-002       1 gpu*      drain"), "{}", out.text());
        assert!(shell.run("sinfo -N").stdout().contains("gpu-002       1 gpu*      drain"));
    }
}
