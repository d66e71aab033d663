//! The page shown, kept in the URL hash (`#/lab/<id>`) so that a reload or a
//! shared link opens the same page, and Back works. The author page
//! (`#/author`, `#/author/KEY`) and labs shared as links (`#/shared/...`)
//! live in a module of their own, which reads the rest of the hash itself.

use gloo::events::EventListener;
use yew::prelude::*;

#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    Catalog,
    Lab(String),
    /// `#/author...` or `#/shared/...`: the author module's pages.
    Author,
}

impl Route {
    pub fn from_hash(hash: &str) -> Route {
        let path = hash.trim_start_matches('#');
        if path == "/author" || path.starts_with("/author/") || path.starts_with("/shared/") {
            return Route::Author;
        }
        match path.strip_prefix("/lab/") {
            Some(id) if !id.is_empty() => Route::Lab(id.to_string()),
            _ => Route::Catalog,
        }
    }

    pub fn to_hash(&self) -> String {
        match self {
            Route::Catalog => "#/".to_string(),
            Route::Lab(id) => format!("#/lab/{id}"),
            Route::Author => "#/author".to_string(),
        }
    }
}

fn current() -> Route {
    let hash = gloo::utils::window().location().hash().unwrap_or_default();
    Route::from_hash(&hash)
}

/// The current route, and a callback that navigates.
#[hook]
pub fn use_hash_route() -> (Route, Callback<Route>) {
    let route = use_state(current);
    {
        let route = route.clone();
        use_effect_with((), move |_| {
            let listener = EventListener::new(&gloo::utils::window(), "hashchange", move |_| route.set(current()));
            move || drop(listener)
        });
    }
    let navigate = Callback::from(|to: Route| {
        let _ = gloo::utils::window().location().set_hash(&to.to_hash());
    });
    ((*route).clone(), navigate)
}
