//! The interactive shell a trainee types into, and its snapshot.
//!
//! A session is a function of the lab's initial cluster and what the
//! trainee did: the changes applied (with when), the shell's state and the
//! clock. [`Session::snapshot`] captures exactly that, and
//! [`Session::restore`] rebuilds the same session from it by applying the
//! changes again: no command runs a second time.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::interp::{Interp, ShellState};
use super::jobs::{self, Job};
use super::{builtins, parse, Stream, Transcript, USER};
use crate::commands;
use crate::limits::MAX_LINE_BYTES;
use crate::model::change::Change;
use crate::model::time::EpochSeconds;
use crate::model::Cluster;

/// What only an interactive shell has.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interactive {
    /// Hosts left by `ssh HOST`, for `exit` to return to.
    pub ssh_stack: Vec<String>,
    pub history: Vec<String>,
    /// Background jobs (`cmd &`), running or finished but not yet reported.
    pub jobs: Vec<Job>,
    /// The lines of a command not complete yet (`for x in a b` then Enter):
    /// bash prompts `> ` for the rest and runs them together.
    #[serde(default)]
    pub pending: String,
}

pub struct Session {
    pub cluster: Cluster,
    shell: ShellState,
    interactive: Interactive,
    /// When the lab's clock started, and the simulated time spent since.
    start: EpochSeconds,
    elapsed_ms: u64,
}

/// Everything a session is, beyond the lab's initial cluster: saved by the
/// app after every command line, and restored without running anything.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionSnapshot {
    pub shell: ShellState,
    pub interactive: Interactive,
    /// Simulated milliseconds since the lab started.
    pub elapsed_ms: u64,
    /// Every change made to the cluster, with the simulated time it was made.
    pub changes: Vec<(EpochSeconds, Change)>,
}

impl SessionSnapshot {
    /// A login shell on `host` when the lab starts, before anything is done.
    pub fn initial(host: &str) -> SessionSnapshot {
        SessionSnapshot { shell: ShellState::login(host), interactive: Interactive::default(), elapsed_ms: 0, changes: Vec::new() }
    }
}

impl Session {
    /// A shell on `host`, which must be one of the cluster's nodes.
    pub fn new(cluster: Cluster, host: &str) -> Session {
        let start = cluster.now;
        Session { cluster, shell: ShellState::login(host), interactive: Interactive::default(), start, elapsed_ms: 0 }
    }

