//! Slurm's `-o` formats (`sinfo -o`, `squeue -o`): text as written and
//! `%[.][WIDTH]X` fields, each tool with its own table of fields and the
//! headers they print.

use super::field;

/// One part of a format: text as written, or a field with its width and
/// justification (`%.10l`: right-justified in 10).
pub enum Part {
    Text(String),
    Field { kind: char, width: Option<usize>, right: bool },
}

/// Parses `format` against `fields`; the message the tool gives for a
/// field it lacks (`Invalid node format specification: x`; `noun` is
/// `node` or `job`).
pub fn parse(format: &str, fields: &[(char, &str)], noun: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            text.push('%');
            continue;
        }
        let right = chars.next_if_eq(&'.').is_some();
        let mut digits = String::new();
        while let Some(digit) = chars.next_if(char::is_ascii_digit) {
            digits.push(digit);
        }
        // Widths past what a terminal shows are cut to it (and never overflow).
        let width = (!digits.is_empty()).then(|| digits.parse::<usize>().unwrap_or(usize::MAX).min(1024));
        let Some(kind) = chars.next() else { break };
        if !fields.iter().any(|(known, _)| *known == kind) {
            return Err(format!("Invalid {noun} format specification: {kind}"));
        }
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut text)));
        }
        parts.push(Part::Field { kind, width, right });
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}

/// One line: each field's cell from `cell`, fitted to its width.
pub fn render(parts: &[Part], cell: impl Fn(char) -> String) -> String {
    let mut line = String::new();
    for part in parts {
        match part {
            Part::Text(text) => line.push_str(text),
            Part::Field { kind, width, right } => {
                let text = cell(*kind);
                match width {
                    Some(width) => line.push_str(&field(&text, *width, *right)),
                    None => line.push_str(&text),
                }
            }
        }
    }
    line.push('\n');
    line
}

/// The header line: each field's name.
pub fn header(parts: &[Part], fields: &[(char, &str)]) -> String {
    render(parts, |kind| fields.iter().find(|(known, _)| *known == kind).map_or("", |(_, name)| name).to_string())
}
