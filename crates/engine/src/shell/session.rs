//! The interactive shell a trainee types into, and its snapshot.
//!
//! A session is a function of the lab's initial cluster and what the
//! trainee did: the changes applied (with when), the shell's state and the
//! clock. [`Session::snapshot`] captures exactly that, and
//! [`Session::restore`] rebuilds the same session from it by applying the
//! changes again: no command runs a second time.
//!
//! A lab may have several shells (the app's terminal tabs, so that a
//! perftest server and its client run side by side): each has its own
//! host, variables, history and jobs; the cluster and the clock are one.
//! What a server prints when its client (in another shell) ends it is
//! printed in the shell that started the server.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::interp::{Interp, ShellState};
use super::jobs::{self, Job};
use super::{builtins, parse, Stream, Transcript};
use crate::commands;
use crate::commands::execution::{ExecLog, Observer};
use crate::limits::{MAX_LINE_BYTES, MAX_SHELLS};
use crate::model::change::Change;
use crate::model::time::EpochSeconds;
use crate::model::Cluster;
use std::rc::Rc;

/// What only an interactive shell has.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interactive {
    /// Hosts left by `ssh HOST`, for `exit` to return to.
    pub ssh_stack: Vec<String>,
    /// Root shells opened by `sudo -i` or `sudo -s`, innermost last: how
    /// many ssh sessions deep each was opened, and the environment `exit`
    /// goes back to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub root_shells: Vec<RootShell>,
    pub history: Vec<String>,
    /// Background jobs (`cmd &`), running or finished but not yet reported.
    pub jobs: Vec<Job>,
    /// The lines of a command not complete yet (`for x in a b` then Enter):
    /// bash prompts `> ` for the rest and runs them together.
    #[serde(default)]
    pub pending: String,
    /// The servers this shell started that still listen, (node, port):
    /// what they print when a client ends them is printed here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub serving: Vec<(String, u16)>,
}

/// A root shell opened in an interactive shell (`sudo -i`, `sudo -s`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootShell {
    /// How many ssh sessions deep it was opened (`Interactive::ssh_stack`'s length).
    pub depth: usize,
    /// A login shell (`-i`, `su -`): `exit` says `logout`, not `exit`.
    pub login: bool,
    /// The environment of the shell it was opened from.
    pub env: crate::commands::Env,
}

/// A shell of the lab other than the one running now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherShell {
    pub id: usize,
    pub shell: ShellState,
    pub interactive: Interactive,
}

pub struct Session {
    pub cluster: Cluster,
    shell: ShellState,
    interactive: Interactive,
    /// Which shell `shell` is, and the lab's other shells, by id.
    active: usize,
    others: Vec<OtherShell>,
    /// What the last line made other shells print: (shell, its host, text).
    printed_elsewhere: Vec<(usize, String, String)>,
    /// When the lab's clock started, and the simulated time spent since.
    start: EpochSeconds,
    elapsed_ms: u64,
    /// What the lab watches as programs run (its facts and output patterns).
    observer: Option<Rc<dyn Observer>>,
}

/// Shell ids are small numbers (a tab's); one past this is refused.
const MAX_SHELL_ID: usize = 1 << 16;

fn is_zero(n: &usize) -> bool {
    *n == 0
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
    /// The shell last used (`shell` is its state), and the others.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub active: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherShell>,
}

impl SessionSnapshot {
    /// A login shell on `host` when the lab starts, before anything is done.
    pub fn initial(host: &str) -> SessionSnapshot {
        SessionSnapshot {
            shell: ShellState::login(host),
            interactive: Interactive::default(),
            elapsed_ms: 0,
            changes: Vec::new(),
            active: 0,
            others: Vec::new(),
        }
    }
}

impl Session {
    /// A shell on `host`, which must be one of the cluster's nodes.
    pub fn new(cluster: Cluster, host: &str) -> Session {
        let start = cluster.now;
        Session {
            cluster,
            shell: ShellState::login(host),
            interactive: Interactive::default(),
            active: 0,
            others: Vec::new(),
            printed_elsewhere: Vec::new(),
            start,
            elapsed_ms: 0,
            observer: None,
        }
    }

