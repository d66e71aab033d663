//! PromQL's tokens, as Prometheus' lexer takes a query apart: names (a
//! metric's may hold colons), keywords, numbers (decimal, hex, `Inf`,
//! `NaN`), durations (`1h30m`, `500ms`), the three kinds of strings, and
//! operators. Each token keeps its byte offset, for the error's `line:col`.

use super::Error;

#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    Identifier(String),
    Number(f64),
    /// Milliseconds.
    Duration(i64),
    String(String),
    /// An operator or punctuation, as written (`+`, `=~`, `(`, `,`...).
    Symbol(&'static str),
    End,
}

impl Token {
    /// How Prometheus names the token in "unexpected ..." errors; `raw` is
    /// its text in the query.
    pub fn describe(&self, raw: &str) -> String {
        match self {
            Token::Identifier(name) => match name.as_str() {
                "by" | "without" | "on" | "ignoring" | "group_left" | "group_right" | "bool" | "offset" => format!("<{name}>"),
                "and" | "or" | "unless" | "atan2" => format!("<op:{name}>"),
                _ if super::parser::is_aggregation(name) => format!("<aggr:{name}>"),
                _ => format!("identifier \"{name}\""),
            },
            Token::Number(_) => format!("number {}", quote(raw)),
            Token::Duration(_) => format!("duration {}", quote(raw)),
            Token::String(text) => format!("string {}", quote(text)),
            Token::Symbol(symbol) => match *symbol {
                "(" | ")" | "{" | "}" | "[" | "]" | "," | ":" | "=" => quote(symbol),
                "@" => "<@>".into(),
                other => format!("<op:{other}>"),
            },
            Token::End => "end of input".into(),
        }
    }
}

/// Go's `%q` of a string: double quotes, backslash escapes.
pub fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            '\n' => out += "\\n",
            '\t' => out += "\\t",
            c if c.is_control() => out += &format!("\\x{:02x}", c as u32),
            c => out.push(c),
        }
    }
    out + "\""
}

/// The symbols, longest first so `=~` wins over `=`.
const SYMBOLS: &[&str] = &["==", "!=", ">=", "<=", "=~", "!~", "+", "-", "*", "/", "%", "^", ">", "<", "=", "(", ")", "{", "}", "[", "]", ",", ":", "@"];

/// The longest duration Go's `time.Duration` holds, in milliseconds.
pub const MAX_DURATION_MS: i64 = i64::MAX / 1_000_000;

