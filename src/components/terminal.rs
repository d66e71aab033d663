//! The terminal: a prompt, a scrollback and a line editor over an engine
//! [`Session`]. Output is always rendered as text, never as HTML.
//!
//! Keys: Enter runs the line, Up/Down walk the history, Tab completes,
//! Ctrl-C cancels the line, Ctrl-L clears the screen.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use gloo::timers::callback::Interval;

use clusterlab_engine::shell::{Stream, Transcript};
use clusterlab_engine::{Lab, Session};
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// A prompt and what was typed after it.
    Command { prompt: String, text: String },
    Stdout(String),
    Stderr(String),
}

#[derive(Properties)]
pub struct TerminalProps {
    pub lab: Rc<Lab>,
    pub seed: u64,
    /// Lines typed before (e.g. before a reload), replayed to rebuild the state.
    #[prop_or_default]
    pub replay: Vec<String>,
    #[prop_or_default]
    pub on_run: Callback<String>,
}

impl PartialEq for TerminalProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.lab, &other.lab) && self.seed == other.seed && self.on_run == other.on_run
    }
}

/// What a terminal does with the escape sequences tools print: `ESC[2J`
/// clears the screen, and no other sequence is shown.
fn apply_escapes(lines: &mut Vec<Line>, text: &str, stream: Stream) {
    let mut rest = text;
    while let Some(start) = rest.find('\x1b') {
        push_text(lines, &rest[..start], stream);
        let sequence = &rest[start..];
        // CSI: ESC [ parameters final-byte.
        let length = if sequence.as_bytes().get(1) == Some(&b'[') {
            sequence[2..].find(|c: char| c.is_ascii_alphabetic()).map_or(sequence.len(), |end| end + 3)
        } else {
            sequence.len().min(2)
        };
        if &sequence[..length] == "\x1b[2J" {
            lines.clear();
        }
        rest = &sequence[length..];
    }
    push_text(lines, rest, stream);
}

fn push_text(lines: &mut Vec<Line>, text: &str, stream: Stream) {
    if text.is_empty() {
        return;
    }
    let text = text.to_string();
    lines.push(match stream {
        Stream::Stdout => Line::Stdout(text),
        Stream::Stderr => Line::Stderr(text),
    });
}

fn record(lines: &mut Vec<Line>, prompt: String, typed: &str, transcript: &Transcript) {
    lines.push(Line::Command { prompt, text: typed.to_string() });
    for (stream, text) in &transcript.chunks {
        apply_escapes(lines, text, *stream);
    }
}

/// The longest common prefix of the candidates.
fn common_prefix(candidates: &[String]) -> String {
    let Some(first) = candidates.first() else {
        return String::new();
    };
    let mut prefix = first.clone();
    for candidate in &candidates[1..] {
        while !candidate.starts_with(&prefix) {
            prefix.pop();
        }
    }
    prefix
}

/// How many scrollback entries are kept on screen.
const MAX_LINES: usize = 5000;

/// Commands that take at least this long on the lab's clock stream their
/// output, faster than real time, and Ctrl-C interrupts them.
const STREAM_FROM_MS: u64 = 1500;
const TICK_MS: u32 = 40;

/// The scrollback as a reducer, so a streaming timer always appends to the
/// latest screen.
#[derive(Default, PartialEq)]
struct Screen {
    lines: Vec<Line>,
}

enum ScreenAction {
    Replace(Vec<Line>),
    Append(Vec<Line>),
}

impl Reducible for Screen {
    type Action = ScreenAction;

    fn reduce(self: Rc<Self>, action: ScreenAction) -> Rc<Self> {
        let mut lines = match action {
            ScreenAction::Replace(lines) => lines,
            ScreenAction::Append(more) => {
                let mut lines = self.lines.clone();
                lines.extend(more);
                lines
            }
        };
        let excess = lines.len().saturating_sub(MAX_LINES);
        lines.drain(..excess);
        Rc::new(Screen { lines })
    }
}

/// One entry per output line, for revealing a long command's output gradually.
fn split_lines(lines: Vec<Line>) -> VecDeque<Line> {
    let mut out = VecDeque::new();
    for line in lines {
        match line {
            Line::Stdout(text) => out.extend(text.split_inclusive('\n').map(|l| Line::Stdout(l.to_string()))),
            Line::Stderr(text) => out.extend(text.split_inclusive('\n').map(|l| Line::Stderr(l.to_string()))),
            command => out.push_back(command),
        }
    }
    out
}

