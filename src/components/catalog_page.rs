//! The list of labs, from the catalog the build wrote.

use clusterlab_engine::lab::catalog::Catalog;
use std::rc::Rc;
use yew::prelude::*;

use crate::hooks::Route;

#[derive(Properties, PartialEq)]
pub struct CatalogPageProps {
    pub catalog: Rc<Catalog>,
    pub navigate: Callback<Route>,
}

#[function_component(CatalogPage)]
pub fn catalog_page(props: &CatalogPageProps) -> Html {
    let cards = props.catalog.labs.iter().map(|lab| {
        let open = {
            let navigate = props.navigate.clone();
            let id = lab.id.clone();
            Callback::from(move |event: MouseEvent| {
                event.prevent_default();
                navigate.emit(Route::Lab(id.clone()));
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
                <h2><a href={Route::Lab(lab.id.clone()).to_hash()} onclick={open}>{ &lab.title }</a></h2>
                <p>{ &lab.summary }</p>
                <p class="facts">{ facts.join(" \u{b7} ") }</p>
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
            <ul class="lab-list">{ for cards }</ul>
        </main>
    }
}
