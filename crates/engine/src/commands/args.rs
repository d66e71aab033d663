//! A getopt-like scanner over a command's declared flags.
//!
//! It knows which flags take a value from the [`Signature`], handles
//! `--long=value`, `--long value`, `-x value`, `-xvalue` and bundled short
//! flags (`-ln`), and reports what it cannot match. Each command decides how
//! to answer an unknown flag, because real tools differ in that.

use super::{Flag, Signature};

#[derive(Debug)]
pub enum Arg<'s> {
    Flag(&'s Flag, Option<String>),
    Positional(String),
    /// A flag that is not declared, as the user wrote it.
    Unknown(String),
    /// A declared flag that needs a value and got none.
    MissingValue(&'s Flag),
}

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

    #[test]
    fn scans_every_form() {
        let got = names(&scan(&SIG, &words("-ln --id=3 -i 4 -i5 --list x -- -l")));
        assert_eq!(
            got,
            [
                "-l, --list=",
                "-n=",
                "-i, --id=ID=3",
                "-i, --id=ID=4",
                "-i, --id=ID=5",
                "-l, --list=",
                "pos:x",
                "pos:-l"
            ]
        );
    }

    #[test]
    fn reports_unknown_and_missing() {
        let got = names(&scan(&SIG, &words("-q --bogus --list=1 -i")));
        assert_eq!(got, ["unknown:-q", "unknown:--bogus", "unknown:--list=1", "missing:-i, --id=ID"]);
    }
}
