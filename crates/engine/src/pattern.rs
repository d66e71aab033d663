//! bash's pattern matching (`case`, `[[ x == pattern ]]`, `${x#pattern}`,
//! globbing; also `find -name`, which fnmatch reads the same way):
//! `*`, `?`, `[...]` (with `!`/`^` negation and ranges) and backslash
//! escapes. Quoted text reaches here escaped, so it matches literally.
//!
//! Matching is iterative with one backtrack point per `*` (the classic
//! greedy algorithm): time is bounded by text x pattern, never exponential.

#[derive(Clone, Debug, PartialEq)]
enum Item {
    Char(char),
    Any,
    Star,
    Class { negated: bool, ranges: Vec<(char, char)> },
}

fn compile(pattern: &str) -> Vec<Item> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut items = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        match chars[at] {
            '\\' if at + 1 < chars.len() => {
                items.push(Item::Char(chars[at + 1]));
                at += 2;
            }
            '*' => {
                if items.last() != Some(&Item::Star) {
                    items.push(Item::Star);
                }
                at += 1;
            }
            '?' => {
                items.push(Item::Any);
                at += 1;
            }
            '[' => match class(&chars[at..]) {
                Some((item, used)) => {
                    items.push(item);
                    at += used;
                }
                None => {
                    items.push(Item::Char('['));
                    at += 1;
                }
            },
            c => {
                items.push(Item::Char(c));
                at += 1;
            }
        }
    }
    items
}

/// `[...]` at the start of `chars`: the class and how many characters it used.
fn class(chars: &[char]) -> Option<(Item, usize)> {
    let mut at = 1;
    let negated = matches!(chars.get(at), Some('!' | '^'));
    if negated {
        at += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(at)?;
        if c == ']' && !first {
            return Some((Item::Class { negated, ranges }, at + 1));
        }
        first = false;
        let c = if c == '\\' {
            at += 1;
            *chars.get(at)?
        } else {
            c
        };
        if chars.get(at + 1) == Some(&'-') && chars.get(at + 2).is_some_and(|end| *end != ']') {
            ranges.push((c, chars[at + 2]));
            at += 3;
        } else {
            ranges.push((c, c));
            at += 1;
        }
    }
}

fn item_matches(item: &Item, c: char) -> bool {
    match item {
        Item::Char(expected) => *expected == c,
        Item::Any => true,
        Item::Star => true,
        Item::Class { negated, ranges } => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated,
    }
}

fn matches_items(items: &[Item], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        match items.get(p) {
            Some(Item::Star) => {
                backtrack = Some((p, t));
                p += 1;
            }
            Some(item) if item_matches(item, text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match backtrack {
                Some((star, from)) => {
                    p = star + 1;
                    t = from + 1;
                    backtrack = Some((star, from + 1));
                }
                None => return false,
            },
        }
    }
    items[p..].iter().all(|item| *item == Item::Star)
}

/// Whether the whole of `text` matches `pattern`.
pub fn matches(pattern: &str, text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    matches_items(&compile(pattern), &chars)
}

/// Removes the shortest or longest prefix (or suffix) of `text` that
/// matches `pattern`, as `${x#p}`, `${x##p}`, `${x%p}`, `${x%%p}` do.
pub fn trim(text: &str, pattern: &str, suffix: bool, longest: bool) -> String {
    let items = compile(pattern);
    let chars: Vec<char> = text.chars().collect();
    let mut cuts: Vec<usize> = (0..=chars.len()).collect();
    if longest != suffix {
        cuts.reverse();
    }
    for cut in cuts {
        let (piece, rest) = if suffix { (&chars[cut..], &chars[..cut]) } else { (&chars[..cut], &chars[cut..]) };
        if matches_items(&items, piece) {
            return rest.iter().collect();
        }
    }
    text.to_string()
}

/// `${x/p/r}` and `${x//p/r}`: replaces the longest match of `pattern` at
/// the leftmost place (every place with `all`).
pub fn replace(text: &str, pattern: &str, replacement: &str, all: bool) -> String {
    let items = compile(pattern);
    if items.is_empty() {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    let mut replaced = false;
    while at < chars.len() {
        let found = if replaced && !all { None } else { (at + 1..=chars.len()).rev().find(|end| matches_items(&items, &chars[at..*end])) };
        match found {
            Some(end) => {
                out.push_str(replacement);
                at = end;
                replaced = true;
            }
            None => {
                out.push(chars[at]);
                at += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_bash_does() {
        assert!(matches("gpu-*", "gpu-001"));
        assert!(matches("*[0-9]", "mlx5_3"));
        assert!(!matches("*[!0-9]", "mlx5_3"));
        assert!(matches("a?c", "abc"));
        assert!(matches("\\*", "*"));
        assert!(!matches("\\*", "x"));
        assert!(matches("[]x]", "]"));
        assert!(matches("*", ""));
        assert!(!matches("a*b", "a"));
        // Many stars on a long text: linear-ish, not exponential.
        assert!(!matches(&"*a".repeat(50), &"a".repeat(49)));
    }

    #[test]
    fn trims_and_replaces() {
        assert_eq!(trim("/home/user", "/*", false, false), "home/user");
        assert_eq!(trim("/home/user", "*/", false, true), "user");
        assert_eq!(trim("a.tar.gz", ".*", true, false), "a.tar");
        assert_eq!(trim("a.tar.gz", ".*", true, true), "a");
        assert_eq!(replace("/root", "o", "0", false), "/r0ot");
        assert_eq!(replace("/root", "o", "0", true), "/r00t");
    }
}
