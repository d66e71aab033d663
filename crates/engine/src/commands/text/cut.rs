//! `cut`: select fields (`-f` with `-d`), characters (`-c`) or bytes (`-b`)
//! from each line (GNU coreutils).

use super::{lines, quote, usage_error, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Cut;

static SIGNATURE: Signature = Signature {
    name: "cut",
    summary: "remove sections from each line of files",
    usage: "cut OPTION... [FILE]...",
    flags: &[
        Flag { short: Some('b'), long: Some("bytes"), value: Some("LIST"), help: "select only these bytes" },
        Flag { short: Some('c'), long: Some("characters"), value: Some("LIST"), help: "select only these characters" },
        Flag { short: Some('d'), long: Some("delimiter"), value: Some("DELIM"), help: "use DELIM instead of TAB for field delimiter" },
        Flag { short: Some('f'), long: Some("fields"), value: Some("LIST"), help: "select only these fields" },
        Flag { short: Some('s'), long: Some("only-delimited"), value: None, help: "do not print lines not containing delimiters" },
        Flag { short: None, long: Some("complement"), value: None, help: "complement the set of selected bytes, characters or fields" },
        Flag { short: None, long: Some("output-delimiter"), value: Some("STRING"), help: "use STRING as the output delimiter" },
    ],
    examples: &[
        Example { command: "nvidia-smi --query-gpu=index,name --format=csv,noheader | cut -d, -f2", description: "the second CSV column" },
        Example { command: "nvidia-smi -L | cut -c1-5", description: "the first five characters" },
    ],
};

/// 1-based inclusive ranges; `None` as the end means to the end of the line.
type Ranges = Vec<(usize, Option<usize>)>;

fn parse_list(list: &str, fields: bool) -> Result<Ranges, String> {
    let numbered = if fields { "fields are numbered from 1" } else { "byte/character positions are numbered from 1" };
    let mut ranges = Vec::new();
    for part in list.split([',', ' ']) {
        let number = |text: &str| -> Result<Option<usize>, String> {
            if text.is_empty() {
                return Ok(None);
            }
            if !text.chars().all(|c| c.is_ascii_digit()) {
                let what = if fields { "field value" } else { "byte/character position" };
                return Err(format!("invalid {what} {}", quote(list)));
            }
            match text.parse::<usize>() {
                Ok(0) => Err(numbered.to_string()),
                Ok(n) => Ok(Some(n)),
                Err(_) => Ok(Some(usize::MAX)),
            }
        };
        match part.split_once('-') {
            None => match number(part)? {
                Some(n) => ranges.push((n, Some(n))),
                None => return Err(numbered.to_string()),
            },
            Some((start, end)) => {
                let start_n = number(start)?;
                let end_n = number(end)?;
                if start_n.is_none() && end_n.is_none() {
                    return Err("invalid range with no endpoint: -".to_string());
                }
                let first = start_n.unwrap_or(1);
                if end_n.is_some_and(|end| end < first) {
                    return Err("invalid decreasing range".to_string());
                }
                ranges.push((first, end_n));
            }
        }
    }
    Ok(ranges)
}

fn selected(ranges: &Ranges, position: usize, complement: bool) -> bool {
    let hit = ranges.iter().any(|&(start, end)| position >= start && end.is_none_or(|end| position <= end));
    hit != complement
}

impl GnuTool for Cut {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let error = |message: &str| usage_error("cut", &COREUTILS, message);
        let mut list: Option<(char, String)> = None;
        let mut delimiter: Option<String> = None;
        let mut only_delimited = false;
        let mut complement = false;
        let mut output_delimiter: Option<String> = None;
        for option in &parsed.options {
            let Opt::Flag(flag, value) = option else { continue };
            let value = value.clone().unwrap_or_default();
            match (flag.short, flag.long) {
                (Some(kind @ ('b' | 'c' | 'f')), _) => {
                    if list.is_some() {
                        return error("only one list may be specified");
                    }
                    list = Some((kind, value));
                }
                (Some('d'), _) => delimiter = Some(value),
                (Some('s'), _) => only_delimited = true,
                (_, Some("complement")) => complement = true,
                (_, Some("output-delimiter")) => output_delimiter = Some(value),
                _ => {}
            }
        }
        let Some((kind, list)) = list else {
            return error("you must specify a list of bytes, characters, or fields");
        };
        let fields = kind == 'f';
        if !fields && delimiter.is_some() {
            return error("an input delimiter may be specified only when operating on fields");
        }
        if !fields && only_delimited {
            return error("suppressing non-delimited lines makes sense\n\tonly when operating on fields");
        }
        let delimiter = match delimiter.as_deref() {
            None => '\t',
            Some(text) => {
                let mut chars = text.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => c,
                    // GNU reads an empty delimiter as NUL.
                    (None, _) => '\0',
                    _ => return error("the delimiter must be a single character"),
                }
            }
        };
        let ranges = match parse_list(&list, fields) {
            Ok(ranges) => ranges,
            Err(message) => return error(&message),
        };
        let (text, stderr) = super::read_inputs("cut", &parsed.operands, invocation);
        let mut out = String::new();
        for line in lines(&text) {
            if fields {
                if !line.contains(delimiter) {
                    if !only_delimited {
                        out.push_str(line);
                        out.push('\n');
                    }
                    continue;
                }
                let joiner = output_delimiter.clone().unwrap_or_else(|| delimiter.to_string());
                let picked: Vec<&str> =
                    line.split(delimiter).enumerate().filter(|(index, _)| selected(&ranges, index + 1, complement)).map(|(_, field)| field).collect();
                out.push_str(&picked.join(&joiner));
            } else {
                // Characters and bytes are the same for the ASCII tools print.
                let mut previous: Option<usize> = None;
                for (index, c) in line.chars().enumerate() {
                    if !selected(&ranges, index + 1, complement) {
                        continue;
                    }
                    if let (Some(joiner), Some(previous)) = (&output_delimiter, previous) {
                        if previous + 1 != index {
                            out.push_str(joiner);
                        }
                    }
                    out.push(c);
                    previous = Some(index);
                }
            }
            out.push('\n');
        }
        let status = if stderr.is_empty() { 0 } else { 1 };
        Output { stdout: out, stderr, status, duration_ms: 0, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::commands::text::test_support::{echo_into, shown};

    fn cut(input: &str, args: &str) -> String {
        shown(echo_into("cut", input, args))
    }

    #[test]
    fn fields_and_characters() {
        assert_eq!(cut("a:b:c\\nplain", "-d: -f2"), "b\nplain\n");
        assert_eq!(cut("a:b:c\\nplain", "-d: -f1,3 -s"), "a:c\n");
        assert_eq!(cut("a:b:c", "-d: -f2-"), "b:c\n");
        assert_eq!(cut("a:b:c", "-d: -f2 --complement"), "a:c\n");
        assert_eq!(cut("abcdef", "-c2-4"), "bcd\n");
        assert_eq!(cut("abcdef", "-c-2,5"), "abe\n");
    }

    #[test]
    fn errors_like_gnu() {
        let tail = "Try 'cut --help' for more information.\n";
        assert_eq!(cut("", ""), format!("cut: you must specify a list of bytes, characters, or fields\n{tail}"));
        assert_eq!(cut("", "-f 0"), format!("cut: fields are numbered from 1\n{tail}"));
        assert_eq!(cut("", "-f 3-1"), format!("cut: invalid decreasing range\n{tail}"));
        assert_eq!(cut("", "-f x"), format!("cut: invalid field value \u{2018}x\u{2019}\n{tail}"));
        assert_eq!(cut("", "-d ab -f1"), format!("cut: the delimiter must be a single character\n{tail}"));
        assert_eq!(cut("x", "-f1 nofile"), "cut: nofile: No such file or directory\n");
    }
}
