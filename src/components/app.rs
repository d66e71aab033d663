//! The root: the catalog or one lab, as the URL hash says. The catalog is
//! fetched once; a lab's data when its page opens. The page's chrome (the
//! header, the simulation notice, the display controls) is static HTML in
//! index.html.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::catalog_page::CatalogPage;
use crate::components::lab_page::LabLoader;
use crate::engine::Engine;
use crate::fetch;
use crate::hooks::{use_fetched, use_hash_route, Route};

#[function_component(App)]
pub fn app() -> Html {
    let (route, navigate) = use_hash_route();
    // Started with the page, so the simulator is ready when a lab opens.
    let engine = use_memo((), |_| Engine::start());
    let catalog = use_fetched((), |()| fetch::catalog());
    let page = match (&catalog, &route) {
        // The author page, shared labs and the review page: their modules
        // render them into their own roots (index.html loads them).
        (_, Route::ModulePage) => html! {},
        (None, _) => html! { <main class="page loading"><p>{ "Loading the labs\u{2026}" }</p></main> },
        (Some(Err(message)), _) => html! {
            <main class="page">
                <h1>{ "The labs could not be loaded" }</h1>
                <p class="notice bad" role="alert">{ message }</p>
            </main>
        },
        (Some(Ok(catalog)), Route::Catalog(view)) => html! { <CatalogPage catalog={catalog.clone()} view={view.clone()} navigate={navigate.clone()} /> },
        (Some(Ok(catalog)), Route::Lab(id, variant) | Route::Exam(id, variant)) => match catalog.find(id) {
            Some(entry) if matches!(route, Route::Exam(..)) => {
                // The link's variant, else the one drawn for this learner.
                let seed = variant.unwrap_or_else(|| clusterlab_engine::store::exam_variant(id, &crate::storage::learner()));
                html! { <LabLoader key={format!("exam.{id}")} entry={entry.clone()} exam={Some(seed)} /> }
            }
            Some(entry) => {
                // The lab after it on the catalog's path.
                let at = catalog.labs.iter().position(|lab| lab.id == entry.id);
                let next = at.and_then(|at| catalog.labs.get(at + 1)).map(|lab| (AttrValue::from(lab.id.clone()), AttrValue::from(lab.title.clone())));
                html! { <LabLoader key={id.clone()} entry={entry.clone()} variant={*variant} {next} /> }
            }
            None => html! {
                <main class="page missing">
                    <h1>{ "No such lab" }</h1>
                    <p>{ format!("There is no lab called \u{201c}{id}\u{201d} in this catalog.") }</p>
                    <a href="#/">{ "Back to the catalog" }</a>
                </main>
            },
        },
    };
    // The header, the simulation notice and the display controls are
    // index.html's, shown before this module loads.
    html! {
        <ContextProvider<Rc<Engine>> context={engine}>
            { page }
        </ContextProvider<Rc<Engine>>>
    }
}
