//! Located, actionable problems in a lab file.

use std::fmt;
use std::ops::Range;

/// One problem, at a 1-based line and column (columns count characters),
/// and how many characters of that line it is about (at least one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: usize,
    pub column: usize,
    pub width: usize,
    pub message: String,
}

/// How much of a source line the cargo-style form shows: a longer line is
/// cut to a window around the column, so a 1 MiB line prints a short one.
const SNIPPET_CHARS: usize = 100;

impl Diagnostic {
    /// A diagnostic at byte offset `at` of `source`.
    pub fn at(source: &str, at: usize, message: impl Into<String>) -> Diagnostic {
        let at = at.min(source.len());
        // An offset inside a character counts from that character's start.
        let at = (0..=at).rev().find(|&at| source.is_char_boundary(at)).unwrap_or(0);
        let before = &source[..at];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        let column = before[line_start..].chars().count() + 1;
        Diagnostic { line, column, width: 1, message: message.into() }
    }

    /// A diagnostic about `span` of `source`: at its start, as wide as its
    /// text on that line.
    pub fn spanning(source: &str, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        let mut diagnostic = Diagnostic::at(source, span.start, message);
        let text = source.get(span.start.min(source.len())..span.end.clamp(span.start, source.len())).unwrap_or("");
        let first_line = text.split(['\n', '\r']).next().unwrap_or("");
        diagnostic.width = first_line.chars().count().max(1);
        diagnostic
    }

    /// `FILE:LINE:COL: message`, the form editors and CI understand.
    pub fn render(&self, file: &str) -> String {
        format!("{file}:{}:{}: {}", self.line, self.column, self.message)
    }

    /// cargo's form: `error: message`, ` --> FILE:LINE:COL`, then the line
    /// of `source` with carets under the part the problem is about.
    pub fn render_pretty(&self, file: &str, source: &str) -> String {
        let number = self.line.to_string();
        let gutter = " ".repeat(number.len());
        let mut out = format!("error: {}\n{gutter}--> {file}:{}:{}\n", self.message, self.line, self.column);
        let Some(text) = source.split('\n').nth(self.line.saturating_sub(1)) else {
            return out;
        };
        let (shown, caret_at, carets) = snippet(text.strip_suffix('\r').unwrap_or(text), self.column, self.width);
        out += &format!("{gutter} |\n{number} | {shown}\n{gutter} | {}{}\n", " ".repeat(caret_at), "^".repeat(carets));
        out
    }
}

/// The part of `line` to show, where its carets start and how many there
/// are: tabs as four spaces and control characters as U+FFFD (the file's
/// text is shown, never obeyed by the terminal), cut to [`SNIPPET_CHARS`]
/// around the column with `...` where it was cut.
fn snippet(line: &str, column: usize, width: usize) -> (String, usize, usize) {
    let chars: Vec<char> = line.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let from = at.saturating_sub(SNIPPET_CHARS / 2);
    let to = (from + SNIPPET_CHARS).min(chars.len());
    let mut shown = String::new();
    if from > 0 {
        shown.push_str("...");
    }
    let (mut caret_at, mut carets) = (0, 0);
    for (index, &c) in chars.iter().enumerate().take(to).skip(from) {
        if index == at {
            caret_at = shown.chars().count();
        }
        let before = shown.chars().count();
        match c {
            '\t' => shown.push_str("    "),
            c if c.is_control() => shown.push('\u{fffd}'),
            c => shown.push(c),
        }
        if index >= at && index < at + width {
            carets += shown.chars().count() - before;
        }
    }
    if at >= to {
        // Past the end of the line (a missing value, the end of the file).
        caret_at = shown.chars().count();
    }
    if to < chars.len() {
        shown.push_str("...");
    }
    (shown, caret_at, carets.max(1))
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// cargo's closing line: `error: could not check `FILE` due to 2 previous errors`.
pub fn summary(verb: &str, what: &str, count: usize) -> String {
    format!("error: could not {verb} `{what}` due to {count} previous error{}", if count == 1 { "" } else { "s" })
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
