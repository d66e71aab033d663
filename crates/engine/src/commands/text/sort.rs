//! `sort`: GNU sort over standard input with keys (`-k`), a field separator
//! (`-t`), numeric (`-n`, `-g`), human (`-h`), reverse, unique, stable and
//! case-folding orders. Under `LANG=C.UTF-8` text compares by code point.

use std::cmp::Ordering;

use super::{join_lines, lines, quote, Dialect, GnuTool, Opt, Parsed};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Sort;

static SIGNATURE: Signature = Signature {
    name: "sort",
    summary: "sort lines of text",
    usage: "sort [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('b'), long: Some("ignore-leading-blanks"), value: None, help: "ignore leading blanks" },
        Flag { short: Some('f'), long: Some("ignore-case"), value: None, help: "fold lower case to upper case characters" },
        Flag { short: Some('g'), long: Some("general-numeric-sort"), value: None, help: "compare according to general numerical value" },
        Flag { short: Some('h'), long: Some("human-numeric-sort"), value: None, help: "compare human readable numbers (e.g., 2K 1G)" },
        Flag { short: Some('n'), long: Some("numeric-sort"), value: None, help: "compare according to string numerical value" },
        Flag { short: Some('r'), long: Some("reverse"), value: None, help: "reverse the result of comparisons" },
        Flag { short: Some('k'), long: Some("key"), value: Some("KEYDEF"), help: "sort via a key; KEYDEF gives location and type" },
        Flag { short: Some('s'), long: Some("stable"), value: None, help: "stabilize sort by disabling last-resort comparison" },
        Flag { short: Some('t'), long: Some("field-separator"), value: Some("SEP"), help: "use SEP instead of non-blank to blank transition" },
        Flag { short: Some('u'), long: Some("unique"), value: None, help: "output only the first of an equal run" },
    ],
    examples: &[
        Example { command: "nvidia-smi --query-gpu=index,temperature.gpu --format=csv,noheader | sort -t, -k2 -n -r", description: "hottest GPU first" },
        Example { command: "echo -e 'b\\na\\nb' | sort -u", description: "sorted, without duplicates" },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 2, usage_line: None, numeric_option: false, optional_values: &[] };

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct KeyOrder {
    numeric: bool,
    general: bool,
    human: bool,
    reverse: bool,
    fold: bool,
    blanks: bool,
}

impl KeyOrder {
    fn is_default(&self) -> bool {
        *self == KeyOrder::default()
    }
}

#[derive(Clone, Debug)]
struct Key {
    start_field: usize,
    start_char: usize,
    /// (field, char); char 0 means the end of the field.
    end: Option<(usize, usize)>,
    order: KeyOrder,
}

fn apply_letters(order: &mut KeyOrder, letters: &str) -> Result<(), ()> {
    for letter in letters.chars() {
        match letter {
            'n' => order.numeric = true,
            'g' => order.general = true,
            'h' => order.human = true,
            'r' => order.reverse = true,
            'f' => order.fold = true,
            'b' => order.blanks = true,
            _ => return Err(()),
        }
    }
    Ok(())
}

