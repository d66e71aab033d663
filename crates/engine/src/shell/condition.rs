//! Conditions: the `test` and `[` builtins, and `[[ ... ]]`.
//!
//! Both read the same primaries (`-n`, `-z`, `-e`, `-f`, `-d`, string and
//! integer comparisons); `[[ ]]` adds pattern matching on the right of `==`
//! and `!=`, `=~` regular expressions, and `&&`, `||` and parentheses.
//! Recursion is bounded by the syntax depth.

use crate::commands::text::regex::{Regex, Syntax};
use crate::limits::MAX_SYNTAX_DEPTH;

use crate::pattern;

/// What a condition may ask of the node's files.
pub trait Files {
    /// None when nothing is at `path`; Some(true) for a directory.
    fn kind(&self, path: &str) -> Option<bool>;
    /// The file's size in bytes (0 for a directory).
    fn size(&self, path: &str) -> usize;
}

impl Files for crate::commands::files::View<'_> {
    fn kind(&self, path: &str) -> Option<bool> {
        crate::commands::files::View::kind(self, path)
    }

    fn size(&self, path: &str) -> usize {
        self.read(path).map_or(0, |text| text.len())
    }
}

/// One argument of a condition: its text, and for `[[ ]]` the same text
/// as a pattern (quoted characters escaped).
#[derive(Clone, Debug)]
pub struct Arg {
    pub text: String,
    pub pattern: String,
    /// An operator of `[[ ]]` (`&&`, `||`, `(`, `)`, `!`) rather than a word.
    pub operator: bool,
}

impl Arg {
    pub fn word(text: String) -> Arg {
        Arg { pattern: text.clone(), text, operator: false }
    }
}

/// Why a condition could not be evaluated: bash's message (without the
/// `-bash: NAME: ` prefix) and status 2.
#[derive(Debug, PartialEq, Eq)]
pub struct ConditionError(pub String);

struct Eval<'a> {
    args: &'a [Arg],
    at: usize,
    files: &'a dyn Files,
    /// `[[ ]]` rather than `test`.
    extended: bool,
    depth: usize,
}

/// `test ARGS` / `[ ARGS ]` (without the closing bracket).
pub fn test(args: &[Arg], files: &dyn Files) -> Result<bool, ConditionError> {
    // POSIX decides by the number of arguments first.
    let is = |at: usize, text: &str| args.get(at).is_some_and(|a| a.text == text);
    match args.len() {
        0 => return Ok(false),
        1 => return Ok(!args[0].text.is_empty()),
        2 if is(0, "!") => return Ok(args[1].text.is_empty()),
        3 if is(0, "!") && !binary_operator(&args[1].text) => return test(&args[1..], files).map(|value| !value),
        _ => {}
    }
    let mut eval = Eval { args, at: 0, files, extended: false, depth: 0 };
    let value = eval.or()?;
    match args.get(eval.at) {
        None => Ok(value),
        Some(_) => Err(ConditionError("too many arguments".into())),
    }
}

/// `[[ ARGS ]]`.
pub fn extended(args: &[Arg], files: &dyn Files) -> Result<bool, ConditionError> {
    let mut eval = Eval { args, at: 0, files, extended: true, depth: 0 };
    let value = eval.or()?;
    match args.get(eval.at) {
        None => Ok(value),
        Some(extra) => Err(ConditionError(format!("syntax error in conditional expression: unexpected token `{}'", extra.text))),
    }
}

fn binary_operator(text: &str) -> bool {
    matches!(text, "=" | "==" | "!=" | "<" | ">" | "=~" | "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-nt" | "-ot" | "-ef")
}

fn unary_operator(text: &str) -> bool {
    matches!(
        text,
        "-n" | "-z"
            | "-e"
            | "-f"
            | "-d"
            | "-s"
            | "-r"
            | "-w"
            | "-x"
            | "-a"
            | "-h"
            | "-L"
            | "-b"
            | "-c"
            | "-p"
            | "-S"
            | "-t"
            | "-g"
            | "-u"
            | "-k"
            | "-O"
            | "-G"
            | "-N"
            | "-v"
    )
}

