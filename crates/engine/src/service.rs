//! The engine as a service: the messages the app exchanges with the engine,
//! which runs in a Web Worker so that no command can block the page, and
//! [`Service::handle`], which answers them. The app keeps the lab's store;
//! the service keeps the live session and answers with what a line printed
//! and the session it left. Messages travel as JSON.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::facts::Baseline;
use crate::lab::Setup;
use crate::model::time::EpochSeconds;
use crate::shell::{Session, SessionJson, SessionSnapshot};
use crate::shell::{Stream, Transcript};
use crate::store::{Entry, Stop};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Starts a lab's session: the lab's data (JSON), the trainee's variant,
    /// and the session to restore (None: the lab's initial state).
    Open { lab: String, seed: u64, session: Option<SessionJson> },
    /// Runs a line typed at the prompt of shell `shell` (a terminal tab;
    /// one the lab does not have yet opens as a login shell).
    Run {
        id: u64,
        line: String,
        #[serde(default)]
        shell: usize,
    },
    /// Closes a shell, as closing its terminal does.
    CloseShell { shell: usize },
    /// Ctrl-C during the line `id` (the last one run), this many simulated
    /// milliseconds into it: the session goes back to before the line and
    /// runs it again, stopped there.
    Interrupt { id: u64, at_ms: u64 },
    /// Tab on a partly typed line.
    Complete { id: u64, line: String },
    /// Ctrl-C at bash's `> ` prompt of shell `shell`: the incomplete command is dropped.
    Cancel { shell: usize },
    /// The metrics panel: the lab's jobs over simulated time, now.
    Metrics,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// The session is ready: its prompt, and the session (the initial one
    /// when none was given).
    /// `met`: the ids of the lab's state questions the cluster meets.
    Opened {
        prompt: String,
        host: String,
        now: EpochSeconds,
        session: SessionJson,
        met: Vec<String>,
    },
    /// A line ran: the transcript entry, the session after it, the prompt,
    /// and the lab's clock after it (UTC seconds). `elsewhere`: what the
    /// line made other shells print, as their entries.
    Ran {
        id: u64,
        entry: Entry,
        session: SessionJson,
        prompt: String,
        host: String,
        now: EpochSeconds,
        met: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        elsewhere: Vec<Rc<Entry>>,
    },
    Completions {
        id: u64,
        words: Vec<String>,
    },
    /// The metrics panel's HTML (charts with their summaries; empty when
    /// the lab has no jobs).
    Metrics {
        html: String,
    },
    /// The incomplete command was dropped, or a shell closed: the session
    /// and the prompt of the shell in use now.
    Cancelled {
        session: SessionJson,
        prompt: String,
    },
    /// A request the service could not follow (no lab open, unreadable data).
    Failed {
        message: String,
    },
}

impl Request {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a request always serializes")
    }

    pub fn from_json(text: &str) -> Result<Request, String> {
        serde_json::from_str(text).map_err(|error| format!("unreadable request: {error}"))
    }
}

impl Reply {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a reply always serializes")
    }

    pub fn from_json(text: &str) -> Result<Reply, String> {
        serde_json::from_str(text).map_err(|error| format!("unreadable reply: {error}"))
    }
}

/// The live session, and what an interrupt needs: the session before the
/// last line, and that line.
#[derive(Default)]
pub struct Service {
    open: Option<Open>,
}

struct Open {
    lab: Setup,
    seed: u64,
    session: Session,
    last: Option<(u64, String, SessionSnapshot)>,
    baseline: Baseline,
    /// What the session watches as programs run (the lab's tasks' facts).
    watch: Rc<crate::facts::Watch>,
}

impl Open {
    fn met(&self) -> Vec<String> {
        self.lab.states_met(self.seed, &self.session.cluster, &self.baseline)
    }

    fn ran(&mut self, id: u64, entry: Entry) -> Reply {
        let met = self.met();
        ran(id, entry, &mut self.session, met)
    }

    fn cancelled(&self) -> Reply {
        Reply::Cancelled { session: SessionJson::of(&self.session.snapshot()), prompt: self.session.prompt() }
    }
}

impl Service {
    pub fn new() -> Service {
        Service::default()
    }

    /// Runs representative lines on a copy of the open session and throws
    /// the results away: a WebAssembly engine compiles code fully only once
    /// it has run, so the trainee's first commands are as quick as later ones.
    pub fn warm_up(&self) {
        let Some(open) = &self.open else { return };
        let mut scratch = Session::restore(open.lab.instantiate(open.seed), open.session.snapshot());
        for line in ["nvidia-smi -q | head -100", "nvidia-smi", "ibstat | grep -c Rate", "sinfo; echo ok"] {
            let entry = run(&mut scratch, line, None);
            let _ = ran(0, entry, &mut scratch, Vec::new()).to_json();
        }
    }