fn parse_key(spec: &str) -> Result<Key, String> {
    let invalid = |what: &str, at: &str| format!("sort: {what}: invalid count at start of {}\n", quote(at));
    let bad_spec = |problem: &str| format!("sort: {problem}: invalid field specification {}\n", quote(spec));
    let mut order = KeyOrder::default();
    let (start, end) = match spec.split_once(',') {
        Some((start, end)) => (start, Some(end)),
        None => (spec, None),
    };
    let split_number = |text: &str| -> (Option<usize>, String) {
        let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
        let rest = text[digits.len()..].to_string();
        (if digits.is_empty() { None } else { Some(digits.parse().unwrap_or(usize::MAX)) }, rest)
    };
    // Both ends of a key start with a field number, 1 or more.
    let field_number = |text: &str, missing: &str| -> Result<(usize, String), String> {
        match split_number(text) {
            (None, _) => Err(invalid(missing, text)),
            (Some(0), _) => Err(bad_spec("field number is zero")),
            (Some(field), rest) => Ok((field, rest)),
        }
    };
    let (start_field, rest) = field_number(start, "invalid number at field start")?;
    let (start_char, letters) = match rest.strip_prefix('.') {
        Some(after) => {
            let (number, letters) = split_number(after);
            match number {
                Some(0) => return Err(bad_spec("character offset is zero")),
                Some(n) => (n, letters),
                None => return Err(invalid("invalid number after '.'", after)),
            }
        }
        None => (1, rest),
    };
    apply_letters(&mut order, &letters).map_err(|()| bad_spec("stray character in field spec"))?;
    let end = match end {
        None => None,
        Some(end) => {
            let (end_field, rest) = field_number(end, "invalid number after ','")?;
            let (end_char, letters) = match rest.strip_prefix('.') {
                Some(after) => {
                    let (number, letters) = split_number(after);
                    (number.unwrap_or(0), letters)
                }
                None => (0, rest),
            };
            apply_letters(&mut order, &letters).map_err(|()| bad_spec("stray character in field spec"))?;
            Some((end_field, end_char))
        }
    };
    Ok(Key { start_field, start_char, end, order })
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Byte ranges of a line's fields: with a separator, between separators;
/// without, each field is its leading blanks plus the non-blanks after them.
fn fields(line: &str, separator: Option<char>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    match separator {
        Some(sep) => {
            let mut start = 0;
            for (at, c) in line.char_indices() {
                if c == sep {
                    out.push((start, at));
                    start = at + c.len_utf8();
                }
            }
            out.push((start, line.len()));
        }
        None => {
            let chars: Vec<(usize, char)> = line.char_indices().collect();
            let mut i = 0;
            while i < chars.len() {
                let start = chars[i].0;
                while i < chars.len() && is_blank(chars[i].1) {
                    i += 1;
                }
                while i < chars.len() && !is_blank(chars[i].1) {
                    i += 1;
                }
                let end = chars.get(i).map_or(line.len(), |&(at, _)| at);
                out.push((start, end));
            }
        }
    }
    out
}

/// Advances `chars` characters from byte `from`, not past `limit`.
fn advance(line: &str, from: usize, chars: usize, limit: usize) -> usize {
    let mut at = from;
    for (count, c) in line[from.min(line.len())..].chars().enumerate() {
        if count >= chars || at >= limit {
            break;
        }
        at += c.len_utf8();
    }
    at.min(limit.max(from))
}

fn skip_blanks(line: &str, from: usize, limit: usize) -> usize {
    let mut at = from;
    for c in line[from.min(line.len())..].chars() {
        if at >= limit || !is_blank(c) {
            break;
        }
        at += c.len_utf8();
    }
    at
}

fn key_text<'l>(line: &'l str, key: &Key, separator: Option<char>) -> &'l str {
    let bounds = fields(line, separator);
    let len = line.len();
    let start = match bounds.get(key.start_field - 1) {
        Some(&(field_start, field_end)) => {
            let from = if key.order.blanks { skip_blanks(line, field_start, field_end) } else { field_start };
            advance(line, from, key.start_char - 1, len)
        }
        None => len,
    };
    let end = match key.end {
        None => len,
        Some((field, char)) => match bounds.get(field - 1) {
            Some(&(_, field_end)) if char == 0 => field_end,
            Some(&(field_start, field_end)) => {
                let from = if key.order.blanks { skip_blanks(line, field_start, field_end) } else { field_start };
                advance(line, from, char, len)
            }
            None => len,
        },
    };
    if end <= start {
        ""
    } else {
        line.get(start..end).unwrap_or("")
    }
}

/// The leading number as `sort -n` reads it: blanks, an optional minus,
/// digits, an optional fraction. No number reads as zero.
fn numeric_prefix(text: &str) -> (f64, usize) {
    let trimmed = text.trim_start_matches(is_blank);
    let mut end = 0;
    let bytes = trimmed.as_bytes();
    if bytes.first() == Some(&b'-') {
        end = 1;
    }
    let digits_start = end;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    if bytes.get(end) == Some(&b'.') {
        end += 1;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    let number = &trimmed[..end];
    if end == digits_start || number == "-" || number == "-." || number == "." {
        return (0.0, text.len() - trimmed.len() + end);
    }
    (number.parse::<f64>().unwrap_or(0.0), text.len() - trimmed.len() + end)
}

fn human_value(text: &str) -> (i32, u32, f64) {
    let (number, used) = numeric_prefix(text);
    let suffix = text[used.min(text.len())..].chars().next();
    let power = match suffix {
        Some('k' | 'K') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some('T') => 4,
        Some('P') => 5,
        Some('E') => 6,
        Some('Z') => 7,
        Some('Y') => 8,
        _ => 0,
    };
    let sign = if number < 0.0 {
        -1
    } else if number > 0.0 {
        1
    } else {
        0
    };
    (sign, power, number)
}

fn general_value(text: &str) -> Option<f64> {
    let trimmed = text.trim_start();
    // The longest prefix that parses as a float (strtod).
    (1..=trimmed.len()).rev().filter(|&end| trimmed.is_char_boundary(end)).find_map(|end| {
        let candidate = &trimmed[..end];
        if candidate.ends_with(|c: char| c.is_ascii_alphabetic() && !matches!(c, 'f' | 'y' | 'n')) {
            return None;
        }
        candidate.parse::<f64>().ok()
    })
}

fn compare_text(a: &str, b: &str, order: &KeyOrder) -> Ordering {
    let (a, b) = if order.blanks && !order.numeric && !order.human && !order.general {
        (a.trim_start_matches(is_blank), b.trim_start_matches(is_blank))
    } else {
        (a, b)
    };
    let ordering = if order.human {
        let (sa, pa, na) = human_value(a);
        let (sb, pb, nb) = human_value(b);
        sa.cmp(&sb)
            .then_with(|| {
                let by_power = pa.cmp(&pb);
                if sa < 0 {
                    by_power.reverse()
                } else {
                    by_power
                }
            })
            .then(na.partial_cmp(&nb).unwrap_or(Ordering::Equal))
    } else if order.numeric {
        numeric_prefix(a).0.partial_cmp(&numeric_prefix(b).0).unwrap_or(Ordering::Equal)
    } else if order.general {
        // Non-numbers sort first, as strtod failures do in GNU sort.
        match (general_value(a), general_value(b)) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        }
    } else if order.fold {
        a.chars().map(|c| c.to_ascii_uppercase()).cmp(b.chars().map(|c| c.to_ascii_uppercase()))
    } else {
        a.cmp(b)
    };
    if order.reverse {
        ordering.reverse()
    } else {
        ordering
    }
}

