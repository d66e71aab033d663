//! PromQL's grammar, as Prometheus parses it: binary operators by their
//! precedence (`^` binds tightest and to the right, then `* / % atan2`,
//! `+ -`, the comparisons, `and unless`, `or`), unary signs, aggregations
//! with `by`/`without` before or after their operand, function calls,
//! selectors with `offset` and `@`, ranges and subqueries. Types are
//! checked as the parser checks them, with its messages.

use super::lexer::{self, Token};
use super::Error;

/// How deep expressions may nest (parentheses, calls, operands).
const MAX_DEPTH: usize = 128;

/// The most binary operators one query may hold: each makes the tree one
/// level deeper for the evaluator, which recurses through it.
const MAX_OPERATORS: usize = 200;

#[derive(Clone, Debug, PartialEq)]
pub enum MatchOp {
    Equal,
    NotEqual,
    Regex,
    NotRegex,
}

#[derive(Clone, Debug)]
pub struct Matcher {
    pub name: String,
    pub op: MatchOp,
    pub value: String,
    /// The compiled pattern of `=~` and `!~`, anchored as Prometheus anchors it.
    pub pattern: Option<crate::commands::text::regex::Regex>,
    /// Each label value's answer, once worked out: a query meets the same
    /// few values in every scrape, and the pattern's budget is spent once.
    pub answers: std::cell::RefCell<std::collections::HashMap<String, bool>>,
}

impl Matcher {
    pub fn matches(&self, value: &str) -> bool {
        match self.op {
            MatchOp::Equal => value == self.value,
            MatchOp::NotEqual => value != self.value,
            MatchOp::Regex => self.full_match(value),
            MatchOp::NotRegex => !self.full_match(value),
        }
    }

    /// Prometheus anchors a label pattern at both ends.
    fn full_match(&self, value: &str) -> bool {
        if let Some(answer) = self.answers.borrow().get(value) {
            return *answer;
        }
        let chars: Vec<char> = value.chars().collect();
        let answer = self.pattern.as_ref().is_some_and(|pattern| pattern.ends_from(&chars, 0).contains(&chars.len()));
        self.answers.borrow_mut().insert(value.to_string(), answer);
        answer
    }
}

/// Where a selector's samples are read: shifted back by `offset`, or at
/// a fixed instant (`@`).
#[derive(Clone, Debug, Default)]
pub struct Shift {
    pub offset_ms: i64,
    pub at: Option<At>,
}

#[derive(Clone, Copy, Debug)]
pub enum At {
    Millis(i64),
    Start,
    End,
}

#[derive(Clone, Debug)]
pub struct Selector {
    pub matchers: Vec<Matcher>,
    pub shift: Shift,
}

