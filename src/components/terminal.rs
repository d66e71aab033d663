//! The terminal: a prompt, a scrollback and a line editor over an engine
//! [`Session`]. Output is always rendered as text, never as HTML.
//!
//! Keys: Enter runs the line, Up/Down walk the history, Tab completes,
//! Ctrl-C cancels the line, Ctrl-L clears the screen.

use std::cell::RefCell;
use std::rc::Rc;

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

#[function_component(Terminal)]
pub fn terminal(props: &TerminalProps) -> Html {
    let lab = props.lab.clone();
    let seed = props.seed;
    let replay = props.replay.clone();
    // The session and the scrollback are built once per mount; the parent
    // re-keys the terminal when the lab, variant or generation changes.
    let session: Rc<RefCell<Session>> = use_mut_ref(|| Session::new(lab.instantiate(seed), lab.first_host()));
    let lines = {
        let session = session.clone();
        use_state(move || {
            let mut lines = Vec::new();
            let mut session = session.borrow_mut();
            for typed in &replay {
                let prompt = session.prompt();
                let transcript = session.run(typed);
                record(&mut lines, prompt, typed, &transcript);
            }
            lines
        })
    };
    let input = use_state(String::new);
    // Position while walking the history with Up/Down; None = editing a new line.
    let history_at = use_state(|| None::<usize>);
    let input_ref = use_node_ref();
    let screen_ref = use_node_ref();

    {
        let screen_ref = screen_ref.clone();
        use_effect_with(lines.len(), move |_| {
            if let Some(screen) = screen_ref.cast::<web_sys::Element>() {
                screen.set_scroll_top(screen.scroll_height());
            }
        });
    }

    let onkeydown = {
        let session = session.clone();
        let lines = lines.clone();
        let input = input.clone();
        let history_at = history_at.clone();
        let on_run = props.on_run.clone();
        Callback::from(move |event: KeyboardEvent| {
            let key = event.key();
            let ctrl = event.ctrl_key();
            match key.as_str() {
                "Enter" => {
                    event.prevent_default();
                    let typed = (*input).clone();
                    let mut next = (*lines).clone();
                    let mut session = session.borrow_mut();
                    let prompt = session.prompt();
                    let transcript = session.run(&typed);
                    record(&mut next, prompt, &typed, &transcript);
                    let excess = next.len().saturating_sub(MAX_LINES);
                    next.drain(..excess);
                    lines.set(next);
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
                                let mut next = (*lines).clone();
                                next.push(Line::Command { prompt: session.prompt(), text: typed.clone() });
                                next.push(Line::Stdout(format!("{}\n", candidates.join("  "))));
                                lines.set(next);
                            }
                        }
                    }
                }
                "c" | "C" if ctrl => {
                    event.prevent_default();
                    let mut next = (*lines).clone();
                    next.push(Line::Command { prompt: session.borrow().prompt(), text: format!("{}^C", *input) });
                    lines.set(next);
                    input.set(String::new());
                    history_at.set(None);
                }
                "l" | "L" if ctrl => {
                    event.prevent_default();
                    lines.set(Vec::new());
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

    let rendered = lines.iter().map(|line| match line {
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
                    <label class="prompt" for="terminal-input">{ prompt }</label>
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
