//! The cluster's monitoring: Prometheus scraping the nodes' exporters, its
//! query language and HTTP API, and `promtool`.

pub mod prometheus;
pub mod promql;
pub mod promtool;
pub mod rules;
pub mod vllm;
pub mod yaml;
