//! The lab page's one store, as a reducer: the engine's [`LabState`] (the
//! session, the transcript with simulated timestamps, the answers), and
//! what the page does with it now (a line computing, output revealing,
//! lines typed meanwhile, notices, whether this tab holds the lab). Every
//! view reads it. What the engine must be asked is state too (`running`,
//! `interrupting`, `stopping`, `session_epoch`): the hook that owns the
//! store sends each request once.

use std::collections::VecDeque;
use std::rc::Rc;

use clusterlab_engine::grading::Grade;
use clusterlab_engine::lab::{Doc, Question, QuestionKind, Variant};
use clusterlab_engine::limits::MAX_SHELLS;
use clusterlab_engine::model::time::EpochSeconds;
use clusterlab_engine::service::Reply;
use clusterlab_engine::shell::{SessionJson, ShellView};
use clusterlab_engine::store::{Entry, Evidence, LabState, Stop, Submitted};
use yew::Reducible;

use crate::engine::{EngineEvent, RUNAWAY_MS};
use crate::fetch::LoadedLab;

/// Output of a line that took at least this long on the lab's clock is
/// revealed over time, as the real command prints it.
pub const STREAM_FROM_MS: u64 = 1500;

/// Whether this tab may change the lab.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// This tab holds the lab.
    Owner,
    /// Another tab holds it; this one shows it read-only and offers to take over.
    HeldElsewhere,
    /// This tab asked to take over and waits for the other to let go.
    TakingOver,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineStatus {
    Starting,
    Ready,
    Failed(String),
}

/// A line sent to the engine, not yet answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub id: u64,
    pub line: String,
    pub shell: usize,
}

#[derive(Clone, Debug)]
pub struct LabStore {
    pub lab: LoadedLab,
    pub variant: Rc<Variant>,
    /// The variant's briefing and questions, shared so that views compare
    /// them by pointer and re-render only what changed.
    pub briefing: Rc<Doc>,
    pub questions: Rc<Vec<Rc<Question>>>,
    pub state: LabState,
    /// The prompt and host of the shell in use.
    pub prompt: String,
    pub host: String,
    /// The shell (terminal tab) in use, the lab's shells, and those that
    /// printed since they were last looked at.
    pub shell: usize,
    pub shells: Vec<ShellView>,
    pub unseen: Vec<usize>,
    /// A shell to close (counted: each one is a request to the engine).
    pub closing: (u64, usize),
    /// Where the screens of shells other than the first start (after
    /// Ctrl-L); the first one's is saved with the lab.
    pub screens: Vec<(usize, usize)>,
    /// The lab's clock (UTC seconds) as the engine last reported it.
    pub now: EpochSeconds,
    pub engine: EngineStatus,
    /// Entries from this index on ran since the page opened; earlier ones
    /// were restored (and are never revealed over time again).
    pub live_from: usize,
    pub running: Option<Running>,
    /// The id of the line the last entry came from, and the entry it is.
    pub last_run: Option<(u64, usize)>,
    /// The entry whose output is being revealed.
    pub revealing: Option<usize>,
    /// Ctrl-C on a revealed line: (its id, simulated milliseconds in).
    pub interrupting: Option<(u64, u64)>,
    /// Ctrl-C on a line still computing.
    pub stopping: Option<u64>,
    /// Ctrl-C at the `> ` prompt of an incomplete command, counted: each
    /// one is a request to the engine.
    pub cancelling: u64,
    /// Lines typed while another ran, to run next.
    pub queue: VecDeque<String>,
    /// Bumped when the session is replaced (start, reset, new variant, take
    /// over, a runaway line): the engine must open it again.
    pub session_epoch: u64,
    pub notices: Vec<String>,
    pub access: Access,
    /// The state questions the cluster meets, as the engine last said.
    pub met: Vec<String>,
    /// The engine could not read the last answer to this question: why
    /// (nothing was recorded; the card asks again).
    pub unclear: Option<(String, String)>,
    /// The metrics panel: whether it is shown, what the engine last drew,
    /// and a count of the requests to draw it (each one sent once).
    pub metrics_shown: bool,
    pub metrics: Option<Rc<str>>,
    pub metrics_asked: u64,
    next_id: u64,
    /// Bumped by every action: views compare stores by it, not by content.
    revision: u64,
}

