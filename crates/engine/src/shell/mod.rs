//! The login shell on a simulated node: parses a line, expands it, runs the
//! emulated commands, and keeps what a shell keeps (environment, `$?`,
//! history, the clock).

mod builtins;
mod jobs;
pub mod parse;

pub use builtins::NAMES as BUILTINS;

use std::collections::BTreeMap;

use crate::commands::{self, Invocation, Output};
use crate::model::change::Change;
use crate::model::Cluster;
use parse::{Connector, Part, Word};

/// Which stream a piece of output went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What one command line printed, in order, and how it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript {
    pub chunks: Vec<(Stream, String)>,
    pub status: i32,
    pub duration_ms: u64,
}

impl Transcript {
    fn push(&mut self, stream: Stream, text: String) {
        if text.is_empty() {
            return;
        }
        match self.chunks.last_mut() {
            Some((last, existing)) if *last == stream => existing.push_str(&text),
            _ => self.chunks.push((stream, text)),
        }
    }

    pub fn stdout(&self) -> String {
        self.text_of(Stream::Stdout)
    }

    pub fn stderr(&self) -> String {
        self.text_of(Stream::Stderr)
    }

    /// Everything, interleaved as a terminal shows it.
    pub fn text(&self) -> String {
        self.chunks.iter().map(|(_, text)| text.as_str()).collect()
    }

    fn text_of(&self, stream: Stream) -> String {
        self.chunks.iter().filter(|(s, _)| *s == stream).map(|(_, text)| text.as_str()).collect()
    }
}

/// The user every lab logs in as.
pub const USER: &str = "user";

pub struct Session {
    pub cluster: Cluster,
    host: String,
    /// Hosts left by `ssh HOST`, for `exit` to return to.
    ssh_stack: Vec<String>,
    env: BTreeMap<String, String>,
    last_status: i32,
    history: Vec<String>,
    /// Every change commands made to the cluster, in order (for grading).
    changes: Vec<Change>,
    /// Background jobs (`cmd &`), running or finished but not yet reported.
    jobs: Vec<jobs::Job>,
    /// Simulated time spent since the lab started.
    elapsed_ms: u64,
    start: i64,
}

