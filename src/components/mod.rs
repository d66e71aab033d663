pub mod app;
#[cfg(feature = "authoring")]
pub mod author;
pub mod catalog_page;
pub mod cmi5_bar;
pub mod find_bar;
pub mod lab_page;
pub mod lrs_panel;
pub mod markdown;
pub mod metrics_panel;
pub mod notices;
pub mod pager;
pub mod question_card;
pub mod review_page;
pub mod shell_tabs;
pub mod terminal;

/// Focuses the element with `id`: scrolled into view when a control sends
/// the keys there (a skip link that left the focus off-screen would leave a
/// keyboard user lost), in place when the page opens (the briefing stays
/// in view).
pub fn focus_by_id(id: &str, scroll: bool) {
    use wasm_bindgen::JsCast;
    if let Some(element) = gloo::utils::document().get_element_by_id(id).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
        let options = web_sys::FocusOptions::new();
        options.set_prevent_scroll(!scroll);
        let _ = element.focus_with_options(&options);
    }
}
