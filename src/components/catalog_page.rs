//! The list of labs, from the catalog the build wrote.

use clusterlab_engine::lab::catalog::{Catalog, Entry};
use std::rc::Rc;
use yew::prelude::*;

use crate::hooks::{CatalogView, Route};
use crate::storage;

#[derive(Properties, PartialEq)]
pub struct CatalogPageProps {
    pub catalog: Rc<Catalog>,
    /// The filters and order, from the address.
    pub view: CatalogView,
    pub navigate: Callback<Route>,
}

/// The orders a trainee may list the labs in: the path (the catalog's
/// own order), by title, shortest first.
const ORDERS: [(&str, &str); 3] = [("", "The path, in order"), ("title", "Title"), ("minutes", "Shortest first")];

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

/// Orders the listed labs by `key`, stably. An insertion sort: the labs
/// are few, and the standard sort would add about 10 KB to the page (one
/// key type, so one copy of this).
fn order_by(labs: &mut [&Entry], key: fn(&Entry) -> String) {
    for at in 1..labs.len() {
        let mut i = at;
        while i > 0 && key(labs[i - 1]) > key(labs[i]) {
            labs.swap(i - 1, i);
            i -= 1;
        }
    }
}

/// A select over one setting of the view: its options as (value, label).
fn view_select(label: &str, options: &[(String, String)], chosen: &str, change: Callback<String>) -> Html {
    let on_change = Callback::from(move |event: Event| {
        if let Some(select) = event.target_dyn_into::<web_sys::HtmlSelectElement>() {
            change.emit(select.value());
        }
    });
    let id = format!("filter-{}", label.to_ascii_lowercase());
    html! {
        <span class="filter">
            <label for={id.clone()}>{ label }</label>
            <select {id} onchange={on_change}>
                { for options.iter().map(|(value, text)| html! { <option value={value.clone()} selected={chosen == value}>{ text }</option> }) }
            </select>
        </span>
    }
}

/// A filter over one facet: every value, or one.
fn filter_options(values: &[String]) -> Vec<(String, String)> {
    std::iter::once((String::new(), "All".to_string())).chain(values.iter().map(|value| (value.clone(), value.clone()))).collect()
}

