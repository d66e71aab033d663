//! `uniq`: collapse adjacent equal lines (GNU coreutils), with counts,
//! duplicates only or unique only, and field/char skipping.

use super::{join_lines, lines, quote, usage_error, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Uniq;

static SIGNATURE: Signature = Signature {
    name: "uniq",
    summary: "report or omit repeated lines",
    usage: "uniq [OPTION]... [INPUT [OUTPUT]]",
    flags: &[
        Flag { short: Some('c'), long: Some("count"), value: None, help: "prefix lines by the number of occurrences" },
        Flag { short: Some('d'), long: Some("repeated"), value: None, help: "only print duplicate lines, one for each group" },
        Flag { short: Some('u'), long: Some("unique"), value: None, help: "only print unique lines" },
        Flag { short: Some('i'), long: Some("ignore-case"), value: None, help: "ignore differences in case when comparing" },
        Flag { short: Some('f'), long: Some("skip-fields"), value: Some("N"), help: "avoid comparing the first N fields" },
        Flag { short: Some('s'), long: Some("skip-chars"), value: Some("N"), help: "avoid comparing the first N characters" },
        Flag { short: Some('w'), long: Some("check-chars"), value: Some("N"), help: "compare no more than N characters in lines" },
    ],
    examples: &[
        Example { command: "nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c", description: "how many GPUs of each model" },
        Example { command: "echo -e 'a\\na\\nb' | uniq -d", description: "only the repeated lines" },
    ],
};

struct Compare {
    fold: bool,
    skip_fields: usize,
    skip_chars: usize,
    check_chars: Option<usize>,
}

impl Compare {
    /// The part of a line that is compared.
    fn key(&self, line: &str) -> String {
        let chars: Vec<char> = line.chars().collect();
        let mut at = 0;
        for _ in 0..self.skip_fields {
            if at == chars.len() {
                break;
            }
            while at < chars.len() && (chars[at] == ' ' || chars[at] == '\t') {
                at += 1;
            }
            while at < chars.len() && !(chars[at] == ' ' || chars[at] == '\t') {
                at += 1;
            }
        }
        at = (at + self.skip_chars).min(chars.len());
        let end = self.check_chars.map_or(chars.len(), |n| (at + n).min(chars.len()));
        let key: String = chars[at..end].iter().collect();
        if self.fold {
            key.to_ascii_lowercase()
        } else {
            key
        }
    }
}

fn count_value(option: &str, value: &str) -> Result<usize, Output> {
    value.parse::<u64>().map(|n| usize::try_from(n).unwrap_or(usize::MAX)).map_err(|_| {
        let what = match option {
            "f" => "number of fields to skip",
            "s" => "number of bytes to skip",
            _ => "number of bytes to compare",
        };
        Output::error(format!("uniq: {}: invalid {what}\n", value), 1)
    })
}

impl GnuTool for Uniq {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let (mut count, mut repeated, mut unique) = (false, false, false);
        let mut compare = Compare { fold: false, skip_fields: 0, skip_chars: 0, check_chars: None };
        for option in &parsed.options {
            let Opt::Flag(flag, value) = option else { continue };
            let value = value.clone().unwrap_or_default();
            let parsed_value = match flag.short {
                Some(letter @ ('f' | 's' | 'w')) => match count_value(&letter.to_string(), &value) {
                    Ok(n) => n,
                    Err(output) => return output,
                },
                _ => 0,
            };
            match flag.short {
                Some('c') => count = true,
                Some('d') => repeated = true,
                Some('u') => unique = true,
                Some('i') => compare.fold = true,
                Some('f') => compare.skip_fields = parsed_value,
                Some('s') => compare.skip_chars = parsed_value,
                Some('w') => compare.check_chars = Some(parsed_value),
                _ => {}
            }
        }
        if let Some(extra) = parsed.operands.get(2) {
            return usage_error("uniq", &COREUTILS, &format!("extra operand {}", quote(extra)));
        }
        let file;
        let text = match parsed.operands.first().map(String::as_str) {
            None | Some("-") => invocation.stdin,
            Some(path) => match super::read_file(invocation, path) {
                Ok(text) => {
                    file = text;
                    &file
                }
                Err(reason) => return Output::error(format!("uniq: {path}: {reason}\n"), 1),
            },
        };
        let mut out: Vec<String> = Vec::new();
        let rows = lines(text);
        let mut at = 0;
        while at < rows.len() {
            let key = compare.key(rows[at]);
            let mut end = at + 1;
            while end < rows.len() && compare.key(rows[end]) == key {
                end += 1;
            }
            let group = end - at;
            let wanted = match (repeated, unique) {
                (true, true) => false,
                (true, false) => group > 1,
                (false, true) => group == 1,
                (false, false) => true,
            };
            if wanted {
                out.push(if count { format!("{group:>7} {}", rows[at]) } else { rows[at].to_string() });
            }
            at = end;
        }
        // An OUTPUT operand would be a file; there is nowhere to write it in a lab.
        if parsed.operands.get(1).is_some_and(|output| output != "-") {
            return Output::default();
        }
        Output::ok(join_lines(&out))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn groups_adjacent_lines() {
        assert_eq!(run_on_first_node("echo -e 'a\\na\\nb' | uniq -c").stdout, "      2 a\n      1 b\n");
        assert_eq!(run_on_first_node("echo -e 'a\\na\\nb' | uniq -d").stdout, "a\n");
        assert_eq!(run_on_first_node("echo -e 'a\\na\\nb' | uniq -u").stdout, "b\n");
        assert_eq!(run_on_first_node("echo -e 'A\\na' | uniq -i").stdout, "A\n");
        let out = run_on_first_node("echo | uniq - x y");
        assert_eq!(out.stderr, "uniq: extra operand \u{2018}y\u{2019}\nTry 'uniq --help' for more information.\n");
    }
}
