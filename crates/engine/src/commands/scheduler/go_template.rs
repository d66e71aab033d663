//! `kubectl -o go-template=...`: Go's text/template over the object as
//! kubectl hands it over (its JSON, decoded into maps, lists and numbers;
//! kubectl's objects hold integers, never floats).
//! The language operators use: `{{.a.b}}`, `{{$}}`, variables
//! (`{{$x := ...}}`, `range $i, $e := ...`), `range`/`if`/`with` with
//! `else` and `else if`, pipelines (`|`), parentheses, comments, `{{-`
//! and `-}}`; the functions `and or not len index printf print println
//! eq ne lt le gt ge`. A missing key prints `<no value>`, a map `map[k:v]`,
//! a list `[a b]`, as Go's fmt does. Errors are text/template's, under
//! kubectl's wording. Nesting and output are bounded.

use super::kubectl_print::Value;

/// How deep blocks and parentheses may nest, and how much a template may print.
const MAX_DEPTH: usize = 64;
const MAX_OUTPUT: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq)]
enum Arg {
    /// `.a.b` from the dot, or `$x.a.b` from a variable (`$` alone: the root).
    Field(Option<String>, Vec<String>),
    Text(String),
    Number(f64),
    Bool(bool),
    Nil,
    Name(String),
    /// `(pipeline)`, with the fields after it (`(index .items 0).status`).
    Pipe(Box<Pipeline>, Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
struct Pipeline {
    /// Variables it declares (`$i, $e :=`).
    declare: Vec<String>,
    commands: Vec<Vec<Arg>>,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Text(String),
    Print(Pipeline),
    If(Vec<(Pipeline, Vec<Node>)>, Vec<Node>),
    Range(Pipeline, Vec<Node>, Vec<Node>),
    With(Pipeline, Vec<Node>, Vec<Node>),
}

fn error(message: &str) -> String {
    format!("template: output:1: {message}")
}

/// The template's text and actions, with `{{-`/`-}}` trimming applied and
/// comments dropped.
fn lex(template: &str) -> Result<Vec<(bool, String)>, String> {
    let mut pieces: Vec<(bool, String)> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let mut text = rest[..open].to_string();
        let mut inner = &rest[open + 2..];
        if let Some(trimmed) = inner.strip_prefix("- ") {
            text = text.trim_end().to_string();
            inner = trimmed;
        }
        if !text.is_empty() {
            pieces.push((false, text));
        }
        let close = find_close(inner).ok_or_else(|| error("unclosed action"))?;
        let mut action = &inner[..close];
        let mut after = &inner[close + 2..];
        if let Some(trimmed) = action.strip_suffix(" -") {
            action = trimmed;
            after = after.trim_start();
        }
        let action = action.trim();
        if !(action.starts_with("/*") && action.ends_with("*/")) {
            pieces.push((true, action.to_string()));
        }
        rest = after;
    }
    if !rest.is_empty() {
        pieces.push((false, rest.to_string()));
    }
    Ok(pieces)
}

/// Where an action's `}}` is, outside its quoted strings.
fn find_close(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut quote: Option<u8> = None;
    while at + 1 < bytes.len() || (quote.is_none() && at < bytes.len()) {
        let byte = bytes[at];
        match quote {
            Some(q) if byte == b'\\' && q == b'"' => at += 1,
            Some(q) if byte == q => quote = None,
            Some(_) => {}
            None if byte == b'"' || byte == b'`' => quote = Some(byte),
            None if bytes[at..].starts_with(b"}}") => return Some(at),
            None => {}
        }
        at += 1;
    }
    None
}

fn tokens(action: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = action.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c.is_whitespace() {
            at += 1;
        } else if c == '"' || c == '`' {
            let mut end = at + 1;
            while end < chars.len() && chars[end] != c {
                end += if c == '"' && chars[end] == '\\' { 2 } else { 1 };
            }
            if end >= chars.len() {
                return Err(error("unterminated quoted string"));
            }
            out.push(chars[at..=end].iter().collect());
            at = end + 1;
        } else if c == ')' && chars.get(at + 1) == Some(&'.') {
            // A field chain right after a parenthesis belongs to it.
            let start = at;
            at += 1;
            while at < chars.len() && !chars[at].is_whitespace() && !"()|,".contains(chars[at]) {
                at += 1;
            }
            out.push(chars[start..at].iter().collect());
        } else if "()|,".contains(c) {
            out.push(c.to_string());
            at += 1;
        } else if c == ':' && chars.get(at + 1) == Some(&'=') {
            out.push(":=".into());
            at += 2;
        } else if c == '=' {
            out.push("=".into());
            at += 1;
        } else {
            let start = at;
            let ends_word = |at: usize| chars[at].is_whitespace() || "()|,".contains(chars[at]) || (chars[at] == ':' && chars.get(at + 1) == Some(&'='));
            while at < chars.len() && !ends_word(at) {
                at += 1;
            }
            out.push(chars[start..at].iter().collect());
        }
    }
    Ok(out)
}

