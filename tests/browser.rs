//! Browser tests: components rendered by Yew in headless Chromium
//! (wasm-bindgen-test), with the engine in the page (`inline-engine`: the
//! test runner has no worker module). Run by scripts/test.sh after
//! `clusterlab build labs --out target/lab-data`.
#![cfg(target_arch = "wasm32")]

use std::rc::Rc;
use std::time::Duration;

use clusterlab_engine::lab::catalog::Catalog;
use clusterlab_engine::lab::doc::{Block, Doc, Inline};
use clusterlab_engine::Lab;
use clusterlab_web::components::lab_page::{LabPage, LabPageProps};
use clusterlab_web::components::markdown::{Markdown, MarkdownProps};
use clusterlab_web::engine::Engine;
use clusterlab_web::fetch::{Keep, LoadedLab};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlInputElement, InputEvent, InputEventInit, KeyboardEvent, KeyboardEventInit};
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

const LAB: &str = include_str!("../target/lab-data/first-look.json");
const INDEX: &str = include_str!("../target/lab-data/index.json");

fn mount_point() -> Element {
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    root
}

async fn settle(ms: u64) {
    yew::platform::time::sleep(Duration::from_millis(ms)).await;
}

#[wasm_bindgen_test]
async fn markdown_renders_elements_and_shows_raw_html_as_text() {
    let root = mount_point();
    let doc = Doc(vec![Block::Paragraph(vec![
        Inline::Text("Hello <script>window.pwned = 1</script> ".into()),
        Inline::Strong(vec![Inline::Text("bold".into())]),
        Inline::Link { href: "https://example.org".into(), children: vec![Inline::Text("good".into())] },
    ])]);
    yew::Renderer::<Markdown>::with_root_and_props(root.clone(), MarkdownProps { doc: Rc::new(doc), class: Default::default() }).render();
    settle(20).await;
    assert!(root.query_selector("script").unwrap().is_none());
    assert!(root.text_content().unwrap().contains("<script>"));
    assert_eq!(root.query_selector("strong").unwrap().unwrap().text_content().unwrap(), "bold");
    let link = root.query_selector("a").unwrap().unwrap();
    assert_eq!(link.get_attribute("href").as_deref(), Some("https://example.org"));
    assert_eq!(link.get_attribute("rel").as_deref(), Some("noopener noreferrer"));
}

#[derive(Properties, PartialEq)]
struct HostProps {
    lab: LoadedLab,
}

/// A lab page with an engine, as the app provides one.
#[function_component(Host)]
fn host(props: &HostProps) -> Html {
    let engine = use_memo((), |_| Engine::start());
    html! {
        <ContextProvider<Rc<Engine>> context={engine}>
            <LabPage ..LabPageProps { lab: props.lab.clone(), variant: None, next: None } />
        </ContextProvider<Rc<Engine>>>
    }
}

fn loaded() -> LoadedLab {
    let catalog = Catalog::from_json(INDEX).unwrap();
    let entry = catalog.find("first-look").unwrap().clone();
    LoadedLab { lab: Rc::new(Lab::from_json(LAB).unwrap()), data: LAB.into(), entry, keep: Keep::Saved, exam: None }
}

fn key(input: &HtmlInputElement, key: &str) {
    let init = KeyboardEventInit::new();
    init.set_key(key);
    init.set_bubbles(true);
    input.dispatch_event(&KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap()).unwrap();
}

fn type_line(input: &HtmlInputElement, line: &str) {
    input.set_value(line);
    let init = InputEventInit::new();
    init.set_bubbles(true);
    input.dispatch_event(&InputEvent::new_with_event_init_dict("input", &init).unwrap()).unwrap();
}

fn texts(root: &Element, selector: &str) -> String {
    let nodes = root.query_selector_all(selector).unwrap();
    (0..nodes.length()).map(|at| nodes.item(at).unwrap().text_content().unwrap()).collect()
}

#[wasm_bindgen_test]
async fn a_lab_page_runs_commands_as_text_and_saves_its_state() {
    gloo::utils::window().local_storage().unwrap().unwrap().remove_item("clusterlab.lab.first-look").unwrap();
    let root = mount_point();
    yew::Renderer::<Host>::with_root_and_props(root.clone(), HostProps { lab: loaded() }).render();
    settle(50).await;
    let input: HtmlInputElement = root.query_selector(".terminal-input").unwrap().unwrap().dyn_into().unwrap();
    for line in ["echo '<b>x</b>'", "nvidia-smi -L"] {
        type_line(&input, line);
        key(&input, "Enter");
        settle(60).await;
    }
    // Output is text, never markup.
    assert!(root.query_selector(".scrollback b").unwrap().is_none());
    let stdout = texts(&root, ".scrollback .stdout");
    assert!(stdout.contains("<b>x</b>"), "{stdout}");
    assert_eq!(stdout.lines().filter(|line| line.starts_with("GPU ")).count(), 8, "{stdout}");
    assert_eq!(input.value(), "");
    assert!(texts(&root, ".scrollback .command").contains("user@gpu-001:~$ nvidia-smi -L"));

    // The store was saved (shortly after the last change): a new page on the
    // same lab shows the same screen, and runs nothing.
    settle(400).await;
    let saved = gloo::utils::window().local_storage().unwrap().unwrap().get_item("clusterlab.lab.first-look").unwrap().unwrap();
    assert!(saved.starts_with("{\"version\":2,"), "{saved}");
    let again = mount_point();
    yew::Renderer::<Host>::with_root_and_props(again.clone(), HostProps { lab: loaded() }).render();
    settle(80).await;
    assert_eq!(texts(&again, ".scrollback .stdout"), stdout);
}

/// The author page's editor: the text area carries the name "Lab file",
/// the text is highlighted beneath it as text (never markup), and the
/// gutter marks the lines with problems.
#[cfg(feature = "authoring")]
#[wasm_bindgen_test]
async fn the_lab_file_editor_highlights_text_and_marks_problem_lines() {
    use clusterlab_engine::lab::authoring::live::Problem;
    use clusterlab_web::components::author::code_editor::{CodeEditor, CodeEditorProps};
    let root = mount_point();
    let problems = Rc::new(vec![Problem { line: 2, column: 6, message: "unknown key `idd`".into() }]);
    let props =
        CodeEditorProps { text: "[lab]\nidd = \"<b>x</b>\"\n".into(), on_change: Callback::noop(), problems, jump: None, on_drop_file: Callback::noop() };
    yew::Renderer::<CodeEditor>::with_root_and_props(root.clone(), props).render();
    settle(30).await;
    let area = root.query_selector("textarea").unwrap().unwrap();
    assert_eq!(area.get_attribute("aria-label").as_deref(), Some("Lab file"));
    assert!(root.query_selector(".highlight b").unwrap().is_none());
    assert_eq!(texts(&root, ".highlight .tok-table"), "[lab]");
    assert_eq!(texts(&root, ".highlight .tok-string"), "\"<b>x</b>\"");
    let marked = root.query_selector(".line-number.has-problem").unwrap().unwrap();
    assert_eq!(marked.text_content().as_deref(), Some("2"));
    assert_eq!(marked.get_attribute("title").as_deref(), Some("2:6: unknown key `idd`"));
}
