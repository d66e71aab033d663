//! The labs compiled into the app.

use std::rc::Rc;

use clusterlab_engine::lab::Diagnostic;
use clusterlab_engine::{load, Lab};

include!(concat!(env!("OUT_DIR"), "/labs.rs"));

/// One catalog entry: a loaded lab, or the problems of a file that did not load.
pub enum Entry {
    Lab(Rc<Lab>),
    Broken { file: &'static str, problems: Vec<Diagnostic> },
}

thread_local! {
    /// Parsed once per page load: the sources are fixed at build time.
    static ENTRIES: Rc<Vec<Entry>> = Rc::new(
        LAB_SOURCES
            .iter()
            .map(|(file, source)| match load(source) {
                Ok(lab) => Entry::Lab(Rc::new(lab)),
                Err(problems) => Entry::Broken { file, problems },
            })
            .collect(),
    );
}

pub fn entries() -> Rc<Vec<Entry>> {
    ENTRIES.with(Rc::clone)
}

pub fn find(id: &str) -> Option<Rc<Lab>> {
    entries().iter().find_map(|entry| match entry {
        Entry::Lab(lab) if lab.id == id => Some(lab.clone()),
        _ => None,
    })
}
