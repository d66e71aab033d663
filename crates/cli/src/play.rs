//! `clusterlab play`: a lab rehearsed in a terminal. Each line runs through
//! the same `Session` as `run` and the web app's worker (prompt, bash's `> `
//! continuation, history expansion, jobs, `ssh`); `questions`, `answer`,
//! `hint` and `score` are taken first, at the shell's own prompt (never in
//! a `> ` continuation), and graded by the engine's `LabState`.

use std::cell::RefCell;
use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::rc::Rc;

use clusterlab_engine::lab::catalog::Entry;
use clusterlab_engine::limits::MAX_LINE_BYTES;
use clusterlab_engine::shell::{SessionJson, Stream};
use clusterlab_engine::store::{self, LabState};
use clusterlab_engine::{Lab, Session, Transcript};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, Editor, Helper};

use crate::doc_text::{render, safe};
use crate::questions::{Questions, Said, WORDS};

/// How many lines the line editor remembers (and keeps in a history file).
const HISTORY_LINES: usize = 1000;

/// A play session: the shell and the questions.
pub struct Play {
    lab: Lab,
    session: Rc<RefCell<Session>>,
    questions: Questions,
    /// Whether what was printed last ended a line, so the prompt starts one.
    at_line_start: bool,
}

/// What to do after a line.
#[derive(PartialEq, Eq)]
enum Step {
    Continue,
    End,
}

impl Play {
    pub fn new(lab: Lab, seed: u64, host: &str, exam: bool) -> Play {
        let mut session = Session::new(lab.instantiate(seed), host);
        session.observe(Rc::new(lab.watch(seed)));
        let digest = Entry::new(&lab, &lab.to_json()).digest;
        let mut state = LabState::new(&lab, &digest, seed, SessionJson::initial(host));
        if exam {
            state.start_exam(now_ms(), lab.exam_minutes.or(lab.minutes).unwrap_or(30));
        }
        let questions = Questions { variant: lab.variant(seed), state };
        Play { lab, session: Rc::new(RefCell::new(session)), questions, at_line_start: true }
    }

    /// The title, the simulation notice, the briefing and the play words.
    fn banner(&self) -> String {
        let lab = &self.lab;
        let mut out = format!("{}\n", safe(&lab.title));
        out += "This lab is a simulation: nothing you type runs on a real cluster.\n\n";
        if !self.questions.variant.briefing.is_empty() {
            out += &render(&self.questions.variant.briefing, "");
            out += "\n";
        }
        let count = self.questions.variant.questions.len();
        if let Some(exam) = &self.questions.state.exam {
            out += &format!(
                "This is an exam: {} minutes on the wall clock from now, no hints, and no verdicts until you type `submit` (or the time runs out). `answer ID VALUE` keeps one answer a question; a later one replaces it. Task and state questions are decided when you submit, on what you did and the cluster as it is then.\n\n",
                exam.minutes
            );
        }
        out += &format!(
            "{count} question{}: `questions` lists them, `answer ID VALUE` grades one, `hint ID` and `score` help.\n\
             `help` lists the emulated commands; `exit` or Ctrl-D ends.\n\n",
            if count == 1 { "" } else { "s" }
        );
        out
    }

    fn prompt(&self) -> String {
        self.session.borrow().prompt()
    }

    fn at_shell_prompt(&self) -> bool {
        self.prompt() != "> "
    }

