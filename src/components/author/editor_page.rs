//! The author page: a lab file in the editor, its problems as the checks
//! find them, and the preview of the last version that compiled. The file
//! is saved to "My labs" as it changes; it leaves as a `.toml` file or as a
//! share link.

use std::rc::Rc;

use clusterlab_engine::lab::authoring::live::{Built, Checked, Problem};
use clusterlab_engine::lab::authoring::{file, share};
use clusterlab_engine::limits::MAX_LAB_BYTES;
use gloo::timers::callback::Timeout;
use wasm_bindgen_futures::JsFuture;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::author::checker::{Checker, Heard};
use crate::author::STARTER;
use crate::components::author::code_editor::{CodeEditor, Jump};
use crate::components::author::preview::Preview;
use crate::components::author::problem_list::ProblemList;
use crate::download::download;
use crate::my_labs::{self, MyLab};

/// The checks run this long after the last keystroke.
const CHECK_AFTER_MS: u32 = 300;

/// The author page's state, as a reducer.
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    /// The lab's key in "My labs"; None for a new lab nobody has edited.
    pub key: Option<String>,
    pub source: AttrValue,
    /// Counts edits: the checks and saving follow it.
    pub revision: u64,
    /// The checks' newest answer for this text; None while they run.
    pub checked: Option<Rc<Checked>>,
    /// The last lab that compiled, for the preview.
    pub built: Option<Rc<Built>>,
    pub seed: u64,
    pub jump: Option<Jump>,
    /// A share link, or why there is none.
    pub share: Option<Result<String, String>>,
    pub notice: Option<String>,
    pub saved: bool,
}

pub enum DraftAction {
    Edit(String),
    /// A file opened or dropped: it replaces the text.
    Open(String),
    Heard(Heard),
    Seed(u64),
    JumpTo(usize, usize),
    Share(Result<String, String>),
    Saved {
        key: String,
        result: Result<(), String>,
    },
    Notice(String),
}

impl Reducible for Draft {
    type Action = DraftAction;

    fn reduce(self: Rc<Self>, action: DraftAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            DraftAction::Edit(text) | DraftAction::Open(text) => {
                if *next.source == *text {
                    return self;
                }
                next.source = text.into();
                next.revision += 1;
                next.checked = None;
                next.share = None;
                next.saved = false;
            }
            DraftAction::Heard(Heard::Checked(checked)) => {
                if let Some(built) = &checked.built {
                    if next.built.as_deref() != Some(built) {
                        next.built = Some(Rc::new(built.clone()));
                    }
                }
                next.checked = Some(checked);
            }
            DraftAction::Heard(Heard::Failed(message)) => {
                next.checked =
                    Some(Rc::new(Checked { problems: vec![Problem { line: 1, column: 1, message }], built: None, complete: true, gaming: Vec::new() }));
            }
            DraftAction::Seed(seed) => next.seed = seed,
            DraftAction::JumpTo(line, column) => {
                let nonce = next.jump.map_or(0, |jump| jump.nonce + 1);
                next.jump = Some(Jump { line, column, nonce });
            }
            DraftAction::Share(share) => next.share = Some(share),
            DraftAction::Saved { key, result } => {
                next.key = Some(key);
                match result {
                    Ok(()) => next.saved = true,
                    Err(notice) => next.notice = Some(notice),
                }
            }
            DraftAction::Notice(notice) => next.notice = Some(notice),
        }
        Rc::new(next)
    }
}

impl Draft {
    /// The draft a page opens with: the saved lab `key`, or the starter.
    fn open(key: Option<&str>) -> Draft {
        let (labs, unreadable) = my_labs::list();
        let saved = key.and_then(|key| labs.into_iter().find(|lab| lab.key == key));
        let notice = match (key, &saved) {
            (Some(key), None) => Some(format!("No lab is saved in this browser under \u{201c}{key}\u{201d}; this is a new one.")),
            _ => unreadable,
        };
        Draft {
            key: saved.as_ref().map(|lab| lab.key.clone()),
            source: saved.map_or_else(|| AttrValue::from(STARTER), |lab| lab.source.into()),
            revision: 0,
            checked: None,
            built: None,
            seed: 1,
            jump: None,
            share: None,
            notice,
            saved: key.is_some(),
        }
    }

    /// What the problems list says about the checks.
    fn status(&self) -> String {
        match &self.checked {
            None => "Checking\u{2026}".to_string(),
            Some(checked) if !checked.complete => "Checking that every fault shows and every answer grades\u{2026}".to_string(),
            Some(checked) if checked.problems.is_empty() => "No problems: the lab passes every check.".to_string(),
            Some(checked) => format!("{} problem{}.", checked.problems.len(), if checked.problems.len() == 1 { "" } else { "s" }),
        }
    }

    fn problems(&self) -> Rc<Vec<Problem>> {
        Rc::new(self.checked.as_ref().map(|checked| checked.problems.clone()).unwrap_or_default())
    }

