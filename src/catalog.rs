//! The labs compiled into the app.

use clusterlab_engine::lab::Diagnostic;
use clusterlab_engine::{load, Lab};

include!(concat!(env!("OUT_DIR"), "/labs.rs"));

/// One catalog entry: a loaded lab, or the problems of a file that did not load.
pub enum Entry {
    Lab(Box<Lab>),
    Broken { file: &'static str, problems: Vec<Diagnostic> },
}

pub fn entries() -> Vec<Entry> {
    LAB_SOURCES
        .iter()
        .map(|(file, source)| match load(source) {
            Ok(lab) => Entry::Lab(Box::new(lab)),
            Err(problems) => Entry::Broken { file, problems },
        })
        .collect()
}

pub fn find(id: &str) -> Option<Lab> {
    entries().into_iter().find_map(|entry| match entry {
        Entry::Lab(lab) if lab.id == id => Some(*lab),
        _ => None,
    })
}