fn unquote(token: &str) -> String {
    if let Some(raw) = token.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
        return raw.to_string();
    }
    let inner = &token[1..token.len() - 1];
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn field_path(text: &str) -> Vec<String> {
    text.split('.').filter(|part| !part.is_empty()).map(str::to_string).collect()
}

fn parse_pipeline(tokens: &[String], depth: usize) -> Result<Pipeline, String> {
    if depth > MAX_DEPTH {
        return Err(error("expression nests too deeply"));
    }
    let mut tokens = tokens;
    let mut declare = Vec::new();
    if let Some(at) = tokens.iter().position(|t| t == ":=" || t == "=") {
        declare = tokens[..at].iter().filter(|t| *t != ",").cloned().collect();
        if declare.is_empty() || declare.iter().any(|name| !name.starts_with('$')) {
            return Err(error("unexpected \":=\" in command"));
        }
        tokens = &tokens[at + 1..];
    }
    let mut commands = vec![Vec::new()];
    let mut at = 0;
    while at < tokens.len() {
        let token = &tokens[at];
        let arg = match token.as_str() {
            "|" => {
                if commands.last().is_some_and(Vec::is_empty) {
                    return Err(error("missing command"));
                }
                commands.push(Vec::new());
                at += 1;
                continue;
            }
            "(" => {
                let mut level = 0;
                let mut end = at;
                for (offset, t) in tokens[at..].iter().enumerate() {
                    match t.as_str() {
                        "(" => level += 1,
                        t if t.starts_with(')') => {
                            level -= 1;
                            if level == 0 {
                                end = at + offset;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if end == at {
                    return Err(error("unclosed left paren"));
                }
                let inner = parse_pipeline(&tokens[at + 1..end], depth + 1)?;
                let chain = field_path(&tokens[end][1..]);
                at = end;
                Arg::Pipe(Box::new(inner), chain)
            }
            t if t.starts_with(')') => return Err(error("unexpected right paren")),
            "true" => Arg::Bool(true),
            "false" => Arg::Bool(false),
            "nil" => Arg::Nil,
            t if t.starts_with('"') || t.starts_with('`') => Arg::Text(unquote(t)),
            "." => Arg::Field(None, Vec::new()),
            t if t.starts_with('.') => Arg::Field(None, field_path(t)),
            t if t.starts_with('$') => {
                let (name, path) = t.split_once('.').map_or((t, ""), |(name, path)| (name, path));
                Arg::Field(Some(name.to_string()), field_path(path))
            }
            t if t.parse::<f64>().is_ok() => Arg::Number(t.parse().unwrap_or(0.0)),
            t if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => Arg::Name(t.to_string()),
            t => return Err(error(&format!("unexpected {t:?} in command"))),
        };
        if let Some(command) = commands.last_mut() {
            command.push(arg);
        }
        at += 1;
    }
    if commands.iter().any(Vec::is_empty) {
        return Err(error("missing value for command"));
    }
    Ok(Pipeline { declare, commands })
}

/// Parses actions into nodes up to a closing `end`/`else` (returned).
fn parse_nodes(pieces: &[(bool, String)], at: &mut usize, depth: usize) -> Result<(Vec<Node>, Option<String>), String> {
    if depth > MAX_DEPTH {
        return Err(error("blocks nest too deeply"));
    }
    let mut nodes = Vec::new();
    while *at < pieces.len() {
        let (action, text) = &pieces[*at];
        *at += 1;
        if !action {
            nodes.push(Node::Text(text.clone()));
            continue;
        }
        let words = tokens(text)?;
        let keyword = words.first().map(String::as_str).unwrap_or("");
        match keyword {
            "" => return Err(error("missing value for command")),
            "end" => return Ok((nodes, Some("end".into()))),
            "else" => return Ok((nodes, Some(text.clone()))),
            "if" | "range" | "with" => {
                let pipe = parse_pipeline(&words[1..], depth)?;
                let (body, closing) = parse_nodes(pieces, at, depth + 1)?;
                let mut branches = vec![(pipe, body)];
                let mut otherwise = Vec::new();
                let mut closing = closing;
                loop {
                    match closing.as_deref() {
                        Some("end") => break,
                        Some(other) if other.starts_with("else") => {
                            let rest = tokens(other)?;
                            if keyword == "if" && rest.get(1).map(String::as_str) == Some("if") {
                                let pipe = parse_pipeline(&rest[2..], depth)?;
                                let (body, next) = parse_nodes(pieces, at, depth + 1)?;
                                branches.push((pipe, body));
                                closing = next;
                            } else {
                                let (body, next) = parse_nodes(pieces, at, depth + 1)?;
                                otherwise = body;
                                if next.as_deref() != Some("end") {
                                    return Err(error("unexpected EOF"));
                                }
                                break;
                            }
                        }
                        _ => return Err(error("unexpected EOF")),
                    }
                }
                let (pipe, body) = branches.remove(0);
                nodes.push(match keyword {
                    "if" => Node::If(std::iter::once((pipe, body)).chain(branches).collect(), otherwise),
                    "range" => Node::Range(pipe, body, otherwise),
                    _ => Node::With(pipe, body, otherwise),
                });
            }
            "define" | "template" | "block" => return Err(error(&format!("{keyword} is not emulated; try range, if and with"))),
            _ => nodes.push(Node::Print(parse_pipeline(&words, depth)?)),
        }
    }
    Ok((nodes, None))
}

fn parse(template: &str) -> Result<Vec<Node>, String> {
    let pieces = lex(template)?;
    let mut at = 0;
    match parse_nodes(&pieces, &mut at, 0)? {
        (nodes, None) => Ok(nodes),
        (_, Some(closing)) => Err(error(&format!("unexpected {{{{{}}}}}", closing.split_whitespace().next().unwrap_or("end")))),
    }
}

/// Go's truth: false, 0, nil and empty values are false.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => *n != 0,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A value as Go's fmt prints it with %v.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "<no value>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(shown_inner).collect::<Vec<_>>().join(" ")),
        // Its keys are sorted, as fmt sorts a map's.
        Value::Object(fields) => format!("map[{}]", fields.iter().map(|(k, v)| format!("{k}:{}", shown_inner(v))).collect::<Vec<_>>().join(" ")),
    }
}

/// Inside a map or list, nil is `<nil>`.
fn shown_inner(value: &Value) -> String {
    if *value == Value::Null {
        "<nil>".into()
    } else {
        shown(value)
    }
}

/// `value`'s field at `path` (`.a.b`): nothing on a map without it, an
/// error on nil, as text/template says.
fn walk(mut value: Value, path: &[String]) -> Result<Value, String> {
    for key in path {
        value = match value {
            Value::Object(fields) => fields.into_iter().find(|(k, _)| k == key).map_or(Value::Null, |(_, v)| v),
            Value::Null => return Err(format!("{}: nil pointer evaluating interface {{}}.{key}", error("executing \"output\""))),
            _ => return Err(format!("{}: can't evaluate field {key}", error("executing \"output\""))),
        };
    }
    Ok(value)
}

struct Scope<'a> {
    root: &'a Value,
    variables: Vec<(String, Value)>,
    out: String,
}

impl Scope<'_> {
    fn variable(&self, name: &str) -> Result<Value, String> {
        if name == "$" {
            return Ok(self.root.clone());
        }
        self.variables.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.clone()).ok_or_else(|| error(&format!("undefined variable: {name}")))
    }

    fn arg(&mut self, arg: &Arg, dot: &Value) -> Result<Value, String> {
        Ok(match arg {
            Arg::Field(Some(name), path) => walk(self.variable(name)?, path)?,
            Arg::Field(None, path) => walk(dot.clone(), path)?,
            Arg::Pipe(pipe, path) => {
                let start = self.pipeline(pipe, dot)?;
                walk(start, path)?
            }
            Arg::Text(text) => Value::from(text.clone()),
            // kubectl's objects hold integers: a literal is one too.
            Arg::Number(n) => Value::Number(n.clamp(-9e18, 9e18) as i64),
            Arg::Bool(b) => Value::from(*b),
            Arg::Nil => Value::Null,
            Arg::Name(name) => self.call(name, Vec::new())?,
        })
    }

    fn pipeline(&mut self, pipe: &Pipeline, dot: &Value) -> Result<Value, String> {
        let mut last: Option<Value> = None;
        for command in &pipe.commands {
            let value = match &command[0] {
                Arg::Name(name) => {
                    let mut args = Vec::new();
                    for arg in &command[1..] {
                        args.push(self.arg(arg, dot)?);
                    }
                    args.extend(last.take());
                    self.call(name, args)?
                }
                first => {
                    if command.len() > 1 || last.is_some() {
                        return Err(error("can't give argument to non-function"));
                    }
                    self.arg(first, dot)?
                }
            };
            last = Some(value);
        }
        let value = last.unwrap_or(Value::Null);
        for name in &pipe.declare {
            self.variables.push((name.clone(), value.clone()));
        }
        Ok(value)
    }

    fn call(&mut self, name: &str, args: Vec<Value>) -> Result<Value, String> {
        let compare = |a: &Value, b: &Value| -> Option<std::cmp::Ordering> {
            match (a, b) {
                (Value::Number(x), Value::Number(y)) => Some(x.cmp(y)),
                (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
                (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
                _ => None,
            }
        };
        let two = |args: &[Value]| -> Result<(Value, Value), String> {
            match args {
                [a, b] => Ok((a.clone(), b.clone())),
                _ => Err(error(&format!("wrong number of args for {name}: want 2 got {}", args.len()))),
            }
        };
        let ordered = |want: &[std::cmp::Ordering]| -> Result<Value, String> {
            let (a, b) = two(&args)?;
            let order = compare(&a, &b).ok_or_else(|| error(&format!("error calling {name}: incompatible types for comparison")))?;
            Ok(Value::from(want.contains(&order)))
        };
        use std::cmp::Ordering::{Equal, Greater, Less};
        Ok(match name {
            "and" => args.iter().find(|v| !truthy(v)).or(args.last()).cloned().unwrap_or(Value::Null),
            "or" => args.iter().find(|v| truthy(v)).or(args.last()).cloned().unwrap_or(Value::Null),
            "not" => Value::from(!args.first().is_some_and(truthy)),
            "len" => match args.first() {
                Some(Value::String(s)) => Value::from(s.len() as u64),
                Some(Value::Array(a)) => Value::from(a.len() as u64),
                Some(Value::Object(o)) => Value::from(o.len() as u64),
                _ => return Err(error("error calling len: len of nil pointer")),
            },
            "index" => {
                let mut iter = args.into_iter();
                let mut value = iter.next().unwrap_or(Value::Null);
                for key in iter {
                    value = match (value, key) {
                        (Value::Object(fields), Value::String(k)) => fields.into_iter().find(|(key, _)| *key == k).map_or(Value::Null, |(_, v)| v),
                        (Value::Array(items), Value::Number(n)) => {
                            let at = usize::try_from(n).unwrap_or(usize::MAX);
                            items.get(at).cloned().ok_or_else(|| error(&format!("error calling index: index out of range: {at}")))?
                        }
                        (Value::Null, _) => Value::Null,
                        _ => return Err(error("error calling index: cannot index with that key")),
                    };
                }
                value
            }
            "eq" => {
                let first = args.first().cloned().unwrap_or(Value::Null);
                if args.len() < 2 {
                    return Err(error("error calling eq: missing argument for comparison"));
                }
                Value::from(args[1..].iter().any(|other| compare(&first, other) == Some(Equal) || (first == Value::Null && *other == Value::Null)))
            }
            "ne" => {
                let (a, b) = two(&args)?;
                Value::from(compare(&a, &b) != Some(Equal))
            }
            "lt" => ordered(&[Less])?,
            "le" => ordered(&[Less, Equal])?,
            "gt" => ordered(&[Greater])?,
            "ge" => ordered(&[Greater, Equal])?,
            "print" | "println" => {
                // Sprint puts a space between operands when neither is a string.
                let mut text = String::new();
                for (at, value) in args.iter().enumerate() {
                    let is_string = |value: &Value| matches!(value, Value::String(_));
                    if at > 0 && (name == "println" || !(is_string(value) || is_string(&args[at - 1]))) {
                        text.push(' ');
                    }
                    text += &shown(value);
                }
                if name == "println" {
                    text.push('\n');
                }
                Value::from(text)
            }
            "printf" => {
                let mut iter = args.into_iter();
                let format = iter.next().map(|v| shown(&v)).unwrap_or_default();
                Value::from(printf(&format, &iter.collect::<Vec<_>>()))
            }
            _ => return Err(error(&format!("function {name:?} not defined"))),
        })
    }

    fn run(&mut self, nodes: &[Node], dot: &Value, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(error("blocks nest too deeply"));
        }
        for node in nodes {
            if self.out.len() > MAX_OUTPUT {
                return Err(error("output is over the emulator's limit (1 MiB)"));
            }
            let kept = self.variables.len();
            match node {
                Node::Text(text) => self.out += text,
                Node::Print(pipe) => {
                    let value = self.pipeline(pipe, dot)?;
                    if pipe.declare.is_empty() {
                        self.out += &shown(&value);
                    }
                    // A declaration lives to the end of its block.
                    continue;
                }
                Node::If(branches, otherwise) => {
                    let mut done = false;
                    for (pipe, body) in branches {
                        if truthy(&self.pipeline(pipe, dot)?) {
                            self.run(body, dot, depth + 1)?;
                            done = true;
                            break;
                        }
                    }
                    if !done {
                        self.run(otherwise, dot, depth + 1)?;
                    }
                }
                Node::With(pipe, body, otherwise) => {
                    let value = self.pipeline(pipe, dot)?;
                    if truthy(&value) {
                        self.run(body, &value, depth + 1)?;
                    } else {
                        self.run(otherwise, dot, depth + 1)?;
                    }
                }
                Node::Range(pipe, body, otherwise) => {
                    let declared = Pipeline { declare: Vec::new(), commands: pipe.commands.clone() };
                    let value = self.pipeline(&declared, dot)?;
                    let items: Vec<(Value, Value)> = match value {
                        Value::Array(items) => items.into_iter().enumerate().map(|(i, v)| (Value::from(i as u64), v)).collect(),
                        Value::Object(fields) => fields.into_iter().map(|(k, v)| (Value::from(k), v)).collect(),
                        Value::Null => Vec::new(),
                        // kubectl 1.29 is built with Go 1.21, whose range takes no integer.
                        other => return Err(format!("{}: range can't iterate over {}", error("executing \"output\""), shown(&other))),
                    };
                    if items.is_empty() {
                        self.run(otherwise, dot, depth + 1)?;
                    }
                    for (key, item) in items {
                        let scope = self.variables.len();
                        match pipe.declare.as_slice() {
                            [element] => self.variables.push((element.clone(), item.clone())),
                            [index, element] => {
                                self.variables.push((index.clone(), key));
                                self.variables.push((element.clone(), item.clone()));
                            }
                            _ => {}
                        }
                        self.run(body, &item, depth + 1)?;
                        self.variables.truncate(scope);
                    }
                }
            }
            self.variables.truncate(kept);
        }
        Ok(())
    }
}

