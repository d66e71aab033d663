//! The terminal's pager: what `less` and `more` (and `man`, `journalctl`)
//! show on the screen, a screen at a time, with their keys. less: Space/f/
//! PageDown, b/PageUp, Enter/j/Down, k/Up, d/u half screens, g/G ends,
//! `/` and `?` search, n/N repeat, q quits (the screen comes back as it
//! was). more: Space/Enter forward, b back, `/` search, q quits, and it
//! ends by itself past the last line, leaving the text on the terminal.

use std::rc::Rc;

use clusterlab_engine::commands::Pager;
use web_sys::HtmlElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct PagerProps {
    pub text: Rc<String>,
    pub kind: Pager,
    /// Lines the screen holds, the status line included.
    pub rows: usize,
    pub on_close: Callback<()>,
}

/// Where the view stands and what the status line is doing.
#[derive(Clone, PartialEq, Default)]
struct View {
    top: usize,
    /// A search being typed: its direction (`/` forward) and text.
    typing: Option<(char, String)>,
    /// The last search, for n and N.
    last: Option<(char, String)>,
    message: Option<String>,
}

/// The first line at or after (forward) or before `from` that contains `query`.
fn search(lines: &[&str], query: &str, from: usize, forward: bool) -> Option<usize> {
    if forward {
        (from..lines.len()).find(|&i| lines[i].contains(query))
    } else {
        (0..from.min(lines.len())).rev().find(|&i| lines[i].contains(query))
    }
}

#[function_component(PagerView)]
pub fn pager_view(props: &PagerProps) -> Html {
    let start_at_end = matches!(props.kind, Pager::Less { at_end: true, .. });
    let (rows, line_count) = (props.rows, props.text.lines().count());
    let view = use_state(move || View { top: if start_at_end { line_count.saturating_sub(rows.saturating_sub(1).max(1)) } else { 0 }, ..View::default() });
    let node = use_node_ref();
    {
        let node = node.clone();
        use_effect_with((), move |_| {
            if let Some(element) = node.cast::<HtmlElement>() {
                let _ = element.focus();
            }
        });
    }
    let lines: Vec<&str> = props.text.lines().collect();
    let page = props.rows.saturating_sub(1).max(1);
    let last_top = lines.len().saturating_sub(page);
    let more = props.kind == Pager::More;

    let onkeydown = {
        let view = view.clone();
        let text = props.text.clone();
        let on_close = props.on_close.clone();
        Callback::from(move |event: KeyboardEvent| {
            let lines: Vec<&str> = text.lines().collect();
            let mut next = (*view).clone();
            let key = event.key();
            event.prevent_default();
            event.stop_propagation();
            if let Some((direction, mut query)) = next.typing.take() {
                match key.as_str() {
                    "Enter" => {
                        let forward = direction == '/';
                        let from = if forward { next.top + 1 } else { next.top };
                        match search(&lines, &query, from, forward) {
                            Some(found) => {
                                next.top = found.min(last_top);
                                next.message = None;
                            }
                            None => next.message = Some("Pattern not found".to_string()),
                        }
                        next.last = Some((direction, query));
                    }
                    "Escape" => {}
                    "Backspace" => {
                        if query.pop().is_some() {
                            next.typing = Some((direction, query));
                        }
                    }
                    k if k.chars().count() == 1 => {
                        query.push_str(k);
                        next.typing = Some((direction, query));
                    }
                    _ => next.typing = Some((direction, query)),
                }
                view.set(next);
                return;
            }
            next.message = None;
            let at_end = next.top >= last_top;
            let ctrl = event.ctrl_key();
            match key.as_str() {
                "q" | "Q" | "Escape" => {
                    on_close.emit(());
                    return;
                }
                " " | "f" | "PageDown" | "z" => {
                    if more && at_end {
                        on_close.emit(());
                        return;
                    }
                    next.top = (next.top + page).min(last_top);
                }
                "v" if ctrl => next.top = (next.top + page).min(last_top),
                "F" if ctrl => next.top = (next.top + page).min(last_top),
                "b" | "B" if ctrl => next.top = next.top.saturating_sub(page),
                "b" | "PageUp" | "w" => next.top = next.top.saturating_sub(page),
                "Enter" | "j" | "e" | "ArrowDown" => {
                    if more && at_end {
                        on_close.emit(());
                        return;
                    }
                    next.top = (next.top + 1).min(last_top);
                }
                "n" if ctrl => next.top = (next.top + 1).min(last_top),
                "p" if ctrl => next.top = next.top.saturating_sub(1),
                "k" | "y" | "ArrowUp" => next.top = next.top.saturating_sub(1),
                "d" | "D" => next.top = (next.top + page / 2).min(last_top),
                "u" | "U" => next.top = next.top.saturating_sub(page / 2),
                "g" | "Home" | "<" if !more => next.top = 0,
                "G" | "End" | ">" if !more => next.top = last_top,
                "/" => next.typing = Some(('/', String::new())),
                "?" if !more => next.typing = Some(('?', String::new())),
                "n" | "N" => match next.last.clone() {
                    Some((direction, query)) => {
                        let forward = (direction == '/') == (key == "n");
                        let from = if forward { next.top + 1 } else { next.top };
                        match search(&lines, &query, from, forward) {
                            Some(found) => next.top = found.min(last_top),
                            None => next.message = Some("Pattern not found".to_string()),
                        }
                    }
                    None => next.message = Some("No previous regular expression".to_string()),
                },
                "h" | "H" => next.message = Some("Space: next screen  b: back  Enter: next line  /: search  n: next match  q: quit".to_string()),
                _ => return,
            }
            view.set(next);
        })
    };

    let shown: Vec<&str> = lines.iter().skip(view.top).take(page).copied().collect();
    let mut screen = shown.join("\n");
    // Past the end, less fills the screen with `~`.
    if !more && shown.len() < page {
        for _ in shown.len()..page {
            screen.push_str("\n~");
        }
    }
    let bottom = (view.top + page).min(lines.len());
    let status = if let Some((direction, query)) = &view.typing {
        format!("{direction}{query}")
    } else if let Some(message) = &view.message {
        format!("{message}  (press RETURN)")
    } else if more {
        let shown_bytes: usize = lines[..bottom].iter().map(|line| line.len() + 1).sum();
        format!("--More--({}%)", shown_bytes * 100 / props.text.len().max(1))
    } else if bottom >= lines.len() {
        "(END)".to_string()
    } else {
        ":".to_string()
    };
    html! {
        <div class="screen pager" ref={node} tabindex="0" role="region" aria-label="Pager" {onkeydown}>
            <div class="pager-text">{ screen }</div>
            <div class="pager-status" aria-live="polite">{ status }</div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::search;

    #[test]
    fn searches_forward_and_back() {
        let lines = ["a", "Xid 79", "b", "Xid 48"];
        assert_eq!(search(&lines, "Xid", 0, true), Some(1));
        assert_eq!(search(&lines, "Xid", 2, true), Some(3));
        assert_eq!(search(&lines, "Xid", 3, false), Some(1));
        assert_eq!(search(&lines, "none", 0, true), None);
    }
}
