//! ClusterLab in the browser: a thin Yew shell over clusterlab-engine.
//!
//! State lives in reducers (`state.rs`), persistence in hooks (`hooks/`),
//! one component per file (`components/`).

pub mod catalog;
pub mod components;
pub mod hooks;
pub mod state;

pub use components::app::App;
