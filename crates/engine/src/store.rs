//! The lab-level store: everything one trainee has done in one lab. The
//! session (cluster state and shell, as a snapshot's [`SessionJson`]), the
//! transcript with simulated timestamps, the answers and the hints seen.
//! The app keeps one per lab and every view reads it; `clusterlab play`
//! keeps one too. It is saved as a versioned snapshot ([`LabState::save`]),
//! never rebuilt by running commands again.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::commands::execution::Execution;
use crate::facts::clock_span;
use crate::grading::{self, Grade, HandoffRecord, Reading};
use crate::lab::{Lab, Question, QuestionKind};
use crate::model::time::EpochSeconds;
use crate::shell::{SessionJson, Stream, Transcript};

/// The version of the saved form [`LabState::save`] writes.
pub const STATE_VERSION: u32 = 2;

/// The first line of the saved form version 1 (answers, hints and typed
/// lines, rebuilt by replaying them), which [`LabState::load`] migrates.
const V1_HEADER: &str = "clusterlab-progress 1";

/// How one command line ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stop {
    /// Ctrl-C while it ran.
    Interrupted,
    /// Ctrl-C at the prompt: the line was given up, not run.
    Cancelled,
    /// It computed too long in real time, and the app stopped it.
    Runaway,
    /// The simulator failed on it (and was restarted).
    Failed,
}

/// One command line in the transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub host: String,
    pub prompt: String,
    pub line: String,
    /// When the line started on the lab's clock (UTC seconds).
    pub started_at: EpochSeconds,
    pub duration_ms: u64,
    pub status: i32,
    pub output: Vec<(Stream, String)>,
    /// When the output was printed: (simulated milliseconds into the line,
    /// bytes so far), as [`Transcript::timeline`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<(u64, usize)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stop>,
    /// Bytes of output left out when this entry was saved.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trimmed: usize,
    /// Lines of output left out when this entry was saved, so that a
    /// restored screen counts the lines it does not show as the live one did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trimmed_lines: usize,
    /// The shell (terminal tab) the line ran in.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shell: usize,
    /// The programs the line ran, in the order they started: what `task`
    /// questions are judged on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executions: Vec<Execution>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Entry {
    pub fn new(host: &str, prompt: &str, line: &str, started_at: EpochSeconds, transcript: Transcript) -> Entry {
        Entry {
            host: host.to_string(),
            prompt: prompt.to_string(),
            line: line.to_string(),
            started_at,
            duration_ms: transcript.duration_ms,
            status: transcript.status,
            output: transcript.chunks,
            timeline: transcript.timeline,
            stopped: None,
            trimmed: 0,
            trimmed_lines: 0,
            shell: 0,
            executions: transcript.executions,
        }
    }

    /// Text a shell printed with no command line of its own: a server's
    /// results, printed when a client in another shell ended it.
    pub fn printed(shell: usize, host: &str, at: EpochSeconds, text: String) -> Entry {
        let mut entry = Entry::new(host, "", "", at, Transcript::default());
        entry.output = vec![(Stream::Stdout, text)];
        entry.shell = shell;
        entry
    }

    /// Whether this is [`Entry::printed`] text, not a command line.
    pub fn is_printed(&self) -> bool {
        self.prompt.is_empty() && self.line.is_empty()
    }

    /// A line that never ran to its end in the engine: given up at the
    /// prompt, stopped while it computed, or lost with a failed simulator.
    pub fn not_run(host: &str, prompt: &str, line: &str, started_at: EpochSeconds, stop: Stop, message: &str) -> Entry {
        let output = if message.is_empty() { Vec::new() } else { vec![(Stream::Stderr, message.to_string())] };
        let status = match stop {
            Stop::Cancelled | Stop::Interrupted => 130,
            Stop::Runaway => 124,
            Stop::Failed => 134,
        };
        Entry {
            host: host.to_string(),
            prompt: prompt.to_string(),
            line: line.to_string(),
            started_at,
            duration_ms: 0,
            status,
            timeline: Vec::new(),
            output,
            stopped: Some(stop),
            trimmed: 0,
            trimmed_lines: 0,
            shell: 0,
            executions: Vec::new(),
        }
    }

    /// Every byte of output, as the terminal showed it.
    pub fn text(&self) -> String {
        self.output.iter().map(|(_, text)| text.as_str()).collect()
    }

    /// Lines of output it printed, those left out of a saved record included.
    pub fn line_count(&self) -> usize {
        self.output.iter().map(|(_, text)| text.bytes().filter(|b| *b == b'\n').count()).sum::<usize>() + self.trimmed_lines
    }

    fn output_len(&self) -> usize {
        self.output.iter().map(|(_, text)| text.len()).sum()
    }

    /// Keeps the first `keep` bytes of output (whole lines), counting the rest.
    fn trim_output(&mut self, keep: usize) {
        let total = self.output_len();
        if total <= keep {
            return;
        }
        let lines = self.line_count();
        let mut room = keep;
        let mut kept = Vec::new();
        for (stream, text) in self.output.drain(..) {
            if room == 0 {
                break;
            }
            let mut cut = text.len().min(room);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let piece = &text[..cut];
            let piece = if cut < text.len() { piece.rfind('\n').map_or("", |end| &piece[..=end]) } else { piece };
            room -= piece.len().min(room);
            if !piece.is_empty() {
                kept.push((stream, piece.to_string()));
            }
            if piece.len() < text.len() {
                break;
            }
        }
        self.output = kept;
        let len = self.output_len();
        self.trimmed += total - len;
        self.trimmed_lines = lines - (self.line_count() - self.trimmed_lines);
        for mark in &mut self.timeline {
            mark.1 = mark.1.min(len);
        }
    }
}