#[function_component(Terminal)]
pub fn terminal(props: &TerminalProps) -> Html {
    let lab = props.lab.clone();
    let seed = props.seed;
    let replay = props.replay.clone();
    // The session and the scrollback are built once per mount; the parent
    // re-keys the terminal when the lab, variant or generation changes.
    let session: Rc<RefCell<Session>> = use_mut_ref(|| Session::new(lab.instantiate(seed), lab.first_host()));
    let screen = {
        let session = session.clone();
        use_reducer(move || {
            let mut lines = Vec::new();
            let mut session = session.borrow_mut();
            for typed in &replay {
                let prompt = session.prompt();
                let transcript = session.run(typed);
                record(&mut lines, prompt, typed, &transcript);
            }
            Screen { lines }
        })
    };
    // Output still to reveal, and how many lines each tick reveals.
    let pending: Rc<RefCell<VecDeque<Line>>> = use_mut_ref(VecDeque::new);
    let per_tick = use_mut_ref(|| 1usize);
    let streaming = use_state(|| false);
    let input = use_state(String::new);
    // Position while walking the history with Up/Down; None = editing a new line.
    let history_at = use_state(|| None::<usize>);
    let input_ref = use_node_ref();
    let screen_ref = use_node_ref();

    {
        let pending = pending.clone();
        let per_tick = per_tick.clone();
        let screen = screen.clone();
        let streaming = streaming.clone();
        use_effect_with(*streaming, move |active| {
            let timer = active.then(|| {
                Interval::new(TICK_MS, move || {
                    let mut pending = pending.borrow_mut();
                    let count = (*per_tick.borrow()).min(pending.len());
                    screen.dispatch(ScreenAction::Append(pending.drain(..count).collect()));
                    if pending.is_empty() {
                        streaming.set(false);
                    }
                })
            });
            move || drop(timer)
        });
    }

    {
        let screen_ref = screen_ref.clone();
        use_effect_with(screen.lines.len(), move |_| {
            if let Some(screen) = screen_ref.cast::<web_sys::Element>() {
                screen.set_scroll_top(screen.scroll_height());
            }
        });
    }

    let onkeydown = {
        let session = session.clone();
        let screen = screen.clone();
        let pending = pending.clone();
        let per_tick = per_tick.clone();
        let streaming = streaming.clone();
        let input = input.clone();
        let history_at = history_at.clone();
        let on_run = props.on_run.clone();
        Callback::from(move |event: KeyboardEvent| {
            let key = event.key();
            let ctrl = event.ctrl_key();
            match key.as_str() {
                "c" | "C" if ctrl && *streaming => {
                    // Interrupt a running command: the rest of its output is lost.
                    event.prevent_default();
                    pending.borrow_mut().clear();
                    screen.dispatch(ScreenAction::Append(vec![Line::Stdout("^C\n".to_string())]));
                    streaming.set(false);
                }
                _ if *streaming => event.prevent_default(),
                "Enter" => {
                    event.prevent_default();
                    let typed = (*input).clone();
                    let mut session = session.borrow_mut();
                    let prompt = session.prompt();
                    let transcript = session.run(&typed);
                    if transcript.duration_ms >= STREAM_FROM_MS {
                        let mut output = Vec::new();
                        record(&mut output, prompt, &typed, &transcript);
                        let command = output.remove(0);
                        let queued = split_lines(output);
                        // Reveal over a tenth of the simulated time, 0.4 s to 4 s.
                        let reveal_ms = (transcript.duration_ms / 10).clamp(400, 4000);
                        let ticks = (reveal_ms / u64::from(TICK_MS)).max(1) as usize;
                        *per_tick.borrow_mut() = queued.len().div_ceil(ticks).max(1);
                        *pending.borrow_mut() = queued;
                        screen.dispatch(ScreenAction::Append(vec![command]));
                        streaming.set(true);
                    } else {
                        let mut next = screen.lines.clone();
                        record(&mut next, prompt, &typed, &transcript);
                        screen.dispatch(ScreenAction::Replace(next));
                    }
                    input.set(String::new());
                    history_at.set(None);
                    if !typed.trim().is_empty() {
                        on_run.emit(typed);
                    }
                }
                "ArrowUp" | "ArrowDown" => {
                    event.prevent_default();
                    let session = session.borrow();
                    let history = session.history();
                    if history.is_empty() {
                        return;
                    }
                    let at = match (key.as_str(), *history_at) {
                        ("ArrowUp", None) => Some(history.len() - 1),
                        ("ArrowUp", Some(at)) => Some(at.saturating_sub(1)),
                        ("ArrowDown", Some(at)) if at + 1 < history.len() => Some(at + 1),
                        _ => None,
                    };
                    input.set(at.map(|at| history[at].clone()).unwrap_or_default());
                    history_at.set(at);
                }
                "Tab" => {
                    event.prevent_default();
                    let typed = (*input).clone();
                    let session = session.borrow();
                    let candidates = session.complete(&typed);
                    let word_start = typed.rfind(' ').map_or(0, |space| space + 1);
                    match candidates.len() {
                        0 => {}
                        1 => input.set(format!("{}{} ", &typed[..word_start], candidates[0])),
                        _ => {
                            let prefix = common_prefix(&candidates);
                            if prefix.len() > typed.len() - word_start {
                                input.set(format!("{}{}", &typed[..word_start], prefix));
                            } else {
                                // Like bash on a second Tab: show the candidates.
                                screen.dispatch(ScreenAction::Append(vec![
                                    Line::Command { prompt: session.prompt(), text: typed.clone() },
                                    Line::Stdout(format!("{}\n", candidates.join("  "))),
                                ]));
                            }
                        }
                    }
                }
                "c" | "C" if ctrl => {
                    event.prevent_default();
                    screen.dispatch(ScreenAction::Append(vec![Line::Command {
                        prompt: session.borrow().prompt(),
                        text: format!("{}^C", *input),
                    }]));
                    input.set(String::new());
                    history_at.set(None);
                }
                "l" | "L" if ctrl => {
                    event.prevent_default();
                    screen.dispatch(ScreenAction::Replace(Vec::new()));
                }
                _ => {}
            }
        })
    };
    let oninput = {
        let input = input.clone();
        Callback::from(move |event: InputEvent| {
            let field: HtmlInputElement = event.target_unchecked_into();
            input.set(field.value());
        })
    };
    let focus = {
        let input_ref = input_ref.clone();
        Callback::from(move |_: MouseEvent| {
            // Keep a text selection usable: only focus on a plain click.
            let selecting = gloo::utils::window()
                .get_selection()
                .ok()
                .flatten()
                .is_some_and(|selection| !selection.is_collapsed());
            if !selecting {
                if let Some(field) = input_ref.cast::<HtmlInputElement>() {
                    let _ = field.focus();
                }
            }
        })
    };

    let rendered = screen.lines.iter().map(|line| match line {
        Line::Command { prompt, text } => html! {
            <div class="line command"><span class="prompt">{ prompt }</span><span>{ text }</span></div>
        },
        Line::Stdout(text) => html! { <div class="line stdout">{ text }</div> },
        Line::Stderr(text) => html! { <div class="line stderr">{ text }</div> },
    });
    let prompt = session.borrow().prompt();
    html! {
        <div class="terminal" onclick={focus}>
            <div class="terminal-bar">
                <span>{ format!("{} \u{2014} simulated", session.borrow().host()) }</span>
            </div>
            <div class="screen" ref={screen_ref} role="log" aria-label="Terminal output">
                { for rendered }
                <div class="line input-line">
                    // A running command owns the terminal: no prompt until it ends.
                    <label class="prompt" for="terminal-input">{ if *streaming { String::new() } else { prompt } }</label>
                    <input id="terminal-input" ref={input_ref} class="terminal-input" type="text"
                        value={(*input).clone()} {onkeydown} {oninput}
                        autocomplete="off" autocapitalize="off" spellcheck="false"
                        aria-label="Command line" />
                </div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_sequence_empties_the_screen() {
        let mut lines = vec![Line::Stdout("old\n".into())];
        apply_escapes(&mut lines, "\x1b[H\x1b[2J\x1b[3Jnew\n", Stream::Stdout);
        assert_eq!(lines, vec![Line::Stdout("new\n".into())]);
    }

    #[test]
    fn common_prefix_of_candidates() {
        assert_eq!(common_prefix(&["help".into(), "hostname".into()]), "h");
        assert_eq!(common_prefix(&[]), "");
    }
}
