//! ClusterLab in the browser: a thin Yew shell over clusterlab-engine.
//!
//! Labs arrive as data (`fetch`); a lab page keeps one store (`store`,
//! a reducer) that every view reads, saved after every change (`storage`)
//! and shared safely between tabs (`tabs`); the engine runs in a Web
//! Worker (`engine`, `worker`). One component per file (`components/`),
//! hooks under `hooks/`.

#[cfg(feature = "authoring")]
pub mod author;
pub mod components;
pub mod download;
pub mod engine;
pub mod fetch;
pub mod hooks;
pub mod line_edit;
pub mod mount;
#[cfg(feature = "authoring")]
pub mod my_labs;
pub mod results;
pub mod scrollback;
pub mod scrollback_find;
pub mod storage;
pub mod store;
pub mod tabs;
pub mod worker;
pub mod xapi_queue;

pub use components::app::App;

/// A named moment in the page's performance timeline, for the benchmark
/// and the end-to-end tests (`clusterlab:store` when a lab's store is
/// restored, `clusterlab:screen` when its terminal has drawn it).
pub fn mark(name: &str) {
    if let Some(performance) = gloo::utils::window().performance() {
        let _ = performance.mark(name);
    }
}