/// A trainee's answer to one question.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub response: String,
    pub attempts: u32,
    /// What the engine saw when it checked (a task's runs that did not
    /// count), for the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What became of a submitted answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Submitted {
    /// Recorded and graded.
    Graded(Grade),
    /// Not clear enough to grade: nothing was recorded, no attempt used.
    Unclear(String),
    /// An exam's answer, kept without a verdict until the exam is submitted.
    Held,
    /// The question takes no more answers: why.
    Closed(String),
}

/// What the engine's worker last reported of the cluster: the ids of the
/// lab's state questions (and closed handoffs) whose facts hold; and the
/// wall clock (milliseconds since the epoch; 0 when not known), against
/// which an exam's time limit holds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Evidence<'a> {
    pub met: &'a [String],
    pub now_ms: i64,
}

/// Everything one trainee has done in one lab. Cloning it is cheap (the
/// session and each entry are shared), as a store that is copied on every
/// change needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    /// The lab's id and the digest of the lab data the state was made with.
    pub lab: String,
    pub digest: String,
    /// The trainee's variant.
    pub seed: u64,
    pub session: Rc<SessionJson>,
    pub transcript: Vec<Rc<Entry>>,
    pub answers: BTreeMap<String, Answer>,
    pub hints_shown: BTreeMap<String, u32>,
    /// The terminal shows the transcript from this entry on (after Ctrl-L).
    pub screen_from: usize,
    /// Taken as an exam: no hints, no verdicts until it is submitted, one
    /// answer a question, a time limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exam: Option<Exam>,
}

/// An exam's clock and its submission. Times are wall-clock milliseconds
/// since the epoch, as the browser (or the CLI) reads them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exam {
    pub started_ms: i64,
    pub minutes: u32,
    /// When it was submitted, and whether the time limit submitted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitted: Option<Submission>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    pub at_ms: i64,
    pub at_limit: bool,
}

impl Exam {
    /// When the time is up.
    pub fn ends_ms(&self) -> i64 {
        self.started_ms.saturating_add(i64::from(self.minutes) * 60_000)
    }

    /// Milliseconds left at `now_ms` (none once it is over).
    pub fn left_ms(&self, now_ms: i64) -> i64 {
        (self.ends_ms() - now_ms).max(0)
    }
}