impl Selector {
    /// The metric name an equality matcher fixes, if one does.
    pub fn name(&self) -> Option<&str> {
        self.matchers.iter().find(|m| m.name == "__name__" && m.op == MatchOp::Equal).map(|m| m.value.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Scalar,
    String,
    Vector,
    Matrix,
}

impl Type {
    pub fn name(self) -> &'static str {
        match self {
            Type::Scalar => "scalar",
            Type::String => "string",
            Type::Vector => "instant vector",
            Type::Matrix => "range vector",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Grouping {
    By(Vec<String>),
    Without(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cardinality {
    OneToOne,
    ManyToOne(Vec<String>),
    OneToMany(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Matching {
    /// `on(...)` (true) or `ignoring(...)` (false).
    pub on: bool,
    pub labels: Vec<String>,
    pub cardinality: Cardinality,
}

#[derive(Clone, Debug)]
pub enum Expr {
    Number(f64),
    String(String),
    Vector(Selector),
    Matrix(Selector, i64),
    Subquery { expr: Box<Expr>, range_ms: i64, step_ms: Option<i64>, shift: Shift },
    Call(&'static super::functions::Function, Vec<Expr>),
    Aggregate { op: String, grouping: Option<Grouping>, param: Option<Box<Expr>>, expr: Box<Expr> },
    Binary { op: &'static str, lhs: Box<Expr>, rhs: Box<Expr>, bool_modifier: bool, matching: Option<Matching> },
    Negate(Box<Expr>),
}

impl Expr {
    pub fn kind(&self) -> Type {
        match self {
            Expr::Number(_) => Type::Scalar,
            Expr::String(_) => Type::String,
            Expr::Vector(_) | Expr::Aggregate { .. } => Type::Vector,
            Expr::Matrix(..) | Expr::Subquery { .. } => Type::Matrix,
            Expr::Call(function, _) => function.returns,
            Expr::Binary { lhs, rhs, .. } => {
                if lhs.kind() == Type::Scalar && rhs.kind() == Type::Scalar {
                    Type::Scalar
                } else {
                    Type::Vector
                }
            }
            Expr::Negate(inner) => inner.kind(),
        }
    }
}

pub const AGGREGATIONS: &[&str] = &["avg", "bottomk", "count", "count_values", "group", "max", "min", "quantile", "stddev", "stdvar", "sum", "topk"];

pub fn is_aggregation(name: &str) -> bool {
    AGGREGATIONS.contains(&name.to_ascii_lowercase().as_str())
}

/// Binary operators by precedence, loosest first.
const LEVELS: &[&[&str]] = &[&["or"], &["and", "unless"], &["==", "!=", "<=", "<", ">=", ">"], &["+", "-"], &["*", "/", "%", "atan2"], &["^"]];

fn is_comparison(op: &str) -> bool {
    matches!(op, "==" | "!=" | "<=" | "<" | ">=" | ">")
}

pub fn is_set_operator(op: &str) -> bool {
    matches!(op, "and" | "or" | "unless")
}

struct Parser<'t> {
    text: &'t str,
    tokens: Vec<lexer::Spanned>,
    at: usize,
    depth: usize,
    operators: usize,
}

/// Parses a whole query.
pub fn parse(text: &str) -> Result<Expr, Error> {
    let tokens = lexer::tokens(text)?;
    if tokens.len() == 1 {
        return Err(Error::unknown_position("no expression found in input"));
    }
    let mut parser = Parser { text, tokens, at: 0, depth: 0, operators: 0 };
    let expr = parser.expression(0)?;
    if parser.peek() != &Token::End {
        return Err(parser.unexpected(""));
    }
    Ok(expr)
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)].0
    }

    fn offset(&self) -> usize {
        self.tokens[self.at.min(self.tokens.len() - 1)].1
    }

    fn next(&mut self) -> Token {
        let token = self.peek().clone();
        if self.at < self.tokens.len() - 1 {
            self.at += 1;
        }
        token
    }

    fn error(&self, offset: usize, message: String) -> Error {
        Error::at(self.text, offset, message)
    }

    /// "unexpected X" (and where it was expected, if given).
    fn unexpected(&self, context: &str) -> Error {
        let (token, start, end) = &self.tokens[self.at.min(self.tokens.len() - 1)];
        let mut message = format!("unexpected {}", token.describe(&self.text[*start..*end]));
        if !context.is_empty() {
            message += &format!(" {context}");
        }
        self.error(self.offset(), message)
    }

    fn is_symbol(&self, symbol: &str) -> bool {
        matches!(self.peek(), Token::Symbol(s) if *s == symbol)
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Token::Identifier(name) if name.eq_ignore_ascii_case(keyword))
    }

    fn expect_symbol(&mut self, symbol: &str, context: &str) -> Result<(), Error> {
        if self.is_symbol(symbol) {
            self.next();
            Ok(())
        } else {
            Err(self.unexpected(context))
        }
    }

    fn binary_operator(&self, level: usize) -> Option<&'static str> {
        let ops = LEVELS[level];
        match self.peek() {
            Token::Symbol(symbol) => ops.iter().find(|op| *op == symbol).copied(),
            Token::Identifier(name) => ops.iter().find(|op| name.eq_ignore_ascii_case(op)).copied(),
            _ => None,
        }
    }

    fn expression(&mut self, level: usize) -> Result<Expr, Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(self.offset(), "expression nested too deeply".into()));
        }
        let result = self.binary(level);
        self.depth -= 1;
        result
    }

    fn binary(&mut self, level: usize) -> Result<Expr, Error> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let lhs_offset = self.offset();
        let mut lhs = self.expression(level + 1)?;
        while let Some(op) = self.binary_operator(level) {
            let op_offset = self.offset();
            self.operators += 1;
            if self.operators > MAX_OPERATORS {
                return Err(self.error(op_offset, "expression nested too deeply".into()));
            }
            self.next();
            let bool_modifier = if self.is_keyword("bool") {
                self.next();
                true
            } else {
                false
            };
            let matching = self.matching()?;
            // `^` is right-associative: its right side may hold another `^`.
            let rhs_offset = self.offset();
            let rhs = if op == "^" { self.expression(level)? } else { self.expression(level + 1)? };
            lhs = self.check_binary(op, (lhs, lhs_offset), (rhs, rhs_offset), bool_modifier, matching, op_offset)?;
            if op == "^" {
                break;
            }
        }
        Ok(lhs)
    }

