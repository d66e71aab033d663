//! `awk`: the subset of POSIX awk that operator one-liners use, with gawk's
//! messages and number output.
//!
//! Supported: `BEGIN`/`END`, pattern-action items (`/re/`, expressions),
//! `-F SEP`, `-v var=value`, fields (`$1`, `$NF`, assigning a field rebuilds
//! `$0`), `NR NF FS OFS ORS RS`, string concatenation, arithmetic, comparisons
//! (numeric for numeric-looking fields), `~ !~`, `&& || !`, `?:`, `++ --`,
//! compound assignment, arrays with `in` and `for (k in a)` (keys in
//! insertion order; gawk leaves this order unspecified), `if/else`, `while`,
//! `for(;;)`, `next`, `exit`, `delete`, `print`, `printf`, and the functions
//! `length substr index split tolower toupper int sprintf sub gsub match`.
//! Not supported (a syntax error here): user functions, `getline`, output
//! redirection to files and pipes. Any syntax error is answered in gawk's
//! shape: `awk: cmd. line:1: <program>` / `awk: cmd. line:1: ^ syntax error`,
//! exit 2 (the caret's column is approximate).

use std::collections::BTreeMap;

use super::regex::{Budget, Regex, Syntax};
use super::{usage_error, Dialect, GnuTool, Opt, Parsed};
use crate::commands::text::escapes::{expand_backslashes, Escape};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Awk;

static SIGNATURE: Signature = Signature {
    name: "awk",
    summary: "pattern scanning and processing language (a subset)",
    usage: "awk [-F fs] [-v var=value] 'program' [file ...]",
    flags: &[
        Flag { short: Some('F'), long: Some("field-separator"), value: Some("fs"), help: "use fs for the input field separator" },
        Flag { short: Some('v'), long: Some("assign"), value: Some("var=val"), help: "assign a variable before the program starts" },
    ],
    examples: &[
        Example { command: "nvidia-smi -L | awk '{print $2}'", description: "the second field of each line" },
        Example {
            command: "nvidia-smi --query-gpu=index,temperature.gpu --format=csv,noheader | awk -F', ' '$2 > 30 {print $1}'",
            description: "GPUs warmer than 30 C",
        },
        Example { command: "nvidia-smi -L | awk 'END {print NR}'", description: "count lines" },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 2, usage_line: None, numeric_option: false, optional_values: &[] };

/// Steps a program may take before it is stopped, so `while (1)` cannot hang the page.
const MAX_STEPS: u64 = crate::limits::MAX_AWK_STEPS;
/// The longest string or output a program may build (bytes).
const MAX_TEXT: usize = 4 << 20;

// ---------------------------------------------------------------- tokens

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Regex(String),
    Name(String),
    Func(&'static str),
    Keyword(&'static str),
    Punct(&'static str),
    Newline,
    Eof,
}

const KEYWORDS: &[&str] =
    &["BEGIN", "END", "print", "printf", "if", "else", "while", "for", "in", "next", "exit", "delete", "do", "break", "continue", "getline", "function"];
const FUNCS: &[&str] = &[
    "length", "substr", "index", "split", "tolower", "toupper", "int", "sprintf", "sub", "gsub", "match", "sqrt", "exp", "log", "sin", "cos", "atan2", "rand",
    "srand", "system", "close",
];
const PUNCTS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "!~", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", ">>", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/",
    "%", "^", "!", ">", "<", "|", "?", ":", "~", "=", "$",
];

struct SyntaxError;

/// A string or regex literal, from its opening delimiter at `at` to the same
/// character closing it; `step` takes each character between (and may read
/// on, for an escape). An unclosed literal is a syntax error.
fn delimited(chars: &[char], at: &mut usize, mut step: impl FnMut(char, &mut usize, &mut String) -> Result<(), SyntaxError>) -> Result<String, SyntaxError> {
    let close = chars[*at];
    *at += 1;
    let mut text = String::new();
    loop {
        let Some(&d) = chars.get(*at) else { return Err(SyntaxError) };
        *at += 1;
        if d == close {
            return Ok(text);
        }
        step(d, at, &mut text)?;
    }
}

fn tokenize(source: &str) -> Result<Vec<Tok>, SyntaxError> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens: Vec<Tok> = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let operand_before = matches!(tokens.last(), Some(Tok::Num(_) | Tok::Str(_) | Tok::Name(_) | Tok::Regex(_) | Tok::Func(_)))
            || matches!(tokens.last(), Some(Tok::Punct(")" | "]" | "++" | "--" | "$")));
        match c {
            ' ' | '\t' | '\r' => at += 1,
            '\\' if chars.get(at + 1) == Some(&'\n') => at += 2,
            '\n' => {
                tokens.push(Tok::Newline);
                at += 1;
            }
            '#' => {
                while at < chars.len() && chars[at] != '\n' {
                    at += 1;
                }
            }
            '"' => {
                let text = delimited(&chars, &mut at, |d, at, text| {
                    if d != '\\' {
                        text.push(d);
                        return Ok(());
                    }
                    let Some(&e) = chars.get(*at) else { return Err(SyntaxError) };
                    *at += 1;
                    let escaped = match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '\\' => '\\',
                        '"' => '"',
                        '/' => '/',
                        'a' => '\x07',
                        'b' => '\x08',
                        'f' => '\x0c',
                        'v' => '\x0b',
                        other => {
                            text.push('\\');
                            other
                        }
                    };
                    text.push(escaped);
                    Ok(())
                })?;
                tokens.push(Tok::Str(text));
            }
            '/' if !operand_before => {
                let text = delimited(&chars, &mut at, |d, at, text| {
                    match d {
                        '\n' => return Err(SyntaxError),
                        '\\' if chars.get(*at) == Some(&'/') => {
                            text.push('/');
                            *at += 1;
                        }
                        '\\' => {
                            text.push('\\');
                            if let Some(&e) = chars.get(*at) {
                                text.push(e);
                                *at += 1;
                            }
                        }
                        d => text.push(d),
                    }
                    Ok(())
                })?;
                tokens.push(Tok::Regex(text));
            }
            c if c.is_ascii_digit() || (c == '.' && chars.get(at + 1).is_some_and(char::is_ascii_digit)) => {
                let start = at;
                while at < chars.len() && (chars[at].is_ascii_digit() || chars[at] == '.') {
                    at += 1;
                }
                if at < chars.len() && matches!(chars[at], 'e' | 'E') {
                    let mut probe = at + 1;
                    if probe < chars.len() && matches!(chars[probe], '+' | '-') {
                        probe += 1;
                    }
                    if probe < chars.len() && chars[probe].is_ascii_digit() {
                        at = probe;
                        while at < chars.len() && chars[at].is_ascii_digit() {
                            at += 1;
                        }
                    }
                }
                let text: String = chars[start..at].iter().collect();
                tokens.push(Tok::Num(leading_number(&text)));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = at;
                while at < chars.len() && (chars[at].is_ascii_alphanumeric() || chars[at] == '_') {
                    at += 1;
                }
                let word: String = chars[start..at].iter().collect();
                if let Some(keyword) = KEYWORDS.iter().find(|k| **k == word) {
                    tokens.push(Tok::Keyword(keyword));
                } else if let Some(func) = FUNCS.iter().find(|f| **f == word) {
                    tokens.push(Tok::Func(func));
                } else {
                    tokens.push(Tok::Name(word));
                }
            }
            _ => {
                let rest: String = chars[at..chars.len().min(at + 2)].iter().collect();
                let Some(punct) = PUNCTS.iter().find(|p| rest.starts_with(**p)) else { return Err(SyntaxError) };
                tokens.push(Tok::Punct(punct));
                at += punct.chars().count();
            }
        }
    }
    tokens.push(Tok::Eof);
    Ok(tokens)
}

// ---------------------------------------------------------------- syntax tree