    /// Notes, as each program runs, what `observer` watches: the lab's
    /// facts that hold and the output patterns its output matches.
    pub fn observe(&mut self, observer: Rc<dyn Observer>) {
        self.observer = Some(observer);
    }

    /// The session `snapshot` describes, over the lab's initial `cluster`.
    pub fn restore(mut cluster: Cluster, snapshot: SessionSnapshot) -> Session {
        let start = cluster.now;
        for (at, change) in &snapshot.changes {
            // Faults due before the change struck before it.
            cluster.advance_to(*at);
            cluster.apply_change(change, *at);
        }
        let mut session = Session {
            cluster,
            shell: snapshot.shell,
            interactive: snapshot.interactive,
            active: snapshot.active,
            others: snapshot.others,
            printed_elsewhere: Vec::new(),
            start,
            elapsed_ms: snapshot.elapsed_ms,
            observer: None,
        };
        session.sync_clock();
        session
    }

    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            shell: self.shell.clone(),
            interactive: self.interactive.clone(),
            elapsed_ms: self.elapsed_ms,
            changes: self.cluster.changes().to_vec(),
            active: self.active,
            others: self.others.clone(),
        }
    }

    /// Which shell lines run in now.
    pub fn shell_id(&self) -> usize {
        self.active
    }

    /// The lab's shells, by id: (id, host).
    pub fn shells(&self) -> Vec<(usize, &str)> {
        let mut shells: Vec<(usize, &str)> = self.others.iter().map(|other| (other.id, other.shell.host.as_str())).collect();
        let at = self.others.iter().position(|other| other.id > self.active).unwrap_or(shells.len());
        shells.insert(at, (self.active, &self.shell.host));
        shells
    }

    /// Makes shell `id` the one lines run in; a shell the lab does not have
    /// yet starts as a login shell on `login_host`, up to [`MAX_SHELLS`].
    pub fn switch_shell(&mut self, id: usize, login_host: &str) -> Result<(), String> {
        if id == self.active {
            return Ok(());
        }
        if id >= MAX_SHELL_ID {
            return Err(format!("clusterlab: no shell {id} (shells are numbered below {MAX_SHELL_ID})\n"));
        }
        let next = match self.others.iter().position(|other| other.id == id) {
            Some(at) => self.others.remove(at),
            None if self.others.len() + 1 >= MAX_SHELLS => {
                return Err(format!("clusterlab: this lab has {MAX_SHELLS} shells open, the most it may; close one first\n"))
            }
            None => OtherShell { id, shell: ShellState::login(login_host), interactive: Interactive::default() },
        };
        let previous = OtherShell {
            id: self.active,
            shell: std::mem::replace(&mut self.shell, next.shell),
            interactive: std::mem::replace(&mut self.interactive, next.interactive),
        };
        // Kept in order of their ids (no sort: the page links this module's types).
        let at = self.others.iter().position(|other| other.id > previous.id).unwrap_or(self.others.len());
        self.others.insert(at, previous);
        self.active = id;
        Ok(())
    }

    /// Closes shell `id`, as closing its terminal does: the servers it
    /// started stop. The last shell stays open. Whether it closed.
    pub fn close_shell(&mut self, id: usize) -> bool {
        if self.others.is_empty() {
            return false;
        }
        let closed = if id == self.active {
            let next = self.others.remove(0);
            self.active = next.id;
            self.shell = next.shell;
            std::mem::replace(&mut self.interactive, next.interactive)
        } else {
            match self.others.iter().position(|other| other.id == id) {
                Some(at) => self.others.remove(at).interactive,
                None => return false,
            }
        };
        let now = self.cluster.now;
        for (node, port) in closed.serving {
            self.cluster.apply_change(&Change::StopListening { node, port }, now);
        }
        true
    }

    /// What the last line made other shells print (a server's results,
    /// when a client in this shell ended it): (shell, its host, text).
    pub fn take_printed_elsewhere(&mut self) -> Vec<(usize, String, String)> {
        std::mem::take(&mut self.printed_elsewhere)
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
        super::prompt_in(&self.shell.host, &self.shell.env, !self.interactive.pending.is_empty())
    }

    /// Ctrl-C at the `> ` prompt: the incomplete command is dropped.
    /// Whether there was one.
    pub fn cancel_pending(&mut self) -> bool {
        !std::mem::take(&mut self.interactive.pending).is_empty()
    }

    fn sync_clock(&mut self) {
        self.cluster.advance_to(self.start + (self.elapsed_ms / 1000) as i64);
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
        let changes_before = self.cluster.changes().len();
        let servers_elsewhere: Vec<(String, u16)> = self.others.iter().flat_map(|other| other.interactive.serving.iter().cloned()).collect();
        let (mut transcript, changed, diverted) = {
            let mut interp = Interp::new(Cow::Borrowed(&self.cluster), &mut self.shell, Some(&mut self.interactive), 0, started_ms);
            interp.servers_elsewhere = servers_elsewhere;
            interp.log = ExecLog::new(self.observer.clone());
            if let Some(at) = interrupt_at_ms {
                interp = interp.interrupt_at(at);
            }
            let mut transcript = interp.run_line(line, "");
            transcript.executions = interp.log.take();
            if !interp.to_terminal.is_empty() {
                transcript.push(Stream::Stdout, std::mem::take(&mut interp.to_terminal));
                transcript.timeline.push((transcript.duration_ms, transcript.len()));
            }
            let diverted = std::mem::take(&mut interp.diverted);
            (transcript, interp.into_changed_cluster(), diverted)
        };
        if let Some(cluster) = changed {
            self.cluster = cluster;
        }
        self.follow_servers(changes_before, diverted);
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

    /// Keeps each shell's servers in step with the cluster after a line:
    /// servers the line started are this shell's, servers no longer
    /// listening are no one's, and what a server printed as it ended goes
    /// to the shell that started it.
    fn follow_servers(&mut self, changes_before: usize, diverted: Vec<((String, u16), String)>) {
        for (_, change) in &self.cluster.changes()[changes_before..] {
            if let Change::Listen { node, listener } = change {
                let server = (node.clone(), listener.port);
                if !self.interactive.serving.contains(&server) {
                    self.interactive.serving.push(server);
                }
            }
        }
        for (server, text) in diverted {
            if let Some(owner) = self.others.iter().find(|other| other.interactive.serving.contains(&server)) {
                self.printed_elsewhere.push((owner.id, owner.shell.host.clone(), text));
            }
        }
        let cluster = &self.cluster;
        let listening = |(node, port): &(String, u16)| cluster.node(node).is_some_and(|node| node.listeners.iter().any(|listener| listener.port == *port));
        self.interactive.serving.retain(listening);
        for other in &mut self.others {
            other.interactive.serving.retain(listening);
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
            s.flags
                .iter()
                .find(|flag| flag.long.is_some_and(|long| previous == format!("--{long}")) || flag.short.is_some_and(|short| previous == format!("-{short}")))
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
    fn a_server_in_one_shell_prints_its_results_there_when_a_client_in_another_ends_it() {
        let mut shell = session();
        let server = shell.run("ib_write_bw -d mlx5_0");
        assert!(server.stdout().contains("Waiting for client to connect"));
        shell.switch_shell(1, "gpu-001").unwrap();
        assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
        assert!(shell.history().is_empty(), "each shell has its own history");
        shell.run("ssh gpu-002");
        let client = shell.run("ib_write_bw -d mlx5_0 gpu-001");
        assert_eq!(client.status, 0, "{}", client.stderr());
        let printed = shell.take_printed_elsewhere();
        assert_eq!(printed.len(), 1);
        let (to, host, text) = &printed[0];
        assert_eq!((*to, host.as_str()), (0, "gpu-001"));
        assert!(text.contains("BW average"), "the server's result row: {text}");
        assert!(!client.stdout().ends_with(text.as_str()), "not in the client's shell");
        // The server has ended: a second client finds no one.
        assert_ne!(shell.run("ib_write_bw -d mlx5_0 gpu-001").status, 0);
        // Back in the first shell: its host and history are as left.
        shell.switch_shell(0, "gpu-001").unwrap();
        assert_eq!(shell.history(), ["ib_write_bw -d mlx5_0"]);
        assert_eq!(shell.shells(), vec![(0, "gpu-001"), (1, "gpu-002")]);
    }

    #[test]
    fn shells_are_bounded_and_closing_one_stops_its_servers() {
        let mut shell = session();
        for id in 1..MAX_SHELLS {
            shell.switch_shell(id, "gpu-001").unwrap();
        }
        assert!(shell.switch_shell(99, "gpu-001").unwrap_err().contains("close one first"));
        assert!(shell.switch_shell(usize::MAX, "gpu-001").unwrap_err().contains("no shell"));
        shell.run("ib_write_bw -d mlx5_0 &");
        assert_eq!(shell.cluster.node("gpu-001").unwrap().listeners.len(), 1);
        let last = shell.shell_id();
        assert!(shell.close_shell(last));
        assert!(shell.cluster.node("gpu-001").unwrap().listeners.is_empty(), "its server went with it");
        assert_ne!(shell.shell_id(), last);
        // A snapshot restores every shell.
        let restored = Session::restore(lab().instantiate(1), shell.snapshot());
        assert_eq!(restored.shells(), shell.shells());
        assert!(restored.cluster.node("gpu-001").unwrap().listeners.is_empty());
        for id in [0, 1] {
            shell.close_shell(id);
        }
        assert!(!shell.close_shell(shell.shell_id()), "the last shell stays open");
    }

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
    fn a_here_document_waits_for_its_delimiter() {
        let mut shell = session();
        for line in ["cat <<EOF | tr a-z A-Z", "home $HOME \"q\" $(echo sub)"] {
            assert_eq!((shell.run(line).text().as_str(), shell.prompt().as_str()), ("", "> "));
        }
        assert_eq!(shell.run("EOF").stdout(), "HOME /HOME/USER \"Q\" SUB\n");
        // A quoted delimiter keeps the text as written; `<<-` strips leading tabs.
        assert_eq!(shell.run("cat <<'END'\n$HOME `x`\nEND").stdout(), "$HOME `x`\n");
        assert_eq!(shell.run("cat <<EOF\necho \"a\\\"b\" c \\$HOME\nEOF").stdout(), "echo \"a\\\"b\" c $HOME\n");
        assert_eq!(shell.run("cat <<-X\n\t\tindented\n\tX").stdout(), "indented\n");
        // Two on one line read the lines in turn (the last is the input, as
        // in bash); the command goes on after them.
        assert_eq!(shell.run("cat <<A - <<B; echo after\na\nA\nb\nB").stdout(), "b\nafter\n");
        shell.run("cat > notes.txt <<EOF\nline one\nline two\nEOF");
        assert_eq!(shell.run("wc -l < notes.txt").stdout(), "2\n");
    }

    #[test]
    fn a_new_session_is_the_initial_snapshot() {
        assert_eq!(session().snapshot(), SessionSnapshot::initial("gpu-001"));
    }

    #[test]
    fn a_restored_session_is_the_same_session() {
        let mut shell = session();
        for line in
            ["sudo scontrol update nodename=gpu-002 state=drain reason=rail", "export NCCL_DEBUG=INFO", "ssh gpu-002", "sleep 90", "ib_write_bw -d mlx5_0 &"]
        {
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
        // A watch stopped after three refreshes: the refreshes it showed ran
        // (a task may count them), the ones after never did.
        let out = shell.run_until("watch -n 1 nvidia-smi -L", Some(2_500));
        let programs: Vec<(&str, i32)> = out.executions.iter().map(|e| (e.program.as_str(), e.status)).collect();
        assert_eq!(programs, [("watch", 130), ("nvidia-smi", 0), ("nvidia-smi", 0), ("nvidia-smi", 0)]);
    }
}

/// A [`SessionSnapshot`] as JSON text, carried unparsed. The app's page
/// stores it and hands it back to the engine, and reads only each shell's
/// host, `> ` state and history out of it ([`SessionJson::shells`]): the snapshot's own types (every change to the
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
    #[serde(default, skip_serializing_if = "is_zero")]
    active: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    others: Vec<OtherOutline>,
}

#[derive(Serialize, Deserialize)]
struct InteractiveOutline {
    ssh_stack: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root_shells: Option<Box<serde_json::value::RawValue>>,
    history: Vec<String>,
    jobs: Box<serde_json::value::RawValue>,
    #[serde(default)]
    pending: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    serving: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Serialize, Deserialize)]
struct OtherOutline {
    id: usize,
    shell: Box<serde_json::value::RawValue>,
    interactive: InteractiveOutline,
}

/// What the page shows of one shell: its tab.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellView {
    pub id: usize,
    pub host: String,
    /// The variables its prompt shows (USER, HOME, PWD, EUID).
    pub env: crate::commands::Env,
    /// bash waits for the rest of an incomplete command (`> `).
    pub continuing: bool,
    pub history: Vec<String>,
}

