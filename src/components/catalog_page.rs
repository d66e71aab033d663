//! The list of labs, from the catalog the build wrote.

use clusterlab_engine::lab::catalog::Catalog;
use std::rc::Rc;
use yew::prelude::*;

use crate::hooks::Route;
use crate::storage;

#[derive(Properties, PartialEq)]
pub struct CatalogPageProps {
    pub catalog: Rc<Catalog>,
    pub navigate: Callback<Route>,
}

/// The values of one facet, each once, in the catalog's order (the labs
/// are few; no sort is linked for this).
fn facet<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for value in values {
        if !found.iter().any(|seen| seen == value) {
            found.push(value.to_string());
        }
    }
    found
}

/// A filter over one facet: every value, or one.
fn filter_select(label: &str, values: &[String], chosen: &UseStateHandle<String>) -> Html {
    let on_change = {
        let chosen = chosen.clone();
        Callback::from(move |event: Event| {
            if let Some(select) = event.target_dyn_into::<web_sys::HtmlSelectElement>() {
                chosen.set(select.value());
            }
        })
    };
    let id = format!("filter-{}", label.to_ascii_lowercase());
    html! {
        <span class="filter">
            <label for={id.clone()}>{ label }</label>
            <select {id} onchange={on_change}>
                <option value="" selected={chosen.is_empty()}>{ "All" }</option>
                { for values.iter().map(|value| html! { <option value={value.clone()} selected={**chosen == *value}>{ value }</option> }) }
            </select>
        </span>
    }
}

#[function_component(CatalogPage)]
pub fn catalog_page(props: &CatalogPageProps) -> Html {
    let (stage, level, tag) = (use_state(String::new), use_state(String::new), use_state(String::new));
    let labs = &props.catalog.labs;
    let stages = facet(labs.iter().filter_map(|lab| lab.stage.as_deref()));
    let levels = facet(labs.iter().filter_map(|lab| lab.level.as_deref()));
    let tags = facet(labs.iter().flat_map(|lab| lab.tags.iter().map(String::as_str)));
    let shown = |lab: &&clusterlab_engine::lab::catalog::Entry| {
        (stage.is_empty() || lab.stage.as_deref() == Some(stage.as_str()))
            && (level.is_empty() || lab.level.as_deref() == Some(level.as_str()))
            && (tag.is_empty() || lab.tags.contains(&tag))
    };
    let cards = labs.iter().filter(shown).map(|lab| {
        let open = {
            let navigate = props.navigate.clone();
            let id = lab.id.clone();
            Callback::from(move |event: MouseEvent| {
                event.prevent_default();
                navigate.emit(Route::Lab(id.clone(), None));
            })
        };
        let facts: Vec<String> = [
            lab.stage.clone(),
            lab.level.clone(),
            lab.minutes.map(|m| format!("{m} min")),
            Some(format!("{} node{}", lab.nodes, if lab.nodes == 1 { "" } else { "s" })),
            Some(lab.preset.clone()),
        ]
        .into_iter()
        .flatten()
        .collect();
        html! {
            <li class="lab-card" data-lab={lab.id.clone()}>
                <h2><a href={Route::Lab(lab.id.clone(), None).to_hash()} onclick={open}>{ &lab.title }</a></h2>
                <p>{ &lab.summary }</p>
                <p class="facts">{ facts.join(" \u{b7} ") }</p>
                <p class="progress">{ match storage::summary(&lab.id) {
                    Some(summary) => format!("Score {} / {} \u{b7} best {}", summary.score, summary.possible, summary.best),
                    None => "Not started".to_string(),
                } }</p>
                if !lab.tags.is_empty() {
                    <ul class="tags">{ for lab.tags.iter().map(|tag| html! { <li>{ tag }</li> }) }</ul>
                }
            </li>
        }
    });
    html! {
        <main class="page catalog">
            <h1>{ "Labs" }</h1>
            <p class="lead">{ "Practise reading and operating GPU clusters with the commands you use on real ones." }</p>
            <div class="filters" role="group" aria-label="Filter the labs">
                { filter_select("Stage", &stages, &stage) }
                { filter_select("Level", &levels, &level) }
                { filter_select("Tag", &tags, &tag) }
            </div>
            <ul class="lab-list">{ for cards }</ul>
        </main>
    }
}
