//! The lab file's editor: a text area (the accessible name "Lab file")
//! over a highlighted copy of its text, with a gutter of line numbers that
//! marks the lines with problems. The text area is the editor (typing,
//! selection, undo, paste and screen readers are the browser's own); the
//! copy beneath only colours it. Files dropped on it open in it.

use std::collections::BTreeMap;
use std::rc::Rc;

use clusterlab_engine::lab::authoring::highlight::toml_html;
use clusterlab_engine::lab::authoring::live::Problem;
use web_sys::{DragEvent, HtmlElement, HtmlTextAreaElement};
use yew::prelude::*;

/// A request to put the cursor at a line and column (1-based; columns
/// count characters); `nonce` makes a repeated pick a new request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    pub line: usize,
    pub column: usize,
    pub nonce: u64,
}

#[derive(Properties, PartialEq)]
pub struct CodeEditorProps {
    pub text: AttrValue,
    pub on_change: Callback<String>,
    pub problems: Rc<Vec<Problem>>,
    pub jump: Option<Jump>,
    pub on_drop_file: Callback<web_sys::File>,
}

/// The character offset (as the text area counts, in UTF-16 units) of a
/// line and column in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> u32 {
    let mut units = 0usize;
    for (at, each) in text.split_inclusive('\n').enumerate() {
        if at + 1 == line {
            let within: usize = each.trim_end_matches('\n').chars().take(column.saturating_sub(1)).map(char::len_utf16).sum();
            return (units + within) as u32;
        }
        units += each.encode_utf16().count();
    }
    units as u32
}

#[function_component(CodeEditor)]
pub fn code_editor(props: &CodeEditorProps) -> Html {
    let area = use_node_ref();
    let beneath = use_node_ref();
    let gutter = use_node_ref();
    let dragging = use_state(|| false);

    let on_input = {
        let on_change = props.on_change.clone();
        Callback::from(move |event: InputEvent| {
            if let Some(area) = event.target_dyn_into::<HtmlTextAreaElement>() {
                on_change.emit(area.value());
            }
        })
    };
    // The copy and the gutter scroll with the text area.
    let on_scroll = {
        let (beneath, gutter) = (beneath.clone(), gutter.clone());
        Callback::from(move |event: Event| {
            let Some(area) = event.target_dyn_into::<HtmlTextAreaElement>() else { return };
            if let Some(beneath) = beneath.cast::<HtmlElement>() {
                beneath.set_scroll_top(area.scroll_top());
                beneath.set_scroll_left(area.scroll_left());
            }
            if let Some(gutter) = gutter.cast::<HtmlElement>() {
                gutter.set_scroll_top(area.scroll_top());
            }
        })
    };
    {
        let area = area.clone();
        let text = props.text.clone();
        use_effect_with(props.jump, move |jump| {
            if let (Some(jump), Some(area)) = (jump, area.cast::<HtmlTextAreaElement>()) {
                let at = offset_of(&text, jump.line, jump.column);
                let _ = area.focus();
                let _ = area.set_selection_range(at, at);
                // The line a third of the way down the visible text.
                let lines = text.split_inclusive('\n').count().max(1) as i32;
                let line_height = area.scroll_height() / lines;
                area.set_scroll_top((jump.line as i32 - 1) * line_height - area.client_height() / 3);
            }
        });
    }
    let on_drag_over = {
        let dragging = dragging.clone();
        Callback::from(move |event: DragEvent| {
            event.prevent_default();
            dragging.set(true);
        })
    };
    let on_drag_leave = {
        let dragging = dragging.clone();
        Callback::from(move |_: DragEvent| dragging.set(false))
    };
    let on_drop = {
        let dragging = dragging.clone();
        let on_drop_file = props.on_drop_file.clone();
        Callback::from(move |event: DragEvent| {
            event.prevent_default();
            dragging.set(false);
            if let Some(file) = event.data_transfer().and_then(|data| data.files()).and_then(|files| files.get(0)) {
                on_drop_file.emit(file);
            }
        })
    };

    let mut marks: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for problem in props.problems.iter() {
        marks.entry(problem.line).or_default().push(problem.to_string());
    }
    let line_count = props.text.split('\n').count();
    let numbers = (1..=line_count).map(|line| match marks.get(&line) {
        Some(messages) => html! { <div class="line-number has-problem" title={messages.join("\n")}>{ line }</div> },
        None => html! { <div class="line-number">{ line }</div> },
    });
    let highlighted = Html::from_html_unchecked(AttrValue::from(toml_html(&props.text)));
    html! {
        <div class={classes!("code-editor", dragging.then_some("dragging"))} ondragover={on_drag_over} ondragleave={on_drag_leave} ondrop={on_drop}>
            <div class="gutter" aria-hidden="true" ref={gutter}>{ for numbers }</div>
            <div class="code-area">
                <pre class="highlight" aria-hidden="true" ref={beneath}>{ highlighted }</pre>
                <textarea ref={area} aria-label="Lab file" spellcheck="false" autocomplete="off" autocapitalize="off" wrap="off"
                    value={props.text.clone()} oninput={on_input} onscroll={on_scroll} />
            </div>
        </div>
    }
}