impl ShellView {
    fn of(id: usize, shell: &serde_json::value::RawValue, interactive: &InteractiveOutline) -> ShellView {
        let (host, env) = serde_json::from_str::<HostField>(shell.get()).map(|field| (field.host, field.env)).unwrap_or_default();
        let env = env.into_iter().filter(|(name, _)| matches!(name.as_str(), "USER" | "HOME" | "PWD" | crate::commands::EUID)).collect();
        ShellView { id, host, env, continuing: !interactive.pending.is_empty(), history: interactive.history.clone() }
    }

    /// `user@HOST:~$ `, or `> ` while a command is incomplete.
    pub fn prompt(&self) -> String {
        super::prompt_in(&self.host, &self.env, self.continuing)
    }
}

#[derive(Deserialize)]
struct HostField {
    host: String,
    #[serde(default)]
    env: crate::commands::Env,
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
            interactive: InteractiveOutline {
                ssh_stack: Vec::new(),
                root_shells: None,
                history: Vec::new(),
                jobs: raw("[]".into()),
                pending: String::new(),
                serving: None,
            },
            elapsed_ms: 0,
            changes: raw("[]".into()),
            active: 0,
            others: Vec::new(),
        };
        SessionJson(serde_json::to_string(&outline).expect("an outline always serializes").into())
    }

    /// The snapshot, or why the text is not one.
    pub fn snapshot(&self) -> Result<SessionSnapshot, String> {
        serde_json::from_str(&self.0).map_err(|error| format!("damaged session ({error})"))
    }

    /// Milliseconds of the lab's clock the session has run.
    pub fn elapsed_ms(&self) -> u64 {
        serde_json::from_str::<Outline>(&self.0).map_or(0, |outline| outline.elapsed_ms)
    }

    /// The shell last used, and every shell by id.
    pub fn shells(&self) -> (usize, Vec<ShellView>) {
        let Ok(outline) = serde_json::from_str::<Outline>(&self.0) else { return (0, Vec::new()) };
        // The other shells are kept in order of their ids.
        let mut shells: Vec<ShellView> = outline.others.iter().map(|other| ShellView::of(other.id, &other.shell, &other.interactive)).collect();
        let at = shells.iter().position(|shell| shell.id > outline.active).unwrap_or(shells.len());
        shells.insert(at, ShellView::of(outline.active, &outline.shell, &outline.interactive));
        (outline.active, shells)
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
        session.switch_shell(2, "gpu-001").unwrap();
        session.run("ib_write_bw -d mlx5_0 &");
        session.switch_shell(0, "gpu-001").unwrap();
        let snapshot = session.snapshot();
        let json = SessionJson::of(&snapshot);
        let (active, shells) = json.shells();
        assert_eq!(active, 0);
        assert_eq!(shells.iter().map(|shell| (shell.id, shell.prompt())).collect::<Vec<_>>(), [(0, "> ".to_string()), (2, "user@gpu-001:~$ ".to_string())]);
        assert_eq!(shells[1].history, ["ib_write_bw -d mlx5_0 &"]);
        assert_eq!(json.snapshot().unwrap(), snapshot);
        assert_eq!(shells[0].host, "gpu-002");
        assert_eq!(shells[0].history, snapshot.interactive.history);
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