#[derive(Clone, Debug)]
enum Expr {
    Num(f64),
    Str(String),
    /// `/re/` alone: matches `$0`.
    Regex(String),
    Var(String),
    Field(Box<Expr>),
    Index(String, Vec<Expr>),
    In(Vec<Expr>, String),
    Assign(Box<Expr>, Option<&'static str>, Box<Expr>),
    IncDec {
        target: Box<Expr>,
        delta: f64,
        prefix: bool,
    },
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Match(bool, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Plus(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    Call(&'static str, Vec<Expr>),
    /// Plain `getline [var]`: the next input record, into $0 (and NF) or var.
    Getline(Option<Box<Expr>>),
}

#[derive(Clone, Debug)]
enum Stmt {
    Print(Vec<Expr>),
    Printf(Vec<Expr>),
    Expr(Expr),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    For(Option<Box<Stmt>>, Option<Expr>, Option<Box<Stmt>>, Box<Stmt>),
    ForIn(String, String, Box<Stmt>),
    Block(Vec<Stmt>),
    Next,
    Exit(Option<Expr>),
    Delete(String, Option<Vec<Expr>>),
    Break,
    Continue,
}

enum Pattern {
    Begin,
    End,
    All,
    Expr(Expr),
    /// `from, to`: on from a record `from` selects through one `to` selects.
    Range(Expr, Expr),
}

struct Item {
    pattern: Pattern,
    action: Option<Vec<Stmt>>,
}

struct Parser {
    tokens: Vec<Tok>,
    at: usize,
    /// How deep the parse has recursed, bounded by MAX_SYNTAX_DEPTH.
    depth: usize,
    /// Set when the program nests deeper than that.
    too_deep: bool,
}

type Parse<T> = Result<T, SyntaxError>;

impl Parser {
    /// Runs `parse` one level deeper, refusing programs nested past
    /// MAX_SYNTAX_DEPTH (parentheses, blocks, chains of unary operators).
    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Parse<T>) -> Parse<T> {
        if self.depth >= crate::limits::MAX_SYNTAX_DEPTH {
            self.too_deep = true;
            return Err(SyntaxError);
        }
        self.depth += 1;
        let parsed = parse(self);
        self.depth -= 1;
        parsed
    }

    fn peek(&self) -> &Tok {
        self.tokens.get(self.at).unwrap_or(&Tok::Eof)
    }

    fn next(&mut self) -> Tok {
        let token = self.peek().clone();
        self.at += 1;
        token
    }

    fn is(&self, punct: &str) -> bool {
        matches!(self.peek(), Tok::Punct(p) if *p == punct)
    }

    fn eat(&mut self, punct: &str) -> bool {
        if self.is(punct) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: &str) -> Parse<()> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(SyntaxError)
        }
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline) || self.is(";") {
            self.at += 1;
        }
    }