/// Duration units in milliseconds, longest first.
const UNITS: &[(&str, i64)] = &[("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000), ("w", 604_800_000), ("y", 31_536_000_000)];

/// A token, and where it starts and ends in the query.
pub type Spanned = (Token, usize, usize);

/// The tokens of `text`, each with its byte span. As Prometheus' lexer,
/// this one pairs parentheses and brackets and knows what may stand
/// inside braces.
pub fn tokens(text: &str) -> Result<Vec<Spanned>, Error> {
    let spanned = scan(text)?;
    let (mut parens, mut bracket, mut brace) = (0usize, false, false);
    for (token, start, _) in &spanned {
        match token {
            Token::Symbol("(") => parens += 1,
            Token::Symbol(")") if parens == 0 => return Err(Error::at(text, *start, "unexpected right parenthesis ')'".into())),
            Token::Symbol(")") => parens -= 1,
            Token::Symbol("[") => bracket = true,
            Token::Symbol("]") if !bracket => return Err(Error::at(text, *start, "unexpected right bracket ']'".into())),
            Token::Symbol("]") => bracket = false,
            Token::Symbol("{") => brace = true,
            Token::Symbol("}") => brace = false,
            Token::Number(_) if bracket => return Err(Error::at(text, *start, "missing unit character in duration".into())),
            Token::Symbol(symbol) if brace && !matches!(*symbol, "," | "=" | "!=" | "=~" | "!~") => {
                let character = symbol.chars().next().unwrap_or('?');
                return Err(Error::at(text, *start, format!("unexpected character inside braces: {}", char_quote(character))));
            }
            Token::Number(_) | Token::Duration(_) if brace => {
                let character = text[*start..].chars().next().unwrap_or('?');
                return Err(Error::at(text, *start, format!("unexpected character inside braces: {}", char_quote(character))));
            }
            Token::End if brace => return Err(Error::at(text, *start, "unexpected end of input inside braces".into())),
            Token::End if bracket => return Err(Error::at(text, *start, "unclosed left bracket".into())),
            Token::End if parens > 0 => return Err(Error::at(text, *start, "unclosed left parenthesis".into())),
            _ => {}
        }
    }
    Ok(spanned)
}

fn scan(text: &str) -> Result<Vec<Spanned>, Error> {
    let bytes = text.as_bytes();
    let mut out: Vec<Spanned> = Vec::new();
    let mut at = 0;
    // Inside `[...]`, a number is a duration missing its unit.
    let mut in_brackets = false;
    while at < bytes.len() {
        let c = bytes[at];
        if c.is_ascii_whitespace() {
            at += 1;
            continue;
        }
        // A comment runs to the end of its line.
        if c == b'#' {
            while at < bytes.len() && bytes[at] != b'\n' {
                at += 1;
            }
            continue;
        }
        let start = at;
        if c.is_ascii_digit() || (c == b'.' && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)) {
            let (token, end) = number_or_duration(text, at).map_err(|error| match in_brackets {
                true => Error::at(text, at, error.message.replace("bad number or duration syntax", "bad duration syntax")),
                false => error,
            })?;
            out.push((token, start, end));
            at = end;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let mut end = at + 1;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b':') {
                end += 1;
            }
            let word = &text[at..end];
            let token = match word.to_ascii_lowercase().as_str() {
                "inf" => Token::Number(f64::INFINITY),
                "nan" => Token::Number(f64::NAN),
                _ => Token::Identifier(word.to_string()),
            };
            out.push((token, start, end));
            at = end;
            continue;
        }
        if matches!(c, b'"' | b'\'' | b'`') {
            let (value, end) = string(text, at)?;
            out.push((Token::String(value), start, end));
            at = end;
            continue;
        }
        match SYMBOLS.iter().find(|symbol| text[at..].starts_with(**symbol)) {
            Some(symbol) => {
                match *symbol {
                    "[" => in_brackets = true,
                    "]" => in_brackets = false,
                    _ => {}
                }
                out.push((Token::Symbol(symbol), start, start + symbol.len()));
                at += symbol.len();
            }
            None => {
                let character = text[at..].chars().next().unwrap_or('?');
                return Err(Error::at(text, at, format!("unexpected character: {}", char_quote(character))));
            }
        }
    }
    out.push((Token::End, text.len(), text.len()));
    Ok(out)
}

/// Go's `%q` of a rune: single quotes.
fn char_quote(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '\\' => "'\\\\'".into(),
        c => format!("'{c}'"),
    }
}

fn number_or_duration(text: &str, at: usize) -> Result<(Token, usize), Error> {
    let bytes = text.as_bytes();
    // Hexadecimal.
    if text[at..].starts_with("0x") || text[at..].starts_with("0X") {
        let mut end = at + 2;
        while end < bytes.len() && bytes[end].is_ascii_hexdigit() {
            end += 1;
        }
        let value =
            u64::from_str_radix(&text[at + 2..end], 16).map_err(|_| Error::at(text, at, format!("bad number or duration syntax: \"{}\"", &text[at..end])))?;
        return Ok((Token::Number(value as f64), end));
    }
    // A duration: digits and a unit, repeated (`1h30m`).
    let mut end = at;
    let mut total: i64 = 0;
    let mut units = 0;
    loop {
        let digits_start = end;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end == digits_start {
            break;
        }
        let Some((unit, scale)) = UNITS.iter().find(|(unit, _)| text[end..].starts_with(unit) && !continues_word(bytes, end + unit.len())) else {
            break;
        };
        let count: i64 = text[digits_start..end].parse().unwrap_or(i64::MAX);
        total = total.saturating_add(count.saturating_mul(*scale));
        end += unit.len();
        units += 1;
    }
    if units > 0 {
        // Go's durations are int64 nanoseconds: about 292 years at most.
        if total > MAX_DURATION_MS {
            return Err(Error::at(text, at, format!("not a valid duration string: \"{}\"", &text[at..end])));
        }
        return Ok((Token::Duration(total), end));
    }
    // A decimal number.
    let mut end = at;
    while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
        end += 1;
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut exponent = end + 1;
        if exponent < bytes.len() && (bytes[exponent] == b'+' || bytes[exponent] == b'-') {
            exponent += 1;
        }
        if exponent < bytes.len() && bytes[exponent].is_ascii_digit() {
            end = exponent;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
    }
    let mut word_end = end;
    while word_end < bytes.len() && (bytes[word_end].is_ascii_alphanumeric() || bytes[word_end] == b'_') {
        word_end += 1;
    }
    let word = &text[at..word_end];
    if word_end != end {
        return Err(Error::at(text, at, format!("bad number or duration syntax: \"{word}\"")));
    }
    word.parse::<f64>().map(|value| (Token::Number(value), end)).map_err(|_| Error::at(text, at, format!("bad number or duration syntax: \"{word}\"")))
}