impl PartialEq for LabStore {
    fn eq(&self, other: &Self) -> bool {
        self.revision == other.revision && self.lab == other.lab
    }
}

pub enum Action {
    Engine(EngineEvent),
    /// Enter at the prompt.
    Submit(String),
    /// Ctrl-C at the prompt, with what was typed.
    Cancel(String),
    /// Ctrl-C while a line runs: `at_ms` into it when its output is being revealed.
    Interrupt {
        at_ms: u64,
    },
    /// The revealed entry is fully shown.
    Revealed,
    /// Ctrl-L.
    ClearScreen,
    /// A terminal tab: use shell N, open a new one, close one.
    SwitchShell(usize),
    NewShell,
    CloseShell(usize),
    /// An answer, given at `now_ms` on the wall clock (an exam's limit).
    Answer {
        question: String,
        response: String,
        now_ms: i64,
    },
    ShowHint {
        question: String,
    },
    /// Submit the exam now (`now_ms`, the wall clock); `at_limit` when its
    /// time ran out.
    SubmitExam {
        now_ms: i64,
        at_limit: bool,
    },
    /// Start over, with the same variant or another one.
    Restart {
        seed: u64,
    },
    Notice(String),
    Dismiss(usize),
    /// Another tab holds the lab.
    HeldElsewhere,
    /// This tab asks to take the lab over.
    TakeOver,
    /// The lab is this tab's again, in the state the other tab saved.
    TookOver(Option<LabState>),
    /// Another tab took the lab over.
    LetGo,
    /// Another tab saved: a read-only tab shows what it saved.
    Follow(LabState),
    /// Show or hide the metrics panel.
    ShowMetrics(bool),
}

impl LabStore {
    pub fn new(lab: LoadedLab, state: LabState, notice: Option<String>) -> LabStore {
        let variant = Rc::new(lab.lab.variant(state.seed));
        let (briefing, questions) = shared(&variant);
        let (shell, shells) = state.session.shells();
        // A lab with jobs opens its metrics: the job's health is the first
        // thing an operator reads.
        let metrics_shown = lab.lab.jobs.is_some();
        let mut store = LabStore {
            briefing,
            questions,
            // Set from the shell in use, below.
            prompt: String::new(),
            host: String::new(),
            shell,
            shells,
            unseen: Vec::new(),
            closing: (0, 0),
            screens: Vec::new(),
            now: 0,
            variant,
            live_from: state.transcript.len(),
            lab,
            state,
            engine: EngineStatus::Starting,
            running: None,
            last_run: None,
            revealing: None,
            interrupting: None,
            stopping: None,
            cancelling: 0,
            queue: VecDeque::new(),
            session_epoch: 1,
            notices: notice.into_iter().collect(),
            access: Access::Owner,
            met: Vec::new(),
            unclear: None,
            metrics_shown,
            metrics: None,
            metrics_asked: 0,
            next_id: 0,
            revision: 0,
        };
        store.use_shell(shell);
        store
    }

    /// Whether a line is computing or its output is being revealed.
    pub fn busy(&self) -> bool {
        self.running.is_some() || self.revealing.is_some() || self.interrupting.is_some()
    }

    pub fn owner(&self) -> bool {
        self.access == Access::Owner
    }

    /// The grade of a question, when it has an answer, less what its hints cost.
    pub fn grade(&self, question: &str) -> Option<Grade> {
        let question = self.variant.questions.iter().find(|q| q.id == question)?;
        self.state.grade(question)
    }

    pub fn score(&self) -> u32 {
        self.state.score(&self.variant.questions)
    }

    /// The entry the screen of the shell in use starts from.
    pub fn screen_start(&self) -> usize {
        match self.shell {
            0 => self.state.screen_from,
            shell => self.screens.iter().find(|(of, _)| *of == shell).map_or(0, |(_, from)| *from),
        }
    }

    /// The history of the shell in use.
    pub fn history(&self) -> &[String] {
        self.shells.iter().find(|view| view.id == self.shell).map_or(&[], |view| &view.history)
    }

    /// The last entry of the shell in use.
    pub fn last_entry(&self) -> Option<&Rc<Entry>> {
        self.state.transcript.iter().rev().find(|entry| entry.shell == self.shell)
    }