    fn skip_only_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline) {
            self.at += 1;
        }
    }

    fn program(&mut self) -> Parse<Vec<Item>> {
        let mut items = Vec::new();
        self.skip_newlines();
        while *self.peek() != Tok::Eof {
            let pattern = match self.peek() {
                Tok::Keyword("BEGIN") => {
                    self.at += 1;
                    Pattern::Begin
                }
                Tok::Keyword("END") => {
                    self.at += 1;
                    Pattern::End
                }
                Tok::Punct("{") => Pattern::All,
                _ => {
                    let from = self.expr(false)?;
                    if self.eat(",") {
                        self.skip_only_newlines();
                        Pattern::Range(from, self.expr(false)?)
                    } else {
                        Pattern::Expr(from)
                    }
                }
            };
            let action = if self.is("{") { Some(self.block()?) } else { None };
            if action.is_none() && matches!(pattern, Pattern::Begin | Pattern::End) {
                return Err(SyntaxError);
            }
            items.push(Item { pattern, action });
            self.skip_newlines();
        }
        Ok(items)
    }

    fn block(&mut self) -> Parse<Vec<Stmt>> {
        self.expect("{")?;
        let mut statements = Vec::new();
        loop {
            self.skip_newlines();
            if self.eat("}") {
                return Ok(statements);
            }
            statements.push(self.statement()?);
        }
    }

    /// After a simple statement: `;`, a newline, or a closing `}` (not eaten).
    fn end_simple(&mut self) -> Parse<()> {
        if self.eat(";") || matches!(self.peek(), Tok::Newline) || self.is("}") || *self.peek() == Tok::Eof {
            if matches!(self.peek(), Tok::Newline) {
                self.at += 1;
            }
            Ok(())
        } else {
            Err(SyntaxError)
        }
    }

    fn body(&mut self) -> Parse<Box<Stmt>> {
        self.skip_only_newlines();
        if self.eat(";") {
            return Ok(Box::new(Stmt::Block(Vec::new())));
        }
        Ok(Box::new(self.statement()?))
    }

    fn simple_statement(&mut self) -> Parse<Stmt> {
        Ok(match self.peek().clone() {
            Tok::Keyword("print") | Tok::Keyword("printf") => {
                let printf = *self.peek() == Tok::Keyword("printf");
                self.at += 1;
                let mut args = Vec::new();
                let ends = |p: &Parser| matches!(p.peek(), Tok::Newline | Tok::Eof) || p.is(";") || p.is("}") || p.is(">") || p.is("|") || p.is(">>");
                if !ends(self) {
                    // `print (a, b)` groups its list in parentheses.
                    let save = self.at;
                    let mut grouped = false;
                    if self.eat("(") {
                        let mut list = vec![self.expr(false)?];
                        while self.eat(",") {
                            self.skip_only_newlines();
                            list.push(self.expr(false)?);
                        }
                        if self.eat(")") && ends(self) {
                            args = list;
                            grouped = true;
                        } else {
                            self.at = save;
                        }
                    }
                    if !grouped {
                        args.push(self.expr(true)?);
                        while self.eat(",") {
                            self.skip_only_newlines();
                            args.push(self.expr(true)?);
                        }
                    }
                }
                if self.is(">") || self.is("|") || self.is(">>") {
                    // Files and pipes do not exist in a lab.
                    return Err(SyntaxError);
                }
                if printf {
                    if args.is_empty() {
                        return Err(SyntaxError);
                    }
                    Stmt::Printf(args)
                } else {
                    Stmt::Print(args)
                }
            }
            Tok::Keyword("next") => {
                self.at += 1;
                Stmt::Next
            }
            Tok::Keyword("break") => {
                self.at += 1;
                Stmt::Break
            }
            Tok::Keyword("continue") => {
                self.at += 1;
                Stmt::Continue
            }
            Tok::Keyword("exit") => {
                self.at += 1;
                let ends = matches!(self.peek(), Tok::Newline | Tok::Eof) || self.is(";") || self.is("}");
                Stmt::Exit(if ends { None } else { Some(self.expr(false)?) })
            }
            Tok::Keyword("delete") => {
                self.at += 1;
                let Tok::Name(name) = self.next() else { return Err(SyntaxError) };
                if self.eat("[") {
                    let subscripts = self.expr_list("]")?;
                    Stmt::Delete(name, Some(subscripts))
                } else {
                    Stmt::Delete(name, None)
                }
            }
            _ => Stmt::Expr(self.expr(false)?),
        })
    }

    fn statement(&mut self) -> Parse<Stmt> {
        self.nested(Self::statement_inner)
    }

    fn statement_inner(&mut self) -> Parse<Stmt> {
        match self.peek().clone() {
            Tok::Punct("{") => Ok(Stmt::Block(self.block()?)),
            Tok::Keyword("if") => {
                self.at += 1;
                self.expect("(")?;
                let condition = self.expr(false)?;
                self.expect(")")?;
                let then = self.body()?;
                let save = self.at;
                self.skip_newlines();
                let otherwise = if *self.peek() == Tok::Keyword("else") {
                    self.at += 1;
                    Some(self.body()?)
                } else {
                    self.at = save;
                    None
                };
                Ok(Stmt::If(condition, then, otherwise))
            }
            Tok::Keyword("while") => {
                self.at += 1;
                self.expect("(")?;
                let condition = self.expr(false)?;
                self.expect(")")?;
                Ok(Stmt::While(condition, self.body()?))
            }
            Tok::Keyword("for") => {
                self.at += 1;
                self.expect("(")?;
                // for (key in array)
                if let (Tok::Name(key), Tok::Keyword("in"), Tok::Name(array), Tok::Punct(")")) = (
                    self.peek().clone(),
                    self.tokens.get(self.at + 1).cloned().unwrap_or(Tok::Eof),
                    self.tokens.get(self.at + 2).cloned().unwrap_or(Tok::Eof),
                    self.tokens.get(self.at + 3).cloned().unwrap_or(Tok::Eof),
                ) {
                    self.at += 4;
                    return Ok(Stmt::ForIn(key, array, self.body()?));
                }
                let init = if self.is(";") { None } else { Some(Box::new(self.simple_statement()?)) };
                self.expect(";")?;
                self.skip_only_newlines();
                let condition = if self.is(";") { None } else { Some(self.expr(false)?) };
                self.expect(";")?;
                self.skip_only_newlines();
                let step = if self.is(")") { None } else { Some(Box::new(self.simple_statement()?)) };
                self.expect(")")?;
                Ok(Stmt::For(init, condition, step, self.body()?))
            }
            Tok::Keyword("do") => {
                self.at += 1;
                let body = self.body()?;
                self.skip_newlines();
                if *self.peek() != Tok::Keyword("while") {
                    return Err(SyntaxError);
                }
                self.at += 1;
                self.expect("(")?;
                let condition = self.expr(false)?;
                self.expect(")")?;
                self.end_simple()?;
                Ok(Stmt::DoWhile(body, condition))
            }
            Tok::Keyword("function") => Err(SyntaxError),
            _ => {
                let statement = self.simple_statement()?;
                self.end_simple()?;
                Ok(statement)
            }
        }
    }

    fn expr_list(&mut self, close: &str) -> Parse<Vec<Expr>> {
        let mut list = vec![self.expr(false)?];
        while self.eat(",") {
            list.push(self.expr(false)?);
        }
        self.expect(close)?;
        Ok(list)
    }

    /// `no_gt`: inside `print`, an unparenthesized `>` is a redirection.
    fn expr(&mut self, no_gt: bool) -> Parse<Expr> {
        self.nested(|parser| parser.expr_inner(no_gt))
    }

    fn expr_inner(&mut self, no_gt: bool) -> Parse<Expr> {
        self.ternary(no_gt)
    }

    fn ternary(&mut self, no_gt: bool) -> Parse<Expr> {
        let condition = self.or(no_gt)?;
        if self.eat("?") {
            self.skip_only_newlines();
            let then = self.ternary(no_gt)?;
            self.skip_only_newlines();
            self.expect(":")?;
            self.skip_only_newlines();
            let otherwise = self.ternary(no_gt)?;
            return Ok(Expr::Cond(Box::new(condition), Box::new(then), Box::new(otherwise)));
        }
        for op in ["=", "+=", "-=", "*=", "/=", "%=", "^="] {
            if self.is(op) && matches!(condition, Expr::Var(_) | Expr::Field(_) | Expr::Index(..)) {
                self.at += 1;
                self.skip_only_newlines();
                let value = self.ternary(no_gt)?;
                let operator = PUNCTS.iter().find(|p| **p == op).map(|p| &p[..p.len() - 1]);
                let operator = operator.filter(|o| !o.is_empty());
                return Ok(Expr::Assign(Box::new(condition), operator, Box::new(value)));
            }
        }
        Ok(condition)
    }

    fn or(&mut self, no_gt: bool) -> Parse<Expr> {
        self.logical_chain("||", Expr::Or, Self::and, no_gt)
    }

    fn and(&mut self, no_gt: bool) -> Parse<Expr> {
        self.logical_chain("&&", Expr::And, Self::in_expr, no_gt)
    }

    /// Operands joined left to right by `op` (`||` or `&&`), which may end a line.
    fn logical_chain(&mut self, op: &str, join: fn(Box<Expr>, Box<Expr>) -> Expr, operand: fn(&mut Self, bool) -> Parse<Expr>, no_gt: bool) -> Parse<Expr> {
        let mut left = operand(self, no_gt)?;
        while self.eat(op) {
            self.skip_only_newlines();
            left = join(Box::new(left), Box::new(operand(self, no_gt)?));
        }
        Ok(left)
    }

    fn in_expr(&mut self, no_gt: bool) -> Parse<Expr> {
        let mut left = self.matching(no_gt)?;
        while *self.peek() == Tok::Keyword("in") {
            self.at += 1;
            let Tok::Name(array) = self.next() else { return Err(SyntaxError) };
            left = Expr::In(vec![left], array);
        }
        Ok(left)
    }

    fn matching(&mut self, no_gt: bool) -> Parse<Expr> {
        let mut left = self.comparison(no_gt)?;
        loop {
            let negated = if self.eat("~") {
                false
            } else if self.eat("!~") {
                true
            } else {
                return Ok(left);
            };
            left = Expr::Match(negated, Box::new(left), Box::new(self.comparison(no_gt)?));
        }
    }

    fn comparison(&mut self, no_gt: bool) -> Parse<Expr> {
        let left = self.concatenation(no_gt)?;
        for op in ["<=", ">=", "==", "!=", "<", ">"] {
            if op == ">" && no_gt {
                continue;
            }
            if self.is(op) {
                self.at += 1;
                let right = self.concatenation(no_gt)?;
                let op = PUNCTS.iter().find(|p| **p == op).copied().unwrap_or("==");
                return Ok(Expr::Binary(op, Box::new(left), Box::new(right)));
            }
        }
        Ok(left)
    }

    fn starts_operand(&self) -> bool {
        match self.peek() {
            Tok::Num(_) | Tok::Str(_) | Tok::Regex(_) | Tok::Name(_) | Tok::Func(_) => true,
            Tok::Punct(p) => matches!(*p, "$" | "(" | "!" | "-" | "+" | "++" | "--"),
            _ => false,
        }
    }

    fn concatenation(&mut self, no_gt: bool) -> Parse<Expr> {
        let mut left = self.additive()?;
        // Juxtaposition concatenates; `-` and `+` here are binary, already taken.
        while self.starts_operand() && !self.is("-") && !self.is("+") && !self.is("!") {
            let right = self.additive()?;
            left = Expr::Concat(Box::new(left), Box::new(right));
        }
        let _ = no_gt;
        Ok(left)
    }

    /// Operands joined left to right by any of `ops`, all of one precedence.
    fn binary_chain(&mut self, ops: &[&'static str], operand: fn(&mut Self) -> Parse<Expr>) -> Parse<Expr> {
        let mut left = operand(self)?;
        while let Some(op) = ops.iter().copied().find(|op| self.is(op)) {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(operand(self)?));
        }
        Ok(left)
    }

    fn additive(&mut self) -> Parse<Expr> {
        self.binary_chain(&["+", "-"], Self::multiplicative)
    }

    fn multiplicative(&mut self) -> Parse<Expr> {
        self.binary_chain(&["*", "/", "%"], Self::unary)
    }

    fn unary(&mut self) -> Parse<Expr> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.nested(Self::unary)?)));
        }
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.nested(Self::unary)?)));
        }
        if self.eat("+") {
            return Ok(Expr::Plus(Box::new(self.nested(Self::unary)?)));
        }
        self.power()
    }

    fn power(&mut self) -> Parse<Expr> {
        let base = self.postfix()?;
        if self.eat("^") {
            // Right associative.
            let exponent = self.nested(Self::unary)?;
            return Ok(Expr::Binary("^", Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Parse<Expr> {
        if self.is("++") || self.is("--") {
            let delta = if self.eat("++") {
                1.0
            } else {
                self.at += 1;
                -1.0
            };
            let target = self.primary()?;
            if !matches!(target, Expr::Var(_) | Expr::Field(_) | Expr::Index(..)) {
                return Err(SyntaxError);
            }
            return Ok(Expr::IncDec { target: Box::new(target), delta, prefix: true });
        }
        let primary = self.primary()?;
        if matches!(primary, Expr::Var(_) | Expr::Field(_) | Expr::Index(..)) && (self.is("++") || self.is("--")) {
            let delta = if self.eat("++") {
                1.0
            } else {
                self.at += 1;
                -1.0
            };
            return Ok(Expr::IncDec { target: Box::new(primary), delta, prefix: false });
        }
        Ok(primary)
    }

    fn primary(&mut self) -> Parse<Expr> {
        match self.next() {
            Tok::Num(n) => Ok(Expr::Num(n)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Regex(r) => Ok(Expr::Regex(r)),
            Tok::Punct("$") => {
                // `$NF`, `$(NF-1)`, `$i++` binds as `($i)++`.
                let inner = if self.is("++") || self.is("--") { self.postfix()? } else { self.nested(Self::primary)? };
                Ok(Expr::Field(Box::new(inner)))
            }
            Tok::Punct("(") => {
                let first = self.expr(false)?;
                if self.eat(",") {
                    // `(a, b) in array`
                    let mut list = vec![first];
                    list.extend(self.expr_list(")")?);
                    if *self.peek() != Tok::Keyword("in") {
                        return Err(SyntaxError);
                    }
                    self.at += 1;
                    let Tok::Name(array) = self.next() else { return Err(SyntaxError) };
                    return Ok(Expr::In(list, array));
                }
                self.expect(")")?;
                Ok(first)
            }
            Tok::Name(name) => {
                if self.eat("[") {
                    let subscripts = self.expr_list("]")?;
                    return Ok(Expr::Index(name, subscripts));
                }
                Ok(Expr::Var(name))
            }
            Tok::Keyword("getline") => {
                // `getline` and `getline var`; reading a file or a command is not emulated.
                let target = match self.peek().clone() {
                    Tok::Name(_) | Tok::Punct("$") => Some(Box::new(self.nested(Self::primary)?)),
                    _ => None,
                };
                if self.is("<") || self.is("|") {
                    return Err(SyntaxError);
                }
                Ok(Expr::Getline(target))
            }
            Tok::Func(name) => {
                if !self.eat("(") {
                    // `length` alone is length($0).
                    return if name == "length" { Ok(Expr::Call(name, Vec::new())) } else { Err(SyntaxError) };
                }
                if self.eat(")") {
                    return Ok(Expr::Call(name, Vec::new()));
                }
                let args = self.expr_list(")")?;
                Ok(Expr::Call(name, args))
            }
            _ => Err(SyntaxError),
        }
    }
}

// ---------------------------------------------------------------- values

#[derive(Clone, Debug)]
enum Value {
    Num(f64),
    Str(String),
    /// Input data (fields, `-v` values) that looks numeric compares as a number.
    StrNum(String),
}

/// awk's string-to-number: the longest leading number, else 0.
fn leading_number(text: &str) -> f64 {
    let trimmed = text.trim_start_matches([' ', '\t', '\n']);
    let bytes = trimmed.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    let mut digits = 0;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
        digits += 1;
    }
    if bytes.get(end) == Some(&b'.') {
        end += 1;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return 0.0;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut probe = end + 1;
        if matches!(bytes.get(probe), Some(b'+' | b'-')) {
            probe += 1;
        }
        if bytes.get(probe).is_some_and(u8::is_ascii_digit) {
            end = probe;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
        }
    }
    trimmed[..end].parse().unwrap_or(0.0)
}

fn looks_numeric(text: &str) -> bool {
    let trimmed = text.trim_matches([' ', '\t', '\n']);
    !trimmed.is_empty()
        && trimmed.trim_start_matches(['+', '-']).starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && trimmed.parse::<f64>().is_ok()
        && !trimmed.contains(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
}

/// gawk prints integral values as integers and others with `%.6g` (the
/// default CONVFMT and OFMT; the machine applies others).
fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan".into() } else { "+nan".into() };
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf".into() } else { "+inf".into() };
    }
    // Integral values print whole, however large (gawk's `%.0f` past a long).
    if n == n.trunc() {
        return if n.abs() < 1e16 { format!("{}", n as i64) } else { format!("{n:.0}") };
    }
    format_g(n, 6, false)
}

/// C's `%.Pg`.
fn format_g(n: f64, precision: usize, alternate: bool) -> String {
    let precision = precision.max(1);
    if n == 0.0 {
        return "0".into();
    }
    let exponent = n.abs().log10().floor() as i32;
    // Rounding may carry into the next power of ten.
    let scientific = format!("{:.*e}", precision - 1, n);
    let (mantissa, exp) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exp: i32 = exp.parse().unwrap_or(exponent);
    let trim = |text: String| -> String {
        if alternate || !text.contains('.') {
            text
        } else {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        let mantissa = trim(mantissa.to_string());
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim(format!("{n:.decimals$}"))
    }
}

impl Value {
    fn num(&self) -> f64 {
        match self {
            Value::Num(n) => *n,
            Value::Str(s) | Value::StrNum(s) => leading_number(s),
        }
    }

    fn string(&self) -> String {
        match self {
            Value::Num(n) => number_to_string(*n),
            Value::Str(s) | Value::StrNum(s) => s.clone(),
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Value::Num(n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::StrNum(s) => {
                if looks_numeric(s) {
                    leading_number(s) != 0.0
                } else {
                    !s.is_empty()
                }
            }
        }
    }

    fn is_numeric(&self) -> bool {
        match self {
            Value::Num(_) => true,
            Value::Str(_) => false,
            Value::StrNum(s) => looks_numeric(s),
        }
    }
}

// ---------------------------------------------------------------- interpreter

enum Flow {
    Normal,
    Next,
    Exit,
    Break,
    Continue,
}

/// An awk array: found by key in O(log n), iterated in insertion order so
/// that `for (k in a)` is deterministic (awk leaves the order unspecified).
#[derive(Default)]
struct Array {
    slots: BTreeMap<String, usize>,
    /// In insertion order; None where an element was deleted.
    entries: Vec<Option<(String, Value)>>,
}

impl Array {
    fn get(&self, key: &str) -> Option<&Value> {
        self.slots.get(key).and_then(|at| self.entries[*at].as_ref()).map(|(_, value)| value)
    }

    fn set(&mut self, key: String, value: Value) {
        match self.slots.get(&key) {
            Some(at) => self.entries[*at] = Some((key, value)),
            None => {
                self.slots.insert(key.clone(), self.entries.len());
                self.entries.push(Some((key, value)));
            }
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some(at) = self.slots.remove(key) {
            self.entries[at] = None;
        }
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn keys(&self) -> Vec<String> {
        self.entries.iter().flatten().map(|(key, _)| key.clone()).collect()
    }
}

struct Machine<'p> {
    vars: BTreeMap<String, Value>,
    arrays: BTreeMap<String, Array>,
    fields: Vec<String>,
    record: String,
    out: String,
    steps: u64,
    /// Bytes of strings built so far (see `charge`).
    work: u64,
    exit_status: i32,
    regexes: BTreeMap<String, Option<Regex>>,
    /// The program's patterns share one matching budget.
    budget: Budget,
    error: Option<String>,
    /// The input's records, and the next one to read (the main loop and
    /// `getline` read from the same place).
    input: Vec<String>,
    next_record: usize,
    /// Per item: whether its range pattern is on.
    ranges: Vec<bool>,
    _program: &'p [Item],
}

impl Machine<'_> {
    /// The next input record, counted in NR and FNR (the main loop and
    /// `getline` read from the same place); None at the end of the input.
    fn next_input(&mut self) -> Option<String> {
        let record = self.input.get(self.next_record).cloned()?;
        self.next_record += 1;
        let count = self.var("NR").num() + 1.0;
        self.vars.insert("NR".into(), Value::Num(count));
        self.vars.insert("FNR".into(), Value::Num(count));
        Some(record)
    }

    /// A range pattern on this record: on when `from` selects (and off at
    /// once if `to` selects the same record), off after the record `to` selects.
    fn in_range(&mut self, index: usize, from: &Expr, to: &Expr) -> Result<bool, ()> {
        if !self.ranges[index] {
            if !self.eval(from)?.truthy() {
                return Ok(false);
            }
            self.ranges[index] = true;
        }
        if self.eval(to)?.truthy() {
            self.ranges[index] = false;
        }
        Ok(true)
    }

    fn eval_text(&mut self, expr: &Expr) -> Result<String, ()> {
        let value = self.eval(expr)?;
        Ok(self.text(&value))
    }

    /// A value as a string: numbers that are not integral through CONVFMT.
    fn text(&self, value: &Value) -> String {
        self.formatted(value, "CONVFMT")
    }

    /// `format_var` (CONVFMT or OFMT) for a number that is not integral.
    fn formatted(&self, value: &Value, format_var: &str) -> String {
        match value {
            Value::Num(n) if n.is_finite() && *n != n.trunc() => match self.vars.get(format_var) {
                Some(format) => sprintf(&format.string(), &[Value::Num(*n)]),
                None => value.string(),
            },
            other => other.string(),
        }
    }

    fn var(&self, name: &str) -> Value {
        self.vars.get(name).cloned().unwrap_or(Value::StrNum(String::new()))
    }

    fn set_var(&mut self, name: &str, value: Value) {
        if name == "NF" {
            let count = value.num().max(0.0) as usize;
            self.fields.resize(count.min(100_000), String::new());
            self.rebuild_record();
        }
        self.vars.insert(name.to_string(), value);
    }

    fn split_record(&mut self) {
        let separator = self.var("FS").string();
        self.fields = self.split(&self.record.clone(), &separator);
        self.vars.insert("NF".into(), Value::Num(self.fields.len() as f64));
    }

    fn split(&mut self, text: &str, separator: &str) -> Vec<String> {
        if separator == " " {
            return text.split([' ', '\t', '\n']).filter(|f| !f.is_empty()).map(String::from).collect();
        }
        if text.is_empty() {
            return Vec::new();
        }
        let mut chars = separator.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if c != '\\' {
                return text.split(c).map(String::from).collect();
            }
        }
        let Some(regex) = self.regex(separator) else { return vec![text.to_string()] };
        let chars: Vec<char> = text.chars().collect();
        let mut fields = Vec::new();
        let mut start = 0;
        let mut at = 0;
        while let Some((s, e)) = regex.find_at(&chars, at) {
            if e == s {
                at = s + 1;
                if at > chars.len() {
                    break;
                }
                continue;
            }
            fields.push(chars[start..s].iter().collect());
            start = e;
            at = e;
        }
        fields.push(chars[start..].iter().collect());
        fields
    }

    fn rebuild_record(&mut self) {
        let separator = self.var("OFS").string();
        self.record = self.fields.join(&separator);
    }

    fn regex(&mut self, pattern: &str) -> Option<Regex> {
        if let Some(cached) = self.regexes.get(pattern) {
            return cached.clone();
        }
        let compiled = match Regex::new(pattern, Syntax::Extended, false) {
            Ok(regex) => Some(regex.sharing(&self.budget)),
            Err(error) => {
                self.error = Some(format!("awk: cmd. line:1: fatal: invalid regexp: {}: /{pattern}/\n", error.message));
                None
            }
        };
        self.regexes.insert(pattern.to_string(), compiled.clone());
        compiled
    }

    fn field(&self, index: f64) -> Value {
        let index = index.max(0.0) as usize;
        if index == 0 {
            return Value::StrNum(self.record.clone());
        }
        Value::StrNum(self.fields.get(index - 1).cloned().unwrap_or_default())
    }

    fn set_field(&mut self, index: f64, value: String) {
        let index = index.max(0.0) as usize;
        if index == 0 {
            self.record = value;
            self.split_record();
            return;
        }
        if index > 100_000 {
            return;
        }
        if self.fields.len() < index {
            self.fields.resize(index, String::new());
        }
        self.fields[index - 1] = value;
        self.vars.insert("NF".into(), Value::Num(self.fields.len() as f64));
        self.rebuild_record();
    }

    fn subscript(&mut self, subscripts: &[Expr]) -> Result<String, ()> {
        let mut parts = Vec::new();
        for expr in subscripts {
            parts.push(self.eval_text(expr)?);
        }
        Ok(parts.join("\x1c"))
    }

    fn array_get(&mut self, name: &str, key: &str) -> Value {
        let array = self.arrays.entry(name.to_string()).or_default();
        match array.get(key) {
            Some(value) => value.clone(),
            None => {
                // Referencing an element creates it, as in awk.
                array.set(key.to_string(), Value::StrNum(String::new()));
                Value::StrNum(String::new())
            }
        }
    }

    fn array_set(&mut self, name: &str, key: String, value: Value) {
        self.arrays.entry(name.to_string()).or_default().set(key, value);
    }

    fn store(&mut self, target: &Expr, value: Value) -> Result<(), ()> {
        match target {
            Expr::Var(name) => self.set_var(name, value),
            Expr::Field(index) => {
                let index = self.eval(index)?.num();
                self.set_field(index, self.text(&value));
            }
            Expr::Index(name, subscripts) => {
                let key = self.subscript(subscripts)?;
                self.array_set(name, key, value);
            }
            _ => {}
        }
        Ok(())
    }

    /// Bytes of strings built count as work, so that a loop growing a long
    /// string ends as surely as a loop of many steps.
    fn charge(&mut self, bytes: usize) -> Result<(), ()> {
        self.work = self.work.saturating_add(bytes as u64);
        if self.work > crate::limits::MAX_AWK_WORK_BYTES {
            self.error.get_or_insert_with(|| "awk: program stopped: too much work for a lab\n".into());
            return Err(());
        }
        Ok(())
    }

    /// Strings and output are bounded so a doubling loop cannot exhaust the page's memory.
    fn check_size(&mut self, size: usize) -> Result<(), ()> {
        if size > MAX_TEXT {
            self.error.get_or_insert_with(|| "awk: program stopped: output too large for a lab\n".into());
            return Err(());
        }
        Ok(())
    }

    fn tick(&mut self) -> Result<(), ()> {
        self.steps += 1;
        if self.steps > MAX_STEPS || self.budget.exhausted() {
            self.error.get_or_insert_with(|| "awk: program stopped: too many steps for a lab\n".into());
            return Err(());
        }
        Ok(())
    }

    fn matches(&mut self, text: &str, pattern: &str) -> Result<bool, ()> {
        let regex = self.regex(pattern).ok_or(())?;
        Ok(regex.is_match(&text.chars().collect::<Vec<_>>()))
    }

    fn eval(&mut self, expr: &Expr) -> Result<Value, ()> {
        self.tick()?;
        Ok(match expr {
            Expr::Num(n) => Value::Num(*n),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Regex(pattern) => {
                let record = self.record.clone();
                Value::Num(f64::from(u8::from(self.matches(&record, pattern)?)))
            }
            Expr::Var(name) => self.var(name),
            Expr::Field(index) => {
                let index = self.eval(index)?.num();
                self.field(index)
            }
            Expr::Index(name, subscripts) => {
                let key = self.subscript(subscripts)?;
                self.array_get(name, &key)
            }
            Expr::In(subscripts, name) => {
                let key = self.subscript(subscripts)?;
                let present = self.arrays.get(name).is_some_and(|array| array.get(&key).is_some());
                Value::Num(f64::from(u8::from(present)))
            }
            Expr::Assign(target, operator, value) => {
                let right = self.eval(value)?;
                let result = match operator {
                    None => match right {
                        Value::Num(n) => Value::Num(n),
                        other => other,
                    },
                    Some(op) => {
                        let left = self.eval(target)?.num();
                        Value::Num(arithmetic(op, left, right.num()))
                    }
                };
                self.store(target, result.clone())?;
                result
            }
            Expr::IncDec { target, delta, prefix } => {
                let old = self.eval(target)?.num();
                self.store(target, Value::Num(old + delta))?;
                Value::Num(if *prefix { old + delta } else { old })
            }
            Expr::Binary(op, left, right) => {
                let left = self.eval(left)?;
                let right = self.eval(right)?;
                match *op {
                    "<" | "<=" | ">" | ">=" | "==" | "!=" => {
                        let ordering = if left.is_numeric() && right.is_numeric() {
                            left.num().partial_cmp(&right.num())
                        } else {
                            Some(self.text(&left).cmp(&self.text(&right)))
                        };
                        let holds = match ordering {
                            None => *op == "!=",
                            Some(ordering) => match *op {
                                "<" => ordering.is_lt(),
                                "<=" => ordering.is_le(),
                                ">" => ordering.is_gt(),
                                ">=" => ordering.is_ge(),
                                "==" => ordering.is_eq(),
                                _ => ordering.is_ne(),
                            },
                        };
                        Value::Num(f64::from(u8::from(holds)))
                    }
                    op => {
                        if (op == "/" || op == "%") && right.num() == 0.0 {
                            self.error = Some(format!(
                                "awk: cmd. line:1: fatal: {} attempted\n",
                                if op == "/" { "division by zero" } else { "division by zero in `%'" }
                            ));
                            return Err(());
                        }
                        Value::Num(arithmetic(op, left.num(), right.num()))
                    }
                }
            }
            Expr::Match(negated, left, right) => {
                let text = self.eval_text(left)?;
                let pattern = match right.as_ref() {
                    Expr::Regex(pattern) => pattern.clone(),
                    other => self.eval_text(other)?,
                };
                Value::Num(f64::from(u8::from(self.matches(&text, &pattern)? != *negated)))
            }
            Expr::Not(inner) => Value::Num(f64::from(u8::from(!self.eval(inner)?.truthy()))),
            Expr::Neg(inner) => Value::Num(-self.eval(inner)?.num()),
            Expr::Plus(inner) => Value::Num(self.eval(inner)?.num()),
            Expr::And(left, right) => {
                let holds = self.eval(left)?.truthy() && self.eval(right)?.truthy();
                Value::Num(f64::from(u8::from(holds)))
            }
            Expr::Or(left, right) => {
                let holds = self.eval(left)?.truthy() || self.eval(right)?.truthy();
                Value::Num(f64::from(u8::from(holds)))
            }
            Expr::Cond(condition, then, otherwise) => {
                if self.eval(condition)?.truthy() {
                    self.eval(then)?
                } else {
                    self.eval(otherwise)?
                }
            }
            Expr::Concat(left, right) => {
                let mut text = self.eval_text(left)?;
                text.push_str(&self.eval_text(right)?);
                self.check_size(text.len())?;
                self.charge(text.len())?;
                Value::Str(text)
            }
            Expr::Call(name, args) => self.call(name, args)?,
            Expr::Getline(target) => match self.next_input() {
                None => Value::Num(0.0),
                Some(record) => {
                    match target {
                        Some(target) => self.store(target, Value::StrNum(record))?,
                        None => {
                            self.record = record;
                            self.split_record();
                        }
                    }
                    Value::Num(1.0)
                }
            },
        })
    }

    fn call(&mut self, name: &str, args: &[Expr]) -> Result<Value, ()> {
        let mut values = Vec::new();
        // sub, gsub and split write to their last argument; evaluate the rest.
        let evaluated = match name {
            "sub" | "gsub" => args.len().min(2),
            "split" => args.len().min(1),
            _ => args.len(),
        };
        for arg in &args[..evaluated] {
            values.push(self.eval(arg)?);
        }
        let text = |i: usize| values.get(i).map(|value| self.text(value)).unwrap_or_default();
        let number = |i: usize| values.get(i).map(Value::num).unwrap_or(0.0);
        Ok(match name {
            "length" => {
                if let Some(Expr::Var(array)) = args.first() {
                    if let Some(array) = self.arrays.get(array) {
                        return Ok(Value::Num(array.len() as f64));
                    }
                }
                let subject = if args.is_empty() { self.record.clone() } else { text(0) };
                Value::Num(subject.chars().count() as f64)
            }
            "substr" => {
                let chars: Vec<char> = text(0).chars().collect();
                // gawk truncates both numbers and counts from 1; a start
                // before 1 is taken as 1, its length kept (as BWK awk does).
                let from = number(1).trunc().max(1.0);
                let end = if values.len() > 2 { from + number(2).trunc() } else { f64::INFINITY };
                let to = end.min(chars.len() as f64 + 1.0);
                if to.is_nan() || to <= from || from.is_nan() || from > chars.len() as f64 {
                    Value::Str(String::new())
                } else {
                    Value::Str(chars[(from as usize - 1)..(to as usize - 1)].iter().collect())
                }
            }
            "index" => {
                let haystack = text(0);
                Value::Num(match haystack.find(&text(1)) {
                    Some(byte) => (haystack[..byte].chars().count() + 1) as f64,
                    None => 0.0,
                })
            }
            "tolower" => Value::Str(text(0).to_ascii_lowercase()),
            "toupper" => Value::Str(text(0).to_ascii_uppercase()),
            "int" => Value::Num(number(0).trunc()),
            "sqrt" => Value::Num(number(0).sqrt()),
            "exp" => Value::Num(number(0).exp()),
            "log" => Value::Num(number(0).ln()),
            "sin" => Value::Num(number(0).sin()),
            "cos" => Value::Num(number(0).cos()),
            "atan2" => Value::Num(number(0).atan2(number(1))),
            // Deterministic: a lab has no entropy.
            "rand" => Value::Num(0.237_788_4),
            "srand" => Value::Num(0.0),
            "system" | "close" => Value::Num(-1.0),
            "sprintf" => {
                let format = text(0);
                Value::Str(sprintf(&format, &values[values.len().min(1)..]))
            }
            "split" => {
                let subject = text(0);
                let separator = match args.get(2) {
                    Some(Expr::Regex(pattern)) => pattern.clone(),
                    Some(expr) => self.eval_text(expr)?,
                    None => self.var("FS").string(),
                };
                let pieces = self.split(&subject, &separator);
                let Some(Expr::Var(array)) = args.get(1) else { return Err(()) };
                let mut entries = Array::default();
                for (i, piece) in pieces.iter().enumerate() {
                    entries.set((i + 1).to_string(), Value::StrNum(piece.clone()));
                }
                self.arrays.insert(array.clone(), entries);
                Value::Num(pieces.len() as f64)
            }
            "sub" | "gsub" => {
                let pattern = match args.first() {
                    Some(Expr::Regex(pattern)) => pattern.clone(),
                    _ => text(0),
                };
                let replacement = text(1);
                let target = args.get(2).cloned().unwrap_or(Expr::Field(Box::new(Expr::Num(0.0))));
                let subject = self.eval_text(&target)?;
                let regex = self.regex(&pattern).ok_or(())?;
                let (result, count) = substitute(&regex, &subject, &replacement, name == "gsub");
                self.check_size(result.len())?;
                self.charge(result.len())?;
                if count > 0 {
                    self.store(&target, Value::Str(result))?;
                }
                Value::Num(count as f64)
            }
            "match" => {
                let subject: Vec<char> = text(0).chars().collect();
                let pattern = match args.get(1) {
                    Some(Expr::Regex(pattern)) => pattern.clone(),
                    _ => text(1),
                };
                let regex = self.regex(&pattern).ok_or(())?;
                let (start, length) = match regex.find_at(&subject, 0) {
                    Some((s, e)) => ((s + 1) as f64, (e - s) as f64),
                    None => (0.0, -1.0),
                };
                self.vars.insert("RSTART".into(), Value::Num(start));
                self.vars.insert("RLENGTH".into(), Value::Num(length));
                Value::Num(start)
            }
            _ => return Err(()),
        })
    }

    fn run_all(&mut self, statements: &[Stmt]) -> Result<Flow, ()> {
        for statement in statements {
            match self.exec(statement)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, statement: &Stmt) -> Result<Flow, ()> {
        self.tick()?;
        match statement {
            Stmt::Print(args) => {
                let line = if args.is_empty() {
                    self.record.clone()
                } else {
                    let separator = self.var("OFS").string();
                    let mut parts = Vec::new();
                    for arg in args {
                        let value = self.eval(arg)?;
                        parts.push(self.formatted(&value, "OFMT"));
                    }
                    parts.join(&separator)
                };
                self.out.push_str(&line);
                let terminator = self.var("ORS").string();
                self.out.push_str(&terminator);
                self.check_size(self.out.len())?;
            }
            Stmt::Printf(args) => {
                let mut values = Vec::new();
                for arg in args {
                    values.push(self.eval(arg)?);
                }
                let format = values.first().map(Value::string).unwrap_or_default();
                let text = sprintf(&format, &values[1..]);
                self.out.push_str(&text);
                self.check_size(self.out.len())?;
            }
            Stmt::Expr(expr) => {
                self.eval(expr)?;
            }
            Stmt::If(condition, then, otherwise) => {
                if self.eval(condition)?.truthy() {
                    return self.exec(then);
                } else if let Some(otherwise) = otherwise {
                    return self.exec(otherwise);
                }
            }
            Stmt::While(condition, body) => {
                while self.eval(condition)?.truthy() {
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Next => return Ok(Flow::Next),
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                }
            }
            Stmt::DoWhile(body, condition) => loop {
                match self.exec(body)? {
                    Flow::Break => break,
                    Flow::Next => return Ok(Flow::Next),
                    Flow::Exit => return Ok(Flow::Exit),
                    _ => {}
                }
                if !self.eval(condition)?.truthy() {
                    break;
                }
            },
            Stmt::For(init, condition, step, body) => {
                if let Some(init) = init {
                    self.exec(init)?;
                }
                loop {
                    if let Some(condition) = condition {
                        if !self.eval(condition)?.truthy() {
                            break;
                        }
                    }
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Next => return Ok(Flow::Next),
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                    if let Some(step) = step {
                        self.exec(step)?;
                    }
                }
            }
            Stmt::ForIn(key, array, body) => {
                let keys: Vec<String> = self.arrays.get(array).map(Array::keys).unwrap_or_default();
                for k in keys {
                    self.set_var(key, Value::StrNum(k));
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Next => return Ok(Flow::Next),
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                }
            }
            Stmt::Block(statements) => return self.run_all(statements),
            Stmt::Next => return Ok(Flow::Next),
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Exit(status) => {
                if let Some(status) = status {
                    self.exit_status = self.eval(status)?.num() as i32;
                }
                return Ok(Flow::Exit);
            }
            Stmt::Delete(name, subscripts) => match subscripts {
                None => {
                    self.arrays.remove(name);
                }
                Some(subscripts) => {
                    let key = self.subscript(subscripts)?;
                    if let Some(array) = self.arrays.get_mut(name) {
                        array.remove(&key);
                    }
                }
            },
        }
        Ok(Flow::Normal)
    }
}

fn arithmetic(op: &str, left: f64, right: f64) -> f64 {
    match op {
        "+" => left + right,
        "-" => left - right,
        "*" => left * right,
        "/" => left / right,
        "%" => left % right,
        "^" => left.powf(right),
        _ => 0.0,
    }
}

/// sub/gsub: `&` in the replacement is the matched text, `\&` a literal `&`.
fn substitute(regex: &Regex, subject: &str, replacement: &str, global: bool) -> (String, usize) {
    let chars: Vec<char> = subject.chars().collect();
    let mut out = String::new();
    let mut count = 0;
    let mut at = 0;
    let mut copied = 0;
    while at <= chars.len() {
        let Some((start, end)) = regex.find_at(&chars, at) else { break };
        out.extend(&chars[copied..start]);
        let matched: String = chars[start..end].iter().collect();
        let mut rest = replacement.chars().peekable();
        while let Some(c) = rest.next() {
            match c {
                '\\' if rest.peek() == Some(&'&') => {
                    out.push('&');
                    rest.next();
                }
                '&' => out.push_str(&matched),
                c => out.push(c),
            }
        }
        count += 1;
        if end == start {
            if let Some(&c) = chars.get(start) {
                out.push(c);
            }
            copied = start + 1;
            at = start + 1;
        } else {
            copied = end;
            at = end;
        }
        if !global {
            break;
        }
    }
    if copied <= chars.len() {
        out.extend(&chars[copied.min(chars.len())..]);
    }
    (out, count)
}

/// C printf for awk: `%c %d %i %o %x %X %u %e %E %f %g %G %s %%` with flags,
/// width and precision (`*` not supported).
fn sprintf(format: &str, args: &[Value]) -> String {
    let chars: Vec<char> = format.chars().collect();
    let mut out = String::new();
    let mut next_arg = 0;
    let mut at = 0;
    while at < chars.len() {
        if chars[at] != '%' {
            out.push(chars[at]);
            at += 1;
            continue;
        }
        let spec_start = at;
        at += 1;
        let mut flags = String::new();
        while let Some(&c) = chars.get(at) {
            if "-+ #0".contains(c) {
                flags.push(c);
                at += 1;
            } else {
                break;
            }
        }
        // `*` takes the width or precision from the next argument; a
        // negative width left-justifies, a negative precision is none.
        let mut width = String::new();
        if chars.get(at) == Some(&'*') {
            at += 1;
            let n = args.get(next_arg).map_or(0.0, Value::num).trunc().clamp(-1000.0, 1000.0) as i64;
            next_arg += 1;
            if n < 0 {
                flags.push('-');
            }
            width = n.unsigned_abs().to_string();
        }
        while chars.get(at).is_some_and(char::is_ascii_digit) {
            width.push(chars[at]);
            at += 1;
        }
        let mut precision: Option<usize> = None;
        if chars.get(at) == Some(&'.') {
            at += 1;
            if chars.get(at) == Some(&'*') {
                at += 1;
                let n = args.get(next_arg).map_or(0.0, Value::num).trunc();
                next_arg += 1;
                precision = (n >= 0.0).then(|| n.min(100.0) as usize);
            } else {
                let mut digits = String::new();
                while chars.get(at).is_some_and(char::is_ascii_digit) {
                    digits.push(chars[at]);
                    at += 1;
                }
                precision = Some(digits.parse().unwrap_or(0).min(100));
            }
        }
        let Some(&conversion) = chars.get(at) else {
            out.extend(&chars[spec_start..]);
            break;
        };
        at += 1;
        if conversion == '%' {
            out.push('%');
            continue;
        }
        let arg = args.get(next_arg).cloned().unwrap_or(Value::Str(String::new()));
        if "cdiouxXeEfFgGs".contains(conversion) {
            next_arg += 1;
        }
        let left = flags.contains('-');
        let zero = flags.contains('0') && !left;
        let plus = flags.contains('+');
        let space = flags.contains(' ');
        let sign = |n: f64, body: String| -> String {
            if n < 0.0 || body.starts_with('-') {
                body
            } else if plus {
                format!("+{body}")
            } else if space {
                format!(" {body}")
            } else {
                body
            }
        };
        let body = match conversion {
            's' => {
                let text = arg.string();
                match precision {
                    Some(p) => text.chars().take(p).collect(),
                    None => text,
                }
            }
            'c' => match &arg {
                Value::Num(n) => char::from_u32(*n as u32).map(String::from).unwrap_or_default(),
                other => other.string().chars().next().map(String::from).unwrap_or_default(),
            },
            'd' | 'i' | 'u' => {
                let n = arg.num();
                let int = if n.is_finite() { n.trunc() as i64 } else { 0 };
                let mut digits = int.unsigned_abs().to_string();
                if let Some(p) = precision {
                    while digits.len() < p {
                        digits.insert(0, '0');
                    }
                }
                sign(n, if int < 0 { format!("-{digits}") } else { digits })
            }
            'o' => format!("{:o}", arg.num().max(0.0) as u64),
            'x' => format!("{:x}", arg.num().max(0.0) as u64),
            'X' => format!("{:X}", arg.num().max(0.0) as u64),
            'f' | 'F' => {
                let n = arg.num();
                sign(n, format!("{:.*}", precision.unwrap_or(6), n))
            }
            'e' | 'E' => {
                let n = arg.num();
                let text = format!("{:.*e}", precision.unwrap_or(6), n);
                let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
                let exp: i32 = exp.parse().unwrap_or(0);
                let text = format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
                sign(n, if conversion == 'E' { text.to_ascii_uppercase() } else { text })
            }
            'g' | 'G' => {
                let n = arg.num();
                let text = format_g(n, precision.unwrap_or(6), flags.contains('#'));
                sign(n, if conversion == 'G' { text.to_ascii_uppercase() } else { text })
            }
            _ => {
                // Not a conversion: printed as written.
                out.extend(&chars[spec_start..at]);
                continue;
            }
        };
        let width: usize = width.parse().unwrap_or(0).min(1000);
        let length = body.chars().count();
        if length >= width {
            out.push_str(&body);
        } else if left {
            out.push_str(&body);
            out.extend(std::iter::repeat_n(' ', width - length));
        } else if zero && !matches!(conversion, 's' | 'c') {
            let (sign_part, digits) = match body.strip_prefix(['-', '+', ' ']) {
                Some(rest) => (&body[..1], rest),
                None => ("", body.as_str()),
            };
            out.push_str(sign_part);
            out.extend(std::iter::repeat_n('0', width - length));
            out.push_str(digits);
        } else {
            out.extend(std::iter::repeat_n(' ', width - length));
            out.push_str(&body);
        }
    }
    out
}

/// gawk's answer to a program it cannot parse.
fn syntax_error(program: &str) -> Output {
    let first_line = program.lines().next().unwrap_or("");
    let caret = " ".repeat(first_line.chars().count().saturating_sub(1));
    Output::error(format!("awk: cmd. line:1: {first_line}\nawk: cmd. line:1: {caret}^ syntax error\n"), 1)
}

/// A one-line program that ended before its syntax did (`BEGIN {`): gawk
/// points past its end.
fn unexpected_end(program: &str) -> Output {
    let caret = " ".repeat(program.chars().count());
    Output::error(format!("awk: cmd. line:1: {program}\nawk: cmd. line:1: {caret}^ unexpected newline or end of string\n"), 1)
}

/// Reads an escape-processed `-v`/operand assignment value, as awk does.
fn assignment_value(text: &str) -> String {
    let (value, _) = expand_backslashes(text, |escaped| match escaped {
        'n' => Escape::Char('\n'),
        't' => Escape::Char('\t'),
        '\\' => Escape::Char('\\'),
        _ => Escape::Unknown,
    });
    value
}

fn is_assignment(operand: &str) -> Option<(&str, &str)> {
    let (name, value) = operand.split_once('=')?;
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, value))
}

impl GnuTool for Awk {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &DIALECT;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let mut vars: BTreeMap<String, Value> = BTreeMap::new();
        for (name, value) in [("FS", " "), ("OFS", " "), ("ORS", "\n"), ("RS", "\n"), ("SUBSEP", "\x1c"), ("FILENAME", "")] {
            vars.insert(name.into(), Value::Str(value.into()));
        }
        vars.insert("NR".into(), Value::Num(0.0));
        vars.insert("NF".into(), Value::Num(0.0));
        vars.insert("FNR".into(), Value::Num(0.0));
        for option in &parsed.options {
            let Opt::Flag(flag, Some(value)) = option else { continue };
            match flag.short {
                Some('F') => {
                    // `-Ft` is a tab, as in POSIX awk.
                    let separator = if value == "t" { "\t".to_string() } else { assignment_value(value) };
                    vars.insert("FS".into(), Value::Str(separator));
                }
                _ => match is_assignment(value) {
                    Some((name, text)) => {
                        vars.insert(name.into(), Value::StrNum(assignment_value(text)));
                    }
                    None => return Output::error(format!("awk: `{value}' argument to `-v' not in `var=value' form\n\n{}", SIGNATURE.usage), 2),
                },
            }
        }
        let mut operands = parsed.operands.into_iter();
        let Some(source) = operands.next() else {
            return usage_error("awk", &DIALECT, "").with_stderr(format!("Usage: {}\n", SIGNATURE.usage));
        };
        let Ok(tokens) = tokenize(&source) else { return syntax_error(&source) };
        let mut parser = Parser { tokens, at: 0, depth: 0, too_deep: false };
        let Ok(program) = parser.program() else {
            if parser.too_deep {
                // gawk's parser gives up the same way on its stack's end.
                return Output::error(format!("awk: cmd. line:1: fatal: program nested too deeply (at most {} levels)\n", crate::limits::MAX_SYNTAX_DEPTH), 2);
            }
            if *parser.peek() == Tok::Eof && !source.contains('\n') {
                return unexpected_end(&source);
            }
            return syntax_error(&source);
        };

        let mut machine = Machine {
            vars,
            arrays: BTreeMap::new(),
            fields: Vec::new(),
            record: String::new(),
            out: String::new(),
            steps: 0,
            work: 0,
            exit_status: 0,
            regexes: BTreeMap::new(),
            budget: Budget::default(),
            error: None,
            input: Vec::new(),
            next_record: 0,
            ranges: vec![false; program.len()],
            _program: &program,
        };
        // Operands: assignments apply in order; files are read from the node
        // (their records run on as one input).
        let mut stderr = String::new();
        let mut read_stdin = true;
        let mut deferred_assignments = Vec::new();
        let mut input: Option<String> = None;
        for operand in operands {
            if let Some((name, value)) = is_assignment(&operand) {
                deferred_assignments.push((name.to_string(), value.to_string()));
            } else if operand == "-" {
                input.get_or_insert_with(String::new).push_str(invocation.stdin);
            } else {
                match super::read_file(invocation, &operand) {
                    Ok(text) => input.get_or_insert_with(String::new).push_str(&text),
                    Err(reason) => {
                        read_stdin = false;
                        stderr.push_str(&format!("awk: fatal: cannot open file `{operand}' for reading: {reason}\n"));
                        break;
                    }
                }
            }
        }
        if read_stdin {
            machine.input = super::lines(input.as_deref().unwrap_or(invocation.stdin)).into_iter().map(str::to_string).collect();
        }
        let finish = |machine: &Machine, stderr: String| Output {
            stdout: machine.out.clone(),
            stderr: stderr + machine.error.as_deref().unwrap_or(""),
            status: if machine.error.is_some() { 2 } else { machine.exit_status },
            duration_ms: 0,
            ..Output::default()
        };

        let mut exiting = false;
        for item in program.iter().filter(|item| matches!(item.pattern, Pattern::Begin)) {
            match machine.run_all(item.action.as_deref().unwrap_or(&[])) {
                Err(()) => return finish(&machine, stderr),
                Ok(Flow::Exit) => {
                    exiting = true;
                    break;
                }
                Ok(_) => {}
            }
        }
        if !stderr.is_empty() {
            return Output { status: 2, ..finish(&machine, stderr) };
        }
        for (name, value) in deferred_assignments {
            machine.set_var(&name, Value::StrNum(assignment_value(&value)));
        }
        let has_main = program.iter().any(|item| matches!(item.pattern, Pattern::All | Pattern::Expr(_) | Pattern::Range(..)));
        let has_end = program.iter().any(|item| matches!(item.pattern, Pattern::End));
        if !exiting && read_stdin && (has_main || has_end) {
            'records: while let Some(record) = machine.next_input() {
                machine.record = record;
                machine.split_record();
                for (index, item) in program.iter().enumerate() {
                    let selected = match &item.pattern {
                        Pattern::Begin | Pattern::End => continue,
                        Pattern::All => true,
                        Pattern::Expr(expr) => match machine.eval(expr) {
                            Ok(value) => value.truthy(),
                            Err(()) => return finish(&machine, stderr),
                        },
                        Pattern::Range(from, to) => match machine.in_range(index, from, to) {
                            Ok(selected) => selected,
                            Err(()) => return finish(&machine, stderr),
                        },
                    };
                    if !selected {
                        continue;
                    }
                    let flow = match &item.action {
                        None => machine.exec(&Stmt::Print(Vec::new())),
                        Some(statements) => machine.run_all(statements),
                    };
                    match flow {
                        Err(()) => return finish(&machine, stderr),
                        Ok(Flow::Next) => continue 'records,
                        Ok(Flow::Exit) => {
                            exiting = true;
                            break 'records;
                        }
                        Ok(_) => {}
                    }
                }
            }
        }
        let _ = exiting;
        // END runs after `exit` in the main loop too, as in awk.
        for item in program.iter().filter(|item| matches!(item.pattern, Pattern::End)) {
            match machine.run_all(item.action.as_deref().unwrap_or(&[])) {
                Err(()) => return finish(&machine, stderr),
                Ok(Flow::Exit) => break,
                Ok(_) => {}
            }
        }
        finish(&machine, stderr)
    }
}

