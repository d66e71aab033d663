//! The interpreter: runs the parsed items over the input records, with
//! the variables, arrays, fields, the step budget and `sprintf`.

use super::*;

pub(super) enum Flow {
    Normal,
    Next,
    Exit,
    Break,
    Continue,
}

/// An awk array: found by key in O(log n), iterated in insertion order so
/// that `for (k in a)` is deterministic (awk leaves the order unspecified).
#[derive(Default)]
pub(super) struct Array {
    pub(super) slots: BTreeMap<String, usize>,
    /// In insertion order; None where an element was deleted.
    pub(super) entries: Vec<Option<(String, Value)>>,
}

impl Array {
    pub(super) fn get(&self, key: &str) -> Option<&Value> {
        self.slots.get(key).and_then(|at| self.entries[*at].as_ref()).map(|(_, value)| value)
    }

    pub(super) fn set(&mut self, key: String, value: Value) {
        match self.slots.get(&key) {
            Some(at) => self.entries[*at] = Some((key, value)),
            None => {
                self.slots.insert(key.clone(), self.entries.len());
                self.entries.push(Some((key, value)));
            }
        }
    }

    pub(super) fn remove(&mut self, key: &str) {
        if let Some(at) = self.slots.remove(key) {
            self.entries[at] = None;
        }
    }

    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(super) fn keys(&self) -> Vec<String> {
        self.entries.iter().flatten().map(|(key, _)| key.clone()).collect()
    }
}

pub(super) struct Machine<'p> {
    pub(super) vars: BTreeMap<String, Value>,
    pub(super) arrays: BTreeMap<String, Array>,
    pub(super) fields: Vec<String>,
    pub(super) record: String,
    pub(super) out: String,
    pub(super) steps: u64,
    /// Bytes of strings built so far (see `charge`).
    pub(super) work: u64,
    pub(super) exit_status: i32,
    pub(super) regexes: BTreeMap<String, Option<Regex>>,
    /// The program's patterns share one matching budget.
    pub(super) budget: Budget,
    pub(super) error: Option<String>,
    /// The input's records, and the next one to read (the main loop and
    /// `getline` read from the same place).
    pub(super) input: Vec<String>,
    pub(super) next_record: usize,
    /// Per item: whether its range pattern is on.
    pub(super) ranges: Vec<bool>,
    pub(super) _program: &'p [Item],
}

