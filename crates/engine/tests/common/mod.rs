//! Helpers shared by the golden tests: reading captures, building a lab like
//! a captured machine, comparing outputs.
// Each test file uses a different subset of these.
#![allow(dead_code)]

use std::path::PathBuf;

use clusterlab_engine::load;
use clusterlab_engine::model::Cluster;

/// A capture from ../shared/reference/{area}, beside the checkout.
pub fn reference(area: &str, name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference").join(area).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read the capture {}: {error}; shared/ must sit beside the checkout", path.display()))
}

/// A one-node (`node`) cluster of `preset`, with extra `[cluster]` lines such
/// as `driver = "570.158.01"`, at seed 1.
pub fn lab_cluster(preset: &str, cluster_lines: &str) -> Cluster {
    let lab =
        load(&format!("[lab]\nid = \"golden\"\ntitle = \"t\"\nsummary = \"s\"\n\n[cluster]\npreset = \"{preset}\"\nnodes = [\"node\"]\n{cluster_lines}\n"))
            .expect("valid lab");
    lab.instantiate(1)
}

pub fn assert_same_lines(emulated: &str, captured: &str) {
    let emulated: Vec<&str> = emulated.lines().collect();
    let captured: Vec<&str> = captured.lines().collect();
    for (at, (e, c)) in emulated.iter().zip(&captured).enumerate() {
        assert_eq!(e, c, "line {} differs", at + 1);
    }
    assert_eq!(emulated.len(), captured.len(), "line counts differ");
}

/// Tabs expanded to 8-column stops, as sources that lost the tabs show them.
pub fn expand_tabs(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let mut column = 0;
        for c in line.chars() {
            if c == '\t' {
                let spaces = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            } else {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}
