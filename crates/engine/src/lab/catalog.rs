//! The catalog: what the app lists before any lab's data is fetched, and
//! where each lab's data is. `clusterlab build` writes it as `index.json`
//! beside one `ID.json` per lab.

use serde::{Deserialize, Serialize};

use super::{Lab, DATA_FORMAT};
use crate::rng::stable_hash;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    pub format: u32,
    pub labs: Vec<Entry>,
}

/// One lab in the catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub title: String,
    pub summary: String,
    pub level: Option<String>,
    pub stage: Option<String>,
    pub minutes: Option<u32>,
    pub tags: Vec<String>,
    pub nodes: usize,
    pub preset: String,
    /// Whether trainees get different variants.
    pub variants: bool,
    pub points: u32,
    /// The pass mark in percent, when the lab sets one (an LMS's mastery score).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<u32>,
    /// The data file, relative to the catalog.
    pub file: String,
    /// A hash of the data: it names this version of the lab, for caches
    /// and for telling a trainee that a lab changed under their progress.
    pub digest: String,
}

/// The digest of a lab's data: 16 hex digits of its FNV-1a hash.
pub fn digest(data: &str) -> String {
    format!("{:016x}", stable_hash(data.as_bytes()))
}

impl Entry {
    /// The entry for `lab`, whose data is `data` (its JSON).
    pub fn new(lab: &Lab, data: &str) -> Entry {
        Entry {
            id: lab.id.clone(),
            title: lab.title.clone(),
            summary: lab.summary.clone(),
            level: lab.level.clone(),
            stage: lab.stage.clone(),
            minutes: lab.minutes,
            tags: lab.tags.clone(),
            nodes: lab.cluster.hostnames.len(),
            preset: lab.cluster.preset.id.to_string(),
            variants: !lab.vars.is_empty(),
            points: lab.points_possible(),
            pass: lab.pass,
            file: format!("{}.json", lab.id),
            digest: digest(data),
        }
    }
}

impl Catalog {
    pub fn new(labs: Vec<Entry>) -> Catalog {
        Catalog { format: DATA_FORMAT, labs }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a catalog always serializes")
    }

    pub fn from_json(text: &str) -> Result<Catalog, String> {
        let catalog: Catalog = serde_json::from_str(text).map_err(|error| format!("damaged catalog: {error}"))?;
        if catalog.format != DATA_FORMAT {
            return Err(format!("catalog format {} is not the format {DATA_FORMAT} this ClusterLab reads", catalog.format));
        }
        Ok(catalog)
    }

    pub fn find(&self, id: &str) -> Option<&Entry> {
        self.labs.iter().find(|entry| entry.id == id)
    }
}