/// The variant an exam takes for a learner: drawn from who they are, so
/// that the same learner gets the same variant and neighbours different
/// ones (1 to 9999, as `#/exam/ID/variant/N` writes it).
pub fn exam_variant(lab: &str, learner: &str) -> u64 {
    1 + crate::rng::Rng::derive(crate::rng::stable_hash(learner.trim().to_ascii_lowercase().as_bytes()), &["exam", lab]).range_u64(0, 9998)
}

/// The saved form: a version, then the state.
#[derive(Serialize, Deserialize)]
struct Saved<S> {
    version: u32,
    state: S,
}

/// What [`LabState::load`] made of saved text.
#[derive(Debug, PartialEq)]
pub enum Loaded {
    /// The saved state, as it was.
    Restored(LabState),
    /// Saved by an older version and carried over; what changed, for a notice.
    Migrated(LabState, String),
    /// Not a state of this lab that this version can read: the reason. The
    /// caller keeps the text aside (it is never silently replaced).
    Unreadable(String),
}

impl LabState {
    /// A lab not yet started, with the session at the lab's initial state.
    pub fn new(lab: &Lab, digest: &str, seed: u64, session: SessionJson) -> LabState {
        LabState {
            lab: lab.id.clone(),
            digest: digest.to_string(),
            seed,
            session: Rc::new(session),
            transcript: Vec::new(),
            answers: BTreeMap::new(),
            hints_shown: BTreeMap::new(),
            screen_from: 0,
            exam: None,
        }
    }

    /// Starts this lab as an exam at `now_ms`, with `minutes` to take it.
    pub fn start_exam(&mut self, now_ms: i64, minutes: u32) {
        self.exam = Some(Exam { started_ms: now_ms, minutes: minutes.max(1), submitted: None });
    }

    /// Whether verdicts, feedback and explanations may be shown: always in
    /// practice, in an exam once it is submitted.
    pub fn reveals(&self) -> bool {
        self.exam.as_ref().is_none_or(|exam| exam.submitted.is_some())
    }

    /// Whether this is an exam still being taken.
    pub fn exam_running(&self) -> bool {
        self.exam.as_ref().is_some_and(|exam| exam.submitted.is_none())
    }

    /// Submits the exam: every task, state and handoff question is decided
    /// on what was done and what the cluster shows now (`evidence`), and no
    /// answer changes after. `at_limit` when the time limit submitted it.
    pub fn submit_exam(&mut self, questions: &[Question], evidence: Evidence, now_ms: i64, at_limit: bool) {
        if !self.exam_running() {
            return;
        }
        for question in questions {
            let decided = matches!(question.kind, QuestionKind::Task { .. } | QuestionKind::State { .. })
                || (matches!(question.kind, QuestionKind::Handoff { .. }) && self.answers.contains_key(&question.id));
            if decided {
                let response = self.answers.get(&question.id).map_or_else(String::new, |a| a.response.clone());
                let (response, note) = self.decide(question, &response, evidence);
                self.answers.insert(question.id.clone(), Answer { response, attempts: 1, note });
            }
        }
        if let Some(exam) = self.exam.as_mut() {
            exam.submitted = Some(Submission { at_ms: now_ms, at_limit });
        }
    }

    /// Records a command line that ran, with the session it left.
    pub fn record(&mut self, entry: Entry, session: SessionJson) {
        self.transcript.push(Rc::new(entry));
        self.session = Rc::new(session);
    }

    /// Whether `question` takes another answer: not locked by a correct
    /// one, attempts left.
    pub fn open(&self, question: &Question) -> bool {
        let saved = self.answers.get(&question.id);
        let grade = saved.map(|answer| question.grade(&answer.response));
        question.open(saved.map_or(0, |answer| answer.attempts), grade.as_ref())
    }

