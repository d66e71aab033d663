//! The terminal's command line: the line typed (kept as a draft across a
//! reload), the history, Tab completion, readline's editing keys
//! (`line_edit`), Ctrl-R's search, Ctrl-C, Ctrl-D and Ctrl-L, a multi-line
//! paste run line by line as bash reads it, and Escape then Tab to leave.
//!
//! After Enter the line stays as typed for [`ENTER_GRACE_MS`] while the
//! simulator answers: a quick answer then paints in the next frame, with
//! nothing drawn in between (a change drawn first would make the browser
//! handle the worker's answer only after that frame).

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::engine::Engine;
use crate::line_edit::{self, Line};
use crate::scrollback::Writer;
use crate::store::{Action, LabStore};

/// How long (real milliseconds) the entered line stays as typed.
const ENTER_GRACE_MS: u32 = 60;

/// Ctrl-R's search: the query, the history index matched, the line typed before it.
pub type Search = Option<(String, Option<usize>, String)>;

/// What the terminal draws of its command line, and its handlers.
pub struct CommandLine {
    pub input: UseStateHandle<String>,
    pub completions: UseStateHandle<Vec<String>>,
    pub search: UseStateHandle<Search>,
    /// Within the grace period after Enter: the line is still shown.
    pub in_grace: bool,
    pub onkeydown: Callback<KeyboardEvent>,
    pub onpaste: Callback<Event>,
    pub oninput: Callback<InputEvent>,
}

