//! What every emulated command shares about its command line: scanning
//! argv against the declared flags, glibc getopt's messages, GNU's usage
//! errors, and the quoting GNU tools use in messages.
//!
//! Two scanners, because real tools differ:
//! - [`scan`] gives every argument in order and leaves the answer to a bad
//!   one to the tool (NVIDIA's, rdma-core's and Slurm's tools word it
//!   each their own way);
//! - [`getopt`] parses as glibc's `getopt_long` does for GNU tools (options
//!   and operands mixed, unique prefixes of long options) and answers a bad
//!   command line itself.
//!
//! The messages are glibc's, so that every tool built on getopt says the
//! same thing the same way: [`invalid`], [`unrecognized`],
//! [`requires_argument`], [`no_argument_allowed`], [`complaint`].

use super::{Flag, Output, Signature};

/// `PROGRAM: invalid option -- 'x'`, for an unknown short option.
pub fn invalid(program: &str, letter: char) -> String {
    format!("{program}: invalid option -- '{letter}'\n")
}

/// `PROGRAM: unrecognized option '--xyz'`, for an unknown long option as written.
pub fn unrecognized(program: &str, option: &str) -> String {
    format!("{program}: unrecognized option '{option}'\n")
}

/// getopt's complaint about an option given without its value.
pub fn requires_argument(program: &str, short: Option<char>, long: Option<&str>) -> String {
    match (short, long) {
        (Some(letter), _) => format!("{program}: option requires an argument -- '{letter}'\n"),
        (None, Some(long)) => format!("{program}: option '--{}' requires an argument\n", long.trim_start_matches("--")),
        (None, None) => String::new(),
    }
}

/// `PROGRAM: option '--xyz' doesn't allow an argument`.
pub fn no_argument_allowed(program: &str, option: &str) -> String {
    format!("{program}: option '{option}' doesn't allow an argument\n")
}

/// An unknown option as written (`-z`, `--zzz`, `--zzz=1`): getopt's message for it.
pub fn unknown(program: &str, option: &str) -> String {
    match option.strip_prefix("--") {
        Some(long) => {
            let name = long.split('=').next().unwrap_or(long);
            if long.contains('=') && !name.is_empty() {
                no_argument_allowed(program, &format!("--{name}"))
            } else {
                unrecognized(program, option)
            }
        }
        None => invalid(program, option.trim_start_matches('-').chars().next().unwrap_or('-')),
    }
}

/// getopt's complaint about an argument [`scan`] could not match.
pub fn complaint(program: &str, arg: &Arg) -> String {
    match arg {
        Arg::Unknown(text) => unknown(program, text),
        Arg::MissingValue(flag) => requires_argument(program, flag.short, flag.long),
        _ => String::new(),
    }
}

/// getopt's complaint and GNU's hint, e.g. for `free -Z`.
pub fn gnu_complaint(program: &str, arg: &Arg, status: i32) -> Output {
    Output::error(format!("{}Try '{program} --help' for more information.\n", complaint(program, arg)), status)
}

#[derive(Debug)]
pub enum Arg<'s> {
    Flag(&'s Flag, Option<String>),
    Positional(String),
    /// A flag that is not declared, as the user wrote it.
    Unknown(String),
    /// A declared flag that needs a value and got none.
    MissingValue(&'s Flag),
}

/// Scans argv against the declared flags: `--long=value`, `--long value`,
/// `-x value`, `-xvalue` and bundled short flags (`-ln`), reporting what it
/// cannot match.
pub fn scan<'s>(signature: &'s Signature, args: &[String]) -> Vec<Arg<'s>> {
    let mut out = Vec::new();
    let mut rest = args.iter();
    let mut only_positionals = false;
    while let Some(arg) = rest.next() {
        if only_positionals || arg == "-" || !arg.starts_with('-') {
            out.push(Arg::Positional(arg.clone()));
        } else if arg == "--" {
            only_positionals = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (long, None),
            };
            match signature.flags.iter().find(|flag| flag.long == Some(name)) {
                None => out.push(Arg::Unknown(arg.clone())),
                Some(flag) if flag.value.is_none() => {
                    if inline.is_some() {
                        out.push(Arg::Unknown(arg.clone()));
                    } else {
                        out.push(Arg::Flag(flag, None));
                    }
                }
                Some(flag) => match inline.or_else(|| rest.next().cloned()) {
                    Some(value) => out.push(Arg::Flag(flag, Some(value))),
                    None => out.push(Arg::MissingValue(flag)),
                },
            }
        } else {
            let shorts: Vec<char> = arg[1..].chars().collect();
            let mut at = 0;
            while at < shorts.len() {
                let letter = shorts[at];
                match signature.flags.iter().find(|flag| flag.short == Some(letter)) {
                    None => {
                        out.push(Arg::Unknown(format!("-{letter}")));
                        at += 1;
                    }
                    Some(flag) if flag.value.is_none() => {
                        out.push(Arg::Flag(flag, None));
                        at += 1;
                    }
                    Some(flag) => {
                        let attached: String = shorts[at + 1..].iter().collect();
                        let value = if attached.is_empty() { rest.next().cloned() } else { Some(attached) };
                        match value {
                            Some(value) => out.push(Arg::Flag(flag, Some(value))),
                            None => out.push(Arg::MissingValue(flag)),
                        }
                        break;
                    }
                }
            }
        }
    }
    out
}

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

/// `Try 'TOOL --help' for more information.` after a message, as GNU tools
/// answer a usage error.
pub fn usage_error(name: &str, dialect: &Dialect, message: &str) -> Output {
    let line = if message.is_empty() { String::new() } else { format!("{name}: {message}\n") };
    gnu_usage(name, dialect, line)
}