impl Eval<'_> {
    fn peek(&self) -> Option<&Arg> {
        self.args.get(self.at)
    }

    fn is_op(&self, text: &str) -> bool {
        self.peek().is_some_and(|arg| arg.text == text && (arg.operator || !self.extended))
    }

    /// One level of `!` or parentheses deeper, within the syntax depth.
    fn deeper(&mut self, eval: fn(&mut Self) -> Result<bool, ConditionError>) -> Result<bool, ConditionError> {
        self.depth += 1;
        if self.depth > MAX_SYNTAX_DEPTH {
            return Err(ConditionError("expression nested too deeply".into()));
        }
        let value = eval(self);
        self.depth -= 1;
        value
    }

    fn or(&mut self) -> Result<bool, ConditionError> {
        let mut value = self.and()?;
        loop {
            let or = if self.extended { self.is_op("||") } else { self.is_op("-o") };
            if !or {
                return Ok(value);
            }
            self.at += 1;
            let right = self.and()?;
            value = value || right;
        }
    }

    fn and(&mut self) -> Result<bool, ConditionError> {
        let mut value = self.not()?;
        loop {
            let and = if self.extended { self.is_op("&&") } else { self.is_op("-a") };
            if !and {
                return Ok(value);
            }
            self.at += 1;
            let right = self.not()?;
            value = value && right;
        }
    }

    fn not(&mut self) -> Result<bool, ConditionError> {
        if self.is_op("!") && self.args.len() > self.at + 1 {
            self.at += 1;
            return self.deeper(Self::not).map(|value| !value);
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<bool, ConditionError> {
        let Some(first) = self.peek().cloned() else {
            return Err(ConditionError(if self.extended { "unexpected argument to conditional expression".into() } else { "argument expected".into() }));
        };
        if self.is_op("(") {
            self.at += 1;
            let value = self.deeper(Self::or)?;
            if !self.is_op(")") {
                return Err(ConditionError("`)' expected".into()));
            }
            self.at += 1;
            return Ok(value);
        }
        // A binary operator after this word.
        if let Some(op) = self.args.get(self.at + 1).filter(|op| binary_operator(&op.text) && !op.operator) {
            if let Some(right) = self.args.get(self.at + 2) {
                let op = op.text.clone();
                let right = right.clone();
                self.at += 3;
                return self.binary(&first.text, &op, &right);
            }
        }
        if unary_operator(&first.text) && !first.operator {
            if let Some(operand) = self.args.get(self.at + 1).filter(|arg| !arg.operator).cloned() {
                self.at += 2;
                return Ok(self.unary(&first.text, &operand.text));
            }
        }
        self.at += 1;
        Ok(!first.text.is_empty())
    }

    fn unary(&self, op: &str, operand: &str) -> bool {
        match op {
            "-n" => !operand.is_empty(),
            "-z" => operand.is_empty(),
            "-e" | "-a" | "-r" => self.files.kind(operand).is_some(),
            "-f" => self.files.kind(operand) == Some(false),
            "-d" | "-x" => self.files.kind(operand) == Some(true),
            "-s" => self.files.kind(operand).is_some() && self.files.size(operand) > 0,
            // The trainee may write only their home and /tmp.
            "-w" => self.files.kind(operand).is_some() && (operand.starts_with("/home/") || operand.starts_with("/tmp") || !operand.starts_with('/')),
            _ => false,
        }
    }

    fn binary(&self, left: &str, op: &str, right: &Arg) -> Result<bool, ConditionError> {
        let integer = |text: &str| -> Result<i64, ConditionError> {
            text.trim().parse::<i64>().map_err(|_| ConditionError(format!("{text}: integer expression expected")))
        };
        Ok(match op {
            "=" | "==" if self.extended => pattern::matches(&right.pattern, left),
            "!=" if self.extended => !pattern::matches(&right.pattern, left),
            "=" | "==" => left == right.text,
            "!=" => left != right.text,
            "<" => left < right.text.as_str(),
            ">" => left > right.text.as_str(),
            "=~" => match Regex::new(&right.text, Syntax::Extended, false) {
                Ok(regex) => {
                    let chars: Vec<char> = left.chars().collect();
                    regex.find_at(&chars, 0).is_some()
                }
                // bash: status 2 for a bad regular expression.
                Err(_) => return Err(ConditionError(String::new())),
            },
            "-eq" => integer(left)? == integer(&right.text)?,
            "-ne" => integer(left)? != integer(&right.text)?,
            "-lt" => integer(left)? < integer(&right.text)?,
            "-le" => integer(left)? <= integer(&right.text)?,
            "-gt" => integer(left)? > integer(&right.text)?,
            "-ge" => integer(left)? >= integer(&right.text)?,
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoFiles;
    impl Files for NoFiles {
        fn kind(&self, path: &str) -> Option<bool> {
            match path {
                "/tmp" => Some(true),
                "/etc/hosts" => Some(false),
                _ => None,
            }
        }
        fn size(&self, _: &str) -> usize {
            10
        }
    }

    fn args(text: &str) -> Vec<Arg> {
        text.split(' ').filter(|s| !s.is_empty()).map(|s| Arg::word(s.to_string())).collect()
    }

    #[test]
    fn test_reads_like_posix() {
        let t = |text: &str| test(&args(text), &NoFiles);
        assert_eq!(t("a = a"), Ok(true));
        assert_eq!(t("a != a"), Ok(false));
        assert_eq!(t("3 -gt 2"), Ok(true));
        assert_eq!(t("-z x"), Ok(false));
        assert_eq!(t("! -n x"), Ok(false));
        assert_eq!(t("-d /tmp -a -f /etc/hosts"), Ok(true));
        assert_eq!(t("-e /nope -o x"), Ok(true));
        assert_eq!(t(""), Ok(false));
        assert_eq!(t("x"), Ok(true));
        assert_eq!(t("1 -eq a"), Err(ConditionError("a: integer expression expected".into())));
    }

    #[test]
    fn extended_matches_patterns() {
        let mut items = args("gpu-001 == gpu-*");
        items[2].pattern = "gpu-*".into();
        assert_eq!(extended(&items, &NoFiles), Ok(true));
        items[2].pattern = "gpu-\\*".into();
        assert_eq!(extended(&items, &NoFiles), Ok(false));
        assert_eq!(extended(&args("abc =~ ^a.c$"), &NoFiles), Ok(true));
    }
}
