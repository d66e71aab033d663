//! The catalog: what the app lists before any lab's data is fetched, and
//! where each lab's data is. `clusterlab build` writes it as `index.json`
//! beside one `ID.json` per lab.

use serde::{Deserialize, Serialize};

use super::{Lab, DATA_FORMAT, LEVELS, STAGES};
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
    /// The labs to pass before this one, by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
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
            requires: lab.requires.clone(),
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

impl Entry {
    /// Whether a best score of `best` out of `possible` passes this lab.
    pub fn passed(&self, best: u32, possible: u32) -> bool {
        possible > 0 && super::passes(self.pass, best, possible)
    }

    /// Where the lab stands on the path through the catalog: the
    /// operator's workflow in order (understand, prepare, validate,
    /// operate, diagnose, hand over), easier levels first, the guided tour
    /// (tagged `onboarding`) before the rest of its step, shorter labs first.
    fn path_key(&self) -> (usize, usize, bool, u32, &str) {
        let rank = |value: &Option<String>, order: &[&str]| value.as_deref().and_then(|v| order.iter().position(|o| *o == v)).unwrap_or(order.len());
        (rank(&self.stage, STAGES), rank(&self.level, LEVELS), !self.tags.iter().any(|tag| tag == "onboarding"), self.minutes.unwrap_or(u32::MAX), &self.id)
    }
}

impl Catalog {
    /// The catalog of these labs, in the order of the path through them.
    pub fn new(mut labs: Vec<Entry>) -> Catalog {
        crate::sort::sort_by(&mut labs, |a, b| a.path_key().cmp(&b.path_key()));
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

    /// What is wrong with the labs' `requires`, as (the lab's id, the
    /// problem): a lab may require only labs of the catalog that come
    /// before it on the path (so no chain of them loops).
    pub fn requires_problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        for (at, lab) in self.labs.iter().enumerate() {
            for required in &lab.requires {
                match self.labs.iter().position(|other| other.id == *required) {
                    None => problems.push((lab.id.clone(), format!("lab `{}` requires `{required}`, which is not among the labs", lab.id))),
                    Some(before) if before > at => problems.push((
                        lab.id.clone(),
                        format!(
                            "lab `{}` requires `{required}`, which comes after it on the path (stage, then level): give `{required}` an earlier stage or an easier level, or drop it from `requires`",
                            lab.id
                        ),
                    )),
                    Some(_) => {}
                }
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, stage: &str, level: &str, minutes: u32, tags: &[&str]) -> Entry {
        Entry {
            id: id.into(),
            title: id.into(),
            summary: String::new(),
            level: Some(level.into()),
            stage: Some(stage.into()),
            minutes: Some(minutes),
            tags: tags.iter().map(|tag| tag.to_string()).collect(),
            requires: Vec::new(),
            nodes: 1,
            preset: "hgx-h100".into(),
            variants: false,
            points: 1,
            pass: None,
            file: format!("{id}.json"),
            digest: String::new(),
        }
    }

    #[test]
    fn the_catalog_is_a_path_in_the_workflows_order() {
        let catalog = Catalog::new(vec![
            entry("handover", "handover", "intermediate", 30, &[]),
            entry("slow-rail", "diagnose", "intermediate", 20, &[]),
            entry("lost-gpu", "diagnose", "beginner", 25, &[]),
            entry("first-look", "understand", "beginner", 10, &[]),
            entry("tour", "understand", "beginner", 20, &["onboarding"]),
            entry("baseline", "validate", "intermediate", 20, &[]),
        ]);
        let ids: Vec<&str> = catalog.labs.iter().map(|lab| lab.id.as_str()).collect();
        assert_eq!(ids, ["tour", "first-look", "baseline", "lost-gpu", "slow-rail", "handover"]);
    }

    #[test]
    fn a_lab_requires_only_labs_before_it_on_the_path() {
        let mut handover = entry("handover", "handover", "intermediate", 30, &[]);
        handover.requires = vec!["lost-gpu".into(), "gone".into()];
        let mut lost_gpu = entry("lost-gpu", "diagnose", "beginner", 25, &[]);
        lost_gpu.requires = vec!["handover".into()];
        let catalog = Catalog::new(vec![handover, lost_gpu]);
        let problems: Vec<String> = catalog.requires_problems().into_iter().map(|(_, problem)| problem).collect();
        assert_eq!(
            problems,
            [
                "lab `lost-gpu` requires `handover`, which comes after it on the path (stage, then level): give `handover` an earlier stage or an easier level, or drop it from `requires`",
                "lab `handover` requires `gone`, which is not among the labs",
            ]
        );
        let mut entry = entry("x", "diagnose", "beginner", 1, &[]);
        assert!(entry.passed(10, 10) && !entry.passed(9, 10) && !entry.passed(0, 0));
        entry.pass = Some(70);
        assert!(entry.passed(7, 10) && !entry.passed(6, 10));
    }
}
