//! `clusterlab build`: lab files in, lab data out. Every lab is compiled and
//! deep-checked; one problem anywhere fails the whole build, with every
//! problem located, so a broken lab never reaches trainees.

use std::collections::BTreeMap;

use super::{check, compile, Diagnostic};
use crate::lab::catalog::{Catalog, Entry};

/// What a build produces: the catalog and each lab's data file.
#[derive(Debug)]
pub struct Built {
    pub catalog: Catalog,
    /// (file name, contents), the catalog's `index.json` last.
    pub files: Vec<(String, String)>,
}

/// The catalog's file name.
pub const INDEX: &str = "index.json";

/// Builds labs from `(path, source)` pairs, in the order given. Errs with
/// every problem and the path of its file.
pub fn build(sources: &[(String, String)]) -> Result<Built, Vec<(String, Diagnostic)>> {
    let mut problems = Vec::new();
    let mut entries = Vec::new();
    let mut files = Vec::new();
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    // Where each lab's id is written, to locate the problems of its `requires`.
    let mut id_spans: BTreeMap<String, (&str, std::ops::Range<usize>)> = BTreeMap::new();
    for (path, source) in sources {
        let compiled = match compile(source) {
            Ok(compiled) => compiled,
            Err(found) => {
                problems.extend(found.into_iter().map(|problem| (path.clone(), problem)));
                continue;
            }
        };
        let deep = check::deep(&compiled, source);
        if !deep.is_empty() {
            problems.extend(deep.into_iter().map(|problem| (path.clone(), problem)));
            continue;
        }
        let lab = compiled.lab;
        id_spans.insert(lab.id.clone(), (source.as_str(), compiled.map.id.clone()));
        if let Some(other) = ids.insert(lab.id.clone(), path.clone()) {
            let message = format!("lab id `{}` is also used by {other}", lab.id);
            problems.push((path.clone(), Diagnostic::spanning(source, compiled.map.id, message)));
            continue;
        }
        let data = lab.to_json();
        let entry = Entry::new(&lab, &data);
        files.push((entry.file.clone(), data));
        entries.push(entry);
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let catalog = Catalog::new(entries);
    for (id, message) in catalog.requires_problems() {
        if let (Some(path), Some((source, span))) = (ids.get(&id), id_spans.get(&id)) {
            problems.push((path.clone(), Diagnostic::spanning(source, span.clone(), message)));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    files.push((INDEX.to_string(), catalog.to_json()));
    Ok(Built { catalog, files })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::Lab;
    use crate::testing::TWO_NODE_LAB;

    #[test]
    fn builds_data_and_a_catalog_or_every_problem() {
        let good = ("labs/a.toml".to_string(), TWO_NODE_LAB.to_string());
        let built = build(std::slice::from_ref(&good)).unwrap();
        assert_eq!(built.files.len(), 2);
        assert_eq!(built.files[1].0, "index.json");
        let entry = &built.catalog.labs[0];
        assert_eq!((entry.id.as_str(), entry.file.as_str(), entry.nodes), ("test-lab", "test-lab.json", 2));
        let lab = Lab::from_json(&built.files[0].1).unwrap();
        assert_eq!(lab.id, "test-lab");
        assert_eq!(Catalog::from_json(&built.files[1].1).unwrap(), built.catalog);

        let broken = ("labs/b.toml".to_string(), TWO_NODE_LAB.replace("hgx-h100", "hgx-h10"));
        let twin = ("labs/c.toml".to_string(), TWO_NODE_LAB.to_string());
        let problems: Vec<String> = build(&[good, broken, twin]).unwrap_err().iter().map(|(path, problem)| problem.render(path)).collect();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("labs/b.toml:8:10: unknown preset `hgx-h10`"), "{problems:?}");
        assert_eq!(problems[1], "labs/c.toml:3:6: lab id `test-lab` is also used by labs/a.toml");
    }

    #[test]
    fn a_lab_may_require_only_labs_before_it() {
        let requiring = ("labs/a.toml".to_string(), TWO_NODE_LAB.replace("title = \"Test\"", "title = \"Test\"\nrequires = [\"first-look\"]"));
        let problems: Vec<String> = build(&[requiring]).unwrap_err().iter().map(|(path, problem)| problem.render(path)).collect();
        assert_eq!(problems, ["labs/a.toml:3:6: lab `test-lab` requires `first-look`, which is not among the labs"]);
        let itself = ("labs/a.toml".to_string(), TWO_NODE_LAB.replace("title = \"Test\"", "title = \"Test\"\nrequires = [\"test-lab\"]"));
        let problems: Vec<String> = build(&[itself]).unwrap_err().iter().map(|(path, problem)| problem.render(path)).collect();
        assert_eq!(problems, ["labs/a.toml:5:13: lab `test-lab` cannot require itself"]);
    }
}