    fn matching(&mut self) -> Result<Option<Matching>, Error> {
        let on = if self.is_keyword("on") {
            true
        } else if self.is_keyword("ignoring") {
            false
        } else {
            return Ok(self.group_modifier(None)?.map(|cardinality| Matching { on: false, labels: Vec::new(), cardinality }));
        };
        self.next();
        let labels = self.label_list()?;
        let cardinality = self.group_modifier(Some(()))?.unwrap_or(Cardinality::OneToOne);
        Ok(Some(Matching { on, labels, cardinality }))
    }

    fn group_modifier(&mut self, after_on: Option<()>) -> Result<Option<Cardinality>, Error> {
        let left = if self.is_keyword("group_left") {
            true
        } else if self.is_keyword("group_right") {
            false
        } else {
            return Ok(None);
        };
        if after_on.is_none() {
            return Err(self.unexpected("in binary expression"));
        }
        self.next();
        let labels = if self.is_symbol("(") { self.label_list()? } else { Vec::new() };
        Ok(Some(if left { Cardinality::ManyToOne(labels) } else { Cardinality::OneToMany(labels) }))
    }

    fn label_list(&mut self) -> Result<Vec<String>, Error> {
        self.expect_symbol("(", "in grouping opts, expected \"(\"")?;
        let mut labels = Vec::new();
        loop {
            match self.next() {
                Token::Symbol(")") => return Ok(labels),
                Token::Identifier(name) => labels.push(name),
                _ => {
                    self.at -= 1;
                    return Err(self.unexpected("in grouping opts, expected label"));
                }
            }
            match self.next() {
                Token::Symbol(")") => return Ok(labels),
                Token::Symbol(",") => {}
                _ => {
                    self.at -= 1;
                    return Err(self.unexpected("in grouping opts, expected \")\" or \",\""));
                }
            }
        }
    }

