//! `basename` and `dirname`: a path's last component, and the rest, as
//! GNU coreutils strips them (trailing slashes first).

use super::{usage_error, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Basename;
pub struct Dirname;

static BASENAME: Signature = Signature {
    name: "basename",
    summary: "strip directory and suffix from filenames",
    usage: "basename NAME [SUFFIX]\n  or:  basename OPTION... NAME...",
    flags: &[
        Flag { short: Some('a'), long: Some("multiple"), value: None, help: "support multiple arguments and treat each as a NAME" },
        Flag { short: Some('s'), long: Some("suffix"), value: Some("SUFFIX"), help: "remove a trailing SUFFIX; implies -a" },
    ],
    examples: &[Example { command: "basename /sys/class/infiniband/mlx5_0", description: "mlx5_0" }],
};

static DIRNAME: Signature = Signature {
    name: "dirname",
    summary: "strip last component from file name",
    usage: "dirname [OPTION] NAME...",
    flags: &[],
    examples: &[Example { command: "dirname /sys/class/infiniband/mlx5_0/ports/1/rate", description: "the port's directory" }],
};

/// The last component of `path`, without `suffix` when it is a proper suffix.
pub fn base(path: &str, suffix: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { String::new() } else { "/".to_string() };
    }
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    match name.strip_suffix(suffix) {
        Some(stem) if !suffix.is_empty() && !stem.is_empty() => stem.to_string(),
        _ => name.to_string(),
    }
}

/// Everything before the last component of `path` (`.` when there is none).
pub fn dir(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.starts_with('/') { "/".to_string() } else { ".".to_string() };
    }
    match trimmed.rfind('/') {
        None => ".".to_string(),
        Some(at) => {
            let parent = trimmed[..at].trim_end_matches('/');
            if parent.is_empty() {
                "/".to_string()
            } else {
                parent.to_string()
            }
        }
    }
}

impl GnuTool for Basename {
    const SIGNATURE: &'static Signature = &BASENAME;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, _invocation: &Invocation) -> Output {
        let mut multiple = false;
        let mut suffix = String::new();
        for option in &parsed.options {
            if let Opt::Flag(flag, value) = option {
                match flag.short {
                    Some('a') => multiple = true,
                    Some('s') => {
                        multiple = true;
                        suffix = value.clone().unwrap_or_default();
                    }
                    _ => {}
                }
            }
        }
        let operands = &parsed.operands;
        if operands.is_empty() {
            return usage_error("basename", &COREUTILS, "missing operand");
        }
        if !multiple {
            if operands.len() > 2 {
                return usage_error("basename", &COREUTILS, &format!("extra operand {}", super::quote(&operands[2])));
            }
            return Output::ok(format!("{}\n", base(&operands[0], operands.get(1).map_or("", String::as_str))));
        }
        Output::ok(operands.iter().map(|path| format!("{}\n", base(path, &suffix))).collect::<String>())
    }
}

impl GnuTool for Dirname {
    const SIGNATURE: &'static Signature = &DIRNAME;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, _invocation: &Invocation) -> Output {
        if parsed.operands.is_empty() {
            return usage_error("dirname", &COREUTILS, "missing operand");
        }
        Output::ok(parsed.operands.iter().map(|path| format!("{}\n", dir(path))).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::{base, dir};

    #[test]
    fn strips_like_coreutils() {
        assert_eq!(base("/sys/class/infiniband/mlx5_0/", ""), "mlx5_0");
        assert_eq!(base("notes.txt", ".txt"), "notes");
        assert_eq!(base(".txt", ".txt"), ".txt");
        assert_eq!(base("/", ""), "/");
        assert_eq!(dir("/a/b/c"), "/a/b");
        assert_eq!(dir("/a"), "/");
        assert_eq!(dir("a"), ".");
        assert_eq!(dir("a//b//"), "a");
        assert_eq!(crate::testing::run_on_first_node("basename -a /x/y /z").stdout, "y\nz\n");
    }
}