    /// The executions of the lines that ran, in the order they started
    /// (lines given up at the prompt never ran).
    pub fn executions(&self) -> impl Iterator<Item = &Execution> {
        self.transcript.iter().filter(|entry| entry.stopped != Some(Stop::Cancelled)).flat_map(|entry| entry.executions.iter())
    }

    /// Submits an answer: the engine reads it, decides it (a task on what
    /// ran, a state question on `evidence`, a handoff on its facts and what
    /// was done), records it as another attempt and grades it.
    pub fn submit(&mut self, question: &Question, response: &str, evidence: Evidence) -> Submitted {
        if let Some(exam) = &self.exam {
            if exam.submitted.is_some() {
                return Submitted::Closed("The exam is submitted: no answer changes now.".to_string());
            }
            if evidence.now_ms > 0 && evidence.now_ms >= exam.ends_ms() {
                return Submitted::Closed("The exam's time is up: it is being submitted with the answers given before.".to_string());
            }
            // One answer a question, changed at will until the exam is
            // submitted; no verdict until then. Checks are decided at submission.
            let kept = match &question.kind {
                QuestionKind::Task { .. } | QuestionKind::State { .. } => return Submitted::Held,
                QuestionKind::Handoff { .. } => response.to_string(),
                _ => match question.read(response) {
                    Reading::Unclear(why) => return Submitted::Unclear(why),
                    Reading::Read { .. } => response.trim().to_string(),
                },
            };
            self.answers.insert(question.id.clone(), Answer { response: kept, attempts: 1, note: None });
            return Submitted::Held;
        }
        if !self.open(question) {
            let why = if self.grade(question).is_some_and(|g| g.correct) { "it is answered correctly" } else { "no attempts are left" };
            return Submitted::Closed(format!("This question takes no more answers: {why}."));
        }
        if !matches!(question.kind, QuestionKind::Task { .. } | QuestionKind::State { .. } | QuestionKind::Handoff { .. }) {
            if let Reading::Unclear(why) = question.read(response) {
                return Submitted::Unclear(why);
            }
        }
        let (response, note) = self.decide(question, response, evidence);
        // A handoff sent before the incident is closed scores nothing and
        // uses no attempt: it is kept, and may be sent again once closed.
        let premature = matches!(question.kind, QuestionKind::Handoff { .. }) && !HandoffRecord::from_response(&response).closed;
        let saved = self.answers.entry(question.id.clone()).or_default();
        saved.response = response;
        if !premature {
            saved.attempts += 1;
        }
        saved.note = note;
        match self.grade(question) {
            Some(grade) => Submitted::Graded(grade),
            None => Submitted::Closed("This question takes no more answers.".to_string()),
        }
    }

    /// What a state question's "Not yet" says: how many of its conditions
    /// hold, and what the others are about (never which node or GPU), then a
    /// deadline already passed.
    fn conditions_note(id: &str, expect: &[crate::facts::Fact], met: &[String], late: Option<String>) -> String {
        let holds = |at: usize| met.iter().any(|m| *m == crate::lab::evidence::condition_id(id, at));
        let open: Vec<&str> = expect
            .iter()
            .enumerate()
            .filter(|(at, fact)| !holds(*at) && !matches!(fact, crate::facts::Fact::By { .. }))
            .map(|(_, fact)| fact.topic())
            .collect();
        let done = expect.len() - open.len() - usize::from(late.is_some());
        let mut note = format!("Conditions met: {done} of {}.", expect.len());
        if !open.is_empty() {
            note += &format!(" Not yet: {}.", open.join(", "));
        }
        match late {
            Some(late) => format!("{note} {late}"),
            None => note,
        }
    }