    /// The shells as the session says, and the tabs opened here that have
    /// run nothing yet (the engine starts a shell at its first line).
    fn follow_shells(&mut self) {
        let (_, mut shells) = self.state.session.shells();
        for view in &self.shells {
            if !shells.iter().any(|known| known.id == view.id) {
                let at = shells.iter().position(|known| known.id > view.id).unwrap_or(shells.len());
                shells.insert(at, view.clone());
            }
        }
        self.shells = shells;
    }

    /// Uses shell `id`: its host and prompt (a tab the session does not
    /// know yet is a login shell on the lab's first node).
    fn use_shell(&mut self, id: usize) {
        self.shell = id;
        self.unseen.retain(|shell| *shell != id);
        let view = self.shells.iter().find(|view| view.id == id);
        let host = view.map_or_else(|| self.lab.lab.first_host().to_string(), |view| view.host.clone());
        self.prompt = view.map_or_else(|| prompt_for(&host), ShellView::prompt);
        self.host = host;
    }

    fn push(&mut self, mut entry: Entry, session: Option<SessionJson>) {
        entry.shell = self.shell;
        match session {
            Some(session) => self.state.record(entry, session),
            None => self.state.transcript.push(Rc::new(entry)),
        }
    }

    /// Asks the engine to draw the metrics again, while they are shown.
    fn redraw_metrics(&mut self) {
        if self.metrics_shown {
            self.metrics_asked += 1;
        }
    }

    /// Starts the next queued line, if the terminal is free.
    fn next_line(&mut self) {
        while !self.busy() {
            let Some(line) = self.queue.pop_front() else { return };
            self.start(line);
        }
    }

    fn start(&mut self, line: String) {
        if line.trim().is_empty() {
            // An empty line is a new prompt, as in a terminal.
            let entry = Entry::new(&self.host, &self.prompt, &line, self.now, Default::default());
            self.push(entry, None);
            return;
        }
        self.next_id += 1;
        self.running = Some(Running { id: self.next_id, line, shell: self.shell });
    }

    fn replace_session(&mut self, state: LabState) {
        if state.seed != self.state.seed {
            self.variant = Rc::new(self.lab.lab.variant(state.seed));
            (self.briefing, self.questions) = shared(&self.variant);
        }
        self.live_from = state.transcript.len();
        (self.shell, self.shells) = state.session.shells();
        self.unseen.clear();
        self.use_shell(self.shell);
        self.state = state;
        self.running = None;
        self.revealing = None;
        self.interrupting = None;
        self.stopping = None;
        self.last_run = None;
        self.queue.clear();
        self.engine = EngineStatus::Starting;
        self.session_epoch += 1;
    }