#[function_component(CatalogPage)]
pub fn catalog_page(props: &CatalogPageProps) -> Html {
    let view = &props.view;
    let labs = &props.catalog.labs;
    let stages = facet(labs.iter().filter_map(|lab| lab.stage.as_deref()));
    let levels = facet(labs.iter().filter_map(|lab| lab.level.as_deref()));
    let tags = facet(labs.iter().flat_map(|lab| lab.tags.iter().map(String::as_str)));
    // Each control changes one setting of the view, in the address.
    let set = |apply: fn(&mut CatalogView, String)| {
        let (navigate, view) = (props.navigate.clone(), view.clone());
        Callback::from(move |value: String| {
            let mut next = view.clone();
            apply(&mut next, value);
            navigate.emit(Route::Catalog(next));
        })
    };
    let shown = |lab: &&Entry| {
        (view.stage.is_empty() || lab.stage.as_deref() == Some(view.stage.as_str()))
            && (view.level.is_empty() || lab.level.as_deref() == Some(view.level.as_str()))
            && (view.tag.is_empty() || lab.tags.contains(&view.tag))
    };
    // A course lists its labs in its own order; the path's otherwise.
    let in_course = !view.course.is_empty();
    let mut listed: Vec<&Entry> = if in_course {
        view.course.split(',').filter_map(|id| labs.iter().find(|lab| lab.id == id.trim())).filter(shown).collect()
    } else {
        labs.iter().filter(shown).collect()
    };
    match view.sort.as_str() {
        "title" => order_by(&mut listed, |lab| lab.title.to_ascii_lowercase()),
        "minutes" => order_by(&mut listed, |lab| format!("{:010}", lab.minutes.unwrap_or(u32::MAX))),
        _ => {}
    }
    // Passed: a best score at the lab's pass mark, as this browser saved it
    // (read once: the cards, their prerequisites and the stages ask it).
    let passed_ids: Vec<&str> = labs
        .iter()
        .filter(|lab| storage::summary(&lab.id).is_some_and(|summary| lab.passed(summary.best, summary.possible)))
        .map(|lab| lab.id.as_str())
        .collect();
    let passed = |lab: &Entry| passed_ids.contains(&lab.id.as_str());
    let title_of = |id: &String| labs.iter().find(|lab| lab.id == *id).map(|lab| format!("{}{}", lab.title, if passed(lab) { " \u{2713}" } else { "" }));
    // The path's (or the course's) first lab, where a newcomer begins.
    let start_here = if in_course { listed.first().copied() } else { labs.first() }.map(|lab| lab.id.clone());
    // An instructor makes a course of the labs listed, then takes out the
    // ones the day has no room for: each link is the course's address.
    let course_of = |ids: Vec<&str>| Route::Catalog(CatalogView { course: ids.join(","), ..CatalogView::default() }).to_hash();
    let course: Vec<&str> = view.course.split(',').map(str::trim).collect();
    let without = |id: &str| course_of(course.iter().copied().filter(|other| *other != id).collect());
    // And puts them in the day's order: a lab swaps places with the one
    // listed before or after it (in the course's own order only).
    let moved = |id: &str, step: isize| {
        let at = listed.iter().position(|lab| lab.id == id)?;
        let other = listed.get(at.checked_add_signed(step)?)?;
        let (from, to) = (course.iter().position(|c| *c == id)?, course.iter().position(|c| *c == other.id)?);
        let mut ids = course.clone();
        ids.swap(from, to);
        Some(course_of(ids))
    };
    let reorderable = in_course && view.sort.is_empty();
    let cards = listed.iter().map(|lab| {
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
                if start_here.as_deref() == Some(lab.id.as_str()) {
                    <p class="start-here">{ "Start here" }</p>
                }
                <h2><a href={Route::Lab(lab.id.clone(), None).to_hash()} onclick={open}>{ &lab.title }</a></h2>
                <p>{ &lab.summary }</p>
                if !lab.requires.is_empty() {
                    <p class="requires">{ "Comes after: " }{ lab.requires.iter().filter_map(title_of).collect::<Vec<_>>().join(", ") }</p>
                }
                <p class="facts">{ facts.join(" \u{b7} ") }</p>
                <p class="progress">{ match storage::summary(&lab.id) {
                    Some(summary) => format!("Score {} / {} \u{b7} best {}", summary.score, summary.possible, summary.best),
                    None => "Not started".to_string(),
                } }</p>
                if !lab.tags.is_empty() {
                    <ul class="tags">{ for lab.tags.iter().map(|tag| html! { <li>{ tag }</li> }) }</ul>
                }
                if in_course {
                    <p class="course-edit">
                        if let Some(href) = moved(&lab.id, -1).filter(|_| reorderable) {
                            <a class="course-up" {href} aria-label={format!("Move up: {}", lab.title)}>{ "Move up" }</a>{ " \u{b7} " }
                        }
                        if let Some(href) = moved(&lab.id, 1).filter(|_| reorderable) {
                            <a class="course-down" {href} aria-label={format!("Move down: {}", lab.title)}>{ "Move down" }</a>{ " \u{b7} " }
                        }
                        <a class="course-remove" href={without(&lab.id)}>{ "Remove from this course" }</a>
                    </p>
                }
            </li>
        }
    });
    // Progress along the path, stage by stage: each links to its labs.
    let stage_progress = stages.iter().map(|stage| {
        let of_stage: Vec<&Entry> = labs.iter().filter(|lab| lab.stage.as_deref() == Some(stage.as_str())).collect();
        let done = of_stage.iter().filter(|lab| passed(lab)).count();
        let href = Route::Catalog(CatalogView { stage: stage.clone(), ..CatalogView::default() }).to_hash();
        html! { <li><a {href}>{ stage }</a>{ format!(" {done}/{}", of_stage.len()) }</li> }
    });
    let orders: Vec<(String, String)> = ORDERS.iter().map(|(value, text)| (value.to_string(), text.to_string())).collect();
    let filtered = !(view.stage.is_empty() && view.level.is_empty() && view.tag.is_empty());
    let count = match (in_course, filtered) {
        (true, _) => format!("A course of {} labs", listed.len()),
        (false, true) => format!("{} of {} labs", listed.len(), labs.len()),
        (false, false) => format!("{} labs", labs.len()),
    };
    html! {
        <main class="page catalog">
            <h1>{ "Labs" }</h1>
            <p class="lead">{ "Practise reading and operating GPU clusters with the commands you use on real ones. New here? Follow the path from its first lab: it runs in the order an operator works." }</p>
            if !in_course {
                <ol class="path-stages" aria-label="Labs passed in each stage of the path">{ for stage_progress }</ol>
            }
            <div class="filters" role="group" aria-label="Filter and order the labs">
                { view_select("Stage", &filter_options(&stages), &view.stage, set(|view, value| view.stage = value)) }
                { view_select("Level", &filter_options(&levels), &view.level, set(|view, value| view.level = value)) }
                { view_select("Tag", &filter_options(&tags), &view.tag, set(|view, value| view.tag = value)) }
                { view_select("Order", &orders, &view.sort, set(|view, value| view.sort = value)) }
            </div>
            <p class="lab-count" role="status">
                { count }
                if in_course {
                    { " \u{b7} share this page's address to hand it out \u{b7} " }<a href={Route::Catalog(CatalogView::default()).to_hash()}>{ "Show all labs" }</a>
                } else if !listed.is_empty() {
                    { " \u{b7} " }<a class="make-course" href={course_of(listed.iter().map(|lab| lab.id.as_str()).collect())}>{ "Make a course of these labs" }</a>
                }
            </p>
            if listed.is_empty() {
                <p class="empty">
                    { "No lab matches these filters. " }
                    <a href={Route::Catalog(CatalogView { sort: view.sort.clone(), ..CatalogView::default() }).to_hash()}>{ "Show all labs" }</a>
                </p>
            }
            <ul class="lab-list">{ for cards }</ul>
        </main>
    }
}