    /// What the engine records for `response`: a task's and a state
    /// question's check, a handoff with what was seen at submission, or the
    /// answer as given; and a note of what it saw.
    fn decide(&self, question: &Question, response: &str, evidence: Evidence) -> (String, Option<String>) {
        match &question.kind {
            QuestionKind::Task { run, after } => {
                let reading = crate::lab::evidence::task_done(&question.id, run, after.as_ref(), self.executions());
                let note = (!reading.done && !reading.tried.is_empty())
                    .then(|| format!("your runs of {} that did not count: {}", run.program, reading.tried.join("; ")));
                (if reading.done { grading::DONE } else { grading::NOT_YET }.to_string(), note)
            }
            QuestionKind::State { expect } => {
                let met = evidence.met.contains(&question.id);
                // The one thing a "Not yet" says beyond what ran: a deadline
                // already passed (the trainee's `date` shows the same clock).
                // The session is read for its clock only then.
                let deadline = expect.iter().find_map(|fact| match fact {
                    crate::facts::Fact::By { seconds } => Some(*seconds),
                    _ => None,
                });
                let late = deadline.filter(|_| !met).and_then(|seconds| {
                    let elapsed = (self.session.elapsed_ms() / 1000) as i64;
                    (elapsed > seconds)
                        .then(|| format!("The deadline, {} into the lab, has passed: the clock is {} in.", clock_span(seconds), clock_span(elapsed)))
                });
                let note = if met { None } else { Some(Self::conditions_note(&question.id, expect, evidence.met, late)) };
                (if met { grading::DONE } else { grading::NOT_YET }.to_string(), note)
            }
            QuestionKind::Handoff { closed_when, .. } => {
                let mut record = HandoffRecord::from_response(response);
                record.closed = closed_when.is_empty() || evidence.met.contains(&question.id);
                record.done = crate::lab::evidence::actions_taken(self.executions());
                (record.to_response(), None)
            }
            _ => (response.trim().to_string(), None),
        }
    }

    /// The grade of an answered question, with what its retries and
    /// revealed hints cost.
    pub fn grade(&self, question: &Question) -> Option<Grade> {
        let answer = self.answers.get(&question.id)?;
        let hints = self.hints_shown.get(&question.id).copied().unwrap_or(0);
        let mut grade = question.grade_attempt(&answer.response, answer.attempts, hints);
        if grade.reading.is_none() {
            grade.reading = answer.note.clone();
        }
        Some(grade)
    }

    /// The engine's words for an answered question.
    pub fn verdict(&self, question: &Question) -> Option<grading::Verdict> {
        let answer = self.answers.get(&question.id)?;
        let grade = self.grade(question)?;
        Some(grading::verdict(question, &answer.response, answer.attempts, &grade))
    }

    pub fn show_hint(&mut self, question: &str) {
        // An exam gives no hints.
        if self.exam.is_some() {
            return;
        }
        *self.hints_shown.entry(question.to_string()).or_default() += 1;
    }

    /// The grade of every answered question, in the questions' order.
    pub fn grades(&self, questions: &[Question]) -> Vec<(String, Grade)> {
        questions.iter().filter_map(|q| self.grade(q).map(|grade| (q.id.clone(), grade))).collect()
    }

    /// Points scored.
    pub fn score(&self, questions: &[Question]) -> u32 {
        let grades: Vec<Grade> = self.grades(questions).into_iter().map(|(_, grade)| grade).collect();
        grading::total(&grades).0
    }

    /// The saved form, with transcript output beyond `output_budget` bytes
    /// left out: the newest entries keep theirs whole, older ones keep their
    /// first lines. The typed lines, timestamps and statuses always stay.
    pub fn save(&self, output_budget: usize) -> String {
        let mut state = self.clone();
        let mut room = output_budget;
        for entry in state.transcript.iter_mut().rev() {
            let len = entry.output_len();
            if len <= room {
                room -= len;
            } else {
                let entry = Rc::make_mut(entry);
                entry.trim_output(room.min(OLD_OUTPUT_KEPT));
                room -= entry.output_len().min(room);
            }
        }
        serde_json::to_string(&Saved { version: STATE_VERSION, state }).expect("a lab state always serializes")
    }

