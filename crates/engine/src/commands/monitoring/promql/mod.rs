//! PromQL, the query language of Prometheus 2.53: a lexer, a parser that
//! checks types, and an evaluator over any [`eval::Storage`]. Messages are
//! Prometheus' own (`promql/parser`, `promql/engine.go`).

pub mod eval;
pub mod functions;
pub mod lexer;
pub mod parser;

use std::fmt;

/// A label name as Prometheus accepts one: `[a-zA-Z_][a-zA-Z0-9_]*`.
pub fn valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The query does not parse or type-check: HTTP 400, `bad_data`.
    Parse,
    /// The query ran into an error: HTTP 422, `execution`.
    Execution,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// `line:col` of a parse error (1-based; the column counts bytes).
    pub position: Option<(usize, usize)>,
    pub message: String,
}

impl Error {
    /// A parse error at byte `offset` of `text`.
    pub fn at(text: &str, offset: usize, message: String) -> Error {
        let offset = offset.min(text.len());
        let before = &text.as_bytes()[..offset];
        let line = 1 + before.iter().filter(|b| **b == b'\n').count();
        let column = offset - before.iter().rposition(|b| *b == b'\n').map_or(0, |newline| newline + 1) + 1;
        Error { kind: ErrorKind::Parse, position: Some((line, column)), message }
    }

    pub fn unknown_position(message: &str) -> Error {
        Error { kind: ErrorKind::Parse, position: None, message: message.to_string() }
    }

    pub fn execution(message: &str) -> Error {
        Error { kind: ErrorKind::Execution, position: None, message: message.to_string() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.position) {
            (ErrorKind::Execution, _) => f.write_str(&self.message),
            (ErrorKind::Parse, Some((line, column))) => write!(f, "{line}:{column}: parse error: {}", self.message),
            (ErrorKind::Parse, None) => write!(f, "unknown position: parse error: {}", self.message),
        }
    }
}
