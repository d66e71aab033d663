//! The page shown, kept in the URL hash (`#/lab/<id>`, with
//! `/variant/<n>` once a lab is open; the catalog's filters and order as
//! `#/?stage=diagnose&sort=title`) so that a reload or a shared link opens
//! the same page, and Back works. The author page
//! (`#/author`, `#/author/KEY`), labs shared as links (`#/shared/...`) and
//! the review page (`#/review/ID`) live in modules of their own, which read
//! the rest of the hash themselves.

use gloo::events::EventListener;
use yew::prelude::*;

/// The catalog's filters (empty: all) and order (empty: the path), and an
/// instructor's course: the ids of the labs it lists, in its order
/// (`#/?course=first-look,slow-rail`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogView {
    pub stage: String,
    pub level: String,
    pub tag: String,
    pub sort: String,
    pub course: String,
}

impl CatalogView {
    fn from_query(query: &str) -> CatalogView {
        let mut view = CatalogView::default();
        for (key, value) in query.split('&').filter_map(|pair| pair.split_once('=')) {
            let value = js_sys::decode_uri_component(value).ok().and_then(|v| v.as_string()).unwrap_or_default();
            match key {
                "stage" => view.stage = value,
                "level" => view.level = value,
                "tag" => view.tag = value,
                "sort" => view.sort = value,
                "course" => view.course = value,
                _ => {}
            }
        }
        view
    }

    fn to_query(&self) -> String {
        let pairs: Vec<String> = [("course", &self.course), ("stage", &self.stage), ("level", &self.level), ("tag", &self.tag), ("sort", &self.sort)]
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(key, value)| format!("{key}={}", String::from(js_sys::encode_uri_component(value))))
            .collect();
        if pairs.is_empty() {
            String::new()
        } else {
            format!("?{}", pairs.join("&"))
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    Catalog(CatalogView),
    /// `#/lab/ID`, or `#/lab/ID/variant/N`: a lab, at a variant the address names.
    Lab(String, Option<u64>),
    /// `#/exam/ID`, or `#/exam/ID/variant/N`: the lab as an exam, at the
    /// variant the address names or the one drawn for the learner.
    Exam(String, Option<u64>),
    /// `#/author...` or `#/shared/...` (the author module's pages) and
    /// `#/review/...` (the results module's): this app shows nothing there.
    ModulePage,
}

impl Route {
    pub fn from_hash(hash: &str) -> Route {
        let path = hash.trim_start_matches('#');
        if path == "/author" || path.starts_with("/author/") || path.starts_with("/shared/") || path.starts_with("/review/") {
            return Route::ModulePage;
        }
        let (exam, rest) = match (path.strip_prefix("/lab/"), path.strip_prefix("/exam/")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => return Route::Catalog(CatalogView::from_query(path.split_once('?').map_or("", |(_, query)| query))),
        };
        if rest.is_empty() {
            return Route::Catalog(CatalogView::default());
        }
        let (id, variant) = match rest.split_once("/variant/") {
            Some((id, n)) => (id.to_string(), n.parse().ok().filter(|n| *n >= 1)),
            None => (rest.trim_end_matches('/').to_string(), None),
        };
        if exam {
            Route::Exam(id, variant)
        } else {
            Route::Lab(id, variant)
        }
    }

    pub fn to_hash(&self) -> String {
        match self {
            Route::Catalog(view) => format!("#/{}", view.to_query()),
            Route::Lab(id, None) => format!("#/lab/{id}"),
            Route::Lab(id, Some(variant)) => format!("#/lab/{id}/variant/{variant}"),
            Route::Exam(id, None) => format!("#/exam/{id}"),
            Route::Exam(id, Some(variant)) => format!("#/exam/{id}/variant/{variant}"),
            // Never navigated to from this app: the modules link their own pages.
            Route::ModulePage => "#/".to_string(),
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
