//! The list of labs, from the catalog the build wrote.

use clusterlab_engine::lab::catalog::Catalog;
use std::rc::Rc;
use yew::prelude::*;

use crate::hooks::Route;
use crate::my_labs;

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
                if !lab.tags.is_empty() {
                    <ul class="tags">{ for lab.tags.iter().map(|tag| html! { <li>{ tag }</li> }) }</ul>
                }
            </li>
        }
    });
    // The labs this browser's instructor writes: opened on the author page.
    let (mine, readable) = my_labs::listed();
    let mine = mine.into_iter().map(|lab| {
        let href = format!("#/author/{}", lab.key);
        html! {
            <li class="lab-card mine" data-my-lab={lab.key.clone()}>
                <h3><a {href}>{ &lab.title }</a></h3>
                <p>{ &lab.summary }</p>
            </li>
        }
    });
    html! {
        <main class="page catalog">
            <h1>{ "Labs" }</h1>
            <p class="lead">{ "Practise reading and operating GPU clusters with the commands you use on real ones." }</p>
            <ul class="lab-list">{ for cards }</ul>
            <section class="my-labs" aria-labelledby="my-labs-heading">
                <h2 id="my-labs-heading">{ "My labs" }</h2>
                if !readable {
                    <p class="notice bad" role="alert">{ "Your saved labs could not be read. Open the author page (Write a lab): it keeps the damaged record aside and says where." }</p>
                }
                <ul class="lab-list">{ for mine }</ul>
                <p><a class="write-lab" href="#/author">{ "Write a lab" }</a>{ " \u{2014} edit a lab file, check it and preview it here; it stays in this browser until you export or share it." }</p>
            </section>
        </main>
    }
}