    fn check_binary(
        &self,
        op: &'static str,
        (lhs, lhs_offset): (Expr, usize),
        (rhs, rhs_offset): (Expr, usize),
        bool_modifier: bool,
        matching: Option<Matching>,
        offset: usize,
    ) -> Result<Expr, Error> {
        let (left, right) = (lhs.kind(), rhs.kind());
        for (side, at) in [(left, lhs_offset), (right, rhs_offset)] {
            if side != Type::Scalar && side != Type::Vector {
                return Err(self.error(at, "binary expression must contain only scalar and instant vector types".into()));
            }
        }
        if bool_modifier && !is_comparison(op) {
            return Err(self.error(offset, "bool modifier can only be used on comparison operators".into()));
        }
        if is_comparison(op) && !bool_modifier && left == Type::Scalar && right == Type::Scalar {
            return Err(self.error(offset, "comparisons between scalars must use BOOL modifier".into()));
        }
        if is_set_operator(op) {
            if left == Type::Scalar || right == Type::Scalar {
                return Err(self.error(offset, format!("set operator \"{op}\" not allowed in binary scalar expression")));
            }
            if matching.as_ref().is_some_and(|m| m.cardinality != Cardinality::OneToOne) {
                return Err(self.error(offset, "no grouping allowed for \"and\", \"or\", \"unless\" operations".into()));
            }
        }
        if matching.is_some() && (left == Type::Scalar || right == Type::Scalar) {
            return Err(self.error(offset, "vector matching only allowed between instant vectors".into()));
        }
        Ok(Expr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs), bool_modifier, matching })
    }

    fn unary(&mut self) -> Result<Expr, Error> {
        if self.is_symbol("-") || self.is_symbol("+") {
            let negative = self.is_symbol("-");
            let offset = self.offset();
            self.next();
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(self.error(offset, "expression nested too deeply".into()));
            }
            let inner = self.unary_operand()?;
            self.depth -= 1;
            if !matches!(inner.kind(), Type::Scalar | Type::Vector) {
                return Err(
                    self.error(offset, format!("unary expression only allowed on expressions of type scalar or instant vector, got {:?}", inner.kind().name()))
                );
            }
            return Ok(match (negative, inner) {
                (true, Expr::Number(value)) => Expr::Number(-value),
                (true, inner) => Expr::Negate(Box::new(inner)),
                (false, inner) => inner,
            });
        }
        self.postfix()
    }

    /// A unary sign's operand: `-2^2` is `-(2^2)`.
    fn unary_operand(&mut self) -> Result<Expr, Error> {
        let base_offset = self.offset();
        let base = self.unary()?;
        if self.is_symbol("^") {
            let offset = self.offset();
            self.next();
            let rhs_offset = self.offset();
            let rhs = self.expression(LEVELS.len() - 1)?;
            return self.check_binary("^", (base, base_offset), (rhs, rhs_offset), false, None, offset);
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr, Error> {
        let mut expr = self.primary()?;
        loop {
            if self.is_symbol("[") {
                let offset = self.offset();
                self.next();
                let Token::Duration(range) = self.next() else {
                    self.at -= 1;
                    return Err(self.unexpected("in subquery or range selector, expected duration"));
                };
                if self.is_symbol(":") {
                    self.next();
                    let step = match self.peek() {
                        Token::Duration(step) => {
                            let step = *step;
                            self.next();
                            Some(step)
                        }
                        _ => None,
                    };
                    self.expect_symbol("]", "in subquery selector, expected \"]\"")?;
                    if !matches!(expr.kind(), Type::Vector) {
                        return Err(self.error(offset, format!("subquery is only allowed on instant vector, got {} instead", expr.kind().name())));
                    }
                    expr = Expr::Subquery { expr: Box::new(expr), range_ms: range, step_ms: step, shift: Shift::default() };
                    continue;
                }
                self.expect_symbol("]", "in range selector, expected \"]\"")?;
                match expr {
                    Expr::Vector(selector) if selector.shift.offset_ms == 0 && selector.shift.at.is_none() => expr = Expr::Matrix(selector, range),
                    _ => return Err(self.error(offset, "ranges only allowed for vector selectors".into())),
                }
                continue;
            }
            if self.is_keyword("offset") {
                let offset = self.offset();
                self.next();
                let negative = if self.is_symbol("-") {
                    self.next();
                    true
                } else {
                    false
                };
                let Token::Duration(duration) = self.next() else {
                    self.at -= 1;
                    return Err(self.unexpected("in offset, expected duration"));
                };
                let shift = self.shift_of(&mut expr, offset, "offset")?;
                if shift.offset_ms != 0 {
                    return Err(self.error(offset, "offset may not be set multiple times".into()));
                }
                shift.offset_ms = if negative { -duration } else { duration };
                continue;
            }
            if self.is_symbol("@") {
                let offset = self.offset();
                self.next();
                let at = match self.next() {
                    // Go's time.Time from float seconds: far beyond any sample, as a bound.
                    Token::Number(seconds) if seconds.is_finite() => At::Millis((seconds * 1000.0).round().clamp(-9e15, 9e15) as i64),
                    Token::Identifier(name) if (name == "start" || name == "end") && self.is_symbol("(") => {
                        self.next();
                        self.expect_symbol(")", "in @, expected \")\"")?;
                        if name == "start" {
                            At::Start
                        } else {
                            At::End
                        }
                    }
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("in @, expected timestamp"));
                    }
                };
                let shift = self.shift_of(&mut expr, offset, "@ modifier")?;
                if shift.at.is_some() {
                    return Err(self.error(offset, "@ <timestamp> may not be set multiple times".into()));
                }
                shift.at = Some(at);
                continue;
            }
            return Ok(expr);
        }
    }

    fn shift_of<'e>(&self, expr: &'e mut Expr, offset: usize, what: &str) -> Result<&'e mut Shift, Error> {
        match expr {
            Expr::Vector(selector) | Expr::Matrix(selector, _) => Ok(&mut selector.shift),
            Expr::Subquery { shift, .. } => Ok(shift),
            _ => Err(self.error(offset, format!("{what} modifier must be preceded by an instant vector selector or range vector selector or a subquery"))),
        }
    }

    fn primary(&mut self) -> Result<Expr, Error> {
        let offset = self.offset();
        match self.next() {
            Token::Number(value) => Ok(Expr::Number(value)),
            Token::String(text) => Ok(Expr::String(text)),
            Token::Symbol("(") => {
                let inner = self.expression(0)?;
                self.expect_symbol(")", "in paren expression")?;
                Ok(inner)
            }
            Token::Symbol("{") => {
                self.at -= 1;
                self.selector(None, offset)
            }
            Token::Identifier(name) => {
                if is_aggregation(&name) && (self.is_symbol("(") || self.is_keyword("by") || self.is_keyword("without")) {
                    return self.aggregation(name.to_ascii_lowercase(), offset);
                }
                if self.is_symbol("(") {
                    return self.call(&name, offset);
                }
                if is_keyword(&name) {
                    self.at -= 1;
                    return Err(self.unexpected(""));
                }
                self.selector(Some(name), offset)
            }
            Token::End => {
                self.at -= 1;
                Err(self.error(offset, "unexpected end of input".into()))
            }
            _ => {
                self.at -= 1;
                Err(self.unexpected(""))
            }
        }
    }

    fn selector(&mut self, name: Option<String>, offset: usize) -> Result<Expr, Error> {
        let mut matchers = Vec::new();
        if let Some(name) = &name {
            matchers.push(Matcher { name: "__name__".into(), op: MatchOp::Equal, value: name.clone(), pattern: None, answers: Default::default() });
        }
        if self.is_symbol("{") {
            self.next();
            loop {
                if self.is_symbol("}") {
                    self.next();
                    break;
                }
                let label_offset = self.offset();
                let label = match self.next() {
                    Token::Identifier(label) => label,
                    Token::String(label) => label,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("in label matching, expected label"));
                    }
                };
                let op = match self.next() {
                    Token::Symbol("=") => MatchOp::Equal,
                    Token::Symbol("!=") => MatchOp::NotEqual,
                    Token::Symbol("=~") => MatchOp::Regex,
                    Token::Symbol("!~") => MatchOp::NotRegex,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("in label matching, expected label matching operator"));
                    }
                };
                let value_offset = self.offset();
                let Token::String(value) = self.next() else {
                    self.at -= 1;
                    return Err(self.unexpected("in label matching, expected string"));
                };
                let pattern = match op {
                    MatchOp::Regex | MatchOp::NotRegex => Some(
                        crate::commands::text::regex::Regex::new_perlish(&value, false)
                            .map_err(|error| self.error(value_offset, format!("error parsing regexp: {}: `{value}`", error.message.to_lowercase())))?,
                    ),
                    _ => None,
                };
                if label == "__name__" && name.is_some() {
                    return Err(self.error(label_offset, format!("metric name must not be set twice: {:?} or {:?}", name.clone().unwrap_or_default(), value)));
                }
                matchers.push(Matcher { name: label, op, value, pattern, answers: Default::default() });
                match self.next() {
                    Token::Symbol(",") => {}
                    Token::Symbol("}") => break,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("in label matching, expected \",\" or \"}\""));
                    }
                }
            }
        }
        // A selector must match something only non-empty values can: `{a=""}` alone matches every series.
        if !matchers.iter().any(|m| !m.matches("")) {
            return Err(self.error(offset, "vector selector must contain at least one non-empty matcher".into()));
        }
        Ok(Expr::Vector(Selector { matchers, shift: Shift::default() }))
    }

    fn aggregation(&mut self, op: String, offset: usize) -> Result<Expr, Error> {
        let mut grouping = self.grouping()?;
        self.expect_symbol("(", "in aggregation, expected \"(\"")?;
        let first_offset = self.offset();
        let first = self.expression(0)?;
        let (param, expr, expr_offset) = if self.is_symbol(",") {
            self.next();
            let expr_offset = self.offset();
            let expr = self.expression(0)?;
            (Some(Box::new(first)), expr, expr_offset)
        } else {
            (None, first, first_offset)
        };
        self.expect_symbol(")", "in aggregation, expected \")\"")?;
        if grouping.is_none() {
            grouping = self.grouping()?;
        }
        let needs_param = matches!(op.as_str(), "topk" | "bottomk" | "quantile" | "count_values");
        match (&param, needs_param) {
            (None, true) => return Err(self.error(offset, "wrong number of arguments for aggregate expression provided, expected 2, got 1".into())),
            (Some(_), false) => return Err(self.error(offset, "wrong number of arguments for aggregate expression provided, expected 1, got 2".into())),
            _ => {}
        }
        if expr.kind() != Type::Vector {
            return Err(self.error(expr_offset, format!("expected type instant vector in aggregation expression, got {}", expr.kind().name())));
        }
        if let Some(param) = &param {
            let wanted = if op == "count_values" { Type::String } else { Type::Scalar };
            if param.kind() != wanted {
                return Err(self.error(first_offset, format!("expected type {} in aggregation parameter, got {}", wanted.name(), param.kind().name())));
            }
        }
        Ok(Expr::Aggregate { op, grouping, param, expr: Box::new(expr) })
    }

    fn grouping(&mut self) -> Result<Option<Grouping>, Error> {
        if self.is_keyword("by") {
            self.next();
            return Ok(Some(Grouping::By(self.label_list()?)));
        }
        if self.is_keyword("without") {
            self.next();
            return Ok(Some(Grouping::Without(self.label_list()?)));
        }
        Ok(None)
    }

    fn call(&mut self, name: &str, offset: usize) -> Result<Expr, Error> {
        let Some(function) = super::functions::find(name) else {
            return Err(self.error(offset, format!("unknown function with name \"{name}\"")));
        };
        self.next();
        let mut args = Vec::new();
        if !self.is_symbol(")") {
            loop {
                let arg_offset = self.offset();
                args.push((self.expression(0)?, arg_offset));
                if self.is_symbol(",") {
                    self.next();
                    if self.is_symbol(")") {
                        return Err(self.error(self.offset(), "trailing commas not allowed in function call args".into()));
                    }
                    continue;
                }
                break;
            }
        }
        self.expect_symbol(")", "in call, expected \",\" or \")\"")?;
        let (required, optional) = (function.args.len() - function.optional, function.optional);
        let count = args.len();
        let arity = if function.variadic || optional > 0 {
            if count < required {
                Some(format!("at least {required}"))
            } else if !function.variadic && count > required + optional {
                Some(format!("at most {}", required + optional))
            } else {
                None
            }
        } else {
            (count != required).then(|| required.to_string())
        };
        if let Some(arity) = arity {
            return Err(self.error(offset, format!("expected {arity} argument(s) in call to \"{}\", got {count}", function.name)));
        }
        for (index, (arg, arg_offset)) in args.iter().enumerate() {
            let wanted = function.args.get(index).copied().or(function.args.last().copied()).unwrap_or(Type::Scalar);
            if arg.kind() != wanted {
                return Err(
                    self.error(*arg_offset, format!("expected type {} in call to function \"{}\", got {}", wanted.name(), function.name, arg.kind().name()))
                );
            }
        }
        Ok(Expr::Call(function, args.into_iter().map(|(arg, _)| arg).collect()))
    }
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "by" | "without" | "on" | "ignoring" | "group_left" | "group_right" | "bool" | "offset" | "and" | "or" | "unless" | "atan2"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        parse(text).err().map(|e| e.to_string()).unwrap_or_else(|| "parsed".into())
    }

    #[test]
    fn precedence_and_associativity() {
        let Expr::Binary { op, rhs, .. } = parse("1 + 2 * 3").unwrap() else { panic!("a binary expression") };
        assert_eq!(op, "+");
        assert!(matches!(*rhs, Expr::Binary { op: "*", .. }));
        let Expr::Binary { op, rhs, .. } = parse("2 ^ 3 ^ 2").unwrap() else { panic!("a binary expression") };
        assert_eq!(op, "^");
        assert!(matches!(*rhs, Expr::Binary { op: "^", .. }));
        assert!(matches!(parse("-2 ^ 2").unwrap(), Expr::Negate(_)));
    }

    #[test]
    fn selectors_aggregations_and_calls() {
        assert!(matches!(parse("sum by (job) (rate(node_cpu_seconds_total{mode!=\"idle\"}[5m]))").unwrap(), Expr::Aggregate { .. }));
        assert!(matches!(parse("max(DCGM_FI_DEV_GPU_TEMP) without (gpu)").unwrap(), Expr::Aggregate { grouping: Some(Grouping::Without(_)), .. }));
        assert!(matches!(parse("up offset 5m").unwrap(), Expr::Vector(Selector { shift: Shift { offset_ms: 300_000, .. }, .. })));
        assert!(matches!(parse("max_over_time(up[1h:5m])").unwrap(), Expr::Call(..)));
        assert!(matches!(parse("a / on(instance) group_left(job) b").unwrap(), Expr::Binary { matching: Some(Matching { on: true, .. }), .. }));
    }

    #[test]
    fn errors_as_prometheus_words_them() {
        assert_eq!(error("rate(up)"), "1:6: parse error: expected type range vector in call to function \"rate\", got instant vector");
        assert_eq!(error("abs(up[5m])"), "1:5: parse error: expected type instant vector in call to function \"abs\", got range vector");
        assert_eq!(error("floor(1, 2)"), "1:1: parse error: expected 1 argument(s) in call to \"floor\", got 2");
        assert_eq!(error("1+"), "1:3: parse error: unexpected end of input");
        assert_eq!(error("up{a b}"), "1:6: parse error: unexpected identifier \"b\" in label matching, expected label matching operator");
        assert_eq!(error("foo(up)"), "1:1: parse error: unknown function with name \"foo\"");
        assert_eq!(error("{a=\"\"}"), "1:1: parse error: vector selector must contain at least one non-empty matcher");
        assert_eq!(error("1 > 2"), "1:3: parse error: comparisons between scalars must use BOOL modifier");
        assert_eq!(error("up[5m] + 1"), "1:1: parse error: binary expression must contain only scalar and instant vector types");
        assert_eq!(error("sum(up"), "1:7: parse error: unclosed left parenthesis");
        assert_eq!(error(""), "unknown position: parse error: no expression found in input");
    }

    #[test]
    fn long_chains_are_bounded() {
        let chain: Vec<String> = (0..5000).map(|n| n.to_string()).collect();
        assert!(error(&chain.join("+")).contains("nested too deeply"));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}up{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(error(&deep).contains("nested too deeply"));
        let signs = format!("{}1", "-".repeat(10_000));
        assert!(error(&signs).contains("nested too deeply"));
    }
}
