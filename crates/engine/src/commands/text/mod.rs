//! The text utilities trainees pipe tool output into (GNU coreutils, grep,
//! a subset of awk), and what they share: GNU getopt behaviour and error
//! messages, and line splitting.
//!
//! There is no filesystem in a lab: every tool reads standard input, and a
//! file operand answers `TOOL: FILE: No such file or directory`.

pub mod awk;
pub mod cat;
pub mod cut;
pub mod grep;
pub mod head;
pub mod regex;
pub mod sleep;
pub mod sort;
pub mod tail;
pub mod tee;
pub mod tr;
pub mod truth;
pub mod uniq;

use super::{Command, Flag, Invocation, Output, Signature};

/// How a tool answers a bad command line.
pub struct Dialect {
    /// Exit status for usage errors (grep and sort use 2, the rest 1).
    pub usage_status: i32,
    /// grep prints its usage line between the error and the `Try` line.
    pub usage_line: Option<&'static str>,
    /// `-5` means a number (head/tail: lines, grep: context).
    pub numeric_option: bool,
    /// Long options whose value is optional (`--color[=WHEN]`).
    pub optional_values: &'static [&'static str],
}

pub const COREUTILS: Dialect = Dialect { usage_status: 1, usage_line: None, numeric_option: false, optional_values: &[] };

/// One option as the user gave it.
#[derive(Debug)]
pub enum Opt<'s> {
    Flag(&'s Flag, Option<String>),
    /// `-NUM`, for tools with a numeric option.
    Number(String),
}

pub struct Parsed<'s> {
    pub options: Vec<Opt<'s>>,
    pub operands: Vec<String>,
}

/// A tool whose command line is parsed as GNU getopt does: a bad one, or
/// `--help`, is answered before the tool itself runs.
pub trait GnuTool: Sync {
    const SIGNATURE: &'static Signature;
    const DIALECT: &'static Dialect;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output;
}

impl<T: GnuTool> Command for T {
    fn signature(&self) -> &'static Signature {
        T::SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        match getopt(T::SIGNATURE, T::DIALECT, invocation.args()) {
            Ok(parsed) => self.run_parsed(parsed, invocation),
            Err(output) => output,
        }
    }
}

/// `Try 'TOOL --help' for more information.` after a message, as GNU tools
/// answer a usage error.
pub fn usage_error(name: &str, dialect: &Dialect, message: &str) -> Output {
    let mut text = String::new();
    if !message.is_empty() {
        text.push_str(&format!("{name}: {message}\n"));
    }
    if let Some(usage) = dialect.usage_line {
        text.push_str(&format!("Usage: {usage}\n"));
    }
    text.push_str(&format!("Try '{name} --help' for more information.\n"));
    Output::error(text, dialect.usage_status)
}

/// A file operand: there are no files in a lab.
pub fn no_such_file(name: &str, file: &str) -> String {
    format!("{name}: {file}: No such file or directory\n")
}

/// GNU's quoting of a value in messages under a UTF-8 locale: ‘x’.
pub fn quote(value: &str) -> String {
    format!("\u{2018}{value}\u{2019}")
}

/// Parses argv the way glibc's getopt_long does for GNU tools: options and
/// operands may be mixed, `--` ends options, long options may be
/// abbreviated to a unique prefix. `--help` prints the declaration.
pub fn getopt<'s>(signature: &'s Signature, dialect: &Dialect, args: &[String]) -> Result<Parsed<'s>, Output> {
    let name = signature.name;
    let mut options = Vec::new();
    let mut operands = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            operands.extend(rest.by_ref().cloned());
            break;
        }
        if arg == "-" || !arg.starts_with('-') {
            operands.push(arg.clone());
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (given, inline) = match long.split_once('=') {
                Some((given, value)) => (given, Some(value.to_string())),
                None => (long, None),
            };
            if given == "help" {
                return Err(Output::ok(super::help::describe(signature)));
            }
            let exact = signature.flags.iter().find(|flag| flag.long == Some(given));
            let candidates: Vec<&Flag> = match exact {
                Some(flag) => vec![flag],
                None => signature
                    .flags
                    .iter()
                    .filter(|flag| flag.long.is_some_and(|l| l.starts_with(given)))
                    .collect(),
            };
            let flag = match candidates.as_slice() {
                [] => return Err(usage_error(name, dialect, &format!("unrecognized option '{arg}'"))),
                [flag] => *flag,
                many => {
                    let names: Vec<String> =
                        many.iter().filter_map(|f| f.long).map(|l| format!("'--{l}'")).collect();
                    let message = format!("option '--{given}' is ambiguous; possibilities: {}", names.join(" "));
                    return Err(usage_error(name, dialect, &message));
                }
            };
            let long_name = flag.long.unwrap_or(given);
            let optional = dialect.optional_values.contains(&long_name);
            match (flag.value, inline) {
                (None, Some(_)) => {
                    return Err(usage_error(name, dialect, &format!("option '--{long_name}' doesn't allow an argument")))
                }
                (None, None) => options.push(Opt::Flag(flag, None)),
                (Some(_), Some(value)) => options.push(Opt::Flag(flag, Some(value))),
                (Some(_), None) if optional => options.push(Opt::Flag(flag, None)),
                (Some(_), None) => match rest.next() {
                    Some(value) => options.push(Opt::Flag(flag, Some(value.clone()))),
                    None => {
                        return Err(usage_error(name, dialect, &format!("option '--{long_name}' requires an argument")))
                    }
                },
            }
            continue;
        }
        let shorts: Vec<char> = arg.chars().skip(1).collect();
        if dialect.numeric_option && shorts.first().is_some_and(char::is_ascii_digit) {
            let digits: String = shorts.iter().take_while(|c| c.is_ascii_digit()).collect();
            options.push(Opt::Number(digits.clone()));
            let tail: String = shorts.iter().skip(digits.chars().count()).collect();
            if tail.is_empty() {
                continue;
            }
            // `-3n` style bundles: scan the rest as flags.
            let rest_arg = format!("-{tail}");
            let more = getopt(signature, dialect, std::slice::from_ref(&rest_arg))?;
            options.extend(more.options);
            continue;
        }
        let mut at = 0;
        while at < shorts.len() {
            let letter = shorts[at];
            let Some(flag) = signature.flags.iter().find(|flag| flag.short == Some(letter)) else {
                return Err(usage_error(name, dialect, &format!("invalid option -- '{letter}'")));
            };
            if flag.value.is_none() {
                options.push(Opt::Flag(flag, None));
                at += 1;
                continue;
            }
            let attached: String = shorts[at + 1..].iter().collect();
            let value = if attached.is_empty() { rest.next().cloned() } else { Some(attached) };
            match value {
                Some(value) => options.push(Opt::Flag(flag, Some(value))),
                None => return Err(usage_error(name, dialect, &format!("option requires an argument -- '{letter}'"))),
            }
            break;
        }
    }
    Ok(Parsed { options, operands })
}

