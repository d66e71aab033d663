//! The author page's checks as the instructor types: the same checks as
//! `clusterlab check`, in two passes so that the quick one (the format, the
//! hardware, the answers) is seen at once and the deep one (every fault
//! observable, every reference answer correct) follows; and the lab's data
//! as the app loads it, for the preview.

use serde::{Deserialize, Serialize};

use super::{check, compile, Diagnostic};
use crate::lab::catalog::Entry;

/// A problem as the page lists it: `LINE:COL: message`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl From<Diagnostic> for Problem {
    fn from(found: Diagnostic) -> Problem {
        Problem { line: found.line, column: found.column, message: found.message }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// A lab that compiled: its data (the JSON the app loads) and catalog entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Built {
    pub data: String,
    pub entry: Entry,
}

/// What one pass found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checked {
    pub problems: Vec<Problem>,
    /// The lab, when it compiled (deep problems do not stop a preview: the
    /// instructor sees why a fault does not show).
    pub built: Option<Built>,
    /// Whether the deep checks ran too (or could not: the lab did not compile).
    pub complete: bool,
    /// What each gaming strategy earns, as `clusterlab test` says it
    /// (`strategy b (...) earns 45% ...`): played once the lab checks clean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaming: Vec<String>,
}

/// Checks `source`, reporting after the quick pass and, when the lab
/// compiled, again with the deep problems added.
pub fn check_in_passes(source: &str, mut report: impl FnMut(Checked)) {
    let compiled = match compile(source) {
        Ok(compiled) => compiled,
        Err(found) => {
            report(Checked { problems: found.into_iter().map(Problem::from).collect(), built: None, complete: true, gaming: Vec::new() });
            return;
        }
    };
    let data = compiled.lab.to_json();
    let built = Built { entry: Entry::new(&compiled.lab, &data), data };
    report(Checked { problems: Vec::new(), built: Some(built.clone()), complete: false, gaming: Vec::new() });
    let mut problems: Vec<Problem> = check::deep(&compiled, source).into_iter().map(Problem::from).collect();
    // The adversary, as `clusterlab test` plays it, on a lab that checks clean.
    let mut gaming = Vec::new();
    if problems.is_empty() {
        for verdict in super::adversary::play(&compiled) {
            if !verdict.passes() {
                let message = format!(
                    "{}: a lab must not pay more than {:.0}% of its points for gaming; judge outcomes, limit attempts, or weigh the questions differently",
                    verdict.line(),
                    super::adversary::LIMIT * 100.0
                );
                problems.push(Problem::from(Diagnostic::spanning(source, compiled.map.id.clone(), message)));
            }
            gaming.push(verdict.line());
        }
    }
    report(Checked { problems, built: Some(built), complete: true, gaming });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TWO_NODE_LAB;

    fn passes(source: &str) -> Vec<Checked> {
        let mut seen = Vec::new();
        check_in_passes(source, |checked| seen.push(checked));
        seen
    }

    #[test]
    fn a_good_lab_previews_after_the_quick_pass_and_stays_clean() {
        let seen = passes(TWO_NODE_LAB);
        assert_eq!(seen.len(), 2);
        assert!(!seen[0].complete && seen[1].complete);
        assert!(seen.iter().all(|checked| checked.problems.is_empty()));
        let built = seen[1].built.as_ref().unwrap();
        assert_eq!(built.entry.id, "test-lab");
        assert_eq!(crate::Lab::from_json(&built.data).unwrap().id, "test-lab");
    }

    #[test]
    fn the_author_pages_starter_lab_is_clean() {
        let seen = passes(include_str!("../../../../../src/author/starter.toml"));
        assert_eq!(seen.last().map(|checked| &checked.problems), Some(&Vec::new()));
    }

    #[test]
    fn a_broken_lab_lists_located_problems_in_one_pass() {
        let seen = passes(&TWO_NODE_LAB.replace("hgx-h100", "hgx-h10"));
        assert_eq!(seen.len(), 1);
        assert!(seen[0].built.is_none() && seen[0].complete);
        assert!(seen[0].problems[0].to_string().starts_with("8:10: unknown preset `hgx-h10`"), "{:?}", seen[0].problems);
    }
}
