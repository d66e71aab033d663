//! `grep`: GNU grep over standard input, with basic, extended and fixed
//! patterns, context, counts and the GNU exit statuses (0 selected,
//! 1 none, 2 error).

use super::regex::{is_word_char, Budget, Regex, Syntax};
use super::{no_such_file, Dialect, GnuTool, Opt, Parsed};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Grep;

const USAGE: &str = "grep [OPTION]... PATTERNS [FILE]...";

static SIGNATURE: Signature = Signature {
    name: "grep",
    summary: "print lines that match patterns",
    usage: USAGE,
    flags: &[
        Flag { short: Some('E'), long: Some("extended-regexp"), value: None, help: "PATTERNS are extended regular expressions" },
        Flag { short: Some('F'), long: Some("fixed-strings"), value: None, help: "PATTERNS are strings" },
        Flag { short: Some('G'), long: Some("basic-regexp"), value: None, help: "PATTERNS are basic regular expressions" },
        Flag { short: Some('P'), long: Some("perl-regexp"), value: None, help: "PATTERNS are Perl regular expressions (approximated: extended plus \\d)" },
        Flag { short: Some('e'), long: Some("regexp"), value: Some("PATTERNS"), help: "use PATTERNS for matching" },
        Flag { short: Some('f'), long: Some("file"), value: Some("FILE"), help: "take PATTERNS from FILE" },
        Flag { short: Some('i'), long: Some("ignore-case"), value: None, help: "ignore case distinctions in patterns and data" },
        Flag { short: Some('y'), long: None, value: None, help: "same as -i" },
        Flag { short: None, long: Some("no-ignore-case"), value: None, help: "do not ignore case distinctions (default)" },
        Flag { short: Some('w'), long: Some("word-regexp"), value: None, help: "match only whole words" },
        Flag { short: Some('x'), long: Some("line-regexp"), value: None, help: "match only whole lines" },
        Flag { short: Some('s'), long: Some("no-messages"), value: None, help: "suppress error messages" },
        Flag { short: Some('v'), long: Some("invert-match"), value: None, help: "select non-matching lines" },
        Flag { short: Some('m'), long: Some("max-count"), value: Some("NUM"), help: "stop after NUM selected lines" },
        Flag { short: Some('n'), long: Some("line-number"), value: None, help: "print line number with output lines" },
        Flag { short: Some('H'), long: Some("with-filename"), value: None, help: "print file name with output lines" },
        Flag { short: Some('h'), long: Some("no-filename"), value: None, help: "suppress the file name prefix on output" },
        Flag { short: Some('o'), long: Some("only-matching"), value: None, help: "show only nonempty parts of lines that match" },
        Flag { short: Some('q'), long: Some("quiet"), value: None, help: "suppress all normal output" },
        Flag { short: None, long: Some("silent"), value: None, help: "same as --quiet" },
        Flag { short: Some('L'), long: Some("files-without-match"), value: None, help: "print only names of FILEs with no selected lines" },
        Flag { short: Some('l'), long: Some("files-with-matches"), value: None, help: "print only names of FILEs with selected lines" },
        Flag { short: Some('c'), long: Some("count"), value: None, help: "print only a count of selected lines per FILE" },
        Flag { short: Some('B'), long: Some("before-context"), value: Some("NUM"), help: "print NUM lines of leading context" },
        Flag { short: Some('A'), long: Some("after-context"), value: Some("NUM"), help: "print NUM lines of trailing context" },
        Flag { short: Some('C'), long: Some("context"), value: Some("NUM"), help: "print NUM lines of output context" },
        Flag { short: None, long: Some("color"), value: Some("WHEN"), help: "accepted; output is never coloured here" },
        Flag { short: None, long: Some("colour"), value: Some("WHEN"), help: "same as --color" },
        Flag { short: Some('a'), long: Some("text"), value: None, help: "accepted (input is always text here)" },
    ],
    examples: &[
        Example { command: "nvidia-smi | grep -c NVIDIA", description: "count the lines that name a GPU" },
        Example { command: "nvidia-smi -q | grep -i -A2 'ecc errors'", description: "a section with two lines of context" },
        Example { command: "nvidia-smi -L | grep -oE 'GPU-[0-9a-f-]+'", description: "only the UUIDs" },
        Example {
            command: "grep . /sys/class/net/*/ecn/roce_rp/enable/3",
            description: "each file with its content: here whether DCQCN paces priority 3, interface by interface",
        },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 2, usage_line: Some(USAGE), numeric_option: true, optional_values: &["color", "colour"] };

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Basic,
    Extended,
    Fixed,
    Perl,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Listing {
    Lines,
    Count,
    FilesWith,
    FilesWithout,
    Quiet,
}

struct Options {
    invert: bool,
    words: bool,
    whole_line: bool,
    line_numbers: bool,
    only_matching: bool,
    listing: Listing,
    before: usize,
    after: usize,
    max_count: Option<u64>,
    filenames: Option<bool>,
    no_messages: bool,
}

fn context_length(value: &str) -> Result<usize, Output> {
    value.parse::<u64>().map(|n| n.min(usize::MAX as u64) as usize).map_err(|_| Output::error(format!("grep: {value}: invalid context length argument\n"), 2))
}

impl GnuTool for Grep {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &DIALECT;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        match run(parsed, invocation) {
            Ok(output) | Err(output) => output,
        }
    }
}

