//! awk's syntax tree and its parser: items (pattern, action), statements
//! and expressions with awk's precedence.

use super::*;

#[derive(Clone, Debug)]
pub(super) enum Expr {
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
pub(super) enum Stmt {
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

pub(super) enum Pattern {
    Begin,
    End,
    All,
    Expr(Expr),
    /// `from, to`: on from a record `from` selects through one `to` selects.
    Range(Expr, Expr),
}

pub(super) struct Item {
    pub(super) pattern: Pattern,
    pub(super) action: Option<Vec<Stmt>>,
}

pub(super) struct Parser {
    pub(super) tokens: Vec<Tok>,
    pub(super) at: usize,
    /// How deep the parse has recursed, bounded by MAX_SYNTAX_DEPTH.
    pub(super) depth: usize,
    /// Set when the program nests deeper than that.
    pub(super) too_deep: bool,
}

pub(super) type Parse<T> = Result<T, SyntaxError>;

impl Parser {
    /// Runs `parse` one level deeper, refusing programs nested past
    /// MAX_SYNTAX_DEPTH (parentheses, blocks, chains of unary operators).
    pub(super) fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Parse<T>) -> Parse<T> {
        if self.depth >= crate::limits::MAX_SYNTAX_DEPTH {
            self.too_deep = true;
            return Err(SyntaxError);
        }
        self.depth += 1;
        let parsed = parse(self);
        self.depth -= 1;
        parsed
    }

    pub(super) fn peek(&self) -> &Tok {
        self.tokens.get(self.at).unwrap_or(&Tok::Eof)
    }

    pub(super) fn next(&mut self) -> Tok {
        let token = self.peek().clone();
        self.at += 1;
        token
    }

    pub(super) fn is(&self, punct: &str) -> bool {
        matches!(self.peek(), Tok::Punct(p) if *p == punct)
    }

    pub(super) fn eat(&mut self, punct: &str) -> bool {
        if self.is(punct) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, punct: &str) -> Parse<()> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(SyntaxError)
        }
    }

    pub(super) fn skip_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline) || self.is(";") {
            self.at += 1;
        }
    }

    pub(super) fn skip_only_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline) {
            self.at += 1;
        }
    }

    pub(super) fn program(&mut self) -> Parse<Vec<Item>> {
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

    pub(super) fn block(&mut self) -> Parse<Vec<Stmt>> {
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
    pub(super) fn end_simple(&mut self) -> Parse<()> {
        if self.eat(";") || matches!(self.peek(), Tok::Newline) || self.is("}") || *self.peek() == Tok::Eof {
            if matches!(self.peek(), Tok::Newline) {
                self.at += 1;
            }
            Ok(())
        } else {
            Err(SyntaxError)
        }
    }

    pub(super) fn body(&mut self) -> Parse<Box<Stmt>> {
        self.skip_only_newlines();
        if self.eat(";") {
            return Ok(Box::new(Stmt::Block(Vec::new())));
        }
        Ok(Box::new(self.statement()?))
    }

    pub(super) fn simple_statement(&mut self) -> Parse<Stmt> {
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

    pub(super) fn statement(&mut self) -> Parse<Stmt> {
        self.nested(Self::statement_inner)
    }

    pub(super) fn statement_inner(&mut self) -> Parse<Stmt> {
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

    pub(super) fn expr_list(&mut self, close: &str) -> Parse<Vec<Expr>> {
        let mut list = vec![self.expr(false)?];
        while self.eat(",") {
            list.push(self.expr(false)?);
        }
        self.expect(close)?;
        Ok(list)
    }

    /// `no_gt`: inside `print`, an unparenthesized `>` is a redirection.
    pub(super) fn expr(&mut self, no_gt: bool) -> Parse<Expr> {
        self.nested(|parser| parser.expr_inner(no_gt))
    }

    pub(super) fn expr_inner(&mut self, no_gt: bool) -> Parse<Expr> {
        self.ternary(no_gt)
    }

    pub(super) fn ternary(&mut self, no_gt: bool) -> Parse<Expr> {
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

    pub(super) fn or(&mut self, no_gt: bool) -> Parse<Expr> {
        self.logical_chain("||", Expr::Or, Self::and, no_gt)
    }

    pub(super) fn and(&mut self, no_gt: bool) -> Parse<Expr> {
        self.logical_chain("&&", Expr::And, Self::in_expr, no_gt)
    }

    /// Operands joined left to right by `op` (`||` or `&&`), which may end a line.
    pub(super) fn logical_chain(
        &mut self,
        op: &str,
        join: fn(Box<Expr>, Box<Expr>) -> Expr,
        operand: fn(&mut Self, bool) -> Parse<Expr>,
        no_gt: bool,
    ) -> Parse<Expr> {
        let mut left = operand(self, no_gt)?;
        while self.eat(op) {
            self.skip_only_newlines();
            left = join(Box::new(left), Box::new(operand(self, no_gt)?));
        }
        Ok(left)
    }

    pub(super) fn in_expr(&mut self, no_gt: bool) -> Parse<Expr> {
        let mut left = self.matching(no_gt)?;
        while *self.peek() == Tok::Keyword("in") {
            self.at += 1;
            let Tok::Name(array) = self.next() else { return Err(SyntaxError) };
            left = Expr::In(vec![left], array);
        }
        Ok(left)
    }

    pub(super) fn matching(&mut self, no_gt: bool) -> Parse<Expr> {
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

    pub(super) fn comparison(&mut self, no_gt: bool) -> Parse<Expr> {
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

    pub(super) fn starts_operand(&self) -> bool {
        match self.peek() {
            Tok::Num(_) | Tok::Str(_) | Tok::Regex(_) | Tok::Name(_) | Tok::Func(_) => true,
            Tok::Punct(p) => matches!(*p, "$" | "(" | "!" | "-" | "+" | "++" | "--"),
            _ => false,
        }
    }

    pub(super) fn concatenation(&mut self, no_gt: bool) -> Parse<Expr> {
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
    pub(super) fn binary_chain(&mut self, ops: &[&'static str], operand: fn(&mut Self) -> Parse<Expr>) -> Parse<Expr> {
        let mut left = operand(self)?;
        while let Some(op) = ops.iter().copied().find(|op| self.is(op)) {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(operand(self)?));
        }
        Ok(left)
    }

    pub(super) fn additive(&mut self) -> Parse<Expr> {
        self.binary_chain(&["+", "-"], Self::multiplicative)
    }

    pub(super) fn multiplicative(&mut self) -> Parse<Expr> {
        self.binary_chain(&["*", "/", "%"], Self::unary)
    }

    pub(super) fn unary(&mut self) -> Parse<Expr> {
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

    pub(super) fn power(&mut self) -> Parse<Expr> {
        let base = self.postfix()?;
        if self.eat("^") {
            // Right associative.
            let exponent = self.nested(Self::unary)?;
            return Ok(Expr::Binary("^", Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    pub(super) fn postfix(&mut self) -> Parse<Expr> {
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

    pub(super) fn primary(&mut self) -> Parse<Expr> {
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