    pub fn handle(&mut self, request: Request) -> Reply {
        match request {
            Request::Open { lab, seed, session } => match (Setup::from_json(&lab), session.map(|json| json.snapshot()).transpose()) {
                (Err(message), _) | (_, Err(message)) => Reply::Failed { message },
                (Ok(lab), Ok(snapshot)) => {
                    let initial = lab.instantiate(seed);
                    let mut session = match snapshot {
                        Some(snapshot) => Session::restore(initial, snapshot),
                        None => Session::new(initial, lab.first_host()),
                    };
                    let watch = Rc::new(lab.watch(seed));
                    session.observe(watch.clone());
                    let open = Open { lab, seed, session, last: None, baseline: Baseline::default(), watch };
                    let reply = Reply::Opened {
                        prompt: open.session.prompt(),
                        host: open.session.host().to_string(),
                        now: open.session.now(),
                        session: SessionJson::of(&open.session.snapshot()),
                        met: open.met(),
                    };
                    self.open = Some(open);
                    reply
                }
            },
            Request::Run { id, line, shell } => {
                let Some(open) = self.open.as_mut() else { return not_open() };
                if let Err(message) = open.session.switch_shell(shell, open.lab.first_host()) {
                    let mut transcript = Transcript::default();
                    transcript.push(Stream::Stderr, message);
                    transcript.status = 1;
                    let mut entry = Entry::new(open.session.host(), &open.session.prompt(), &line, open.session.now(), transcript);
                    entry.shell = shell;
                    return open.ran(id, entry);
                }
                let before = open.session.snapshot();
                let entry = run(&mut open.session, &line, None);
                open.last = Some((id, line, before));
                open.ran(id, entry)
            }
            Request::Interrupt { id, at_ms } => {
                let Some(open) = self.open.as_mut() else { return not_open() };
                let Some((_, line, before)) = open.last.take().filter(|(last, _, _)| *last == id) else {
                    return Reply::Failed { message: format!("no line {id} to interrupt") };
                };
                open.session = Session::restore(open.lab.instantiate(open.seed), before);
                open.session.observe(open.watch.clone());
                let mut entry = run(&mut open.session, &line, Some(at_ms));
                entry.stopped = Some(Stop::Interrupted);
                // What the line printed elsewhere was shown when it first ran.
                open.session.take_printed_elsewhere();
                open.ran(id, entry)
            }
            Request::Metrics => match self.open.as_ref() {
                Some(open) => Reply::Metrics { html: crate::metrics::panel(&open.session.cluster) },
                None => not_open(),
            },
            Request::Complete { id, line } => match self.open.as_ref() {
                Some(open) => Reply::Completions { id, words: open.session.complete(&line) },
                None => not_open(),
            },
            Request::Cancel { shell } => {
                let Some(open) = self.open.as_mut() else { return not_open() };
                if open.session.switch_shell(shell, open.lab.first_host()).is_ok() {
                    open.session.cancel_pending();
                }
                open.cancelled()
            }
            Request::CloseShell { shell } => {
                let Some(open) = self.open.as_mut() else { return not_open() };
                open.session.close_shell(shell);
                open.cancelled()
            }
        }
    }
}

fn ran(id: u64, entry: Entry, session: &mut Session, met: Vec<String>) -> Reply {
    let at = entry.started_at;
    let elsewhere = session.take_printed_elsewhere().into_iter().map(|(shell, host, text)| Rc::new(Entry::printed(shell, &host, at, text))).collect();
    Reply::Ran {
        id,
        entry,
        session: SessionJson::of(&session.snapshot()),
        prompt: session.prompt(),
        host: session.host().to_string(),
        now: session.now(),
        met,
        elsewhere,
    }
}

fn not_open() -> Reply {
    Reply::Failed { message: "no lab is open".to_string() }
}

