//! The root: the catalog or one lab, as the URL hash says.

use yew::prelude::*;

use crate::catalog;
use crate::components::catalog_page::CatalogPage;
use crate::components::lab_page::LabPage;
use crate::components::simulation_notice::SimulationNotice;
use crate::hooks::{use_hash_route, Route};

#[function_component(App)]
pub fn app() -> Html {
    let (route, navigate) = use_hash_route();
    let home = {
        let navigate = navigate.clone();
        Callback::from(move |event: MouseEvent| {
            event.prevent_default();
            navigate.emit(Route::Catalog);
        })
    };
    let page = match &route {
        Route::Catalog => html! { <CatalogPage navigate={navigate.clone()} /> },
        Route::Lab(id) => match catalog::find(id) {
            Some(lab) => html! { <LabPage key={id.clone()} {lab} /> },
            None => html! {
                <main class="page missing">
                    <h1>{ "No such lab" }</h1>
                    <p>{ format!("There is no lab called \u{201c}{id}\u{201d} in this catalog.") }</p>
                    <a href="#/">{ "Back to the catalog" }</a>
                </main>
            },
        },
    };
    html! {
        <>
            <header class="top">
                <a class="brand" href="#/" onclick={home}>{ "ClusterLab" }</a>
                <span class="tagline">{ "GPU-cluster operations labs" }</span>
            </header>
            <SimulationNotice />
            { page }
        </>
    }
}