#[hook]
pub fn use_command_line(
    store: UseReducerHandle<LabStore>,
    engine: Rc<Engine>,
    writer: Rc<RefCell<Writer>>,
    input_ref: NodeRef,
    finding: UseStateHandle<bool>,
) -> CommandLine {
    // A half-typed command survives a reload (`storage::draft`).
    // The lab's record, named once (an exam's name reads the learner from storage).
    let record = use_state(|| store.lab.record_id());
    let input = use_state(|| crate::storage::draft(&record, "command-line"));
    {
        let record = (*record).clone();
        use_effect_with((*input).clone(), move |text| crate::storage::set_draft(&record, "command-line", text));
    }
    // Position while walking the history with Up/Down; None = editing a new line.
    let history_at = use_state(|| None::<usize>);
    let completions = use_state(Vec::<String>::new);
    // The line entered and still in the input, and the grace period's timer.
    let entered: Rc<RefCell<Option<String>>> = use_mut_ref(|| None);
    let grace: Rc<RefCell<Option<Timeout>>> = use_mut_ref(|| None);
    let redraw = use_force_update();
    // Readline's kill ring (one entry) and Ctrl-R's search.
    let killed: Rc<RefCell<String>> = use_mut_ref(String::new);
    let search = use_state(|| None::<(String, Option<usize>, String)>);

    // Escape was the last key: the next Tab leaves the terminal.
    let leaving = use_mut_ref(|| false);
    let onkeydown = {
        let store = store.clone();
        let engine = engine.clone();
        let input = input.clone();
        let history_at = history_at.clone();
        let completions = completions.clone();
        let writer = writer.clone();
        let entered = entered.clone();
        let grace = grace.clone();
        let redraw = redraw.clone();
        let input_ref = input_ref.clone();
        let killed = killed.clone();
        let search = search.clone();
        let leaving = leaving.clone();
        let finding = finding.clone();
        Callback::from(move |event: KeyboardEvent| {
            let key = event.key();
            let ctrl = event.ctrl_key();
            let alt = event.alt_key();
            if ctrl && event.shift_key() && key.eq_ignore_ascii_case("f") {
                event.prevent_default();
                finding.set(true);
                return;
            }
            // A modifier pressed on its own (Shift, before Shift+Tab) is
            // not a key of its own: it keeps what Escape started.
            if matches!(key.as_str(), "Shift" | "Control" | "Alt" | "Meta") {
                return;
            }
            // Tab completes; Escape, then Tab (or Shift+Tab), leaves the
            // terminal for the page's other controls: no keyboard trap.
            let escaped = std::mem::replace(&mut *leaving.borrow_mut(), key == "Escape" && search.is_none());
            if key == "Tab" && escaped {
                return;
            }
            let history = store.history();
            let field = input_ref.cast::<HtmlInputElement>();
            // The line and cursor as the input element has them now.
            let current = || {
                let text = (*input).clone();
                let offset = field.as_ref().and_then(|f| f.selection_start().ok().flatten()).unwrap_or(u32::MAX);
                let cursor = line_edit::from_utf16(&text, offset);
                Line { text, cursor }
            };
            let show = |line: Line| {
                if let Some(field) = field.as_ref() {
                    field.set_value(&line.text);
                    let at = line_edit::to_utf16(&line.text, line.cursor);
                    let _ = field.set_selection_range(at, at);
                }
                input.set(line.text);
            };
            // Ctrl-R: typing narrows the search; Enter runs the match; Esc
            // or Ctrl-G gives it up; any other key keeps it in the line.
            if let Some((query, found, typed)) = (*search).clone() {
                let printable = key.chars().count() == 1 && !ctrl && !alt;
                let find = |query: &str, before: usize| line_edit::search_back(history, query, before);
                match key.as_str() {
                    _ if printable || key == "Backspace" => {
                        event.prevent_default();
                        let mut query = query;
                        if printable {
                            query.push_str(&key);
                        } else {
                            query.pop();
                        }
                        let found = find(&query, history.len());
                        if let Some(at) = found {
                            show(Line { cursor: history[at].chars().count(), text: history[at].clone() });
                        }
                        search.set(Some((query, found, typed)));
                        return;
                    }
                    "r" | "R" if ctrl => {
                        event.prevent_default();
                        let found = find(&query, found.unwrap_or(history.len())).or(found);
                        if let Some(at) = found {
                            show(Line { cursor: history[at].chars().count(), text: history[at].clone() });
                        }
                        search.set(Some((query, found, typed)));
                        return;
                    }
                    "Escape" => {
                        event.prevent_default();
                        search.set(None);
                        show(Line { cursor: typed.chars().count(), text: typed });
                        return;
                    }
                    "g" | "G" if ctrl => {
                        event.prevent_default();
                        search.set(None);
                        show(Line { cursor: typed.chars().count(), text: typed });
                        return;
                    }
                    "Enter" => search.set(None),
                    _ => {
                        search.set(None);
                        if !ctrl {
                            return;
                        }
                    }
                }
            }
            if ctrl && (key == "r" || key == "R") {
                event.prevent_default();
                search.set(Some((String::new(), None, (*input).clone())));
                return;
            }
            if ctrl && (key == "d" || key == "D") && input.is_empty() && !store.busy() {
                // Ctrl-D on an empty line ends the shell, as `exit` does; at
                // the `> ` prompt it ends the incomplete command.
                event.prevent_default();
                if store.prompt == "> " {
                    store.dispatch(Action::Cancel(String::new()));
                } else {
                    store.dispatch(Action::Submit("exit".to_string()));
                }
                return;
            }
            // Readline's editing keys; Alt goes by the key's place, which
            // does not change with the keyboard's Alt characters.
            let letter =
                if alt { event.code().strip_prefix("Key").and_then(|k| k.chars().next()) } else { key.chars().next().filter(|_| key.chars().count() == 1) };
            if ctrl != alt {
                if let Some(letter) = letter.map(|l| l.to_ascii_lowercase()) {
                    let yank = killed.borrow().clone();
                    if let Some(edited) = line_edit::edit(&current(), letter, alt, &yank) {
                        event.prevent_default();
                        if let Some(text) = edited.killed {
                            *killed.borrow_mut() = text;
                        }
                        show(edited.line);
                        return;
                    }
                }
            }
            match key.as_str() {
                "c" | "C" if ctrl && store.busy() => {
                    event.prevent_default();
                    let at_ms = writer.borrow().reveal_at_ms().unwrap_or(0);
                    store.dispatch(Action::Interrupt { at_ms });
                }
                "c" | "C" if ctrl => {
                    event.prevent_default();
                    store.dispatch(Action::Cancel((*input).clone()));
                    input.set(String::new());
                    history_at.set(None);
                }
                "l" | "L" if ctrl => {
                    event.prevent_default();
                    store.dispatch(Action::ClearScreen);
                }
                "Enter" => {
                    event.prevent_default();
                    let line = (*input).clone();
                    // The line stays as typed until the answer or the grace period's end.
                    *entered.borrow_mut() = Some(line.clone());
                    let ends = {
                        let grace = Rc::downgrade(&grace);
                        let redraw = redraw.clone();
                        Timeout::new(ENTER_GRACE_MS, move || {
                            if let Some(grace) = grace.upgrade() {
                                grace.borrow_mut().take();
                            }
                            redraw.force_update();
                        })
                    };
                    *grace.borrow_mut() = Some(ends);
                    store.dispatch(Action::Submit(line));
                    history_at.set(None);
                    if !completions.is_empty() {
                        completions.set(Vec::new());
                    }
                }
                "ArrowUp" | "ArrowDown" => {
                    event.prevent_default();
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
                    let input = input.clone();
                    let completions = completions.clone();
                    engine.complete(
                        typed.clone(),
                        Callback::from(move |candidates: Vec<String>| {
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
                                        completions.set(candidates);
                                    }
                                }
                            }
                        }),
                    );
                }
                _ => {}
            }
        })
    };
    let onpaste = {
        let store = store.clone();
        let input = input.clone();
        let input_ref = input_ref.clone();
        Callback::from(move |event: Event| {
            let Some(pasted) = event.dyn_ref::<web_sys::ClipboardEvent>().and_then(|e| e.clipboard_data()).and_then(|d| d.get_data("text").ok()) else {
                return;
            };
            if !pasted.contains(['\n', '\r']) {
                return;
            }
            // bash reads a pasted text line by line: each complete line runs, in order.
            event.prevent_default();
            let field = input_ref.cast::<HtmlInputElement>();
            let offset = field.as_ref().and_then(|f| f.selection_start().ok().flatten()).unwrap_or(u32::MAX);
            let text = (*input).clone();
            let line = Line { cursor: line_edit::from_utf16(&text, offset), text };
            let (lines, rest) = line_edit::paste(&line, &pasted);
            for line in lines {
                store.dispatch(Action::Submit(line));
            }
            if let Some(field) = field.as_ref() {
                field.set_value(&rest.text);
            }
            input.set(rest.text);
        })
    };
    let oninput = {
        let input = input.clone();
        Callback::from(move |event: InputEvent| {
            let field: HtmlInputElement = event.target_unchecked_into();
            input.set(field.value());
        })
    };
    // Within the grace period after Enter, nothing changes on screen; once
    // the answer is in, or the period is over, the entered line leaves the input.
    let in_grace = store.busy() && grace.borrow().is_some();
    if !in_grace {
        if let Some(line) = entered.borrow_mut().take() {
            grace.borrow_mut().take();
            if *input == line {
                input.set(String::new());
            }
        }
    }
    CommandLine { input, completions, search, in_grace, onkeydown, onpaste, oninput }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_of_candidates() {
        assert_eq!(common_prefix(&["help".into(), "hostname".into()]), "h");
        assert_eq!(common_prefix(&[]), "");
    }
}