fn continues_word(bytes: &[u8], at: usize) -> bool {
    bytes.get(at).is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
}

fn string(text: &str, at: usize) -> Result<(String, usize), Error> {
    let quote_char = text.as_bytes()[at] as char;
    let mut value = String::new();
    let mut chars = text[at + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        if c == quote_char {
            return Ok((value, at + 1 + offset + 1));
        }
        if c == '\\' && quote_char != '`' {
            let Some((_, escaped)) = chars.next() else { break };
            match escaped {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'r' => value.push('\r'),
                '\\' => value.push('\\'),
                '"' | '\'' => value.push(escaped),
                'a' => value.push('\u{7}'),
                'b' => value.push('\u{8}'),
                'f' => value.push('\u{c}'),
                'v' => value.push('\u{b}'),
                other => return Err(Error::at(text, at + 1 + offset, format!("unknown escape sequence U+{:04X} {}", other as u32, char_quote(other)))),
            }
            continue;
        }
        if c == '\n' && quote_char != '`' {
            break;
        }
        value.push(c);
    }
    Err(Error::at(text, at, "unterminated quoted string".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Token> {
        tokens(text).expect("lexes").into_iter().map(|(token, ..)| token).collect()
    }

    #[test]
    fn names_numbers_durations_and_strings() {
        assert_eq!(
            kinds("rate(node_x:y[1h30m]) > 1e3 offset 5m"),
            [
                Token::Identifier("rate".into()),
                Token::Symbol("("),
                Token::Identifier("node_x:y".into()),
                Token::Symbol("["),
                Token::Duration(5_400_000),
                Token::Symbol("]"),
                Token::Symbol(")"),
                Token::Symbol(">"),
                Token::Number(1000.0),
                Token::Identifier("offset".into()),
                Token::Duration(300_000),
                Token::End
            ]
        );
        assert_eq!(kinds("{a=~'x\\'y'}")[3], Token::String("x'y".into()));
        assert_eq!(kinds("0x1F")[0], Token::Number(31.0));
        assert_eq!(kinds("500ms")[0], Token::Duration(500));
    }

    #[test]
    fn errors_name_the_place() {
        assert_eq!(tokens("up $").unwrap_err().to_string(), "1:4: parse error: unexpected character: '$'");
        assert_eq!(tokens("up{a=\"b}").unwrap_err().to_string(), "1:6: parse error: unterminated quoted string");
        assert_eq!(tokens("5x").unwrap_err().to_string(), "1:1: parse error: bad number or duration syntax: \"5x\"");
        assert_eq!(tokens("sum(foo").unwrap_err().to_string(), "1:8: parse error: unclosed left parenthesis");
        assert_eq!(tokens("foo{").unwrap_err().to_string(), "1:5: parse error: unexpected end of input inside braces");
        assert_eq!(tokens("foo[5mm]").unwrap_err().to_string(), "1:5: parse error: bad duration syntax: \"5mm\"");
        assert_eq!(tokens("foo[1]").unwrap_err().to_string(), "1:5: parse error: missing unit character in duration");
        assert_eq!(tokens("up)").unwrap_err().to_string(), "1:3: parse error: unexpected right parenthesis ')'");
    }
}
