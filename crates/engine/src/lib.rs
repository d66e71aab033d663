//! ClusterLab's engine: the cluster model, lab files, the emulated tools, the
//! shell and grading. Pure Rust with no web dependencies, so that it is tested
//! natively and fast, and shared by the browser app and the CLI.

pub mod cmi5;
pub mod commands;
pub mod facts;
pub mod grading;
pub mod lab;
pub mod limits;
pub mod metrics;
pub mod model;
pub mod pattern;
pub mod perf;
pub mod qr;
pub mod report;
pub mod rng;
pub mod service;
pub mod shell;
pub mod sort;
pub mod store;
pub mod xapi;

#[cfg(test)]
pub(crate) mod testing;

#[cfg(feature = "authoring")]
pub use lab::authoring::load;
pub use lab::Lab;
pub use shell::{Session, Transcript};
