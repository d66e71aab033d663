//! Lab data from the site: the catalog (`labs/index.json`) and each lab's
//! data file, fetched relative to the page so the site works from any folder.

use std::rc::Rc;

use clusterlab_engine::lab::catalog::{digest, Catalog, Entry};
use clusterlab_engine::lab::reference::Reference;
use clusterlab_engine::Lab;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::Response;

/// Where the build puts the labs, relative to the page.
const LABS: &str = "labs/";

/// What the page's inline script started fetching for `url`, taken once.
fn prefetched(url: &str) -> Option<js_sys::Promise> {
    let window = gloo::utils::window();
    let started = js_sys::Reflect::get(&window, &"clusterlabPrefetch".into()).ok()?;
    let promise = js_sys::Reflect::get(&started, &url.into()).ok()?.dyn_into::<js_sys::Promise>().ok()?;
    let _ = js_sys::Reflect::delete_property(started.unchecked_ref::<js_sys::Object>(), &url.into());
    Some(promise)
}

async fn text(url: &str) -> Result<String, String> {
    if let Some(promise) = prefetched(url) {
        if let Some(text) = JsFuture::from(promise).await.ok().and_then(|text| text.as_string()) {
            return Ok(text);
        }
    }
    let response = JsFuture::from(gloo::utils::window().fetch_with_str(url))
        .await
        .map_err(|_| format!("{url} could not be fetched (offline, or the site is not served?)"))?;
    let response: Response = response.dyn_into().map_err(|_| format!("{url}: not a response"))?;
    if !response.ok() {
        return Err(format!("{url}: {} {}", response.status(), response.status_text()));
    }
    let body = response.text().map_err(|_| format!("{url}: no body"))?;
    JsFuture::from(body).await.ok().and_then(|text| text.as_string()).ok_or_else(|| format!("{url}: unreadable body"))
}

/// The app's own address (`https://host/path/`), which activity ids and
/// room links start with.
pub fn site() -> String {
    let location = gloo::utils::window().location();
    let origin = location.origin().unwrap_or_default();
    let path = location.pathname().unwrap_or_default();
    format!("{origin}{}", path.trim_end_matches("index.html"))
}

/// The authoring reference the lab build writes beside the labs.
pub async fn reference() -> Result<Rc<Reference>, String> {
    let url = format!("{LABS}{}", clusterlab_engine::lab::reference::FILE);
    Reference::from_json(&text(&url).await?).map(Rc::new).map_err(|error| format!("{url}: {error}"))
}

pub async fn catalog() -> Result<Rc<Catalog>, String> {
    Catalog::from_json(&text(&format!("{LABS}index.json")).await?).map(Rc::new)
}

/// A lab as the app needs it: the lab, and its data as fetched (the engine
/// worker reads the same text).
#[derive(Clone, Debug)]
pub struct LoadedLab {
    pub lab: Rc<Lab>,
    pub data: Rc<str>,
    pub entry: Entry,
    pub keep: Keep,
    /// Taken as an exam, at this variant.
    pub exam: Option<u64>,
}

/// Whether a lab's progress is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Saved in this browser and shared with its other tabs: a trainee's lab.
    Saved,
    /// Held by this page only, fresh at this variant: the author page's
    /// preview, which must never touch a trainee's saved progress.
    Preview { seed: u64 },
}

impl PartialEq for LoadedLab {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.lab, &other.lab) && self.exam == other.exam
    }
}

impl LoadedLab {
    /// The name its record is kept under (`exam.ID` for an exam).
    pub fn record_id(&self) -> String {
        crate::storage::record_id(&self.lab.id, self.exam.is_some())
    }
}

pub async fn lab(entry: &Entry) -> Result<LoadedLab, String> {
    // Started early by the page when the address names this lab; kept only
    // when it is the version the catalog names (never a stale cache's).
    let early = match prefetched(&format!("{LABS}{}", entry.file)) {
        Some(promise) => JsFuture::from(promise).await.ok().and_then(|text| text.as_string()),
        None => None,
    };
    let data = match early.filter(|data| digest(data) == entry.digest) {
        Some(data) => data,
        // The digest names the version: a changed lab is never served from a stale cache.
        None => text(&format!("{LABS}{}?v={}", entry.file, entry.digest)).await?,
    };
    let lab = Lab::from_json(&data).map_err(|message| format!("lab `{}`: {message}", entry.id))?;
    Ok(LoadedLab { lab: Rc::new(lab), data: data.into(), entry: entry.clone(), keep: Keep::Saved, exam: None })
}
