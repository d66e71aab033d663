//! Browser tests: components rendered by Yew in headless Chromium
//! (wasm-bindgen-test). Run by scripts/test.sh.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use clusterlab_web::catalog;
use clusterlab_web::components::markdown::{Markdown, MarkdownProps};
use clusterlab_web::components::terminal::{Terminal, TerminalProps};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlInputElement, InputEvent, InputEventInit, KeyboardEvent, KeyboardEventInit};

wasm_bindgen_test_configure!(run_in_browser);

fn mount_point() -> Element {
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    root
}

async fn settle() {
    yew::platform::time::sleep(Duration::from_millis(20)).await;
}

#[wasm_bindgen_test]
async fn markdown_shows_raw_html_as_text_and_drops_unsafe_links() {
    let root = mount_point();
    let props = MarkdownProps {
        source: "Hello <script>window.pwned = 1</script> **bold** [bad](javascript:alert(1)) [good](https://example.org)".into(),
        class: Default::default(),
    };
    yew::Renderer::<Markdown>::with_root_and_props(root.clone(), props).render();
    settle().await;
    assert!(root.query_selector("script").unwrap().is_none());
    assert!(root.text_content().unwrap().contains("<script>"));
    assert_eq!(root.query_selector("strong").unwrap().unwrap().text_content().unwrap(), "bold");
    let links = root.query_selector_all("a").unwrap();
    assert_eq!(links.length(), 2);
    let href = |at| links.item(at).unwrap().dyn_into::<Element>().unwrap().get_attribute("href");
    assert_eq!(href(0), None);
    assert_eq!(href(1).as_deref(), Some("https://example.org"));
}

#[wasm_bindgen_test]
async fn terminal_runs_a_command_and_shows_its_output_as_text() {
    let root = mount_point();
    let lab = catalog::find("first-look").expect("the first-look lab is compiled in");
    let props = TerminalProps { lab, seed: 1, replay: vec!["echo '<b>x</b>'".into()], on_run: Default::default() };
    yew::Renderer::<Terminal>::with_root_and_props(root.clone(), props).render();
    settle().await;

    // The replayed line is shown as text, not markup.
    assert!(root.query_selector(".screen b").unwrap().is_none());
    assert!(root.text_content().unwrap().contains("<b>x</b>"));
    assert!(root.text_content().unwrap().contains("user@gpu-001:~$"));

    let input: HtmlInputElement = root.query_selector(".terminal-input").unwrap().unwrap().dyn_into().unwrap();
    input.set_value("nvidia-smi -L");
    let init = InputEventInit::new();
    init.set_bubbles(true);
    input.dispatch_event(&InputEvent::new_with_event_init_dict("input", &init).unwrap()).unwrap();
    settle().await;
    let init = KeyboardEventInit::new();
    init.set_key("Enter");
    init.set_bubbles(true);
    input.dispatch_event(&KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap()).unwrap();
    settle().await;

    let stdout: String = {
        let nodes = root.query_selector_all(".line.stdout").unwrap();
        (0..nodes.length()).map(|at| nodes.item(at).unwrap().text_content().unwrap()).collect()
    };
    assert_eq!(stdout.lines().filter(|line| line.starts_with("GPU ")).count(), 8, "{stdout}");
    assert_eq!(input.value(), "");
}