/// Go's Sprintf for the verbs templates use: %s %v %d %q %f (with a
/// precision), %x, %%, with a width and `-`.
fn printf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut left = false;
        let mut width = String::new();
        let mut precision: Option<String> = None;
        // The precision is read, as Go reads it; %f alone would use it.
        while let Some(&next) = chars.peek() {
            match next {
                '-' => left = true,
                '0'..='9' if precision.is_none() => width.push(next),
                '.' => precision = Some(String::new()),
                '0'..='9' => precision.get_or_insert_with(String::new).push(next),
                _ => break,
            }
            chars.next();
        }
        let Some(verb) = chars.next() else {
            out += "%!(NOVERB)";
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(value) = args.next() else {
            out += &format!("%!{verb}(MISSING)");
            continue;
        };
        let number = match value {
            Value::Number(n) => Some(*n),
            _ => None,
        };
        let text = match verb {
            's' | 'v' => shown(value),
            'q' => format!("{:?}", shown(value)),
            'd' => match number {
                Some(i) => i.to_string(),
                None => format!("%!d({})", shown(value)),
            },
            // An integer under %f is Go's %!f(int=8).
            'f' => format!("%!f(int={})", shown(value)),
            'x' => match number {
                Some(i) => format!("{i:x}"),
                None => shown(value).bytes().map(|b| format!("{b:02x}")).collect(),
            },
            other => format!("%!{other}({})", shown(value)),
        };
        let width: usize = width.parse().unwrap_or(0).min(1024);
        let pad = width.saturating_sub(text.chars().count());
        if left {
            out += &text;
            out += &" ".repeat(pad);
        } else {
            out += &" ".repeat(pad);
            out += &text;
        }
    }
    for extra in args {
        out += &format!("%!(EXTRA {})", shown(extra));
    }
    out
}

