//! `tr`: translate, delete or squeeze characters (GNU coreutils). Sets know
//! ranges, backslash escapes, `[:class:]` and `[c*n]` repeats.

use super::{quote, usage_error, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Tr;

static SIGNATURE: Signature = Signature {
    name: "tr",
    summary: "translate or delete characters",
    usage: "tr [OPTION]... STRING1 [STRING2]",
    flags: &[
        Flag { short: Some('c'), long: Some("complement"), value: None, help: "use the complement of STRING1" },
        Flag { short: Some('C'), long: None, value: None, help: "same as -c" },
        Flag { short: Some('d'), long: Some("delete"), value: None, help: "delete characters in STRING1, do not translate" },
        Flag { short: Some('s'), long: Some("squeeze-repeats"), value: None, help: "replace each sequence of a repeated character with one" },
        Flag { short: Some('t'), long: Some("truncate-set1"), value: None, help: "first truncate STRING1 to length of STRING2" },
    ],
    examples: &[
        Example { command: "echo GPU-0 | tr A-Z a-z", description: "lower-case a string" },
        Example { command: "nvidia-smi -L | tr -s ' '", description: "squeeze runs of spaces" },
        Example { command: "echo a,b,c | tr -d ,", description: "delete commas" },
    ],
};

fn class_chars(name: &str) -> Option<Vec<char>> {
    let all = (0u8..=127).map(char::from);
    let chars: Vec<char> = match name {
        "upper" => ('A'..='Z').collect(),
        "lower" => ('a'..='z').collect(),
        "digit" => ('0'..='9').collect(),
        "alpha" => all.filter(char::is_ascii_alphabetic).collect(),
        "alnum" => all.filter(char::is_ascii_alphanumeric).collect(),
        "space" => all.filter(|c| c.is_ascii_whitespace() || *c == '\x0b').collect(),
        "blank" => vec!['\t', ' '],
        "punct" => all.filter(char::is_ascii_punctuation).collect(),
        "cntrl" => all.filter(char::is_ascii_control).collect(),
        "print" => all.filter(|c| !c.is_ascii_control()).collect(),
        "graph" => all.filter(char::is_ascii_graphic).collect(),
        "xdigit" => all.filter(char::is_ascii_hexdigit).collect(),
        _ => return None,
    };
    Some(chars)
}

/// Reads one character of a set, handling backslash escapes.
fn set_char(chars: &[char], at: &mut usize) -> Option<char> {
    let c = *chars.get(*at)?;
    *at += 1;
    if c != '\\' {
        return Some(c);
    }
    let Some(&next) = chars.get(*at) else { return Some('\\') };
    *at += 1;
    Some(match next {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'a' => '\x07',
        'b' => '\x08',
        'f' => '\x0c',
        'v' => '\x0b',
        '0'..='7' => {
            let mut value = next.to_digit(8).unwrap_or(0);
            for _ in 0..2 {
                match chars.get(*at).and_then(|c| c.to_digit(8)) {
                    Some(digit) if value * 8 + digit <= 0o377 => {
                        value = value * 8 + digit;
                        *at += 1;
                    }
                    _ => break,
                }
            }
            char::from_u32(value).unwrap_or('\0')
        }
        other => other,
    })
}

fn expand_set(text: &str) -> Result<Vec<char>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if chars[at] == '[' && chars.get(at + 1) == Some(&':') {
            let rest: String = chars[at + 2..].iter().collect();
            if let Some(end) = rest.find(":]") {
                let name = &rest[..end];
                match class_chars(name) {
                    Some(members) => out.extend(members),
                    None => return Err(format!("invalid character class {}", quote(name))),
                }
                at += 2 + name.chars().count() + 2;
                continue;
            }
        }
        if chars[at] == '[' {
            // `[c*n]` / `[c*]`: c repeated n times (or to fill SET2).
            let mut probe = at + 1;
            if let Some(c) = set_char(&chars, &mut probe) {
                if chars.get(probe) == Some(&'*') {
                    let digits: String = chars[probe + 1..].iter().take_while(|c| c.is_ascii_digit()).collect();
                    let close = probe + 1 + digits.chars().count();
                    if chars.get(close) == Some(&']') {
                        let count = if digits.is_empty() { 0 } else { digits.parse::<usize>().unwrap_or(0) };
                        // A count of zero fills later; cap to keep memory bounded.
                        out.extend(std::iter::repeat_n(c, count.clamp(1, 65_536)));
                        at = close + 1;
                        continue;
                    }
                }
            }
        }
        let start_at = at;
        let Some(c) = set_char(&chars, &mut at) else { break };
        if chars.get(at) == Some(&'-') && at + 1 < chars.len() {
            let mut after = at + 1;
            let Some(end) = set_char(&chars, &mut after) else { break };
            if end < c {
                let range: String = chars[start_at..after].iter().collect();
                return Err(format!("range-endpoints of '{range}' are in reverse collating sequence order"));
            }
            out.extend((u32::from(c)..=u32::from(end)).filter_map(char::from_u32));
            at = after;
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

impl GnuTool for Tr {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let (mut complement, mut delete, mut squeeze, mut truncate) = (false, false, false, false);
        for option in &parsed.options {
            if let Opt::Flag(flag, _) = option {
                match flag.short {
                    Some('c' | 'C') => complement = true,
                    Some('d') => delete = true,
                    Some('s') => squeeze = true,
                    _ => truncate = true,
                }
            }
        }
        let operands = &parsed.operands;
        let error = |message: &str| usage_error("tr", &COREUTILS, message);
        let Some(first) = operands.first() else { return error("missing operand") };
        let two_needed = !delete && !squeeze;
        let two_allowed = !delete || squeeze;
        if two_needed && operands.len() < 2 {
            return error(&format!("missing operand after {}\nTwo strings must be given when translating.", quote(first)));
        }
        if operands.len() > 2 || (!two_allowed && operands.len() > 1) {
            let extra = &operands[if two_allowed { 2 } else { 1 }];
            let mut message = format!("extra operand {}", quote(extra));
            if !two_allowed {
                message.push_str("\nOnly one string may be given when deleting without squeezing repeats.");
            }
            return error(&message);
        }
        let set1 = match expand_set(first) {
            Ok(set) => set,
            Err(message) => return Output::error(format!("tr: {message}\n"), 1),
        };
        let set2 = match operands.get(1).map(|text| expand_set(text)) {
            None => None,
            Some(Ok(set)) => Some(set),
            Some(Err(message)) => return Output::error(format!("tr: {message}\n"), 1),
        };
        let in_set1 = |c: char| set1.contains(&c) != complement;
        let mut out = String::new();
        let mut last_squeezed: Option<char> = None;
        for c in invocation.stdin.chars() {
            if delete && in_set1(c) {
                continue;
            }
            let mapped = match (&set2, delete) {
                (Some(set2), false) if in_set1(c) => {
                    if complement {
                        // Every character outside SET1 becomes SET2's last.
                        set2.last().copied().unwrap_or(c)
                    } else {
                        let position = set1.iter().rposition(|&x| x == c).unwrap_or(0);
                        if truncate && position >= set2.len() {
                            c
                        } else {
                            set2.get(position).or(set2.last()).copied().unwrap_or(c)
                        }
                    }
                }
                _ => c,
            };
            if squeeze {
                let squeeze_set: &[char] = match &set2 {
                    Some(set2) => set2,
                    None => &set1,
                };
                let squeezable = match &set2 {
                    Some(_) => squeeze_set.contains(&mapped),
                    None => in_set1(mapped),
                };
                if squeezable && last_squeezed == Some(mapped) {
                    continue;
                }
                last_squeezed = squeezable.then_some(mapped);
            }
            out.push(mapped);
        }
        if set2.as_ref().is_some_and(Vec::is_empty) && !delete && !squeeze && !set1.is_empty() {
            return Output::error("tr: when not truncating set1, string2 must be non-empty\n", 1);
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::commands::text::test_support::shown;
    use crate::testing::run_on_first_node;

    fn tr(input: &str, args: &str) -> String {
        shown(run_on_first_node(&format!("echo '{input}' | tr {args}")))
    }

    #[test]
    fn translates_deletes_squeezes() {
        assert_eq!(tr("GPU-0", "A-Z a-z"), "gpu-0\n");
        assert_eq!(tr("abc", "abc x"), "xxx\n");
        assert_eq!(tr("a,b,c", "-d ,"), "abc\n");
        assert_eq!(tr("a   b  c", "-s ' '"), "a b c\n");
        assert_eq!(tr("hello", "'[:lower:]' '[:upper:]'"), "HELLO\n");
        assert_eq!(tr("a1b2", "-cd '[:digit:]'"), "12");
        assert_eq!(tr("a b", "' ' '\\n'"), "a\nb\n");
    }

    #[test]
    fn errors_like_gnu() {
        let tail = "Try 'tr --help' for more information.\n";
        assert_eq!(tr("", ""), format!("tr: missing operand\n{tail}"));
        assert_eq!(tr("", "a"), format!("tr: missing operand after \u{2018}a\u{2019}\nTwo strings must be given when translating.\n{tail}"));
        assert_eq!(tr("", "a b c"), format!("tr: extra operand \u{2018}c\u{2019}\n{tail}"));
        assert_eq!(tr("", "z-a x"), "tr: range-endpoints of 'z-a' are in reverse collating sequence order\n");
    }
}