impl Machine<'_> {
    /// The next input record, counted in NR and FNR (the main loop and
    /// `getline` read from the same place); None at the end of the input.
    pub(super) fn next_input(&mut self) -> Option<String> {
        let record = self.input.get(self.next_record).cloned()?;
        self.next_record += 1;
        let count = self.var("NR").num() + 1.0;
        self.vars.insert("NR".into(), Value::Num(count));
        self.vars.insert("FNR".into(), Value::Num(count));
        Some(record)
    }

    /// A range pattern on this record: on when `from` selects (and off at
    /// once if `to` selects the same record), off after the record `to` selects.
    pub(super) fn in_range(&mut self, index: usize, from: &Expr, to: &Expr) -> Result<bool, ()> {
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

    pub(super) fn eval_text(&mut self, expr: &Expr) -> Result<String, ()> {
        let value = self.eval(expr)?;
        Ok(self.text(&value))
    }

    /// A value as a string: numbers that are not integral through CONVFMT.
    pub(super) fn text(&self, value: &Value) -> String {
        self.formatted(value, "CONVFMT")
    }

    /// `format_var` (CONVFMT or OFMT) for a number that is not integral.
    pub(super) fn formatted(&self, value: &Value, format_var: &str) -> String {
        match value {
            Value::Num(n) if n.is_finite() && *n != n.trunc() => match self.vars.get(format_var) {
                Some(format) => sprintf(&format.string(), &[Value::Num(*n)]),
                None => value.string(),
            },
            other => other.string(),
        }
    }

    pub(super) fn var(&self, name: &str) -> Value {
        self.vars.get(name).cloned().unwrap_or(Value::StrNum(String::new()))
    }

    pub(super) fn set_var(&mut self, name: &str, value: Value) {
        if name == "NF" {
            let count = value.num().max(0.0) as usize;
            self.fields.resize(count.min(100_000), String::new());
            self.rebuild_record();
        }
        self.vars.insert(name.to_string(), value);
    }

    pub(super) fn split_record(&mut self) {
        let separator = self.var("FS").string();
        self.fields = self.split(&self.record.clone(), &separator);
        self.vars.insert("NF".into(), Value::Num(self.fields.len() as f64));
    }

    pub(super) fn split(&mut self, text: &str, separator: &str) -> Vec<String> {
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

    pub(super) fn rebuild_record(&mut self) {
        let separator = self.var("OFS").string();
        self.record = self.fields.join(&separator);
    }

    pub(super) fn regex(&mut self, pattern: &str) -> Option<Regex> {
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

    pub(super) fn field(&self, index: f64) -> Value {
        let index = index.max(0.0) as usize;
        if index == 0 {
            return Value::StrNum(self.record.clone());
        }
        Value::StrNum(self.fields.get(index - 1).cloned().unwrap_or_default())
    }

    pub(super) fn set_field(&mut self, index: f64, value: String) {
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

    pub(super) fn subscript(&mut self, subscripts: &[Expr]) -> Result<String, ()> {
        let mut parts = Vec::new();
        for expr in subscripts {
            parts.push(self.eval_text(expr)?);
        }
        Ok(parts.join("\x1c"))
    }

    pub(super) fn array_get(&mut self, name: &str, key: &str) -> Value {
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

    pub(super) fn array_set(&mut self, name: &str, key: String, value: Value) {
        self.arrays.entry(name.to_string()).or_default().set(key, value);
    }

    pub(super) fn store(&mut self, target: &Expr, value: Value) -> Result<(), ()> {
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
    pub(super) fn charge(&mut self, bytes: usize) -> Result<(), ()> {
        self.work = self.work.saturating_add(bytes as u64);
        if self.work > crate::limits::MAX_AWK_WORK_BYTES {
            self.error.get_or_insert_with(|| "awk: program stopped: too much work for a lab\n".into());
            return Err(());
        }
        Ok(())
    }

    /// Strings and output are bounded so a doubling loop cannot exhaust the page's memory.
    pub(super) fn check_size(&mut self, size: usize) -> Result<(), ()> {
        if size > MAX_TEXT {
            self.error.get_or_insert_with(|| "awk: program stopped: output too large for a lab\n".into());
            return Err(());
        }
        Ok(())
    }

    pub(super) fn tick(&mut self) -> Result<(), ()> {
        self.steps += 1;
        if self.steps > MAX_STEPS || self.budget.exhausted() {
            self.error.get_or_insert_with(|| "awk: program stopped: too many steps for a lab\n".into());
            return Err(());
        }
        Ok(())
    }

    pub(super) fn matches(&mut self, text: &str, pattern: &str) -> Result<bool, ()> {
        let regex = self.regex(pattern).ok_or(())?;
        Ok(regex.is_match(&text.chars().collect::<Vec<_>>()))
    }

    pub(super) fn eval(&mut self, expr: &Expr) -> Result<Value, ()> {
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

    pub(super) fn call(&mut self, name: &str, args: &[Expr]) -> Result<Value, ()> {
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

    pub(super) fn run_all(&mut self, statements: &[Stmt]) -> Result<Flow, ()> {
        for statement in statements {
            match self.exec(statement)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    pub(super) fn exec(&mut self, statement: &Stmt) -> Result<Flow, ()> {
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

pub(super) fn arithmetic(op: &str, left: f64, right: f64) -> f64 {
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
pub(super) fn substitute(regex: &Regex, subject: &str, replacement: &str, global: bool) -> (String, usize) {
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
pub(super) fn sprintf(format: &str, args: &[Value]) -> String {
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
