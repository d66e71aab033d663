//! Search in the terminal's scrollback (Ctrl+Shift+F): the text on the
//! screen, ASCII case ignored, every match marked with the CSS Custom
//! Highlight API where the browser has it (by name, so the page carries no
//! bindings for it), and the current one scrolled to the middle of the
//! screen.

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlElement, Node};

/// The most matches one search marks.
pub const MAX_MATCHES: usize = 10_000;

const ALL: &str = "scrollback-find";
const CURRENT: &str = "scrollback-find-current";

/// One match: the text node, where in it (bytes), and its DOM range.
pub struct Match {
    node: Node,
    byte_start: usize,
    range: JsValue,
}

/// Byte ranges of `needle` in `haystack`, ASCII case ignored, at most `limit`.
pub fn find_all(haystack: &str, needle: &str, limit: usize) -> Vec<(usize, usize)> {
    if needle.is_empty() {
        return Vec::new();
    }
    let (haystack, needle) = (haystack.to_ascii_lowercase(), needle.to_ascii_lowercase());
    haystack.match_indices(&needle).take(limit).map(|(at, found)| (at, at + found.len())).collect()
}

fn utf16_len(text: &str) -> u32 {
    text.encode_utf16().count() as u32
}

fn call(target: &JsValue, method: &str, args: &Array) -> Option<JsValue> {
    let function = Reflect::get(target, &method.into()).ok()?.dyn_into::<Function>().ok()?;
    Reflect::apply(&function, target, args).ok()
}

/// The text nodes under `node` in order, leaving out the Copy buttons.
fn text_nodes(node: &Node, out: &mut Vec<Node>) {
    let mut child = node.first_child();
    while let Some(next) = child {
        if next.node_type() == Node::TEXT_NODE {
            out.push(next.clone());
        } else if next.dyn_ref::<Element>().is_none_or(|element| element.class_name() != "copy-output") {
            text_nodes(&next, out);
        }
        child = next.next_sibling();
    }
}

/// Every match of `query` in the scrollback `container`, oldest first.
pub fn matches_in(container: &Element, query: &str) -> Vec<Match> {
    let mut nodes = Vec::new();
    text_nodes(container, &mut nodes);
    let document = JsValue::from(gloo::utils::document());
    let mut found = Vec::new();
    for node in nodes {
        let text = node.text_content().unwrap_or_default();
        for (start, end) in find_all(&text, query, MAX_MATCHES - found.len()) {
            let Some(range) = call(&document, "createRange", &Array::new()) else { return found };
            call(&range, "setStart", &Array::of2(&node, &utf16_len(&text[..start]).into()));
            call(&range, "setEnd", &Array::of2(&node, &utf16_len(&text[..end]).into()));
            found.push(Match { node: node.clone(), byte_start: start, range });
        }
        if found.len() >= MAX_MATCHES {
            break;
        }
    }
    found
}

/// The page's highlight registry, where the browser has one.
fn registry() -> Option<(JsValue, Function)> {
    let window = JsValue::from(gloo::utils::window());
    let highlight = Reflect::get(&window, &"Highlight".into()).ok()?.dyn_into::<Function>().ok()?;
    let css = Reflect::get(&window, &"CSS".into()).ok()?;
    let registry = Reflect::get(&css, &"highlights".into()).ok()?;
    (!registry.is_undefined()).then_some((registry, highlight))
}

fn mark(name: &str, ranges: &Array) {
    if let Some((registry, highlight)) = registry() {
        if let Ok(marks) = Reflect::construct(&highlight, ranges) {
            call(&registry, "set", &Array::of2(&name.into(), &marks));
        }
    }
}

/// Marks every match, and the current one apart, scrolled into the middle of `screen`.
pub fn show(matches: &[Match], current: Option<usize>, screen: &Element) {
    mark(ALL, &matches.iter().map(|found| found.range.clone()).collect());
    let Some(found) = current.and_then(|at| matches.get(at)) else {
        mark(CURRENT, &Array::new());
        return;
    };
    mark(CURRENT, &Array::of1(&found.range));
    // Where the match is: its element's place, and its line within it (an
    // output block holds many lines).
    let (Some(element), Some(screen)) = (found.node.parent_element().and_then(|e| e.dyn_into::<HtmlElement>().ok()), screen.dyn_ref::<HtmlElement>()) else {
        return;
    };
    let text = found.node.text_content().unwrap_or_default();
    let lines = text.matches('\n').count().max(1);
    let line_before = text[..found.byte_start.min(text.len())].matches('\n').count();
    let line_px = f64::from(element.offset_height()) / lines as f64;
    let top = f64::from(element.offset_top() - screen.offset_top()) + line_before as f64 * line_px;
    screen.set_scroll_top((top - f64::from(screen.client_height()) / 2.0).max(0.0) as i32);
}

/// Removes the marks.
pub fn clear() {
    if let Some((registry, _)) = registry() {
        for name in [ALL, CURRENT] {
            call(&registry, "delete", &Array::of1(&name.into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_match_case_ignored_and_bounded() {
        assert_eq!(find_all("Rate: 400\nrate: 200\n", "RATE", 10), vec![(0, 4), (10, 14)]);
        assert_eq!(find_all("aaaa", "aa", 10), vec![(0, 2), (2, 4)]);
        assert_eq!(find_all("abc", "", 10), vec![]);
        assert_eq!(find_all("xxxxxx", "x", 3).len(), 3);
        // Offsets stay bytes of the original text around other scripts.
        assert_eq!(find_all("µs µS", "µs", 10), vec![(0, 3), (4, 7)]);
    }
}
