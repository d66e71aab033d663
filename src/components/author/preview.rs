//! The lab as a trainee sees it (briefing, questions, terminal) at a
//! chosen variant, from the lab's data as the checks built it. Its progress
//! is this page's only: a preview never touches a trainee's saved lab.

use std::rc::Rc;

use clusterlab_engine::lab::authoring::live::Built;
use clusterlab_engine::Lab;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::components::lab_page::LabPage;
use crate::fetch::{Keep, LoadedLab};

#[derive(Properties, PartialEq)]
pub struct PreviewProps {
    pub built: Rc<Built>,
    pub seed: u64,
    pub on_seed: Callback<u64>,
    /// Whether the lab shown is older than the text (the text has problems).
    pub stale: bool,
}

#[function_component(Preview)]
pub fn preview(props: &PreviewProps) -> Html {
    let loaded = use_memo((props.built.clone(), props.seed), |(built, seed)| {
        Lab::from_json(&built.data).map(|lab| LoadedLab {
            lab: Rc::new(lab),
            data: built.data.as_str().into(),
            entry: built.entry.clone(),
            keep: Keep::Preview { seed: *seed },
            exam: None,
        })
    });
    let seed = props.seed;
    let step = |by: i64| {
        let on_seed = props.on_seed.clone();
        Callback::from(move |_: MouseEvent| on_seed.emit(seed.saturating_add_signed(by).max(1)))
    };
    let on_input = {
        let on_seed = props.on_seed.clone();
        Callback::from(move |event: Event| {
            if let Some(input) = event.target_dyn_into::<HtmlInputElement>() {
                if let Ok(seed) = input.value().trim().parse::<u64>() {
                    on_seed.emit(seed.max(1));
                }
            }
        })
    };
    let lab = match &*loaded {
        Ok(lab) => html! { <LabPage key={format!("{}-{}", lab.entry.digest, seed)} lab={lab.clone()} /> },
        Err(message) => html! { <p class="notice bad" role="alert">{ format!("The preview could not load this lab: {message}") }</p> },
    };
    html! {
        <section class="preview" aria-labelledby="preview-heading">
            <div class="preview-bar">
                <h2 id="preview-heading">{ "Preview" }</h2>
                if props.built.entry.variants {
                    <div class="variant-switcher" role="group" aria-label="Variant">
                        <button type="button" onclick={step(-1)} disabled={seed <= 1} aria-label="Previous variant">{ "\u{2190}" }</button>
                        <label>{ "Variant " }<input type="number" min="1" value={seed.to_string()} onchange={on_input} /></label>
                        <button type="button" onclick={step(1)} aria-label="Next variant">{ "\u{2192}" }</button>
                    </div>
                } else {
                    <p class="variant-note">{ "This lab has no variables: every trainee gets the same lab." }</p>
                }
            </div>
            if props.stale {
                <p class="notice" role="status">{ "The preview shows the last version of the file without errors." }</p>
            }
            { lab }
        </section>
    }
}