/// `template` applied to `root`, or text/template's error.
pub fn execute(template: &str, root: &Value) -> Result<String, (bool, String)> {
    let nodes = parse(template).map_err(|reason| (true, reason))?;
    let mut scope = Scope { root, variables: Vec::new(), out: String::new() };
    scope.run(&nodes, root, 0).map_err(|reason| (false, reason))?;
    Ok(scope.out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// kubectl's value from serde_json's, for writing objects in tests.
    fn value(json: serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(n.as_i64().unwrap_or(0)),
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(items) => Value::Array(items.into_iter().map(value).collect()),
            serde_json::Value::Object(map) => {
                let mut fields: Vec<(String, Value)> = map.into_iter().map(|(k, v)| (k, value(v))).collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(fields)
            }
        }
    }

    fn run(template: &str) -> String {
        let root = value(json!({
            "items": [
                {"metadata": {"name": "gpu-001", "labels": {"nvidia.com/gpu.present": "true"}}, "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "224"}}, "spec": {"unschedulable": true}},
                {"metadata": {"name": "gpu-002", "labels": {}}, "status": {"allocatable": {"nvidia.com/gpu": "7", "cpu": "224"}}, "spec": {}}
            ],
            "count": 2
        }));
        match execute(template, &root) {
            Ok(text) => text,
            Err((_, reason)) => format!("ERR {reason}"),
        }
    }

    #[test]
    fn ranges_fields_and_functions_as_text_template_does() {
        assert_eq!(run("{{range .items}}{{.metadata.name}}{{\"\\n\"}}{{end}}"), "gpu-001\ngpu-002\n");
        assert_eq!(run("{{range .items}}{{.metadata.name}} {{index .status.allocatable \"nvidia.com/gpu\"}}\n{{end}}"), "gpu-001 8\ngpu-002 7\n");
        assert_eq!(run("{{range $i, $n := .items}}{{$i}}={{$n.metadata.name}} {{end}}"), "0=gpu-001 1=gpu-002 ");
        assert_eq!(
            run("{{range .items}}{{if .spec.unschedulable}}{{.metadata.name}} cordoned{{else}}{{.metadata.name}} ok{{end}};{{end}}"),
            "gpu-001 cordoned;gpu-002 ok;"
        );
        assert_eq!(run("{{len .items}} {{.count}} {{.missing}}"), "2 2 <no value>");
        assert_eq!(run("{{with index .items 1}}{{.metadata.name}}{{end}}"), "gpu-002");
        assert_eq!(
            run("{{range .items}}{{printf \"%-8s|%3s\\n\" .metadata.name (index .status.allocatable \"nvidia.com/gpu\")}}{{end}}"),
            "gpu-001 |  8\ngpu-002 |  7\n"
        );
        assert_eq!(run("{{(index .items 0).status.allocatable}}"), "map[cpu:224 nvidia.com/gpu:8]");
        assert_eq!(run("{{range .items}}{{if eq (index .status.allocatable \"nvidia.com/gpu\") \"8\"}}{{.metadata.name}}{{end}}{{end}}"), "gpu-001");
        assert_eq!(run("{{- /* a comment */ -}}  {{ .count -}}  !"), "2!");
        assert_eq!(run("{{$x := .count}}{{$x}} {{.count | printf \"%d GPUs\"}}"), "2 2 GPUs");
        assert_eq!(run("{{if and .count (gt .count 1)}}many{{else if .count}}one{{else}}none{{end}}"), "many");
    }

    #[test]
    fn errors_are_text_templates() {
        assert_eq!(run("{{.items"), "ERR template: output:1: unclosed action");
        assert_eq!(run("{{range .items}}x"), "ERR template: output:1: unexpected EOF");
        assert_eq!(run("{{end}}"), "ERR template: output:1: unexpected {{end}}");
        assert_eq!(run("{{nosuch .items}}"), "ERR template: output:1: function \"nosuch\" not defined");
        assert!(run("{{.missing.deeper}}").contains("nil pointer evaluating interface {}.deeper"));
        // Nesting is bounded, not a stack overflow.
        let deep = "{{if 1}}".repeat(200) + &"{{end}}".repeat(200);
        assert!(run(&deep).starts_with("ERR "));
        let parens = "(".repeat(500) + "1" + &")".repeat(500);
        assert!(run(&format!("{{{{{parens}}}}}")).starts_with("ERR "));
    }
}