    /// Runs one line: a play word, or a shell line.
    fn line(&mut self, line: &str, out: &mut dyn Write, err: &mut dyn Write) -> Step {
        // The exam's time limit submits it, whatever the line was.
        let review = self.questions.time_up(now_ms(), &self.session.borrow());
        if let Some(review) = review {
            self.write(out, &review);
        }
        if line.len() > MAX_LINE_BYTES {
            // The session says so, as bash would.
            let transcript = self.session.borrow_mut().run(line);
            self.print(&transcript, out, err);
            return Step::Continue;
        }
        if self.at_shell_prompt() {
            let said = self.questions.handle(line, &self.session.borrow());
            match said {
                Some(Said::Out(text)) => {
                    self.write(out, &text);
                    return Step::Continue;
                }
                Some(Said::Err(text)) => {
                    self.write(err, &text);
                    return Step::Continue;
                }
                None => {}
            }
        }
        // `exit` at the login shell ends the rehearsal; on another node
        // (after `ssh`) or in a root shell it comes back, as it does in the app.
        let word = line.split_whitespace().next();
        let leaves = self.at_shell_prompt() && matches!(word, Some("exit" | "logout")) && {
            let interactive = self.session.borrow().snapshot().interactive;
            interactive.ssh_stack.is_empty() && interactive.root_shells.is_empty()
        };
        let (host, prompt, at) = {
            let session = self.session.borrow();
            (session.host().to_string(), session.prompt(), session.now())
        };
        let transcript = self.session.borrow_mut().run(line);
        self.print(&transcript, out, err);
        // Kept as the app keeps it, so that task questions see what ran.
        let snapshot = SessionJson::of(&self.session.borrow().snapshot());
        self.questions.state.record(store::Entry::new(&host, &prompt, line, at, transcript), snapshot);
        if leaves {
            Step::End
        } else {
            Step::Continue
        }
    }

    /// Ctrl-D: ends an incomplete command with bash's error, or the session.
    fn end_of_input(&mut self, out: &mut dyn Write, err: &mut dyn Write) -> Step {
        let ended = self.session.borrow_mut().end_of_input();
        match ended {
            Some(transcript) => {
                self.print(&transcript, out, err);
                Step::Continue
            }
            None => Step::End,
        }
    }

    /// A line's output; paged output prints as plain text.
    fn print(&mut self, transcript: &Transcript, out: &mut dyn Write, err: &mut dyn Write) {
        for (stream, text) in &transcript.chunks {
            match stream {
                Stream::Stdout | Stream::Pager(_) => self.write(out, text),
                Stream::Stderr => self.write(err, text),
            }
        }
    }

    fn write(&mut self, to: &mut dyn Write, text: &str) {
        if text.is_empty() {
            return;
        }
        // A closed pipe is not worth reporting; the next line will say so.
        let _ = to.write_all(text.as_bytes());
        let _ = to.flush();
        self.at_line_start = text.ends_with('\n');
    }

    fn status(&self) -> ExitCode {
        ExitCode::from(self.session.borrow().last_status().clamp(0, 255) as u8)
    }
}

/// The wall clock, in milliseconds since the epoch (an exam's time limit).
fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Runs the session: with the line editor on a terminal, else line by line.
pub fn play(lab: Lab, seed: u64, host: &str, history: Option<&Path>, exam: bool) -> ExitCode {
    let mut play = Play::new(lab, seed, host, exam);
    if std::io::stdin().is_terminal() {
        match interactive(&mut play, history) {
            Ok(()) => play.status(),
            Err(error) => {
                eprintln!("clusterlab: play: {error}");
                ExitCode::FAILURE
            }
        }
    } else {
        scripted(&mut play);
        play.status()
    }
}

fn interactive(play: &mut Play, history: Option<&Path>) -> rustyline::Result<()> {
    let config =
        Config::builder().max_history_size(HISTORY_LINES)?.history_ignore_space(true).auto_add_history(false).completion_type(CompletionType::List).build();
    let mut editor: Editor<Completion, DefaultHistory> = Editor::with_config(config)?;
    editor.set_helper(Some(Completion { session: Rc::clone(&play.session), ids: play.questions.variant.questions.iter().map(|q| q.id.clone()).collect() }));
    if let Some(path) = history {
        // A file not there yet is the first session's.
        if path.exists() {
            editor.load_history(path)?;
        }
    }
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let banner = play.banner();
    play.write(&mut out, &banner);
    loop {
        if !play.at_line_start {
            play.write(&mut out, "\n");
        }
        let step = match editor.readline(&play.prompt()) {
            Ok(text) => {
                // A paste of several lines runs them in turn, as typed.
                let mut step = Step::Continue;
                for line in text.split('\n') {
                    if !line.trim().is_empty() {
                        editor.add_history_entry(line)?;
                    }
                    step = play.line(line, &mut out, &mut err);
                    if step == Step::End {
                        break;
                    }
                }
                step
            }
            // Ctrl-C: the line is dropped, and an incomplete command with it.
            Err(ReadlineError::Interrupted) => {
                play.session.borrow_mut().cancel_pending();
                Step::Continue
            }
            Err(ReadlineError::Eof) => play.end_of_input(&mut out, &mut err),
            // Bytes that are not UTF-8 end the line being typed, not the session.
            Err(ReadlineError::Io(error)) if error.kind() == std::io::ErrorKind::InvalidData => {
                play.write(&mut err, "clusterlab: play: the line had bytes that are not UTF-8; it was dropped\n");
                Step::Continue
            }
            Err(ReadlineError::Signal(_)) => Step::Continue,
            Err(error) => return Err(error),
        };
        if step == Step::End {
            break;
        }
    }
    if let Some(path) = history {
        editor.save_history(path)?;
    }
    Ok(())
}