trait WithStderr {
    fn with_stderr(self, stderr: String) -> Output;
}

impl WithStderr for Output {
    fn with_stderr(self, stderr: String) -> Output {
        Output { stderr, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::text::test_support::{echo_into, shown};
    use crate::testing::run_on_first_node;

    fn awk(input: &str, program: &str) -> String {
        shown(echo_into("awk", input, program))
    }

    #[test]
    fn one_liners() {
        assert_eq!(awk("a b c\\nd e f", "'{print $1}'"), "a\nd\n");
        assert_eq!(awk("a b c", "'{print $1, $NF}'"), "a c\n");
        assert_eq!(awk("a:b", "-F: '{print $2}'"), "b\n");
        assert_eq!(awk("x 1\\ny 200", "'$2 > 100 {print}'"), "y 200\n");
        assert_eq!(awk("x 1\\ny 200", "'NR==2'"), "y 200\n");
        assert_eq!(awk("x 1\\ny 200", "'/x/ {print $2}'"), "1\n");
        assert_eq!(awk("a b\\nc", "'{print NF}'"), "2\n1\n");
        assert_eq!(awk("a b", "'{print $1 \"-\" $2}'"), "a-b\n");
        assert_eq!(awk("1\\n2\\n3", "'{s += $1} END {print s, NR}'"), "6 3\n");
        assert_eq!(awk("a\\nb\\na", "'{c[$1]++} END {for (k in c) print k, c[k]}'"), "a 2\nb 1\n");
        assert_eq!(awk("3.14159", "'{printf \"%.2f|%5s|%-3d|\\n\", $1, \"ab\", 7}'"), "3.14|   ab|7  |\n");
        assert_eq!(awk("x", "'BEGIN {print 0.1+0.2, 1e6, 3/2, 100000*100000}'"), "0.3 1000000 1.5 10000000000\n");
        assert_eq!(awk("GPU 0: H100", "'{sub(/GPU /, \"g\"); print}'"), "g0: H100\n");
        assert_eq!(awk("a,b,,c", "-F, '{print NF, $3 == \"\"}'"), "4 1\n");
        assert_eq!(awk("10 9", "'{print ($1 > $2), (\"10\" > \"9\")}'"), "1 0\n");
    }

    #[test]
    fn errors_like_gawk() {
        assert_eq!(awk("x", "'{print $1'"), "awk: cmd. line:1: {print $1\nawk: cmd. line:1:          ^ unexpected newline or end of string\n");
        assert_eq!(run_on_first_node("echo | awk '{print'").status, 1, "gawk's status for a syntax error");
        assert_eq!(run_on_first_node("echo | awk 'BEGIN { while (1) x++ }'").status, 2);
        assert_eq!(run_on_first_node("echo | awk 'BEGIN { x = \"ab\"; while (1) x = x x }'").status, 2);
        assert!(awk("x", "1 nofile").contains("cannot open file `nofile'"));
    }

    #[test]
    fn formats_numbers_like_c() {
        assert_eq!(format_g(0.000012345, 6, false), "1.2345e-05");
        assert_eq!(format_g(123456789.0, 6, false), "1.23457e+08");
        assert_eq!(format_g(2.5, 6, false), "2.5");
        assert_eq!(sprintf("%05d|%x|%c|%%", &[Value::Num(42.0), Value::Num(255.0), Value::Str("hi".into())]), "00042|ff|h|%");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_programs_never_panic(pieces in proptest::collection::vec(proptest::sample::select(vec![
            "{", "}", "(", ")", "[", "]", "$", "1", "NF", "NR", "print", "printf", "\"%5.2f%s%d\"", ",", ";", "+", "-", "/", "%", "^",
            "==", ">", "<", "~", "/a/", "x", "a[x]", "++", "--", "=", "+=", "in", "for", "if", "else", "while", "next", "exit",
            "substr(", "split(", "gsub(", "length", "?", ":", "!", "&&", "||", "\"s\"", " ", "\n", "BEGIN", "END", "0",
        ]), 0..14)) {
            let program = pieces.concat();
            let quoted = program.replace('\'', "");
            let _ = run_on_first_node(&format!("echo -e 'a b 3\\nc d 4' | awk '{quoted}'"));
        }
    }
}