impl Session {
    /// A shell on `host`, which must be one of the cluster's nodes.
    pub fn new(cluster: Cluster, host: &str) -> Session {
        let mut env = BTreeMap::new();
        for (key, value) in [
            ("HOME", format!("/home/{USER}")),
            ("USER", USER.to_string()),
            ("LOGNAME", USER.to_string()),
            ("SHELL", "/bin/bash".to_string()),
            ("PATH", "/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin".to_string()),
            ("PWD", format!("/home/{USER}")),
            ("LANG", "C.UTF-8".to_string()),
            ("TERM", "xterm-256color".to_string()),
            ("HOSTNAME", host.to_string()),
        ] {
            env.insert(key.to_string(), value);
        }
        let start = cluster.now;
        Session {
            cluster,
            host: host.to_string(),
            ssh_stack: Vec::new(),
            env,
            last_status: 0,
            history: Vec::new(),
            changes: Vec::new(),
            jobs: Vec::new(),
            elapsed_ms: 0,
            start,
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn last_status(&self) -> i32 {
        self.last_status
    }

    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// What the trainee's commands changed in the cluster, in order.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// `user@gpu-001:~$ `
    pub fn prompt(&self) -> String {
        format!("{USER}@{}:~$ ", self.host)
    }

    /// Runs one line as bash would and records it in the history.
    pub fn run(&mut self, line: &str) -> Transcript {
        let mut notices = Transcript::default();
        jobs::report_finished(self, &mut notices);
        let line = match jobs::expand_history(line, &self.history) {
            Ok(Some(expanded)) => {
                // bash echoes a line that history expansion changed.
                notices.push(Stream::Stdout, format!("{expanded}\n"));
                expanded
            }
            Ok(None) => line.to_string(),
            Err(message) => {
                notices.push(Stream::Stderr, message);
                self.last_status = 1;
                notices.status = 1;
                return notices;
            }
        };
        if !line.trim().is_empty() {
            self.history.push(line.clone());
        }
        let mut transcript = self.run_line(&line);
        if !notices.chunks.is_empty() {
            notices.chunks.append(&mut transcript.chunks);
            transcript.chunks = notices.chunks;
        }
        self.elapsed_ms += transcript.duration_ms;
        self.cluster.now = self.start + (self.elapsed_ms / 1000) as i64;
        transcript
    }

    /// Runs a line without recording it (as `ssh HOST CMD` runs CMD).
    fn run_line(&mut self, line: &str) -> Transcript {
        let mut transcript = Transcript::default();
        let list = match parse::parse(line) {
            Ok(list) => list,
            Err(error) => {
                transcript.push(Stream::Stderr, format!("-bash: {}\n", error.message()));
                if matches!(error, parse::SyntaxError::UnterminatedQuote(_)) {
                    transcript.push(Stream::Stderr, "-bash: syntax error: unexpected end of file\n".to_string());
                }
                self.last_status = 2;
                transcript.status = 2;
                return transcript;
            }
        };
        // `$?` decides each `&&` and `||`, whether or not the pipeline before ran:
        // `false && a || b` runs b.
        let mut run_next = true;
        for (pipeline, connector) in list {
            if run_next && connector == Connector::Background {
                self.start_job(&pipeline, &mut transcript);
                self.last_status = 0;
            } else if run_next {
                self.last_status = self.run_pipeline(&pipeline, &mut transcript);
            }
            run_next = match connector {
                Connector::Always | Connector::Background => true,
                Connector::IfSuccess => self.last_status == 0,
                Connector::IfFailure => self.last_status != 0,
            };
        }
        transcript.status = self.last_status;
        transcript
    }

    fn run_pipeline(&mut self, pipeline: &[Vec<Word>], transcript: &mut Transcript) -> i32 {
        let mut stdin = String::new();
        let mut status = 0;
        let last = pipeline.len().saturating_sub(1);
        for (position, words) in pipeline.iter().enumerate() {
            let argv = self.expand(words);
            let output = self.run_command(&argv, &stdin);
            transcript.push(Stream::Stderr, output.stderr);
            transcript.duration_ms += output.duration_ms;
            status = output.status;
            if position == last {
                transcript.push(Stream::Stdout, output.stdout);
            } else {
                stdin = output.stdout;
            }
            transcript.push(Stream::Stdout, output.background);
        }
        status
    }

    fn run_command(&mut self, argv: &[String], stdin: &str) -> Output {
        // `NAME=value cmd`: the assignments hold for this command only.
        let assignments = argv.iter().take_while(|word| builtins::assignment(word).is_some()).count();
        if assignments > 0 {
            let (names, rest) = argv.split_at(assignments);
            if rest.is_empty() {
                for word in names {
                    if let Some((name, value)) = builtins::assignment(word) {
                        self.env.insert(name.to_string(), value.to_string());
                    }
                }
                return Output::default();
            }
            let saved = self.env.clone();
            for word in names {
                if let Some((name, value)) = builtins::assignment(word) {
                    self.env.insert(name.to_string(), value.to_string());
                }
            }
            let output = self.run_command(rest, stdin);
            self.env = saved;
            return output;
        }
        let Some(name) = argv.first() else {
            return Output::default();
        };
        if let Some(output) = builtins::run(self, argv) {
            self.apply_changes(&output);
            return output;
        }
        let Some(command) = commands::find(name) else {
            return Output::error(format!("-bash: {name}: command not found\n"), 127);
        };
        let Some(node) = self.cluster.node(&self.host) else {
            return Output::error(format!("-bash: {name}: host {} is not in this lab\n", self.host), 1);
        };
        let invocation = Invocation { cluster: &self.cluster, node, argv, env: &self.env, stdin };
        let output = command.run(&invocation);
        self.apply_changes(&output);
        output
    }

    /// Applies what a command changed to the cluster, at the time it ended.
    fn apply_changes(&mut self, output: &Output) {
        let at = self.start + ((self.elapsed_ms + output.duration_ms) / 1000) as i64;
        for change in &output.changes {
            self.cluster.apply_change(change, at);
            self.changes.push(change.clone());
        }
    }

    /// Parameter expansion and word splitting, as bash does for simple words.
    fn expand(&self, words: &[Word]) -> Vec<String> {
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
            "?" => self.last_status.to_string(),
            "$" => "4242".to_string(),
            "#" => "0".to_string(),
            "0" => "-bash".to_string(),
            _ => self.env.get(name).cloned().unwrap_or_default(),
        }
    }

    /// Completions for the word under the cursor at the end of `line`:
    /// command names for the first word (after `|`, `;` or `&&` too); then
    /// the command's declared flags for a word starting with `-`; GPU
    /// indices, HCA names or hostnames for a flag's value, by what the flag
    /// declares it takes; otherwise hostnames and HCA names.
    pub fn complete(&self, line: &str) -> Vec<String> {
        let command_line = line.rsplit(['|', ';', '&']).next().unwrap_or(line);
        let words: Vec<&str> = command_line.split_whitespace().collect();
        let word = if command_line.ends_with(char::is_whitespace) { "" } else { words.last().copied().unwrap_or("") };
        let done = if word.is_empty() { words.len() } else { words.len() - 1 };
        let mut candidates: Vec<String> = if done == 0 {
            let mut names: Vec<String> = commands::complete(word).into_iter().map(String::from).collect();
            names.extend(builtins::NAMES.iter().map(|name| name.to_string()));
            names
        } else {
            self.complete_argument(words[0], words.get(done - 1).copied().unwrap_or(""), word)
        };
        candidates.retain(|candidate| candidate.starts_with(word));
        crate::sort::sort(&mut candidates);
        candidates.dedup();
        candidates
    }

    fn complete_argument(&self, command: &str, previous: &str, word: &str) -> Vec<String> {
        let node = self.cluster.node(&self.host);
        let gpus = || node.map(|n| n.gpus.iter().map(|g| g.index.to_string()).collect()).unwrap_or_default();
        let hcas = || node.map(|n| n.hcas.iter().map(|h| h.name.clone()).collect::<Vec<_>>()).unwrap_or_default();
        let hosts = || self.cluster.nodes.iter().map(|n| n.hostname.clone()).collect::<Vec<_>>();
        let signature = commands::find(command).map(|c| c.signature());
        if word.starts_with('-') {
            return signature
                .map(|s| {
                    s.flags
                        .iter()
                        .flat_map(|flag| {
                            let long = flag.long.map(|long| format!("--{long}"));
                            let short = flag.short.map(|short| format!("-{short}"));
                            [long, short].into_iter().flatten()
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
        // The value of a flag: what its placeholder says it takes.
        let wanted = signature.and_then(|s| {
            s.flags.iter().find(|flag| {
                flag.long.is_some_and(|long| previous == format!("--{long}"))
                    || flag.short.is_some_and(|short| previous == format!("-{short}"))
            })
        });
        match wanted.and_then(|flag| flag.value).map(str::to_ascii_uppercase) {
            Some(value) if value.contains("GPU") || value == "ID" || value.contains("INDEX") => gpus(),
            Some(value) if value.contains("DEV") || value.contains("CA") || value.contains("HCA") => hcas(),
            Some(value) if value.contains("HOST") || value.contains("NODE") => hosts(),
            _ => {
                let mut all = hosts();
                all.extend(hcas());
                all
            }
        }
    }
}