    /// The session `snapshot` describes, over the lab's initial `cluster`.
    pub fn restore(mut cluster: Cluster, snapshot: SessionSnapshot) -> Session {
        let start = cluster.now;
        for (at, change) in &snapshot.changes {
            cluster.apply_change(change, *at);
        }
        let mut session =
            Session { cluster, shell: snapshot.shell, interactive: snapshot.interactive, start, elapsed_ms: snapshot.elapsed_ms };
        session.sync_clock();
        session
    }

    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            shell: self.shell.clone(),
            interactive: self.interactive.clone(),
            elapsed_ms: self.elapsed_ms,
            changes: self.cluster.changes().to_vec(),
        }
    }

    pub fn host(&self) -> &str {
        &self.shell.host
    }

    pub fn last_status(&self) -> i32 {
        self.shell.last_status
    }

    pub fn history(&self) -> &[String] {
        &self.interactive.history
    }

    /// What the trainee's commands changed in the cluster, in order, with when.
    pub fn changes(&self) -> &[(EpochSeconds, Change)] {
        self.cluster.changes()
    }

    /// The simulated time (UTC seconds) the next command starts at.
    pub fn now(&self) -> EpochSeconds {
        self.cluster.now
    }

    /// Simulated milliseconds since the lab started.
    pub fn elapsed_ms(&self) -> u64 {
        self.elapsed_ms
    }

    /// `user@gpu-001:~$ `, or bash's `> ` while a command is incomplete.
    pub fn prompt(&self) -> String {
        if !self.interactive.pending.is_empty() {
            return "> ".to_string();
        }
        format!("{USER}@{}:~$ ", self.shell.host)
    }

    /// Ctrl-C at the `> ` prompt: the incomplete command is dropped.
    /// Whether there was one.
    pub fn cancel_pending(&mut self) -> bool {
        !std::mem::take(&mut self.interactive.pending).is_empty()
    }

    fn sync_clock(&mut self) {
        self.cluster.now = self.start + (self.elapsed_ms / 1000) as i64;
    }

    /// Runs one line as bash would and records it in the history.
    pub fn run(&mut self, line: &str) -> Transcript {
        self.run_until(line, None)
    }

    /// Runs one line, stopped `interrupt_at_ms` simulated milliseconds in
    /// when given, as Ctrl-C stops it: the clock advances to that moment,
    /// the command then running changes nothing, and the line's status is
    /// 130.
    pub fn run_until(&mut self, line: &str, interrupt_at_ms: Option<u64>) -> Transcript {
        let mut notices = Transcript::default();
        if line.len() > MAX_LINE_BYTES {
            notices.push(Stream::Stderr, format!("-bash: line too long: {} bytes (this simulation reads at most {MAX_LINE_BYTES})\n", line.len()));
            self.shell.last_status = 2;
            notices.status = 2;
            return notices;
        }
        jobs::report_finished(&self.cluster, &mut self.interactive, &mut notices);
        let line = match jobs::expand_history(line, &self.interactive.history) {
            Ok(Some(expanded)) => {
                // bash echoes a line that history expansion changed.
                notices.push(Stream::Stdout, format!("{expanded}\n"));
                expanded
            }
            Ok(None) => line.to_string(),
            Err(message) => {
                notices.push(Stream::Stderr, message);
                self.shell.last_status = 1;
                notices.status = 1;
                return notices;
            }
        };
        // A line that leaves the command incomplete waits for the next one.
        let line = match std::mem::take(&mut self.interactive.pending) {
            pending if pending.is_empty() => line,
            pending => format!("{pending}\n{line}"),
        };
        if line.len() <= MAX_LINE_BYTES && parse::is_incomplete(&line) {
            self.interactive.pending = line;
            notices.status = self.shell.last_status;
            return notices;
        }
        self.execute(&line, interrupt_at_ms, notices)
    }

    /// Ctrl-D at the `> ` prompt: the input ends, and the incomplete command
    /// gets bash's error (`unexpected end of file`). None when nothing waits.
    pub fn end_of_input(&mut self) -> Option<Transcript> {
        let pending = std::mem::take(&mut self.interactive.pending);
        (!pending.is_empty()).then(|| self.execute(&pending, None, Transcript::default()))
    }

    /// Runs a whole command (all its lines), recorded in the history, after
    /// the job notices.
    fn execute(&mut self, line: &str, interrupt_at_ms: Option<u64>, mut notices: Transcript) -> Transcript {
        if !line.trim().is_empty() {
            self.interactive.history.push(line.to_string());
        }
        let started_ms = self.start * 1000 + self.elapsed_ms as i64;
        let (mut transcript, changed) = {
            let mut interp =
                Interp::new(Cow::Borrowed(&self.cluster), &mut self.shell, Some(&mut self.interactive), 0, started_ms);
            if let Some(at) = interrupt_at_ms {
                interp = interp.interrupt_at(at);
            }
            let transcript = interp.run_line(line, "");
            (transcript, interp.into_changed_cluster())
        };
        if let Some(cluster) = changed {
            self.cluster = cluster;
        }
        if !notices.chunks.is_empty() {
            // Job notices come first, at once.
            let shift = notices.len();
            notices.chunks.append(&mut transcript.chunks);
            transcript.chunks = notices.chunks;
            for mark in &mut transcript.timeline {
                mark.1 += shift;
            }
            transcript.timeline.insert(0, (0, shift));
        }
        self.elapsed_ms = self.elapsed_ms.saturating_add(transcript.duration_ms);
        self.sync_clock();
        transcript
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
        let node = self.cluster.node(&self.shell.host);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{lab, session};

    #[test]
    fn an_incomplete_command_waits_for_its_other_lines() {
        let mut shell = session();
        for line in ["for n in gpu-001 gpu-002", "do"] {
            let out = shell.run(line);
            assert_eq!((out.text().as_str(), shell.prompt().as_str()), ("", "> "));
        }
        let out = shell.run("  ssh $n hostname; done");
        assert_eq!(out.stdout(), "gpu-001\ngpu-002\n");
        assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
        assert_eq!(shell.history(), ["for n in gpu-001 gpu-002\ndo\n  ssh $n hostname; done"]);
        assert_eq!(shell.run("echo 'a").text(), "");
        assert_eq!(shell.run("b'").stdout(), "a\nb\n");
        shell.run("if true; then");
        assert!(shell.cancel_pending());
        assert_eq!(shell.run("echo fresh").stdout(), "fresh\n");
        assert_eq!(shell.run("echo one \\").text(), "");
        assert_eq!(shell.run("two").stdout(), "one two\n");
        shell.run("while true");
        let ended = shell.end_of_input().unwrap();
        assert_eq!((ended.stderr().as_str(), ended.status), ("-bash: syntax error: unexpected end of file\n", 2));
        assert!(shell.end_of_input().is_none());
    }

    #[test]
    fn a_new_session_is_the_initial_snapshot() {
        assert_eq!(session().snapshot(), SessionSnapshot::initial("gpu-001"));
    }

    #[test]
    fn a_restored_session_is_the_same_session() {
        let mut shell = session();
        for line in [
            "sudo scontrol update nodename=gpu-002 state=drain reason=rail",
            "export NCCL_DEBUG=INFO",
            "ssh gpu-002",
            "sleep 90",
            "ib_write_bw -d mlx5_0 &",
        ] {
            shell.run(line);
        }
        let snapshot = shell.snapshot();
        let text = serde_json::to_string(&snapshot).unwrap();
        let mut restored = Session::restore(lab().instantiate(1), serde_json::from_str(&text).unwrap());
        assert_eq!(restored.snapshot(), snapshot);
        for probe in ["sinfo -R", "echo $NCCL_DEBUG $HOSTNAME", "date", "jobs", "history", "exit", "hostname"] {
            assert_eq!(restored.run(probe), shell.run(probe), "{probe}");
        }
    }

    #[test]
    fn an_interrupt_stops_the_clock_and_what_had_not_happened_yet() {
        let mut shell = session();
        let before = shell.now();
        let out = shell.run_until("sleep 60; sudo scontrol update nodename=gpu-002 state=drain reason=x", Some(10_000));
        assert_eq!((out.status, out.duration_ms), (130, 10_000));
        assert_eq!(shell.now(), before + 10);
        assert!(shell.changes().is_empty(), "the drain never ran");
        assert_eq!(shell.last_status(), 130);
        // Output printed before the interrupt stays, in proportion to the time run.
        let out = shell.run_until("ping -c 10 gpu-002", Some(4_500));
        let shown = out.stdout().lines().count();
        assert!((5..=8).contains(&shown), "{}", out.stdout());
        assert_eq!(out.timeline.last(), Some(&(4_500, out.len())));
        // What finished before the interrupt happened.
        let out = shell.run_until("sudo scontrol update nodename=gpu-002 state=drain reason=x; sleep 60; echo late", Some(30_000));
        assert_eq!(out.stdout(), "");
        assert_eq!(shell.changes().len(), 1);
        assert_eq!(shell.history().len(), 3);
    }
}