    /// The file name an export gets: the lab's id as typed now (else as it
    /// last compiled).
    fn file_name(&self) -> String {
        let typed = file::named_in(&self.source).0.filter(|id| id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        typed.or_else(|| self.built.as_ref().map(|built| built.entry.id.clone())).unwrap_or_else(|| "lab".to_string()) + ".toml"
    }

    /// The title and summary My labs lists: the title as typed now.
    fn listed(&self) -> (String, String) {
        let (title, summary) =
            self.built.as_ref().map_or_else(|| ("Untitled lab".to_string(), String::new()), |built| (built.entry.title.clone(), built.entry.summary.clone()));
        (file::named_in(&self.source).1.unwrap_or(title), summary)
    }
}

/// A new key for "My labs": the time, in base 36.
pub fn new_key() -> String {
    let mut n = js_sys::Date::now() as u64;
    let mut digits = Vec::new();
    while n > 0 {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
    }
    format!("lab-{}", digits.iter().rev().collect::<String>())
}

/// Reads a picked or dropped file into the editor.
fn read_file(file: web_sys::File, dispatcher: UseReducerDispatcher<Draft>) {
    if file.size() > MAX_LAB_BYTES as f64 {
        dispatcher.dispatch(DraftAction::Notice(format!("{} is over the {} MiB a lab file may have.", file.name(), MAX_LAB_BYTES >> 20)));
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        match JsFuture::from(file.text()).await.ok().and_then(|text| text.as_string()) {
            Some(text) => dispatcher.dispatch(DraftAction::Open(text)),
            None => dispatcher.dispatch(DraftAction::Notice(format!("{} could not be read as text.", file.name()))),
        }
    });
}

#[derive(Properties, PartialEq)]
pub struct EditorPageProps {
    /// The "My labs" key to open; None for a new lab.
    pub saved_key: Option<String>,
}