    fn engine_event(&mut self, event: EngineEvent) {
        match event {
            EngineEvent::Reply(Reply::Opened { now, met, .. }) => {
                self.met = met;
                // The tab in use stays (the session's last shell may be another).
                self.follow_shells();
                self.use_shell(self.shell);
                self.now = now;
                self.engine = EngineStatus::Ready;
                self.redraw_metrics();
                self.next_line();
            }
            EngineEvent::Reply(Reply::Ran { id, entry, session, prompt, host, now, met, elsewhere }) => {
                self.met = met;
                let interrupted = self.interrupting.is_some_and(|(of, _)| of == id);
                if interrupted {
                    self.interrupting = None;
                    if let Some((_, at)) = self.last_run.filter(|(of, _)| *of == id) {
                        self.state.transcript[at] = Rc::new(entry);
                        self.state.session = Rc::new(session);
                    }
                } else if self.running.as_ref().is_some_and(|running| running.id == id) {
                    self.running = None;
                    let streams = entry.duration_ms >= STREAM_FROM_MS;
                    self.push(entry, Some(session));
                    let at = self.state.transcript.len() - 1;
                    self.last_run = Some((id, at));
                    if streams {
                        self.revealing = Some(at);
                    }
                    for printed in elsewhere {
                        // Printed by a shell not in use: its tab says so.
                        if printed.shell != self.shell && !self.unseen.contains(&printed.shell) {
                            self.unseen.push(printed.shell);
                        }
                        self.state.transcript.push(printed);
                    }
                } else {
                    return;
                }
                self.prompt = prompt;
                self.host = host;
                self.now = now;
                self.follow_shells();
                self.redraw_metrics();
                self.next_line();
            }
            EngineEvent::Reply(Reply::Failed { message }) => {
                self.engine = EngineStatus::Failed(message.clone());
                self.notices.push(format!("The simulator could not start this lab: {message}"));
            }
            EngineEvent::Reply(Reply::Completions { .. }) => {}
            EngineEvent::Reply(Reply::Metrics { html }) => self.metrics = Some(html.into()),
            EngineEvent::Reply(Reply::Cancelled { session, .. }) => {
                self.state.session = Rc::new(session);
                self.follow_shells();
                self.use_shell(self.shell);
            }
            EngineEvent::Stopped { id, by_user } => {
                let Some(running) = self.running.take().filter(|running| running.id == id) else { return };
                self.stopping = None;
                let (stop, message) = if by_user {
                    (Stop::Interrupted, String::new())
                } else {
                    (
                        Stop::Runaway,
                        format!(
                            "clusterlab: stopped: this command line computed for more than {:.1} s of real time. Nothing it would have changed happened; the simulator limits every command line.\n",
                            f64::from(RUNAWAY_MS) / 1000.0
                        ),
                    )
                };
                self.stopped_line(&running.line, stop, &message);
            }
            EngineEvent::Crashed { running, message } => match running.and_then(|id| self.running.take().filter(|running| running.id == id)) {
                Some(line) => {
                    let message = format!(
                        "clusterlab: the simulator failed on this command line ({message}) and was restarted; nothing it would have changed happened.\n"
                    );
                    self.stopped_line(&line.line, Stop::Failed, &message);
                }
                None => self.notices.push(format!("The simulator failed ({message}) and was restarted.")),
            },
        }
    }

    /// Records a line the engine never answered, and opens the session again
    /// as it was before the line, with the line in its history.
    fn stopped_line(&mut self, line: &str, stop: Stop, message: &str) {
        let entry = Entry::not_run(&self.host, &self.prompt, line, self.now, stop, message);
        let session = self.state.session.with_history([line.to_string()]);
        self.push(entry, Some(session));
        self.engine = EngineStatus::Starting;
        self.session_epoch += 1;
    }
}

fn shared(variant: &Variant) -> (Rc<Doc>, Rc<Vec<Rc<Question>>>) {
    (Rc::new(variant.briefing.clone()), Rc::new(variant.questions.iter().cloned().map(Rc::new).collect()))
}

/// bash's prompt while a command is incomplete (its PS2).
const CONTINUATION_PROMPT: &str = "> ";

fn prompt_for(host: &str) -> String {
    clusterlab_engine::shell::prompt(host, false)
}