fn run(parsed: Parsed, invocation: &Invocation) -> Result<Output, Output> {
    let mut mode = Mode::Basic;
    let mut fold_case = false;
    let mut patterns: Option<Vec<String>> = None;
    let mut stderr = String::new();
    let mut had_error = false;
    let mut options = Options {
        invert: false,
        words: false,
        whole_line: false,
        line_numbers: false,
        only_matching: false,
        listing: Listing::Lines,
        before: 0,
        after: 0,
        max_count: None,
        filenames: None,
        no_messages: false,
    };
    // -A/-B given explicitly win over -C/-NUM, whatever the order.
    let (mut explicit_before, mut explicit_after, mut context) = (None, None, None);
    for option in &parsed.options {
        match option {
            Opt::Number(digits) => context = Some(context_length(digits)?),
            Opt::Flag(flag, value) => {
                let value = value.clone().unwrap_or_default();
                match (flag.short, flag.long) {
                    (Some('E'), _) => mode = Mode::Extended,
                    (Some('F'), _) => mode = Mode::Fixed,
                    (Some('G'), _) => mode = Mode::Basic,
                    (Some('P'), _) => mode = Mode::Perl,
                    (Some('e'), _) => patterns.get_or_insert_with(Vec::new).extend(value.split('\n').map(String::from)),
                    (Some('f'), _) => {
                        if value != "-" {
                            return Err(Output::error(no_such_file("grep", &value), 2));
                        }
                        let from_stdin = super::lines(invocation.stdin).into_iter().map(String::from);
                        patterns.get_or_insert_with(Vec::new).extend(from_stdin);
                    }
                    (Some('i' | 'y'), _) => fold_case = true,
                    (_, Some("no-ignore-case")) => fold_case = false,
                    (Some('w'), _) => options.words = true,
                    (Some('x'), _) => options.whole_line = true,
                    (Some('s'), _) => options.no_messages = true,
                    (Some('v'), _) => options.invert = true,
                    (Some('m'), _) => {
                        let count = value.parse::<i64>().map_err(|_| Output::error("grep: invalid max count\n", 2))?;
                        // GNU reads a negative count as no limit.
                        options.max_count = u64::try_from(count).ok();
                    }
                    (Some('n'), _) => options.line_numbers = true,
                    (Some('H'), _) => options.filenames = Some(true),
                    (Some('h'), _) => options.filenames = Some(false),
                    (Some('o'), _) => options.only_matching = true,
                    (Some('q'), _) | (_, Some("silent")) => options.listing = Listing::Quiet,
                    (Some('L'), _) => options.listing = Listing::FilesWithout,
                    (Some('l'), _) => options.listing = Listing::FilesWith,
                    (Some('c'), _) if options.listing != Listing::Quiet => options.listing = Listing::Count,
                    (Some('B'), _) => explicit_before = Some(context_length(&value)?),
                    (Some('A'), _) => explicit_after = Some(context_length(&value)?),
                    (Some('C'), _) => context = Some(context_length(&value)?),
                    (_, Some("color" | "colour")) => {
                        let known = ["", "always", "yes", "force", "never", "no", "none", "auto", "tty", "if-tty"];
                        if !known.contains(&value.as_str()) {
                            // GNU grep answers a bad WHEN with its help text.
                            return Err(Output::ok(crate::commands::help::describe(&SIGNATURE)));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    options.before = explicit_before.or(context).unwrap_or(0);
    options.after = explicit_after.or(context).unwrap_or(0);

    let mut operands = parsed.operands.into_iter();
    let patterns = match patterns {
        Some(patterns) => patterns,
        None => match operands.next() {
            Some(pattern) => pattern.split('\n').map(String::from).collect(),
            None => return Err(Output::error(format!("Usage: {USAGE}\nTry 'grep --help' for more information.\n"), 2)),
        },
    };
    let budget = Budget::default();
    let mut regexes = Vec::new();
    for pattern in &patterns {
        let compiled = match mode {
            Mode::Fixed => Regex::literal(pattern, fold_case),
            Mode::Basic => Regex::new(pattern, Syntax::Basic, fold_case),
            Mode::Extended => Regex::new(pattern, Syntax::Extended, fold_case),
            Mode::Perl => Regex::new_perlish(pattern, fold_case),
        };
        match compiled {
            Ok(regex) => {
                for warning in &regex.warnings {
                    stderr.push_str(&format!("grep: warning: {warning}\n"));
                }
                regexes.push(regex.sharing(&budget));
            }
            Err(error) => return Err(Output::error(format!("{stderr}grep: {}\n", error.message), 2)),
        }
    }

    let files: Vec<String> = operands.collect();
    let inputs: Vec<String> = if files.is_empty() { vec!["-".to_string()] } else { files };
    let show_names = options.filenames.unwrap_or(inputs.len() > 1);
    let matcher = Matcher { regexes, words: options.words, whole_line: options.whole_line };
    let mut stdout = String::new();
    let mut selected_any = false;
    let mut stdin_used = false;
    for input in &inputs {
        let file;
        let text = if input == "-" {
            let text = if stdin_used { "" } else { invocation.stdin };
            stdin_used = true;
            text
        } else {
            match super::read_file(invocation, input) {
                Ok(text) => {
                    file = text;
                    &file
                }
                Err(reason) => {
                    had_error = true;
                    if !options.no_messages {
                        stderr.push_str(&format!("grep: {input}: {reason}\n"));
                    }
                    continue;
                }
            }
        };
        let name = if input == "-" { "(standard input)" } else { input.as_str() };
        let prefix_name = show_names.then_some(name);
        let selected = search(&matcher, &options, text, prefix_name, &mut stdout);
        selected_any |= selected > 0;
        match options.listing {
            Listing::Count => {
                if let Some(name) = prefix_name {
                    stdout.push_str(&format!("{name}:"));
                }
                stdout.push_str(&format!("{selected}\n"));
            }
            Listing::FilesWith if selected > 0 => stdout.push_str(&format!("{name}\n")),
            Listing::FilesWithout if selected == 0 => stdout.push_str(&format!("{name}\n")),
            Listing::Quiet if selected > 0 => break,
            _ => {}
        }
    }
    if budget.exhausted() {
        stderr.push_str("grep: stopped: matching took more work than a lab allows\n");
        had_error = true;
    }
    let status = if had_error && !(options.listing == Listing::Quiet && selected_any) {
        2
    } else if selected_any {
        0
    } else {
        1
    };
    Ok(Output { stdout, stderr, status, duration_ms: 0, ..Output::default() })
}

struct Matcher {
    regexes: Vec<Regex>,
    words: bool,
    whole_line: bool,
}

impl Matcher {
    /// The leftmost-longest match at or after `from` that satisfies -w/-x.
    fn find(&self, line: &[char], from: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for regex in &self.regexes {
            let found = if self.whole_line {
                (from == 0 && regex.ends_from(line, 0).contains(&line.len())).then_some((0, line.len()))
            } else if self.words {
                find_word(regex, line, from)
            } else {
                regex.find_at(line, from)
            };
            if let Some((start, end)) = found {
                best = match best {
                    Some((s, e)) if s < start || (s == start && e >= end) => Some((s, e)),
                    _ => Some((start, end)),
                };
            }
        }
        best
    }
}

/// -w: a match whose both ends sit next to a non-word character or the line's
/// edge; from each start, the longest such match wins.
fn find_word(regex: &Regex, line: &[char], from: usize) -> Option<(usize, usize)> {
    let (first_start, _) = regex.find_at(line, from)?;
    let boundary_before = |at: usize| at == 0 || line.get(at - 1).is_none_or(|&c| !is_word_char(c));
    let boundary_after = |at: usize| line.get(at).is_none_or(|&c| !is_word_char(c));
    for start in first_start..=line.len() {
        if !boundary_before(start) {
            continue;
        }
        let best_end = regex.ends_from(line, start).into_iter().filter(|&end| boundary_after(end)).max();
        if let Some(end) = best_end {
            return Some((start, end));
        }
    }
    None
}

/// Runs over one input, writing lines as grep does; returns how many lines
/// were selected.
fn search(matcher: &Matcher, options: &Options, text: &str, name: Option<&str>, out: &mut String) -> u64 {
    let lines = super::lines(text);
    let printing = options.listing == Listing::Lines;
    let context = printing && !options.only_matching;
    let mut selected: u64 = 0;
    // The last line index printed, to place `--` between separate groups.
    let mut last_printed: Option<usize> = None;
    let mut after_left = 0usize;
    let mut max_count_reached = false;
    let prefix = |out: &mut String, index: usize, separator: char| {
        if let Some(name) = name {
            out.push_str(name);
            out.push(separator);
        }
        if options.line_numbers {
            out.push_str(&(index + 1).to_string());
            out.push(separator);
        }
    };
    let print_line = |out: &mut String, index: usize, separator: char, line: &str| {
        prefix(out, index, separator);
        out.push_str(line);
        out.push('\n');
    };
    for (index, line) in lines.iter().enumerate() {
        if !max_count_reached && options.max_count == Some(selected) {
            break;
        }
        let chars: Vec<char> = line.chars().collect();
        // Once -m is reached no line is selected, but GNU still prints the trailing context.
        let selects = !max_count_reached && matcher.find(&chars, 0).is_some() != options.invert;
        if !selects {
            if context && after_left > 0 {
                print_line(out, index, '-', line);
                last_printed = Some(index);
                after_left -= 1;
            } else if max_count_reached {
                break;
            }
            continue;
        }
        selected += 1;
        if options.listing == Listing::Quiet || options.listing == Listing::FilesWith {
            return selected;
        }
        if printing {
            if context {
                let first_context = index.saturating_sub(options.before);
                let from = last_printed.map_or(first_context, |last| first_context.max(last + 1));
                let asked_for_context = options.before > 0 || options.after > 0;
                if last_printed.is_some_and(|last| from > last + 1) && asked_for_context {
                    out.push_str("--\n");
                }
                for (context_index, context_line) in lines.iter().enumerate().take(index).skip(from) {
                    print_line(out, context_index, '-', context_line);
                }
                print_line(out, index, ':', line);
                last_printed = Some(index);
                after_left = options.after;
            } else if options.only_matching && !options.invert {
                let mut at = 0;
                while let Some((start, end)) = matcher.find(&chars, at) {
                    if end > start {
                        prefix(out, index, ':');
                        out.extend(&chars[start..end]);
                        out.push('\n');
                        at = end;
                    } else {
                        at = start + 1;
                    }
                    if at > chars.len() {
                        break;
                    }
                }
            }
        }
        if options.max_count == Some(selected) {
            max_count_reached = true;
        }
    }
    selected
}

#[cfg(test)]
mod tests {
    use crate::commands::text::test_support::{echo_into, shown};

    fn grep(input: &str, args: &str) -> (String, i32) {
        // echo adds the last newline itself.
        let input = input.strip_suffix("\\n").unwrap_or(input);
        let out = echo_into("grep", input, args);
        let status = out.status;
        (shown(out), status)
    }

    #[test]
    fn statuses() {
        assert_eq!(grep("a\\nb\\n", "a"), ("a\n".into(), 0));
        assert_eq!(grep("a\\nb\\n", "z"), ("".into(), 1));
        assert_eq!(grep("a\\n", "-j a").1, 2);
        assert_eq!(
            grep("a\\n", "-j a").0,
            "grep: invalid option -- 'j'\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n"
        );
        assert_eq!(grep("a\\n", "'[a'"), ("grep: Unmatched [, [^, [:, [., or [=\n".into(), 2));
        assert_eq!(grep("a\\n", "a nofile"), ("grep: nofile: No such file or directory\n".into(), 2));
        assert_eq!(grep("a\\n", "-q a nofile").1, 2);
        assert_eq!(grep("a\\n", "-q a - nofile").1, 0);
    }

    #[test]
    fn context_and_counts() {
        let input = "1\\n2\\nx\\n4\\n5\\n6\\n7\\nx\\n9\\n";
        assert_eq!(grep(input, "-n -C1 x").0, "2-2\n3:x\n4-4\n--\n7-7\n8:x\n9-9\n");
        assert_eq!(grep(input, "-c x").0, "2\n");
        assert_eq!(grep(input, "-vc x").0, "7\n");
        assert_eq!(grep("x\\ny\\nx\\nx\\n", "-m2 -A1 x").0, "x\ny\nx\nx\n");
        assert_eq!(grep("x\\ny\\n", "-l x").0, "(standard input)\n");
    }

    #[test]
    fn only_matching_and_words() {
        assert_eq!(grep("abcd\\n", "-oE 'a|ab|abc'").0, "abc\n");
        assert_eq!(grep("xfoo foo\\n", "-ow foo").0, "foo\n");
        assert_eq!(grep("foo foobar\\n", "-ow 'foo.*'").0, "foo foobar\n");
        assert_eq!(grep("abc\\n", "-o 'b*'").0, "b\n");
        assert_eq!(grep("\\na b\\nfoo\\n", "-wn ''").0, "1:\n");
        assert_eq!(grep("ax\\n", "-x -e a -e ax").0, "ax\n");
    }
}
