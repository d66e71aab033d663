//! Located, actionable problems in a lab file.

use std::fmt;
use std::ops::Range;

/// One problem, at a 1-based line and column (columns count characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at byte offset `at` of `source`.
    pub fn at(source: &str, at: usize, message: impl Into<String>) -> Diagnostic {
        let at = at.min(source.len());
        let before = source.get(..at).unwrap_or(source);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        let column = before[line_start..].chars().count() + 1;
        Diagnostic { line, column, message: message.into() }
    }

    pub fn spanning(source: &str, span: Option<Range<usize>>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(source, span.map_or(0, |span| span.start), message)
    }

    /// `FILE:LINE:COL: message`, the form editors and CI understand.
    pub fn render(&self, file: &str) -> String {
        format!("{file}:{}:{}: {}", self.line, self.column, self.message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// The candidate closest to `word`, when it is close enough to be a typo.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(word, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_lines_and_columns() {
        let source = "a = 1\nbé = 2\n";
        assert_eq!(Diagnostic::at(source, 0, "x").to_string(), "1:1: x");
        assert_eq!(Diagnostic::at(source, 6, "x").to_string(), "2:1: x");
        assert_eq!(Diagnostic::at(source, 9, "x").to_string(), "2:3: x");
        assert_eq!(Diagnostic::at(source, 999, "x").line, 3);
        assert_eq!(Diagnostic::at(source, 7, "x").render("f.toml"), "f.toml:2:2: x");
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("titel", ["id", "title", "summary"]), Some("title"));
        assert_eq!(did_you_mean("hgx-h10", ["hgx-h100", "hgx-a100"]), Some("hgx-h100"));
        assert_eq!(did_you_mean("zzzzzz", ["id", "title"]), None);
    }
}