impl Reducible for LabStore {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        next.revision += 1;
        match action {
            Action::Engine(event) => next.engine_event(event),
            // Looking at the metrics changes nothing: a read-only tab may too.
            Action::ShowMetrics(shown) => {
                next.metrics_shown = shown;
                next.redraw_metrics();
            }
            // A read-only tab changes nothing.
            Action::Submit(_)
            | Action::Cancel(_)
            | Action::Answer { .. }
            | Action::ShowHint { .. }
            | Action::SubmitExam { .. }
            | Action::ClearScreen
            | Action::Restart { .. }
            | Action::NewShell
            | Action::CloseShell(_)
                if !next.owner() =>
            {
                return self
            }
            Action::Submit(line) => {
                next.queue.push_back(line);
                if next.engine == EngineStatus::Ready {
                    next.next_line();
                }
            }
            Action::Cancel(typed) => {
                let entry = Entry::not_run(&next.host, &next.prompt, &typed, next.now, Stop::Cancelled, "");
                next.push(entry, None);
                if next.prompt == CONTINUATION_PROMPT {
                    next.cancelling += 1;
                    next.prompt = prompt_for(&next.host);
                }
            }
            Action::Interrupt { at_ms } => {
                next.queue.clear();
                if let Some(running) = &next.running {
                    next.stopping = Some(running.id);
                } else if let (Some(at), Some((id, entry))) = (next.revealing, next.last_run) {
                    if at == entry {
                        next.revealing = None;
                        next.interrupting = Some((id, at_ms));
                    }
                }
            }
            Action::Revealed => {
                next.revealing = None;
                next.next_line();
            }
            Action::ClearScreen => {
                let now = next.state.transcript.len();
                match next.shell {
                    0 => next.state.screen_from = now,
                    shell => {
                        next.screens.retain(|(of, _)| *of != shell);
                        next.screens.push((shell, now));
                    }
                }
            }
            // Tabs change between lines, never while one runs.
            Action::SwitchShell(_) | Action::NewShell | Action::CloseShell(_) if next.busy() || !next.queue.is_empty() => return self,
            Action::SwitchShell(id) => {
                if next.shells.iter().any(|view| view.id == id) {
                    next.use_shell(id);
                }
            }
            Action::NewShell => {
                if next.shells.len() < MAX_SHELLS {
                    let id = next.shells.iter().map(|view| view.id.saturating_add(1)).max().unwrap_or(0);
                    let host = next.lab.lab.first_host().to_string();
                    next.shells.push(ShellView { id, env: clusterlab_engine::shell::login_env(&host), host, continuing: false, history: Vec::new() });
                    next.use_shell(id);
                }
            }
            Action::CloseShell(id) => {
                if next.shells.len() > 1 {
                    next.shells.retain(|view| view.id != id);
                    next.unseen.retain(|shell| *shell != id);
                    next.closing = (next.closing.0 + 1, id);
                    if next.shell == id {
                        next.use_shell(next.shells[0].id);
                    }
                }
            }
            Action::Answer { question, response, now_ms } => {
                if let Some(q) = next.variant.clone().questions.iter().find(|q| q.id == question) {
                    // A check waits for the line that runs: its output may
                    // still be revealing, and Ctrl-C could undo what it did.
                    let checked = matches!(q.kind, QuestionKind::Task { .. } | QuestionKind::State { .. } | QuestionKind::Handoff { .. });
                    if checked && (next.busy() || next.engine != EngineStatus::Ready) {
                        next.unclear = Some((q.id.clone(), "The terminal is still busy: check once the command line has finished.".to_string()));
                        return Rc::new(next);
                    }
                    // The engine decides: what ran, the cluster's facts as
                    // the worker last reported them, how it reads the answer.
                    let met = next.met.clone();
                    next.unclear = None;
                    match next.state.submit(q, &response, Evidence { met: &met, now_ms }) {
                        Submitted::Graded(_) | Submitted::Held => {}
                        Submitted::Unclear(why) => next.unclear = Some((q.id.clone(), why)),
                        Submitted::Closed(why) => next.notices.push(why),
                    }
                }
            }
            Action::SubmitExam { now_ms, at_limit } => {
                // Decided on the cluster as the engine last reported it: not
                // while a line runs or before the engine has opened the lab.
                if next.busy() || next.engine != EngineStatus::Ready {
                    next.notices.push("The exam is submitted once the command line running has finished.".to_string());
                    return Rc::new(next);
                }
                let met = next.met.clone();
                let questions = next.variant.questions.clone();
                next.state.submit_exam(&questions, Evidence { met: &met, now_ms }, now_ms, at_limit);
            }
            Action::ShowHint { question } => next.state.show_hint(&question),
            // An exam is taken once: it never starts over.
            Action::Restart { .. } if next.state.exam.is_some() => return self,
            Action::Restart { seed } => {
                let host = next.lab.lab.first_host().to_string();
                let state = LabState::new(&next.lab.lab, &next.lab.entry.digest, seed, SessionJson::initial(&host));
                next.replace_session(state);
            }
            Action::Notice(text) => {
                if !next.notices.contains(&text) {
                    next.notices.push(text);
                }
            }
            Action::Dismiss(at) => {
                if at < next.notices.len() {
                    next.notices.remove(at);
                }
            }
            Action::HeldElsewhere => next.access = Access::HeldElsewhere,
            Action::TakeOver => next.access = Access::TakingOver,
            Action::TookOver(state) => {
                next.access = Access::Owner;
                if let Some(state) = state {
                    next.replace_session(state);
                } else {
                    next.session_epoch += 1;
                    next.engine = EngineStatus::Starting;
                }
            }
            Action::LetGo => {
                next.access = Access::HeldElsewhere;
                next.queue.clear();
            }
            Action::Follow(state) => {
                if !next.owner() {
                    next.replace_session(state);
                }
            }
        }
        Rc::new(next)
    }
}

