//! bash's arithmetic (`$((...))`, `((...))`, `for ((...))`): 64-bit signed
//! integers with C's operators and precedence, variables by name.
//!
//! Overflow wraps, as bash's does (`$((2**63))` is -9223372036854775808):
//! the result is a faithful number and never sizes anything. Division by
//! zero and bad syntax are bash's errors. Nesting and variable indirection
//! are bounded.

use crate::limits::MAX_SYNTAX_DEPTH;

/// Where the evaluator reads and writes variables.
pub trait Variables {
    fn get(&self, name: &str) -> Option<String>;
    fn set(&mut self, name: &str, value: String);
}

/// bash's message, without the `-bash: ` prefix.
#[derive(Debug, PartialEq, Eq)]
pub struct ArithError(pub String);

/// Evaluates `text`; an empty expression is 0.
pub fn evaluate(text: &str, variables: &mut dyn Variables) -> Result<i64, ArithError> {
    evaluate_at(text, variables, 0)
}

fn evaluate_at(text: &str, variables: &mut dyn Variables, depth: usize) -> Result<i64, ArithError> {
    let tokens = tokenize(text).map_err(|rest| error(text, "syntax error: invalid arithmetic operator", &rest))?;
    if tokens.is_empty() {
        return Ok(0);
    }
    let mut parser = Eval { text, tokens, at: 0, variables, depth, skip: 0 };
    let value = parser.comma()?;
    if parser.at < parser.tokens.len() {
        let rest = parser.rest();
        return Err(error(text, "syntax error in expression", &rest));
    }
    Ok(value)
}

fn error(text: &str, message: &str, token: &str) -> ArithError {
    ArithError(format!("{}: {message} (error token is \"{token}\")", text.trim_start()))
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Number(i64),
    Name(String),
    Op(&'static str),
    /// Where the token started in the text, for error tokens.
    Bad,
}

const OPERATORS: &[&str] = &[
    "<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "+", "-", "*", "/", "%",
    "<", ">", "&", "^", "|", "!", "~", "?", ":", "=", "(", ")", ",",
];

/// Tokens with their byte offsets; Err(rest of the text) at a character
/// that starts no token.
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, String> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at];
        if c.is_ascii_whitespace() {
            at += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let len = bytes[at..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'#' || **b == b'_').count();
            let literal = &text[at..at + len];
            match number(literal) {
                Some(n) => tokens.push((Tok::Number(n), at)),
                None => tokens.push((Tok::Bad, at)),
            }
            at += len;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let len = bytes[at..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
            tokens.push((Tok::Name(text[at..at + len].to_string()), at));
            at += len;
            continue;
        }
        match OPERATORS.iter().find(|op| text[at..].starts_with(**op)) {
            Some(op) => {
                tokens.push((Tok::Op(op), at));
                at += op.len();
            }
            None => return Err(text[at..].to_string()),
        }
    }
    Ok(tokens)
}

/// A numeric constant: decimal, `0x` hex, `0` octal or `BASE#digits`.
fn number(literal: &str) -> Option<i64> {
    let (base, digits) = if let Some((base, digits)) = literal.split_once('#') {
        (base.parse::<u32>().ok().filter(|b| (2..=64).contains(b))?, digits)
    } else if let Some(hex) = literal.strip_prefix("0x").or_else(|| literal.strip_prefix("0X")) {
        (16, hex)
    } else if literal.len() > 1 && literal.starts_with('0') {
        (8, &literal[1..])
    } else {
        (10, literal)
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for c in digits.chars() {
        let digit = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
            'A'..='Z' => c as u32 - 'A' as u32 + 36,
            '@' => 62,
            '_' => 63,
            _ => return None,
        };
        if digit >= base {
            return None;
        }
        value = value.wrapping_mul(i64::from(base)).wrapping_add(i64::from(digit));
    }
    Some(value)
}

struct Eval<'t, 'v> {
    text: &'t str,
    tokens: Vec<(Tok, usize)>,
    at: usize,
    variables: &'v mut dyn Variables,
    depth: usize,
    /// Above zero while evaluating a branch whose value is not used
    /// (`0 && x++`): no assignments, no division errors.
    skip: u32,
}

