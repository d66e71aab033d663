//! awk's tokens: the program's text as words, strings, numbers, regex
//! literals and operators.

use super::*;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Num(f64),
    Str(String),
    Regex(String),
    Name(String),
    Func(&'static str),
    Keyword(&'static str),
    Punct(&'static str),
    Newline,
    Eof,
}

pub(super) const KEYWORDS: &[&str] =
    &["BEGIN", "END", "print", "printf", "if", "else", "while", "for", "in", "next", "exit", "delete", "do", "break", "continue", "getline", "function"];
pub(super) const FUNCS: &[&str] = &[
    "length", "substr", "index", "split", "tolower", "toupper", "int", "sprintf", "sub", "gsub", "match", "sqrt", "exp", "log", "sin", "cos", "atan2", "rand",
    "srand", "system", "close",
];
pub(super) const PUNCTS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "!~", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", ">>", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/",
    "%", "^", "!", ">", "<", "|", "?", ":", "~", "=", "$",
];

pub(super) struct SyntaxError;

/// A string or regex literal, from its opening delimiter at `at` to the same
/// character closing it; `step` takes each character between (and may read
/// on, for an escape). An unclosed literal is a syntax error.
pub(super) fn delimited(
    chars: &[char],
    at: &mut usize,
    mut step: impl FnMut(char, &mut usize, &mut String) -> Result<(), SyntaxError>,
) -> Result<String, SyntaxError> {
    let close = chars[*at];
    *at += 1;
    let mut text = String::new();
    loop {
        let Some(&d) = chars.get(*at) else { return Err(SyntaxError) };
        *at += 1;
        if d == close {
            return Ok(text);
        }
        step(d, at, &mut text)?;
    }
}

pub(super) fn tokenize(source: &str) -> Result<Vec<Tok>, SyntaxError> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens: Vec<Tok> = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let operand_before = matches!(tokens.last(), Some(Tok::Num(_) | Tok::Str(_) | Tok::Name(_) | Tok::Regex(_) | Tok::Func(_)))
            || matches!(tokens.last(), Some(Tok::Punct(")" | "]" | "++" | "--" | "$")));
        match c {
            ' ' | '\t' | '\r' => at += 1,
            '\\' if chars.get(at + 1) == Some(&'\n') => at += 2,
            '\n' => {
                tokens.push(Tok::Newline);
                at += 1;
            }
            '#' => {
                while at < chars.len() && chars[at] != '\n' {
                    at += 1;
                }
            }
            '"' => {
                let text = delimited(&chars, &mut at, |d, at, text| {
                    if d != '\\' {
                        text.push(d);
                        return Ok(());
                    }
                    let Some(&e) = chars.get(*at) else { return Err(SyntaxError) };
                    *at += 1;
                    let escaped = match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '\\' => '\\',
                        '"' => '"',
                        '/' => '/',
                        'a' => '\x07',
                        'b' => '\x08',
                        'f' => '\x0c',
                        'v' => '\x0b',
                        other => {
                            text.push('\\');
                            other
                        }
                    };
                    text.push(escaped);
                    Ok(())
                })?;
                tokens.push(Tok::Str(text));
            }
            '/' if !operand_before => {
                let text = delimited(&chars, &mut at, |d, at, text| {
                    match d {
                        '\n' => return Err(SyntaxError),
                        '\\' if chars.get(*at) == Some(&'/') => {
                            text.push('/');
                            *at += 1;
                        }
                        '\\' => {
                            text.push('\\');
                            if let Some(&e) = chars.get(*at) {
                                text.push(e);
                                *at += 1;
                            }
                        }
                        d => text.push(d),
                    }
                    Ok(())
                })?;
                tokens.push(Tok::Regex(text));
            }
            c if c.is_ascii_digit() || (c == '.' && chars.get(at + 1).is_some_and(char::is_ascii_digit)) => {
                let start = at;
                while at < chars.len() && (chars[at].is_ascii_digit() || chars[at] == '.') {
                    at += 1;
                }
                if at < chars.len() && matches!(chars[at], 'e' | 'E') {
                    let mut probe = at + 1;
                    if probe < chars.len() && matches!(chars[probe], '+' | '-') {
                        probe += 1;
                    }
                    if probe < chars.len() && chars[probe].is_ascii_digit() {
                        at = probe;
                        while at < chars.len() && chars[at].is_ascii_digit() {
                            at += 1;
                        }
                    }
                }
                let text: String = chars[start..at].iter().collect();
                tokens.push(Tok::Num(leading_number(&text)));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = at;
                while at < chars.len() && (chars[at].is_ascii_alphanumeric() || chars[at] == '_') {
                    at += 1;
                }
                let word: String = chars[start..at].iter().collect();
                if let Some(keyword) = KEYWORDS.iter().find(|k| **k == word) {
                    tokens.push(Tok::Keyword(keyword));
                } else if let Some(func) = FUNCS.iter().find(|f| **f == word) {
                    tokens.push(Tok::Func(func));
                } else {
                    tokens.push(Tok::Name(word));
                }
            }
            _ => {
                let rest: String = chars[at..chars.len().min(at + 2)].iter().collect();
                let Some(punct) = PUNCTS.iter().find(|p| rest.starts_with(**p)) else { return Err(SyntaxError) };
                tokens.push(Tok::Punct(punct));
                at += punct.chars().count();
            }
        }
    }
    tokens.push(Tok::Eof);
    Ok(tokens)
}