/// The reducer, action by action, driven by the engine's own service as the
/// worker runs it (natively: the page's store is plain data).
#[cfg(all(test, feature = "authoring"))]
mod tests {
    use clusterlab_engine::lab::catalog::Entry as CatalogEntry;
    use clusterlab_engine::service::{Request, Service};

    use super::*;
    use crate::fetch::Keep;

    const LAB: &str = include_str!("../labs/first-look.toml");

    /// The store and the engine behind it: `settle` answers what the store
    /// asks (open the session, run a line) as the worker would.
    struct Page {
        store: Rc<LabStore>,
        service: Service,
        opened_epoch: u64,
        sent: Option<u64>,
    }

    impl Page {
        fn new() -> Page {
            let lab = clusterlab_engine::load(LAB).expect("the lab loads");
            let data = lab.to_json();
            let entry = CatalogEntry::new(&lab, &data);
            let state = LabState::new(&lab, &entry.digest, 1, SessionJson::initial(lab.first_host()));
            let loaded = LoadedLab { lab: Rc::new(lab), data: data.into(), entry, keep: Keep::Saved, exam: None };
            let mut page = Page { store: Rc::new(LabStore::new(loaded, state, None)), service: Service::new(), opened_epoch: 0, sent: None };
            page.settle();
            page
        }

        fn act(&mut self, action: Action) {
            self.store = self.store.clone().reduce(action);
        }

        fn reply(&mut self, request: Request) {
            let reply = self.service.handle(request);
            self.act(Action::Engine(EngineEvent::Reply(reply)));
        }

        /// Opens the session when it was replaced, runs the line waiting,
        /// and shows a revealed line whole: until the store asks nothing.
        fn settle(&mut self) {
            loop {
                if self.store.session_epoch != self.opened_epoch {
                    self.opened_epoch = self.store.session_epoch;
                    let store = &self.store;
                    let request = Request::Open { lab: store.lab.data.to_string(), seed: store.state.seed, session: Some((*store.state.session).clone()) };
                    self.reply(request);
                } else if let Some(running) = self.store.running.clone().filter(|running| self.sent != Some(running.id)) {
                    self.sent = Some(running.id);
                    self.reply(Request::Run { id: running.id, line: running.line, shell: running.shell });
                } else if self.store.revealing.is_some() {
                    self.act(Action::Revealed);
                } else {
                    return;
                }
            }
        }

        fn run(&mut self, line: &str) {
            self.act(Action::Submit(line.to_string()));
            self.settle();
        }

        fn last(&self) -> &Entry {
            self.store.state.transcript.last().expect("an entry")
        }
    }

    #[test]
    fn a_line_runs_once_the_engine_is_ready_and_lines_typed_meanwhile_wait() {
        let mut page = Page::new();
        assert_eq!(page.store.engine, EngineStatus::Ready);
        page.act(Action::Submit("hostname".into()));
        page.act(Action::Submit("ssh gpu-002".into()));
        assert_eq!(page.store.running.as_ref().map(|r| r.line.as_str()), Some("hostname"));
        assert_eq!(page.store.queue.len(), 1, "the second line waits");
        page.settle();
        let lines: Vec<&str> = page.store.state.transcript.iter().map(|entry| entry.line.as_str()).collect();
        assert_eq!(lines, ["hostname", "ssh gpu-002"]);
        assert_eq!((page.store.host.as_str(), page.store.prompt.as_str()), ("gpu-002", "user@gpu-002:~$ "));
        // An empty line is a new prompt; it asks the engine nothing.
        page.act(Action::Submit(String::new()));
        assert!(page.store.running.is_none() && page.last().line.is_empty());
    }

