//! The labs compiled into the app.

use std::rc::Rc;

use clusterlab_engine::lab::from_file;
use clusterlab_engine::Lab;

include!(concat!(env!("OUT_DIR"), "/labs.rs"));

/// One catalog entry: a loaded lab, or a file that did not load.
pub enum Entry {
    Lab(Rc<Lab>),
    Broken { file: &'static str },
}

thread_local! {
    /// Parsed once per page load: the sources are fixed at build time.
    static ENTRIES: Rc<Vec<Entry>> = Rc::new(
        LAB_FILES
            .iter()
            // build.rs has loaded and checked every lab already.
            .map(|(file, build)| match from_file(build()) {
                Some(lab) => Entry::Lab(Rc::new(lab)),
                None => Entry::Broken { file },
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