/// A getopt complaint line (or none), then GNU's usage and `Try` lines.
fn gnu_usage(name: &str, dialect: &Dialect, complaint: String) -> Output {
    let mut text = complaint;
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

/// [`getopt`] for a tool that takes no operands: the first one is GNU's
/// `extra operand` usage error.
pub fn getopt_without_operands<'s>(signature: &'s Signature, dialect: &Dialect, args: &[String]) -> Result<Parsed<'s>, Output> {
    let parsed = getopt(signature, dialect, args)?;
    match parsed.operands.first() {
        Some(extra) => Err(usage_error(signature.name, dialect, &format!("extra operand {}", quote(extra)))),
        None => Ok(parsed),
    }
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
                None => signature.flags.iter().filter(|flag| flag.long.is_some_and(|l| l.starts_with(given))).collect(),
            };
            let flag = match candidates.as_slice() {
                [] => return Err(gnu_usage(name, dialect, unrecognized(name, arg))),
                [flag] => *flag,
                many => {
                    let names: Vec<String> = many.iter().filter_map(|f| f.long).map(|l| format!("'--{l}'")).collect();
                    let message = format!("option '--{given}' is ambiguous; possibilities: {}", names.join(" "));
                    return Err(usage_error(name, dialect, &message));
                }
            };
            let long_name = flag.long.unwrap_or(given);
            let optional = dialect.optional_values.contains(&long_name);
            match (flag.value, inline) {
                (None, Some(_)) => return Err(gnu_usage(name, dialect, no_argument_allowed(name, &format!("--{long_name}")))),
                (None, None) => options.push(Opt::Flag(flag, None)),
                (Some(_), Some(value)) => options.push(Opt::Flag(flag, Some(value))),
                (Some(_), None) if optional => options.push(Opt::Flag(flag, None)),
                (Some(_), None) => match rest.next() {
                    Some(value) => options.push(Opt::Flag(flag, Some(value.clone()))),
                    None => return Err(gnu_usage(name, dialect, requires_argument(name, None, Some(long_name)))),
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
                return Err(gnu_usage(name, dialect, invalid(name, letter)));
            };
            if flag.value.is_none() {
                options.push(Opt::Flag(flag, None));
                at += 1;
                continue;
            }
            let attached: String = shorts[at + 1..].iter().collect();
            // An optional value (`sed -i[SUFFIX]`) is only ever attached.
            let optional = flag.long.is_some_and(|long| dialect.optional_values.contains(&long));
            if attached.is_empty() && optional {
                options.push(Opt::Flag(flag, None));
                break;
            }
            let value = if attached.is_empty() { rest.next().cloned() } else { Some(attached) };
            match value {
                Some(value) => options.push(Opt::Flag(flag, Some(value))),
                None => return Err(gnu_usage(name, dialect, requires_argument(name, Some(letter), None))),
            }
            break;
        }
    }
    Ok(Parsed { options, operands })
}

#[cfg(test)]
mod tests {
    use super::*;

    static SIG: Signature = Signature {
        name: "t",
        summary: "test",
        usage: "t",
        flags: &[
            Flag { short: Some('l'), long: Some("list"), value: None, help: "list" },
            Flag { short: Some('n'), long: None, value: None, help: "n" },
            Flag { short: Some('i'), long: Some("id"), value: Some("ID"), help: "id" },
        ],
        examples: &[],
    };

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    fn names(args: &[Arg]) -> Vec<String> {
        args.iter()
            .map(|arg| match arg {
                Arg::Flag(flag, value) => format!("{}={}", flag.display(), value.clone().unwrap_or_default()),
                Arg::Positional(p) => format!("pos:{p}"),
                Arg::Unknown(u) => format!("unknown:{u}"),
                Arg::MissingValue(flag) => format!("missing:{}", flag.display()),
            })
            .collect()
    }

    static GNU_SIG: Signature = Signature {
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
    const DIALECT: Dialect = Dialect { usage_status: 2, usage_line: Some("t X"), numeric_option: true, optional_values: &["color"] };

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_gnu_forms() {
        let parsed = getopt(&GNU_SIG, &DIALECT, &args("x -cA3 --col --after=2 -5 y -- -c")).unwrap();
        assert_eq!(parsed.operands, ["x", "y", "-c"]);
        assert_eq!(parsed.options.len(), 5);
    }

    #[test]
    fn errors_like_getopt() {
        let error = getopt(&GNU_SIG, &DIALECT, &args("--co")).err().unwrap();
        assert_eq!(error.stderr, "t: option '--co' is ambiguous; possibilities: '--count' '--color'\nUsage: t X\nTry 't --help' for more information.\n");
        assert_eq!(error.status, 2);
        let error = getopt(&GNU_SIG, &DIALECT, &args("-A")).err().unwrap();
        assert!(error.stderr.starts_with("t: option requires an argument -- 'A'\n"));
        let error = getopt(&GNU_SIG, &DIALECT, &args("--count=1")).err().unwrap();
        assert!(error.stderr.starts_with("t: option '--count' doesn't allow an argument\n"));
    }

    #[test]
    fn scans_every_form() {
        let got = names(&scan(&SIG, &words("-ln --id=3 -i 4 -i5 --list x -- -l")));
        assert_eq!(got, ["-l, --list=", "-n=", "-i, --id=ID=3", "-i, --id=ID=4", "-i, --id=ID=5", "-l, --list=", "pos:x", "pos:-l"]);
    }

    #[test]
    fn reports_unknown_and_missing() {
        let got = names(&scan(&SIG, &words("-q --bogus --list=1 -i")));
        assert_eq!(got, ["unknown:-q", "unknown:--bogus", "unknown:--list=1", "missing:-i, --id=ID"]);
    }
}