    #[test]
    fn ctrl_c_at_the_prompt_and_while_a_line_runs() {
        let mut page = Page::new();
        page.act(Action::Cancel("half typed".into()));
        assert_eq!((page.last().line.as_str(), page.last().stopped), ("half typed", Some(Stop::Cancelled)));
        // Stopped before the engine answered: the line is recorded as
        // interrupted and the session opened again as before it.
        page.act(Action::Submit("sleep 30".into()));
        let id = page.store.running.as_ref().map(|r| r.id).expect("running");
        page.act(Action::Interrupt { at_ms: 0 });
        assert_eq!(page.store.stopping, Some(id));
        let epoch = page.store.session_epoch;
        page.act(Action::Engine(EngineEvent::Stopped { id, by_user: true }));
        assert_eq!((page.last().line.as_str(), page.last().stopped), ("sleep 30", Some(Stop::Interrupted)));
        assert_eq!((page.store.engine.clone(), page.store.session_epoch), (EngineStatus::Starting, epoch + 1));
        page.settle();
        assert_eq!(page.store.engine, EngineStatus::Ready);
        // A runaway line says so.
        page.act(Action::Submit("true".into()));
        let id = page.store.running.as_ref().map(|r| r.id).expect("running");
        page.act(Action::Engine(EngineEvent::Stopped { id, by_user: false }));
        assert!(page.last().text().contains("computed for more than"), "{}", page.last().text());
    }

    #[test]
    fn a_long_line_is_revealed_and_the_next_waits_for_it() {
        let mut page = Page::new();
        page.act(Action::Submit("sleep 5; echo done".into()));
        page.act(Action::Submit("hostname".into()));
        let id = page.store.running.as_ref().map(|r| r.id).expect("running");
        page.sent = Some(id);
        page.reply(Request::Run { id, line: "sleep 5; echo done".into(), shell: 0 });
        assert!(page.store.revealing.is_some() && page.store.busy(), "five simulated seconds are revealed over time");
        assert!(page.store.running.is_none(), "the next line waits for the reveal");
        page.act(Action::Revealed);
        assert_eq!(page.store.running.as_ref().map(|r| r.line.as_str()), Some("hostname"));
    }

    #[test]
    fn the_screen_clears_and_shells_open_switch_and_close_between_lines() {
        let mut page = Page::new();
        page.run("hostname");
        page.act(Action::ClearScreen);
        assert_eq!(page.store.screen_start(), 1);
        page.act(Action::NewShell);
        assert_eq!((page.store.shell, page.store.shells.len()), (1, 2));
        page.run("ssh gpu-002");
        assert_eq!(page.store.screen_start(), 0, "each shell has its own screen");
        page.act(Action::SwitchShell(0));
        assert_eq!(page.store.host, "gpu-001");
        // Not while a line runs.
        page.act(Action::Submit("hostname".into()));
        page.act(Action::SwitchShell(1));
        assert_eq!(page.store.shell, 0);
        page.settle();
        page.act(Action::CloseShell(1));
        assert_eq!((page.store.shells.len(), page.store.closing), (1, (1, 1)));
        page.act(Action::CloseShell(0));
        assert_eq!(page.store.shells.len(), 1, "the last shell stays");
    }

    #[test]
    fn answers_hints_and_checks_are_decided_by_the_engine() {
        let mut page = Page::new();
        let driver = page.store.variant.questions.iter().find(|q| q.id == "driver").cloned().expect("a driver question");
        page.act(Action::ShowHint { question: "driver".into() });
        assert_eq!(page.store.state.hints_shown.get("driver"), Some(&1));
        page.act(Action::Answer { question: "driver".into(), response: driver.reference_answer(), now_ms: 0 });
        assert!(page.store.grade("driver").is_some_and(|grade| grade.correct));
        // A check while a line runs uses no attempt and says why.
        if let Some(check) = page.store.variant.questions.iter().find(|q| matches!(q.kind, QuestionKind::Task { .. } | QuestionKind::State { .. })).cloned() {
            page.act(Action::Submit("sleep 1".into()));
            page.act(Action::Answer { question: check.id.clone(), response: String::new(), now_ms: 0 });
            assert!(page.store.unclear.as_ref().is_some_and(|(id, why)| *id == check.id && why.contains("still busy")));
            assert!(!page.store.state.answers.contains_key(&check.id));
            page.settle();
        }
    }

