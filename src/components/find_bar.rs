//! The scrollback's search bar (Ctrl+Shift+F): typing finds, the newest
//! match first; Enter goes to older matches, Shift+Enter to newer ones,
//! Escape closes. The matching and marking are `scrollback_find`'s.

use web_sys::{Element, HtmlInputElement};
use yew::prelude::*;

use crate::scrollback_find;

#[derive(Properties, PartialEq)]
pub struct FindBarProps {
    /// The scrollback searched, and the screen that scrolls it.
    pub scrollback: NodeRef,
    pub screen: NodeRef,
    pub on_close: Callback<()>,
}

#[function_component(FindBar)]
pub fn find_bar(props: &FindBarProps) -> Html {
    let query = use_state(String::new);
    // The current match and how many there are.
    let found = use_state(|| None::<(usize, usize)>);
    let field = use_node_ref();
    {
        let field = field.clone();
        use_effect_with((), move |_| {
            if let Some(field) = field.cast::<HtmlInputElement>() {
                let _ = field.focus();
            }
            scrollback_find::clear
        });
    }
    // Finds `text` again and moves `step` matches from the current one (0: the newest).
    let find = {
        let (found, scrollback, screen) = (found.clone(), props.scrollback.clone(), props.screen.clone());
        move |text: &str, step: isize| {
            let (Some(container), Some(screen)) = (scrollback.cast::<Element>(), screen.cast::<Element>()) else { return };
            let matches = scrollback_find::matches_in(&container, text);
            let count = matches.len();
            let at = match *found {
                _ if count == 0 => None,
                Some((at, _)) if step != 0 => Some((at as isize + step).rem_euclid(count as isize) as usize),
                _ => Some(count - 1),
            };
            scrollback_find::show(&matches, at, &screen);
            found.set(at.map(|at| (at, count)));
        }
    };
    let oninput = {
        let (query, find) = (query.clone(), find.clone());
        Callback::from(move |event: InputEvent| {
            let text = event.target_unchecked_into::<HtmlInputElement>().value();
            find(&text, 0);
            query.set(text);
        })
    };
    let onkeydown = {
        let (query, find, on_close) = (query.clone(), find.clone(), props.on_close.clone());
        Callback::from(move |event: KeyboardEvent| match event.key().as_str() {
            "Enter" => {
                event.prevent_default();
                find(&query, if event.shift_key() { 1 } else { -1 });
            }
            "Escape" => {
                event.prevent_default();
                on_close.emit(());
            }
            _ => {}
        })
    };
    let button = |step: isize| {
        let (query, find) = (query.clone(), find.clone());
        Callback::from(move |_: MouseEvent| find(&query, step))
    };
    let close = props.on_close.reform(|_: MouseEvent| ());
    let status = match *found {
        _ if query.is_empty() => String::new(),
        None => "No matches".to_string(),
        Some((at, count)) if count >= scrollback_find::MAX_MATCHES => format!("{} of {count}+", at + 1),
        Some((at, count)) => format!("{} of {count}", at + 1),
    };
    html! {
        <div class="find-bar" role="search" onclick={|event: MouseEvent| event.stop_propagation()}>
            <label for="scrollback-find">{ "Search the scrollback" }</label>
            <input id="scrollback-find" ref={field} type="search" value={(*query).clone()} {oninput} {onkeydown}
                autocomplete="off" spellcheck="false" aria-describedby="scrollback-find-keys" />
            <span class="find-status" role="status" aria-live="polite">{ status }</span>
            <button type="button" onclick={button(-1)} aria-label="Previous match (older)">{ "\u{2191}" }</button>
            <button type="button" onclick={button(1)} aria-label="Next match (newer)">{ "\u{2193}" }</button>
            <button type="button" onclick={close} aria-label="Close search">{ "\u{d7}" }</button>
            <span id="scrollback-find-keys" class="visually-hidden">{ "Enter goes to the previous match, Shift+Enter to the next, Escape closes." }</span>
        </div>
    }
}