#[function_component(EditorPage)]
pub fn editor_page(props: &EditorPageProps) -> Html {
    let draft = {
        let key = props.saved_key.clone();
        use_reducer(move || Draft::open(key.as_deref()))
    };
    let checker = {
        let dispatcher = draft.dispatcher();
        use_memo((), move |_| Checker::start(Callback::from(move |heard| dispatcher.dispatch(DraftAction::Heard(heard)))))
    };

    // The checks, and saving, a moment after the last edit.
    {
        let draft = draft.clone();
        let checker = checker.clone();
        use_effect_with(draft.revision, move |revision| {
            let first = *revision == 0;
            let timeout = Timeout::new(if first { 0 } else { CHECK_AFTER_MS }, move || {
                checker.check(&draft.source);
                // An untouched new lab is not saved: opening the page adds nothing to "My labs".
                if first && draft.key.is_none() {
                    return;
                }
                let key = draft.key.clone().unwrap_or_else(new_key);
                let (title, summary) = draft.listed();
                let result = my_labs::save(MyLab { key: key.clone(), title, summary, source: draft.source.to_string(), saved_ms: js_sys::Date::now() });
                if draft.key.is_none() {
                    // The address names the saved lab from now on, without a new history entry.
                    if let Ok(history) = gloo::utils::window().history() {
                        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("#/author/{key}")));
                    }
                }
                draft.dispatch(DraftAction::Saved { key, result });
            });
            move || drop(timeout)
        });
    }
    // A lab that compiled with a new title is saved under it.
    {
        let draft = draft.clone();
        let title = draft.built.as_ref().map(|built| (built.entry.title.clone(), built.entry.summary.clone()));
        use_effect_with(title, move |title| {
            if let (Some((title, summary)), Some(key)) = (title, &draft.key) {
                let _ = my_labs::save(MyLab {
                    key: key.clone(),
                    title: title.clone(),
                    summary: summary.clone(),
                    source: draft.source.to_string(),
                    saved_ms: js_sys::Date::now(),
                });
            }
        });
    }

    let on_change = {
        let dispatcher = draft.dispatcher();
        Callback::from(move |text| dispatcher.dispatch(DraftAction::Edit(text)))
    };
    let on_drop_file = {
        let dispatcher = draft.dispatcher();
        Callback::from(move |file| read_file(file, dispatcher.clone()))
    };
    let on_pick_file = {
        let dispatcher = draft.dispatcher();
        Callback::from(move |event: Event| {
            if let Some(input) = event.target_dyn_into::<HtmlInputElement>() {
                if let Some(file) = input.files().and_then(|files| files.get(0)) {
                    read_file(file, dispatcher.clone());
                }
                // The same file picked again is a new pick.
                input.set_value("");
            }
        })
    };
    let on_pick_problem = {
        let dispatcher = draft.dispatcher();
        Callback::from(move |(line, column)| dispatcher.dispatch(DraftAction::JumpTo(line, column)))
    };
    let on_seed = {
        let dispatcher = draft.dispatcher();
        Callback::from(move |seed| dispatcher.dispatch(DraftAction::Seed(seed)))
    };
    let on_export = {
        let draft = draft.clone();
        Callback::from(move |_: MouseEvent| {
            if download(&draft.file_name(), "application/toml", &draft.source).is_err() {
                draft.dispatch(DraftAction::Notice("This browser could not save the file.".into()));
            }
        })
    };
    let on_share = {
        let draft = draft.clone();
        Callback::from(move |_: MouseEvent| {
            let problems = draft.checked.as_ref().map_or(0, |checked| checked.problems.len());
            if problems > 0
                && !gloo::dialogs::confirm(&format!(
                    "This lab has {problems} problem{}: whoever opens the link sees {} and cannot run the lab. Copy the link anyway?",
                    if problems == 1 { "" } else { "s" },
                    if problems == 1 { "it" } else { "them" }
                ))
            {
                return;
            }
            let location = gloo::utils::window().location();
            let share = share::encode(&draft.source)
                .map(|data| format!("{}{}#/shared/{data}", location.origin().unwrap_or_default(), location.pathname().unwrap_or_default()));
            if let Ok(link) = &share {
                // The link also shows below, for a browser that refuses the clipboard.
                let _ = gloo::utils::window().navigator().clipboard().write_text(link);
            }
            draft.dispatch(DraftAction::Share(share));
        })
    };
    let on_delete = {
        let draft = draft.clone();
        Callback::from(move |_: MouseEvent| {
            let Some(key) = &draft.key else { return };
            if gloo::dialogs::confirm("Delete this lab from My labs? Export it first to keep a copy.") {
                match my_labs::remove(key) {
                    Ok(()) => {
                        let _ = gloo::utils::window().location().set_hash("#/");
                    }
                    Err(notice) => draft.dispatch(DraftAction::Notice(notice)),
                }
            }
        })
    };

    let compiled_now = draft.checked.as_ref().is_some_and(|checked| checked.built.is_some());
    let stale = draft.checked.is_some() && !compiled_now;
    let share = match &draft.share {
        None => html! {},
        Some(Ok(link)) => html! {
            <div class="share-link">
                <label>{ "Share link " }<input type="text" readonly=true value={link.clone()} /></label>
                <p role="status">{ "Copied. Anyone who opens the link gets this lab, checked before it runs; nothing is stored on a server." }</p>
            </div>
        },
        Some(Err(reason)) => html! { <p class="notice bad share-refused" role="alert">{ format!("This lab cannot be shared as a link: {reason}") }</p> },
    };
    html! {
        <main class="page author">
            <div class="author-head">
                <h1>{ "Write a lab" }</h1>
                <p class="lead">{ "Edit the lab file; the checks run as you type, and the preview shows the lab as a trainee sees it. Labs are simulations: nothing runs on a real cluster." }</p>
            </div>
            <div class="author-tools" role="toolbar" aria-label="Lab file actions">
                <label class="file-button">{ "Open a lab file\u{2026}" }<input type="file" accept=".toml,text/plain" onchange={on_pick_file} /></label>
                <button type="button" onclick={on_export}>{ "Export .toml" }</button>
                <button type="button" onclick={on_share}>{ "Copy link" }</button>
                <a class="reference-link" href={clusterlab_engine::lab::reference::ROUTE} target="_blank" rel="noopener">{ "Lab file reference" }<span class="visually-hidden">{ " (opens in a new tab)" }</span></a>
                if draft.key.is_some() {
                    <button type="button" onclick={on_delete}>{ "Delete" }</button>
                }
                <span class="saved-state" aria-live="polite">{ if draft.saved { "Saved in My labs" } else if draft.key.is_some() { "Saving\u{2026}" } else { "" } }</span>
            </div>
            { share }
            if let Some(notice) = &draft.notice {
                <p class="notice bad" role="alert">{ notice }</p>
            }
            <div class="author-body">
                <section class="author-editor" aria-label="Editor">
                    <CodeEditor text={draft.source.clone()} {on_change} problems={draft.problems()} jump={draft.jump} {on_drop_file} />
                    <ProblemList problems={draft.problems()} status={AttrValue::from(draft.status())} on_pick={Some(on_pick_problem)} />
                    if let Some(checked) = draft.checked.as_ref().filter(|checked| !checked.gaming.is_empty()) {
                        <section class="gaming" aria-labelledby="gaming-heading">
                            <h3 id="gaming-heading">{ "Gaming check" }</h3>
                            <p>{ "What each gaming strategy earns on this lab (at most 20% passes), as clusterlab test plays them:" }</p>
                            <ul>{ for checked.gaming.iter().map(|line| html! { <li>{ line.clone() }</li> }) }</ul>
                        </section>
                    }
                </section>
                if let Some(built) = &draft.built {
                    <Preview built={built.clone()} seed={draft.seed} {on_seed} {stale} />
                } else {
                    <section class="preview empty"><h2>{ "Preview" }</h2><p>{ "The preview appears once the lab file has no errors." }</p></section>
                }
            </div>
        </main>
    }
}