/// Standard input that is not a terminal: each line runs in turn, with no
/// prompt, until the input ends (or `exit`). A line longer than the shell
/// reads is refused without being held whole in memory.
fn scripted(play: &mut Play) {
    let mut input = std::io::stdin().lock();
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    loop {
        let mut bytes = Vec::new();
        let read = input.by_ref().take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut bytes);
        let step = match read {
            Ok(0) | Err(_) => {
                play.end_of_input(&mut out, &mut err);
                break;
            }
            Ok(_) if bytes.len() > MAX_LINE_BYTES && !bytes.ends_with(b"\n") => {
                let skipped = skip_line(&mut input);
                let length = bytes.len() as u64 + skipped;
                play.write(&mut err, &format!("-bash: line too long: {length} bytes (this simulation reads at most {MAX_LINE_BYTES})\n"));
                Step::Continue
            }
            Ok(_) => {
                let text = String::from_utf8_lossy(&bytes);
                let line = text.strip_suffix('\n').unwrap_or(&text);
                play.line(line.strip_suffix('\r').unwrap_or(line), &mut out, &mut err)
            }
        };
        if step == Step::End {
            break;
        }
    }
}

/// Reads up to the end of the line, keeping nothing; how many bytes came
/// before it.
fn skip_line(input: &mut impl BufRead) -> u64 {
    let mut skipped = 0u64;
    loop {
        let consumed = match input.fill_buf() {
            Ok([]) | Err(_) => return skipped,
            Ok(buffer) => match buffer.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    input.consume(at + 1);
                    return skipped + at as u64;
                }
                None => buffer.len(),
            },
        };
        input.consume(consumed);
        skipped += consumed as u64;
    }
}

/// Tab completion from the session (commands, flags, GPUs, HCAs, hosts)
/// and, for the play words, question ids.
struct Completion {
    session: Rc<RefCell<Session>>,
    ids: Vec<String>,
}

impl Completer for Completion {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let Some(before) = line.get(..pos) else { return Ok((pos, Vec::new())) };
        // The word under the cursor, as the session reads it.
        let command = before.rsplit(['|', ';', '&']).next().unwrap_or(before);
        let blank = command.char_indices().rfind(|(_, c)| c.is_whitespace());
        let start = pos - command.len() + blank.map_or(0, |(at, c)| at + c.len_utf8());
        let word = &before[start..];
        let words: Vec<&str> = before.split_whitespace().collect();
        let session = self.session.borrow();
        let play_word = session.prompt() != "> " && !before.contains(['|', ';', '&']);
        let mut candidates = match words.as_slice() {
            [] | [_] if play_word && !before.ends_with(char::is_whitespace) => WORDS.iter().filter(|w| w.starts_with(word)).map(|w| w.to_string()).collect(),
            [first, ..] if play_word && matches!(*first, "answer" | "hint") && (words.len() == 1 || (words.len() == 2 && !word.is_empty())) => {
                let mut ids: Vec<String> = self.ids.iter().filter(|id| id.starts_with(word)).cloned().collect();
                if let [only] = ids.as_mut_slice() {
                    only.push(' ');
                }
                return Ok((start, ids));
            }
            _ => Vec::new(),
        };
        candidates.extend(session.complete(before));
        candidates.sort();
        candidates.dedup();
        // One candidate is the word: a blank follows it, as in bash.
        if let [only] = candidates.as_mut_slice() {
            only.push(' ');
        }
        Ok((start, candidates))
    }
}

impl Hinter for Completion {
    type Hint = String;
}

impl Highlighter for Completion {}

impl Validator for Completion {}

impl Helper for Completion {}