fn run(session: &mut Session, line: &str, interrupt_at_ms: Option<u64>) -> Entry {
    let (host, prompt, started_at) = (session.host().to_string(), session.prompt(), session.now());
    let transcript = session.run_until(line, interrupt_at_ms);
    let mut entry = Entry::new(&host, &prompt, line, started_at, transcript);
    entry.shell = session.shell_id();
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::lab;

    fn open(service: &mut Service) -> SessionSnapshot {
        match service.handle(Request::Open { lab: lab().to_json(), seed: 1, session: None }) {
            Reply::Opened { prompt, session, .. } => {
                assert_eq!(prompt, "user@gpu-001:~$ ");
                session.snapshot().unwrap()
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn runs_lines_and_answers_with_the_session() {
        let mut service = Service::new();
        assert!(matches!(service.handle(Request::Run { id: 1, line: "true".into(), shell: 0 }), Reply::Failed { .. }));
        open(&mut service);
        let Reply::Ran { entry, session, prompt, .. } = service.handle(Request::Run { id: 1, line: "ssh gpu-002".into(), shell: 0 }) else { panic!() };
        assert_eq!((entry.prompt.as_str(), prompt.as_str()), ("user@gpu-001:~$ ", "user@gpu-002:~$ "));
        // A new service restores the same session from the snapshot.
        let mut other = Service::new();
        let opened = other.handle(Request::Open { lab: lab().to_json(), seed: 1, session: Some(session) });
        assert!(matches!(opened, Reply::Opened { prompt, .. } if prompt == "user@gpu-002:~$ "));
        let Reply::Completions { words, .. } = other.handle(Request::Complete { id: 2, line: "nvidia-s".into() }) else { panic!() };
        assert_eq!(words, ["nvidia-smi"]);
    }

    #[test]
    fn an_interrupt_reruns_the_last_line_stopped_where_ctrl_c_struck() {
        let mut service = Service::new();
        let initial = open(&mut service);
        let line = "sleep 120; sudo scontrol update nodename=gpu-002 state=drain reason=x";
        let Reply::Ran { session: finished, .. } = service.handle(Request::Run { id: 7, line: line.into(), shell: 0 }) else { panic!() };
        assert_eq!(finished.snapshot().unwrap().changes.len(), 1);
        let Reply::Ran { entry, session, .. } = service.handle(Request::Interrupt { id: 7, at_ms: 5_000 }) else { panic!() };
        assert_eq!((entry.status, entry.duration_ms, entry.stopped), (130, 5_000, Some(Stop::Interrupted)));
        let session = session.snapshot().unwrap();
        assert!(session.changes.is_empty());
        assert_eq!(session.elapsed_ms, initial.elapsed_ms + 5_000);
        assert!(matches!(service.handle(Request::Interrupt { id: 7, at_ms: 1 }), Reply::Failed { .. }));
    }

    #[test]
    fn two_shells_run_a_perftest_pair_and_the_server_prints_in_its_own() {
        let mut service = Service::new();
        open(&mut service);
        let run = |service: &mut Service, id, line: &str, shell| match service.handle(Request::Run { id, line: line.into(), shell }) {
            Reply::Ran { entry, elsewhere, prompt, .. } => (entry, elsewhere, prompt),
            other => panic!("{other:?}"),
        };
        let (server, _, _) = run(&mut service, 1, "ib_write_bw -d mlx5_0", 0);
        assert_eq!(server.shell, 0);
        let (_, _, prompt) = run(&mut service, 2, "ssh gpu-002", 1);
        assert_eq!(prompt, "user@gpu-002:~$ ");
        let (client, elsewhere, _) = run(&mut service, 3, "ib_write_bw -d mlx5_0 gpu-001", 1);
        assert_eq!((client.shell, client.host.as_str(), client.status), (1, "gpu-002", 0));
        assert_eq!(elsewhere.len(), 1);
        assert_eq!((elsewhere[0].shell, elsewhere[0].host.as_str()), (0, "gpu-001"));
        assert!(elsewhere[0].is_printed() && elsewhere[0].text().contains("BW average"));
        // Closing the second shell leaves the first in use.
        let Reply::Cancelled { prompt, session } = service.handle(Request::CloseShell { shell: 1 }) else { panic!() };
        assert_eq!(prompt, "user@gpu-001:~$ ");
        assert_eq!(session.shells().1.len(), 1);
        // Past the limit, a new shell is refused in the terminal, not as a failure.
        for shell in 1..crate::limits::MAX_SHELLS {
            run(&mut service, 10 + shell as u64, "true", shell);
        }
        let (refused, _, _) = run(&mut service, 20, "true", 50);
        assert!(refused.text().contains("close one first") && refused.status == 1);
    }

    #[test]
    fn messages_travel_as_json() {
        let request = Request::Run { id: 3, line: "echo 'a\"b'".into(), shell: 0 };
        assert_eq!(Request::from_json(&request.to_json()).unwrap(), request);
        assert!(Request::from_json("{}").is_err());
    }
}
