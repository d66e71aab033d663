//! The terminal: a view of the lab store's transcript, and a line editor.
//!
//! The scrollback (`scrollback`, kept in line by `use_scrollback`) is
//! written into the page directly, never re-rendered. A line that took a
//! while on the lab's clock reveals its output over time; Ctrl-C stops it
//! there, and the lab's clock with it.
//!
//! Keys (`use_command_line`): Enter runs the line (lines typed while one
//! runs are kept and run next), Up/Down walk the history, Tab completes,
//! Ctrl-C interrupts or cancels the line, Ctrl-L clears the screen;
//! readline's editing keys (`line_edit`): Ctrl-A/E/B/F, Alt-B/F,
//! Ctrl-U/K/W/Y, Alt-D, Ctrl-D, and Ctrl-R searches the history;
//! Ctrl+Shift+F searches the scrollback (`find_bar`). A multi-line paste
//! runs line by line, as bash reads it. A pager's output (`less`, `more`)
//! opens the pager view (`pager`) over the screen when it is new; an
//! earlier `less` left nothing behind, as its alternate screen does not.
//! The shells are tabs above it (`shell_tabs`); screen readers hear each
//! output (`use_announcement`).

use std::rc::Rc;

use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::components::find_bar::FindBar;
use crate::components::pager::PagerView;
use crate::components::shell_tabs::ShellTabs;
use crate::engine::Engine;
use crate::hooks::{use_announcement, use_command_line, use_scrollback, CommandLine, OpenPager};
use crate::scrollback::{scroll_down, spoken};
use crate::store::{Action, LabStore};

#[derive(Properties, PartialEq)]
pub struct TerminalProps {
    pub store: UseReducerHandle<LabStore>,
    pub engine: Rc<Engine>,
}

#[function_component(Terminal)]
pub fn terminal(props: &TerminalProps) -> Html {
    let store = props.store.clone();
    let scrollback_ref = use_node_ref();
    let input_ref = use_node_ref();
    // The pager open over the screen, and Ctrl+Shift+F's search bar.
    let pager = use_state(|| None as OpenPager);
    let finding = use_state(|| false);
    let writer = use_scrollback(store.clone(), scrollback_ref.clone(), pager.clone());
    let line = use_command_line(store.clone(), props.engine.clone(), writer.clone(), input_ref.clone(), finding.clone());
    let announcement = use_announcement(&store);

    let close_pager = {
        let pager = pager.clone();
        Callback::from(move |()| pager.set(None))
    };
    {
        // Once the pager has closed and the screen is back, the keys go to the command line.
        let was_open = use_mut_ref(|| false);
        let input_ref = input_ref.clone();
        let writer = writer.clone();
        use_effect_with(pager.is_some(), move |open| {
            if !*open && *was_open.borrow() {
                scroll_down(writer.borrow().container.as_ref());
                if let Some(field) = input_ref.cast::<HtmlInputElement>() {
                    let _ = field.focus();
                }
            }
            *was_open.borrow_mut() = *open;
        });
    }
    let focus = {
        let input_ref = input_ref.clone();
        let paging = pager.is_some();
        Callback::from(move |_: MouseEvent| {
            if paging {
                return;
            }
            // Keep a text selection usable: only focus on a plain click.
            let selecting = gloo::utils::window().get_selection().ok().flatten().is_some_and(|selection| !selection.is_collapsed());
            if !selecting {
                if let Some(field) = input_ref.cast::<HtmlInputElement>() {
                    let _ = field.focus();
                }
            }
        })
    };

    let read_only = !store.owner();
    let read_last = {
        let store = store.clone();
        let announcement = announcement.clone();
        Callback::from(move |event: MouseEvent| {
            event.stop_propagation();
            let text = store.last_entry().map_or_else(|| "Nothing has been printed yet.".to_string(), |entry| spoken(&entry.text()));
            // A change of text is what a live region reads: the same output again gets a mark.
            let again = if *announcement == text { format!("{text}\u{200b}") } else { text };
            announcement.set(again);
        })
    };
    let copy_last = {
        let store = store.clone();
        Callback::from(move |event: MouseEvent| {
            event.stop_propagation();
            if let Some(entry) = store.last_entry() {
                let _ = gloo::utils::window().navigator().clipboard().write_text(&entry.text());
            }
        })
    };
    let clear = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(Action::ClearScreen))
    };
    // A running command owns the terminal: no prompt until it ends.
    let prompt = match (*line.search).as_ref() {
        Some((query, found, _)) => {
            let failed = if found.is_none() && !query.is_empty() { "failed " } else { "" };
            format!("({failed}reverse-i-search)`{query}': ")
        }
        None if store.busy() && !line.in_grace => String::new(),
        None => store.prompt.clone(),
    };
    let screen_ref = use_node_ref();
    let open_find = {
        let finding = finding.clone();
        Callback::from(move |event: MouseEvent| {
            event.stop_propagation();
            finding.set(true);
        })
    };
    let close_find = {
        let finding = finding.clone();
        let input_ref = input_ref.clone();
        Callback::from(move |()| {
            finding.set(false);
            if let Some(field) = input_ref.cast::<HtmlInputElement>() {
                let _ = field.focus();
            }
        })
    };
    let CommandLine { input, completions, onkeydown, oninput, onpaste, .. } = line;
    html! {
        <div class="terminal" onclick={focus}>
            <ShellTabs store={store.clone()} />
            <div class="terminal-bar">
                <span>{ format!("{} \u{2014} simulated", store.host) }</span>
                <span class="terminal-actions">
                    <button type="button" onclick={open_find} title="Ctrl+Shift+F">{ "Search" }</button>
                    <button type="button" onclick={read_last}>{ "Read last output" }</button>
                    <button type="button" onclick={copy_last}>{ "Copy last output" }</button>
                    <button type="button" onclick={clear} disabled={read_only}>{ "Clear" }</button>
                </span>
            </div>
            if *finding {
                <FindBar scrollback={scrollback_ref.clone()} screen={screen_ref.clone()} on_close={close_find} />
            }
            if let Some((text, kind, rows)) = (*pager).clone() {
                <PagerView {text} {kind} {rows} on_close={close_pager} />
            }
            <div ref={screen_ref} class={classes!("screen", pager.is_some().then_some("behind-pager"))} role="log" aria-live="off" aria-label="Terminal output" aria-busy={store.busy().to_string()}>
                <div class="scrollback" ref={scrollback_ref}></div>
                if !completions.is_empty() {
                    <div class="line completions">{ completions.join("  ") }</div>
                }
                <div class="line input-line">
                    <label class="prompt" for="terminal-input">{ prompt }</label>
                    <input id="terminal-input" ref={input_ref} class="terminal-input" type="text"
                        value={(*input).clone()} {onkeydown} {oninput} {onpaste} disabled={read_only}
                        autocomplete="off" autocapitalize="off" spellcheck="false"
                        aria-label="Command line" aria-describedby="terminal-keys" />
                </div>
                <p class="visually-hidden" role="status" aria-live="polite">{ (*announcement).clone() }</p>
            </div>
            // Said to everyone while the command line has the keys (style.css).
            <p id="terminal-keys" class="terminal-keys">{ "Tab completes commands. To leave the terminal, press Escape, then Tab or Shift+Tab. Ctrl+Shift+F searches the output." }</p>
        </div>
    }
}