impl Eval<'_, '_> {
    fn rest(&self) -> String {
        self.tokens.get(self.at).map_or(String::new(), |(_, offset)| self.text[*offset..].to_string())
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some((Tok::Op(op), _)) => Some(op),
            _ => None,
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn deeper<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, ArithError>) -> Result<T, ArithError> {
        self.depth += 1;
        if self.depth > MAX_SYNTAX_DEPTH {
            let rest = self.rest();
            return Err(error(self.text, "expression nested too deeply", &rest));
        }
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn comma(&mut self) -> Result<i64, ArithError> {
        let mut value = self.assignment()?;
        while self.eat(",") {
            value = self.assignment()?;
        }
        Ok(value)
    }

    fn assignment(&mut self) -> Result<i64, ArithError> {
        if let (Some((Tok::Name(name), _)), Some((Tok::Op(op), _))) = (self.tokens.get(self.at), self.tokens.get(self.at + 1)) {
            let op: &'static str = op;
            if matches!(op, "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>=" | "&=" | "^=" | "|=") {
                let name = name.clone();
                self.at += 2;
                let right = self.deeper(Self::assignment)?;
                let value = if op == "=" {
                    right
                } else {
                    let left = self.variable(&name)?;
                    self.binary(&op[..op.len() - 1], left, right)?
                };
                self.store(&name, value);
                return Ok(value);
            }
        }
        self.ternary()
    }

    fn ternary(&mut self) -> Result<i64, ArithError> {
        let condition = self.binary_level(0)?;
        if !self.eat("?") {
            return Ok(condition);
        }
        let yes = self.skipping(condition == 0, |e| e.deeper(Self::assignment))?;
        if !self.eat(":") {
            let rest = self.rest();
            return Err(error(self.text, "syntax error in expression", &rest));
        }
        let no = self.skipping(condition != 0, |e| e.deeper(Self::assignment))?;
        Ok(if condition != 0 { yes } else { no })
    }

    fn skipping(&mut self, skip: bool, f: impl FnOnce(&mut Self) -> Result<i64, ArithError>) -> Result<i64, ArithError> {
        self.skip += u32::from(skip);
        let result = f(self);
        self.skip -= u32::from(skip);
        result
    }

    /// Binary operators by precedence, lowest first.
    fn binary_level(&mut self, level: usize) -> Result<i64, ArithError> {
        const LEVELS: &[&[&str]] =
            &[&["||"], &["&&"], &["|"], &["^"], &["&"], &["==", "!="], &["<=", ">=", "<", ">"], &["<<", ">>"], &["+", "-"], &["*", "/", "%"]];
        if level == LEVELS.len() {
            return self.power();
        }
        let mut left = self.binary_level(level + 1)?;
        while let Some(op) = self.peek_op().filter(|op| LEVELS[level].contains(op)) {
            self.at += 1;
            let right = match op {
                "&&" => self.skipping(left == 0, |e| e.binary_level(level + 1))?,
                "||" => self.skipping(left != 0, |e| e.binary_level(level + 1))?,
                _ => self.binary_level(level + 1)?,
            };
            left = self.binary(op, left, right)?;
        }
        Ok(left)
    }

    fn binary(&mut self, op: &str, left: i64, right: i64) -> Result<i64, ArithError> {
        if matches!(op, "/" | "%") && right == 0 {
            if self.skip > 0 {
                return Ok(0);
            }
            let rest = self.tokens.get(self.at.saturating_sub(1)).map_or(String::new(), |(_, offset)| self.text[*offset..].to_string());
            return Err(error(self.text, "division by 0", &rest));
        }
        Ok(match op {
            "||" => i64::from(left != 0 || right != 0),
            "&&" => i64::from(left != 0 && right != 0),
            "|" => left | right,
            "^" => left ^ right,
            "&" => left & right,
            "==" => i64::from(left == right),
            "!=" => i64::from(left != right),
            "<=" => i64::from(left <= right),
            ">=" => i64::from(left >= right),
            "<" => i64::from(left < right),
            ">" => i64::from(left > right),
            "<<" => left.wrapping_shl((right & 63) as u32),
            ">>" => left.wrapping_shr((right & 63) as u32),
            "+" => left.wrapping_add(right),
            "-" => left.wrapping_sub(right),
            "*" => left.wrapping_mul(right),
            "/" => left.wrapping_div(right),
            "%" => left.wrapping_rem(right),
            _ => 0,
        })
    }

    fn power(&mut self) -> Result<i64, ArithError> {
        let base = self.unary()?;
        if !self.eat("**") {
            return Ok(base);
        }
        let exponent = self.deeper(Self::power)?;
        if exponent < 0 {
            let rest = self.rest();
            return Err(error(self.text, "exponent less than 0", &rest));
        }
        // Square-and-multiply: at most 64 steps whatever the exponent.
        let (mut result, mut base, mut exponent) = (1i64, base, exponent as u64);
        while exponent > 0 {
            if exponent & 1 == 1 {
                result = result.wrapping_mul(base);
            }
            base = base.wrapping_mul(base);
            exponent >>= 1;
        }
        Ok(result)
    }

    fn unary(&mut self) -> Result<i64, ArithError> {
        match self.peek_op() {
            Some(op @ ("+" | "-" | "!" | "~")) => {
                self.at += 1;
                let value = self.deeper(Self::unary)?;
                Ok(match op {
                    "-" => value.wrapping_neg(),
                    "!" => i64::from(value == 0),
                    "~" => !value,
                    _ => value,
                })
            }
            Some(op @ ("++" | "--")) => {
                self.at += 1;
                let Some((Tok::Name(name), _)) = self.tokens.get(self.at).cloned() else {
                    let rest = self.rest();
                    return Err(error(self.text, "syntax error: operand expected", &rest));
                };
                self.at += 1;
                let value = self.variable(&name)?.wrapping_add(if op == "++" { 1 } else { -1 });
                self.store(&name, value);
                Ok(value)
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<i64, ArithError> {
        let Some((token, _)) = self.tokens.get(self.at).cloned() else {
            let rest = self.rest();
            return Err(error(self.text, "syntax error: operand expected", &rest));
        };
        match token {
            Tok::Number(n) => {
                self.at += 1;
                Ok(n)
            }
            Tok::Name(name) => {
                self.at += 1;
                let value = self.variable(&name)?;
                match self.peek_op() {
                    Some(op @ ("++" | "--")) => {
                        self.at += 1;
                        self.store(&name, value.wrapping_add(if op == "++" { 1 } else { -1 }));
                        Ok(value)
                    }
                    _ => Ok(value),
                }
            }
            Tok::Op("(") => {
                self.at += 1;
                let value = self.deeper(Self::comma)?;
                if !self.eat(")") {
                    let rest = self.rest();
                    return Err(error(self.text, "syntax error: `)' expected", &rest));
                }
                Ok(value)
            }
            Tok::Bad => {
                let rest = self.rest();
                let token = rest.split(|c: char| !c.is_ascii_alphanumeric() && c != '#' && c != '_').next().unwrap_or("").to_string();
                Err(error(self.text, "value too great for base", &token))
            }
            Tok::Op(_) => {
                let rest = self.rest();
                Err(error(self.text, "syntax error: operand expected", &rest))
            }
        }
    }

    /// A variable's value: an empty or unset one is 0; one that holds an
    /// expression is evaluated, as bash does, to a bounded depth.
    fn variable(&mut self, name: &str) -> Result<i64, ArithError> {
        let value = self.variables.get(name).unwrap_or_default();
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Ok(0);
        }
        if let Ok(n) = trimmed.parse::<i64>() {
            return Ok(n);
        }
        if self.depth >= MAX_SYNTAX_DEPTH {
            return Err(error(trimmed, "expression recursion level exceeded", trimmed));
        }
        evaluate_at(trimmed, self.variables, self.depth + 1)
    }

    fn store(&mut self, name: &str, value: i64) {
        if self.skip == 0 {
            self.variables.set(name, value.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    impl Variables for BTreeMap<String, String> {
        fn get(&self, name: &str) -> Option<String> {
            BTreeMap::get(self, name).cloned()
        }
        fn set(&mut self, name: &str, value: String) {
            self.insert(name.to_string(), value);
        }
    }

    fn eval(text: &str) -> Result<i64, String> {
        let mut vars = BTreeMap::new();
        vars.insert("x".to_string(), "5".to_string());
        vars.insert("e".to_string(), "x*2".to_string());
        evaluate(text, &mut vars).map_err(|e| e.0)
    }

    #[test]
    fn operators_and_precedence_are_c_s() {
        assert_eq!(eval("1 + 2 * 3"), Ok(7));
        assert_eq!(eval("(1 + 2) * 3"), Ok(9));
        assert_eq!(eval("2 ** 3 ** 2"), Ok(512));
        assert_eq!(eval("-3 / 2"), Ok(-1));
        assert_eq!(eval("7 % 3 == 1 && 1 || 0"), Ok(1));
        assert_eq!(eval("x > 3 ? 10 : 20"), Ok(10));
        assert_eq!(eval("e + 1"), Ok(11));
        assert_eq!(eval("0x10 + 010 + 2#101"), Ok(16 + 8 + 5));
        assert_eq!(eval(""), Ok(0));
        assert_eq!(eval("2**63"), Ok(i64::MIN));
        assert_eq!(eval("1 << 70"), Ok(64));
    }

    #[test]
    fn assignments_store_their_values() {
        let mut vars = BTreeMap::new();
        assert_eq!(evaluate("i = 2, i += 3, i++", &mut vars), Ok(5));
        assert_eq!(vars["i"], "6");
        assert_eq!(evaluate("0 && (i = 9)", &mut vars), Ok(0));
        assert_eq!(vars["i"], "6");
    }

    #[test]
    fn errors_read_like_bash() {
        assert_eq!(eval("1/0"), Err("1/0: division by 0 (error token is \"0\")".into()));
        assert_eq!(eval("1 + "), Err("1 + : syntax error: operand expected (error token is \"\")".into()));
        assert_eq!(eval("1 1"), Err("1 1: syntax error in expression (error token is \"1\")".into()));
        assert!(eval(&"(".repeat(10_000)).is_err());
        assert!(eval(&("- ".repeat(10_000) + "1")).unwrap_err().contains("nested too deeply"));
        let mut vars = BTreeMap::new();
        vars.insert("a".to_string(), "a".to_string());
        assert!(evaluate("a", &mut vars).unwrap_err().0.contains("recursion level exceeded"));
    }
}