struct Plan {
    keys: Vec<Key>,
    global: KeyOrder,
    separator: Option<char>,
    stable: bool,
    unique: bool,
}

impl Plan {
    fn compare_keys(&self, a: &str, b: &str) -> Ordering {
        if self.keys.is_empty() {
            return compare_text(a, b, &self.global);
        }
        for key in &self.keys {
            let order = if key.order.is_default() { self.global } else { key.order };
            let ordering = compare_text(key_text(a, key, self.separator), key_text(b, key, self.separator), &order);
            if ordering != Ordering::Equal {
                return ordering;
            }
        }
        Ordering::Equal
    }

    fn compare(&self, a: &str, b: &str) -> Ordering {
        self.compare_keys(a, b).then_with(|| {
            if self.stable || self.unique {
                Ordering::Equal
            } else if self.global.reverse {
                b.cmp(a)
            } else {
                a.cmp(b)
            }
        })
    }
}

impl GnuTool for Sort {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &DIALECT;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let mut plan = Plan { keys: Vec::new(), global: KeyOrder::default(), separator: None, stable: false, unique: false };
        for option in &parsed.options {
            let Opt::Flag(flag, value) = option else { continue };
            let value = value.clone().unwrap_or_default();
            match flag.short {
                Some('k') => match parse_key(&value) {
                    Ok(key) => plan.keys.push(key),
                    Err(message) => return Output::error(message, 2),
                },
                Some('t') => {
                    let mut chars = value.chars();
                    match (chars.next(), chars.next()) {
                        (Some(sep), None) => plan.separator = Some(sep),
                        (None, _) => return Output::error("sort: empty tab\n", 2),
                        _ if value == "\\0" => plan.separator = Some('\0'),
                        _ => return Output::error(format!("sort: multi-character tab {}\n", quote(&value)), 2),
                    }
                }
                Some('s') => plan.stable = true,
                Some('u') => plan.unique = true,
                Some(letter) => {
                    let _ = apply_letters(&mut plan.global, &letter.to_string());
                }
                None => {}
            }
        }
        let mut text = String::new();
        let mut stdin_used = false;
        for operand in &parsed.operands {
            if operand != "-" {
                match super::read_file(invocation, operand) {
                    Ok(file) => text.push_str(&file),
                    Err("Is a directory") => return Output::error(format!("sort: read failed: {operand}: Is a directory\n"), 2),
                    Err(reason) => return Output::error(format!("sort: cannot read: {operand}: {reason}\n"), 2),
                }
                continue;
            }
            if !stdin_used {
                text.push_str(invocation.stdin);
                stdin_used = true;
            }
        }
        if parsed.operands.is_empty() {
            text.push_str(invocation.stdin);
        }
        let mut rows = lines(&text);
        crate::sort::sort_by(&mut rows, |a, b| plan.compare(a, b));
        if plan.unique {
            rows.dedup_by(|later, earlier| plan.compare_keys(earlier, later) == Ordering::Equal);
        }
        Output::ok(join_lines(&rows))
    }
}

#[cfg(test)]
mod tests {
    use crate::commands::text::test_support::{echo_into, shown};

    fn sort(input: &str, args: &str) -> String {
        shown(echo_into("sort", input, args))
    }

    #[test]
    fn orders_like_gnu() {
        assert_eq!(sort("b\\nB\\na", ""), "B\na\nb\n");
        assert_eq!(sort("10\\n9\\n-1\\nx", "-n"), "-1\nx\n9\n10\n");
        assert_eq!(sort("2\\n1\\n2", "-u -r"), "2\n1\n");
        assert_eq!(sort("x 10K\\ny 2M\\nz 512", "-k2h"), "z 512\nx 10K\ny 2M\n");
        assert_eq!(sort("a,3\\nb,10\\nc,2", "-t, -k2 -n -r"), "b,10\na,3\nc,2\n");
        assert_eq!(sort("a b  c", "-k2"), "a b  c\n");
    }

    #[test]
    fn errors_like_gnu() {
        assert_eq!(sort("", "-k x"), "sort: invalid number at field start: invalid count at start of \u{2018}x\u{2019}\n");
        assert_eq!(sort("", "-k 0"), "sort: field number is zero: invalid field specification \u{2018}0\u{2019}\n");
        assert_eq!(sort("", "-t ab"), "sort: multi-character tab \u{2018}ab\u{2019}\n");
        assert_eq!(sort("", "nofile"), "sort: cannot read: nofile: No such file or directory\n");
    }
}