    /// Reads saved text for `lab`. Anything but a state of this lab in a
    /// version this code reads is [`Loaded::Unreadable`], never a silent
    /// fresh start.
    pub fn load(text: &str, lab: &Lab, digest: &str, initial: &SessionJson) -> Loaded {
        if text.starts_with(V1_HEADER) {
            return migrate_v1(text, lab, digest, initial);
        }
        #[derive(Deserialize)]
        struct Version {
            version: u32,
        }
        let version = match serde_json::from_str::<Version>(text) {
            Ok(found) => found.version,
            Err(_) => return Loaded::Unreadable("the saved progress is damaged (it is not ClusterLab's saved form)".to_string()),
        };
        if version != STATE_VERSION {
            return Loaded::Unreadable(format!(
                "the saved progress was written by another version of ClusterLab (form {version}; this one reads {STATE_VERSION})"
            ));
        }
        let state = match serde_json::from_str::<Saved<LabState>>(text) {
            Ok(saved) => saved.state,
            Err(error) => return Loaded::Unreadable(format!("the saved progress is damaged ({error})")),
        };
        if state.lab != lab.id {
            return Loaded::Unreadable(format!("the saved progress belongs to another lab (`{}`)", state.lab));
        }
        if state.digest != digest {
            let notice = "This lab was updated since your last visit. Your answers and terminal were kept; \
                          the cluster was rebuilt from the new version with what you changed in it.";
            return Loaded::Migrated(LabState { digest: digest.to_string(), ..state }, notice.to_string());
        }
        Loaded::Restored(state)
    }
}

/// Output kept for an entry past the save budget.
const OLD_OUTPUT_KEPT: usize = 2048;