/// The lines of a text without their newlines; a last line without a
/// newline is still a line, as in GNU tools.
pub fn lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    lines
}

/// Joins lines, each ending with a newline (GNU tools add the missing last one).
pub fn join_lines<S: AsRef<str>>(lines: &[S]) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(line.as_ref());
        out.push('\n');
    }
    out
}

/// A file operand list: `-` (or none) is standard input; anything else is
/// missing. Returns the text to process and the error messages.
pub fn read_inputs(name: &str, operands: &[String], stdin: &str) -> (String, String) {
    if operands.is_empty() {
        return (stdin.to_string(), String::new());
    }
    let mut text = String::new();
    let mut errors = String::new();
    let mut stdin_used = false;
    for operand in operands {
        if operand == "-" {
            if !stdin_used {
                text.push_str(stdin);
                stdin_used = true;
            }
        } else {
            errors.push_str(&no_such_file(name, operand));
        }
    }
    (text, errors)
}

/// What the text tools' unit tests share.
#[cfg(test)]
pub mod test_support {
    use crate::commands::Output;
    use crate::testing::run_on_first_node;

    /// Pipes INPUT into `TOOL ARGS` on a lab node. The lab shell has no
    /// printf, so INPUT goes through `echo -e` and its `\n` escapes end lines.
    pub fn echo_into(tool: &str, input: &str, args: &str) -> Output {
        run_on_first_node(&format!("echo -e '{input}' | {tool} {args}"))
    }

    /// Standard output then standard error, as a terminal shows them.
    pub fn shown(output: Output) -> String {
        output.stdout + &output.stderr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SIG: Signature = Signature {
        name: "t",
        summary: "s",
        usage: "t",
        flags: &[
            Flag { short: Some('c'), long: Some("count"), value: None, help: "c" },
            Flag { short: None, long: Some("color"), value: Some("WHEN"), help: "c" },
            Flag { short: Some('A'), long: Some("after-context"), value: Some("NUM"), help: "a" },
        ],
        examples: &[],
    };
    const DIALECT: Dialect =
        Dialect { usage_status: 2, usage_line: Some("t X"), numeric_option: true, optional_values: &["color"] };

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_gnu_forms() {
        let parsed = getopt(&SIG, &DIALECT, &args("x -cA3 --col --after=2 -5 y -- -c")).unwrap();
        assert_eq!(parsed.operands, ["x", "y", "-c"]);
        assert_eq!(parsed.options.len(), 5);
    }

    #[test]
    fn errors_like_getopt() {
        let error = getopt(&SIG, &DIALECT, &args("--co")).err().unwrap();
        assert_eq!(
            error.stderr,
            "t: option '--co' is ambiguous; possibilities: '--count' '--color'\nUsage: t X\nTry 't --help' for more information.\n"
        );
        assert_eq!(error.status, 2);
        let error = getopt(&SIG, &DIALECT, &args("-A")).err().unwrap();
        assert!(error.stderr.starts_with("t: option requires an argument -- 'A'\n"));
        let error = getopt(&SIG, &DIALECT, &args("--count=1")).err().unwrap();
        assert!(error.stderr.starts_with("t: option '--count' doesn't allow an argument\n"));
    }

    #[test]
    fn splits_lines_like_gnu() {
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("a\nb"), ["a", "b"]);
        assert_eq!(lines("a\n\n"), ["a", ""]);
    }
}
