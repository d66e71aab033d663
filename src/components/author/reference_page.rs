//! The authoring reference (`#/author/reference[/SECTION]`): docs/authoring.md
//! as the lab build carries it, each section at an address of its own, so
//! that a problem naming a section links straight to it.

use std::rc::Rc;

use clusterlab_engine::lab::doc::Doc;
use clusterlab_engine::lab::reference::{Reference, ROUTE};
use yew::prelude::*;

use crate::components::markdown::{inlines, Markdown};
use crate::hooks::use_fetched::use_fetched;

#[derive(Properties, PartialEq)]
pub struct ReferencePageProps {
    /// The section the address names, as a problem or a link wrote it.
    pub section: Option<String>,
}

/// The element id of a section's heading (apart from the app's own ids).
fn heading_id(section: &str) -> String {
    format!("reference-{section}")
}

#[function_component(ReferencePage)]
pub fn reference_page(props: &ReferencePageProps) -> Html {
    let fetched = use_fetched((), |()| crate::fetch::reference());
    let reference: Option<Rc<Reference>> = fetched.as_ref().and_then(|fetched| fetched.as_ref().ok()).cloned();
    // The intro and each section's text as docs once, not at every render.
    let docs = use_memo(reference.as_ref().map(|reference| Rc::as_ptr(reference) as usize), {
        let reference = reference.clone();
        move |_| {
            reference.map(|reference| {
                let sections: Vec<Rc<Doc>> = reference.sections.iter().map(|section| Rc::new(Doc(section.blocks.clone()))).collect();
                (Rc::new(Doc(reference.intro.clone())), sections)
            })
        }
    });
    let target = reference.as_ref().zip(props.section.as_ref()).and_then(|(reference, words)| reference.find(words)).map(|section| section.id.clone());
    {
        // The section the address names gets the keys and the view.
        use_effect_with((target.clone(), reference.is_some()), |(target, _)| {
            if let Some(id) = target {
                crate::components::focus_by_id(&heading_id(id), true);
            }
        });
    }
    let body = match (&fetched, reference.as_ref().zip((*docs).as_ref())) {
        (Some(Err(why)), _) => {
            html! { <p class="notice bad" role="alert">{ format!("The reference could not be loaded ({why}). Check the connection and reload the page.") }</p> }
        }
        (_, Some((reference, (intro, bodies)))) => {
            let missing = props.section.as_ref().filter(|_| target.is_none()).map(|words| {
                html! { <p class="notice bad" role="alert">{ format!("The reference has no section \u{201c}{words}\u{201d}; its sections are listed below.") }</p> }
            });
            html! {
                <>
                    { for missing }
                    <Markdown doc={intro.clone()} />
                    <nav class="reference-contents" aria-label="Sections">
                        <ul>
                            { for reference.sections.iter().filter(|section| section.level == 2).map(|section| html! {
                                <li><a href={format!("{ROUTE}/{}", section.id)}>{ inlines(&section.title) }</a></li>
                            }) }
                        </ul>
                    </nav>
                    { for reference.sections.iter().zip(bodies.iter()).map(|(section, body)| {
                        let title = inlines(&section.title);
                        let id = heading_id(&section.id);
                        let heading = if section.level == 2 {
                            html! { <h2 {id} tabindex="-1">{ title }</h2> }
                        } else {
                            html! { <h3 {id} tabindex="-1">{ title }</h3> }
                        };
                        html! { <>{ heading }<Markdown doc={body.clone()} /></> }
                    }) }
                </>
            }
        }
        _ => html! { <p role="status">{ "Loading the reference\u{2026}" }</p> },
    };
    html! {
        <main class="page reference">
            <p><a href="#/author">{ "Write a lab" }</a></p>
            <h1>{ "Lab file reference" }</h1>
            { body }
        </main>
    }
}