    #[test]
    fn an_exam_is_submitted_between_lines_and_never_restarts() {
        let mut page = Page::new();
        let mut state = page.store.state.clone();
        state.start_exam(1_000, 10);
        page.act(Action::TookOver(Some(state)));
        page.settle();
        page.act(Action::Submit("sleep 1".into()));
        page.act(Action::SubmitExam { now_ms: 2_000, at_limit: false });
        assert!(page.store.state.exam_running(), "not while a line runs");
        assert!(page.store.notices.iter().any(|n| n.contains("once the command line running has finished")));
        page.settle();
        page.act(Action::SubmitExam { now_ms: 3_000, at_limit: true });
        assert!(page.store.state.exam.as_ref().is_some_and(|exam| exam.submitted.is_some_and(|s| s.at_limit)));
        let seed = page.store.state.seed;
        page.act(Action::Restart { seed: seed + 1 });
        assert_eq!(page.store.state.seed, seed, "an exam is taken once");
    }

    #[test]
    fn restart_notices_and_the_metrics_panel() {
        let mut page = Page::new();
        page.run("hostname");
        let epoch = page.store.session_epoch;
        page.act(Action::Restart { seed: 7 });
        assert_eq!((page.store.state.seed, page.store.state.transcript.len(), page.store.session_epoch), (7, 0, epoch + 1));
        page.act(Action::Notice("a".into()));
        page.act(Action::Notice("a".into()));
        page.act(Action::Notice("b".into()));
        assert_eq!(page.store.notices, ["a", "b"], "a notice shows once");
        page.act(Action::Dismiss(0));
        page.act(Action::Dismiss(9));
        assert_eq!(page.store.notices, ["b"]);
        page.act(Action::ShowMetrics(true));
        assert!(page.store.metrics_shown && page.store.metrics_asked == 1);
        page.act(Action::ShowMetrics(false));
        assert!(!page.store.metrics_shown);
    }

    #[test]
    fn another_tab_holds_takes_over_and_lets_go() {
        let mut page = Page::new();
        page.act(Action::HeldElsewhere);
        page.act(Action::Submit("hostname".into()));
        page.act(Action::Answer { question: "driver".into(), response: "x".into(), now_ms: 0 });
        assert!(page.store.queue.is_empty() && page.store.state.answers.is_empty(), "a read-only tab changes nothing");
        // What the other tab saved is followed.
        let mut followed = page.store.state.clone();
        followed.hints_shown.insert("driver".into(), 1);
        page.act(Action::Follow(followed));
        assert_eq!(page.store.state.hints_shown.get("driver"), Some(&1));
        page.act(Action::TakeOver);
        assert_eq!(page.store.access, Access::TakingOver);
        page.act(Action::TookOver(None));
        assert!(page.store.owner() && page.store.engine == EngineStatus::Starting);
        page.settle();
        page.act(Action::Submit("sleep 1".into()));
        page.act(Action::Submit("hostname".into()));
        page.act(Action::LetGo);
        assert!(page.store.queue.is_empty() && page.store.access == Access::HeldElsewhere);
        // Following is for read-only tabs only.
        let before = page.store.state.seed;
        page.act(Action::TookOver(None));
        page.act(Action::Follow(LabState { seed: before + 1, ..page.store.state.clone() }));
        assert_eq!(page.store.state.seed, before);
    }

    #[test]
    fn a_failed_or_crashed_engine_is_said() {
        let mut page = Page::new();
        page.act(Action::Engine(EngineEvent::Reply(Reply::Failed { message: "no such lab".into() })));
        assert!(matches!(page.store.engine, EngineStatus::Failed(_)));
        assert!(page.store.notices.iter().any(|n| n.contains("could not start this lab: no such lab")));
        let mut page = Page::new();
        page.act(Action::Submit("hostname".into()));
        let id = page.store.running.as_ref().map(|r| r.id);
        page.act(Action::Engine(EngineEvent::Crashed { running: id, message: "unreachable".into() }));
        assert_eq!(page.last().stopped, Some(Stop::Failed));
        assert!(page.last().text().contains("the simulator failed on this command line (unreachable)"));
        page.act(Action::Engine(EngineEvent::Crashed { running: None, message: "again".into() }));
        assert!(page.store.notices.iter().any(|n| n.contains("The simulator failed (again) and was restarted.")));
    }
}