/// Version 1 kept answers, hints and the typed lines, and rebuilt the
/// terminal by running them all again. The answers and hints carry over;
/// the lines go to the shell's history (Up recalls them) and are not run.
fn migrate_v1(text: &str, lab: &Lab, digest: &str, initial: &SessionJson) -> Loaded {
    fn unescape(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        }
        out
    }
    let mut state = LabState::new(lab, digest, 1, initial.clone());
    let mut typed = Vec::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields.as_slice() {
            ["seed", seed] => state.seed = seed.parse().unwrap_or(1),
            ["answer", question, attempts, response] => {
                let answer = Answer { response: unescape(response), attempts: attempts.parse().unwrap_or(1), note: None };
                state.answers.insert(unescape(question), answer);
            }
            ["hints", question, count] => {
                state.hints_shown.insert(unescape(question), count.parse().unwrap_or(0));
            }
            ["ran", line] => typed.push(unescape(line)),
            _ => {}
        }
    }
    let notice = format!(
        "Your progress was saved by an older version of ClusterLab. Your answers and hints were kept; \
         the terminal starts again from the lab's initial state, and the {} command line{} you typed \
         before are in its history (Up arrow).",
        typed.len(),
        if typed.len() == 1 { "" } else { "s" }
    );
    state.session = Rc::new(state.session.with_history(typed));
    Loaded::Migrated(state, notice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{lab, session};
    use crate::Session;

    fn state_after(lines: &[&str]) -> LabState {
        let lab = lab();
        let mut shell = session();
        let mut state = LabState::new(&lab, "d1", 1, SessionJson::of(&shell.snapshot()));
        for line in lines {
            let (host, prompt, at) = (shell.host().to_string(), shell.prompt(), shell.now());
            let transcript = shell.run(line);
            state.record(Entry::new(&host, &prompt, line, at, transcript), SessionJson::of(&shell.snapshot()));
        }
        state
    }

    #[test]
    fn a_saved_state_restores_exactly() {
        let state = state_after(&["sudo scontrol update nodename=gpu-002 state=drain reason=rail", "ssh gpu-002", "nvidia-smi -L"]);
        let lab = lab();
        let text = state.save(usize::MAX);
        let initial = SessionJson::of(&session().snapshot());
        assert_eq!(LabState::load(&text, &lab, "d1", &initial), Loaded::Restored(state.clone()));
        let restored = Session::restore(lab.instantiate(1), state.session.snapshot().unwrap());
        assert_eq!(restored.prompt(), "user@gpu-002:~$ ");
        assert_eq!(state.transcript[2].line, "nvidia-smi -L");
        assert!(state.transcript[2].started_at >= state.transcript[0].started_at);
    }

    #[test]
    fn saving_keeps_the_newest_output_whole_within_the_budget() {
        let state = state_after(&["nvidia-smi -q", "nvidia-smi -q", "hostname"]);
        let whole: usize = state.transcript.iter().map(|entry| entry.output_len()).sum();
        let budget = state.transcript[1].output_len() + 100;
        let text = state.save(budget);
        let Loaded::Restored(saved) = LabState::load(&text, &lab(), "d1", &SessionJson::of(&session().snapshot())) else { panic!() };
        assert_eq!(saved.transcript[2], state.transcript[2]);
        assert_eq!(saved.transcript[1], state.transcript[1]);
        assert!(saved.transcript[0].output_len() <= OLD_OUTPUT_KEPT);
        assert!(saved.transcript[0].text().ends_with('\n'));
        assert_eq!(saved.transcript[0].output_len() + saved.transcript[0].trimmed, state.transcript[0].output_len());
        // The lines left out still count: a restored screen says how many it does not show.
        assert_eq!(saved.transcript[0].line_count(), state.transcript[0].line_count());
        assert!(saved.transcript[0].trimmed_lines > 0);
        assert!(text.len() < whole);
    }

    #[test]
    fn nothing_typed_is_lost_after_600_lines() {
        let lines: Vec<String> = (0..600).map(|at| format!("echo {at}")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let state = state_after(&refs);
        let Loaded::Restored(saved) = LabState::load(&state.save(1 << 20), &lab(), "d1", &SessionJson::of(&session().snapshot())) else { panic!() };
        assert_eq!(saved.transcript.len(), 600);
        assert_eq!(saved.session.shells().1[0].history, lines);
        assert!(saved.transcript.iter().zip(&lines).all(|(entry, line)| entry.line == *line && entry.text() == format!("{}\n", &line[5..])));
    }

    #[test]
    fn damaged_foreign_and_other_versions_are_unreadable_never_replaced() {
        let (lab, initial) = (lab(), SessionJson::of(&session().snapshot()));
        for (text, reason) in
            [("{not json", "damaged"), ("{\"version\":9,\"state\":{}}", "another version"), ("{\"version\":2,\"state\":{\"lab\":1}}", "damaged")]
        {
            let Loaded::Unreadable(why) = LabState::load(text, &lab, "d1", &initial) else { panic!("{text}") };
            assert!(why.contains(reason), "{why}");
        }
        let mut other = state_after(&[]);
        other.lab = "other-lab".into();
        assert!(matches!(LabState::load(&other.save(0), &lab, "d1", &initial), Loaded::Unreadable(why) if why.contains("another lab")));
        let updated = LabState::load(&state_after(&[]).save(0), &lab, "d2", &initial);
        assert!(matches!(updated, Loaded::Migrated(state, notice) if state.digest == "d2" && notice.contains("updated")));
    }

    #[test]
    fn version_1_progress_is_migrated_without_running_anything() {
        let text = "clusterlab-progress 1\nseed\t7\nanswer\tq\\t1\t3\ta\\nb\nhints\tq2\t2\nran\tnvidia-smi -L\nran\tawk 'BEGIN{while(1);}'\n";
        let Loaded::Migrated(state, notice) = LabState::load(text, &lab(), "d1", &SessionJson::of(&session().snapshot())) else { panic!() };
        assert_eq!(state.seed, 7);
        assert_eq!(state.answers["q\t1"], Answer { response: "a\nb".into(), attempts: 3, note: None });
        assert_eq!(state.hints_shown["q2"], 2);
        assert_eq!(state.session.shells().1[0].history, ["nvidia-smi -L", "awk 'BEGIN{while(1);}'"]);
        assert!(state.transcript.is_empty());
        assert!(notice.contains("the 2 command lines you typed"), "{notice}");
    }
}
