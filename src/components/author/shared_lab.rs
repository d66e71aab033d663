//! A lab opened from a share link (`#/shared/DATA`). The link is decoded
//! within its bounds and the lab goes through every check before anything
//! runs; a lab with problems does not run. One that passes runs as a
//! trainee's lab, its progress saved apart from the catalog's labs.

use std::rc::Rc;

use clusterlab_engine::lab::authoring::live::Built;
use clusterlab_engine::lab::authoring::share;
use clusterlab_engine::lab::catalog::Entry;
use clusterlab_engine::Lab;
use yew::prelude::*;

use crate::author::checker::{Checker, Heard};
use crate::components::author::problem_list::ProblemList;
use crate::components::lab_page::LabPage;
use crate::fetch::{Keep, LoadedLab};
use crate::my_labs::{self, MyLab};

/// The lab as a shared lab runs: its id prefixed, so that its saved
/// progress never mixes with a catalog lab of the same id.
fn shared(built: &Built) -> Result<LoadedLab, String> {
    let mut lab = Lab::from_json(&built.data)?;
    lab.id = format!("shared-{}", lab.id);
    let data = lab.to_json();
    let entry = Entry::new(&lab, &data);
    Ok(LoadedLab { lab: Rc::new(lab), data: data.into(), entry, keep: Keep::Saved, exam: None })
}

#[derive(Properties, PartialEq)]
pub struct SharedLabProps {
    /// What follows `#/shared/`.
    pub data: String,
}

#[function_component(SharedLab)]
pub fn shared_lab(props: &SharedLabProps) -> Html {
    let source = use_memo(props.data.clone(), |data| share::decode(data));
    let heard = use_state(|| None::<Heard>);
    {
        let heard = heard.clone();
        let source = source.clone();
        use_effect_with((), move |_| {
            let checker = match &*source {
                Ok(source) => {
                    let checker = Checker::start(Callback::from(move |answer| heard.set(Some(answer))));
                    checker.check(source);
                    Some(checker)
                }
                Err(_) => None,
            };
            move || drop(checker)
        });
    }
    let edit_copy = {
        let source = source.clone();
        Callback::from(move |_: MouseEvent| {
            if let Ok(source) = &*source {
                let key = crate::components::author::editor_page::new_key();
                let title = "Lab from a link".to_string();
                if my_labs::save(MyLab { key: key.clone(), title, summary: String::new(), source: source.clone(), saved_ms: js_sys::Date::now() }).is_ok() {
                    let _ = gloo::utils::window().location().set_hash(&format!("#/author/{key}"));
                }
            }
        })
    };
    let refused = |reason: String| {
        html! {
            <main class="page shared">
                <h1>{ "This link cannot be opened" }</h1>
                <p class="notice bad" role="alert">{ reason }</p>
                <a href="#/">{ "Back to the catalog" }</a>
            </main>
        }
    };
    if let Err(reason) = &*source {
        return refused(format!("It does not hold a lab ClusterLab can open: {reason}."));
    }
    match &*heard {
        Some(Heard::Checked(checked)) if !checked.complete => html! {
            <main class="page shared loading"><p role="status">{ "Checking the lab from this link before it runs\u{2026}" }</p></main>
        },
        None => html! {
            <main class="page shared loading"><p role="status">{ "Checking the lab from this link before it runs\u{2026}" }</p></main>
        },
        Some(Heard::Failed(reason)) => refused(format!("It could not be checked: {reason}.")),
        Some(Heard::Checked(checked)) if !checked.problems.is_empty() || checked.built.is_none() => html! {
            <main class="page shared">
                <h1>{ "This lab from a link has problems" }</h1>
                <p class="notice bad" role="alert">{ "It did not pass the checks, so it does not run. Its author can fix it; you can open a copy on the author page." }</p>
                <ProblemList problems={Rc::new(checked.problems.clone())} status={AttrValue::from(format!("{} problems.", checked.problems.len()))} />
                <button type="button" onclick={edit_copy}>{ "Edit a copy" }</button>
            </main>
        },
        Some(Heard::Checked(checked)) => match checked.built.as_ref().map(shared) {
            Some(Ok(lab)) => {
                let key = lab.entry.digest.clone();
                html! {
                <>
                    <div class="notice shared-notice" role="status">
                        <p>{ "This lab came from a link, not from this site's catalog. It passed every check before it ran. Like every lab here, it is a simulation: nothing runs on a real cluster." }</p>
                        <button type="button" onclick={edit_copy}>{ "Edit a copy" }</button>
                    </div>
                    <LabPage {key} {lab} />
                </>
                }
            }
            Some(Err(reason)) => refused(reason),
            None => refused("it holds no lab".to_string()),
        },
    }
}