/// A [`SessionSnapshot`] as JSON text, carried unparsed. The app's page
/// stores it and hands it back to the engine, and reads only the host and
/// the history out of it: the snapshot's own types (every change to the
/// cluster) are the engine's, and the page's module carries no code for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionJson(Box<str>);

/// The parts of the snapshot the page reads or writes, the rest left raw.
/// Its names are [`SessionSnapshot`]'s (a test keeps them in step).
#[derive(Serialize, Deserialize)]
struct Outline {
    shell: Box<serde_json::value::RawValue>,
    interactive: InteractiveOutline,
    elapsed_ms: u64,
    changes: Box<serde_json::value::RawValue>,
}

#[derive(Serialize, Deserialize)]
struct InteractiveOutline {
    ssh_stack: Vec<String>,
    history: Vec<String>,
    jobs: Box<serde_json::value::RawValue>,
    #[serde(default)]
    pending: String,
}

#[derive(Deserialize)]
struct HostOnly {
    shell: HostField,
}

#[derive(Deserialize)]
struct HostField {
    host: String,
}

#[derive(Deserialize)]
struct HistoryOnly {
    interactive: HistoryField,
}

#[derive(Deserialize)]
struct HistoryField {
    history: Vec<String>,
}

fn raw(json: String) -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string(json).expect("serde_json writes valid JSON")
}

impl SessionJson {
    pub fn of(snapshot: &SessionSnapshot) -> SessionJson {
        SessionJson(serde_json::to_string(snapshot).expect("a snapshot always serializes").into())
    }

    /// [`SessionSnapshot::initial`], written without the snapshot's types.
    pub fn initial(host: &str) -> SessionJson {
        let outline = Outline {
            shell: raw(serde_json::to_string(&ShellState::login(host)).expect("a shell state always serializes")),
            interactive: InteractiveOutline { ssh_stack: Vec::new(), history: Vec::new(), jobs: raw("[]".into()), pending: String::new() },
            elapsed_ms: 0,
            changes: raw("[]".into()),
        };
        SessionJson(serde_json::to_string(&outline).expect("an outline always serializes").into())
    }

    /// The snapshot, or why the text is not one.
    pub fn snapshot(&self) -> Result<SessionSnapshot, String> {
        serde_json::from_str(&self.0).map_err(|error| format!("damaged session ({error})"))
    }

    pub fn host(&self) -> String {
        serde_json::from_str::<HostOnly>(&self.0).map(|only| only.shell.host).unwrap_or_default()
    }

    pub fn history(&self) -> Vec<String> {
        serde_json::from_str::<HistoryOnly>(&self.0).map(|only| only.interactive.history).unwrap_or_default()
    }

    /// The same session with `lines` added to its history.
    pub fn with_history(&self, lines: impl IntoIterator<Item = String>) -> SessionJson {
        match serde_json::from_str::<Outline>(&self.0) {
            Ok(mut outline) => {
                outline.interactive.history.extend(lines);
                SessionJson(serde_json::to_string(&outline).expect("an outline always serializes").into())
            }
            Err(_) => self.clone(),
        }
    }
}

impl Serialize for SessionJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        raw(self.0.to_string()).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SessionJson {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SessionJson, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
        Ok(SessionJson(raw.get().into()))
    }
}

#[cfg(test)]
mod session_json_tests {
    use super::*;

    #[test]
    fn the_outline_keeps_every_part_of_a_snapshot() {
        let mut session = crate::testing::session();
        for line in ["sudo scontrol update nodename=gpu-002 state=drain reason=x", "sleep 100 &", "f() { echo hi; }", "ssh gpu-002", "for x in a"] {
            session.run(line);
        }
        let snapshot = session.snapshot();
        let json = SessionJson::of(&snapshot);
        assert_eq!(json.snapshot().unwrap(), snapshot);
        assert_eq!(json.host(), "gpu-002");
        assert_eq!(json.history(), snapshot.interactive.history);
        let more = json.with_history(["echo later".to_string()]);
        let mut expected = snapshot.clone();
        expected.interactive.history.push("echo later".into());
        assert_eq!(more.snapshot().unwrap(), expected, "nothing else changes");
        assert_eq!(SessionJson::initial("gpu-007").snapshot().unwrap(), SessionSnapshot::initial("gpu-007"));
        // Through a containing struct, as the saved state and the messages carry it.
        let text = serde_json::to_string(&vec![json.clone()]).unwrap();
        assert_eq!(serde_json::from_str::<Vec<SessionJson>>(&text).unwrap(), vec![json]);
    }
}
