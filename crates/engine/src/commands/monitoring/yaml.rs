//! The YAML that rule files use, read as go-yaml reads it: block mappings
//! and sequences by indentation, plain, quoted and block (`|`, `>`) scalars,
//! one-line flow mappings and sequences, comments. Each node keeps its
//! line and column, for the messages that name them. Anchors, tags and
//! multi-document streams are not read (a rule file has none).

/// Where a node starts: 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Yaml {
    Scalar(String, Pos),
    Map(Vec<(String, Pos, Yaml)>, Pos),
    Seq(Vec<Yaml>, Pos),
    Null(Pos),
}

impl Yaml {
    pub fn pos(&self) -> Pos {
        match self {
            Yaml::Scalar(_, pos) | Yaml::Map(_, pos) | Yaml::Seq(_, pos) | Yaml::Null(pos) => *pos,
        }
    }

    /// The Go type name go-yaml uses in "cannot unmarshal" errors.
    pub fn tag(&self) -> &'static str {
        match self {
            Yaml::Scalar(..) => "!!str",
            Yaml::Map(..) => "!!map",
            Yaml::Seq(..) => "!!seq",
            Yaml::Null(_) => "!!null",
        }
    }
}

/// The deepest nesting a file may have.
const MAX_DEPTH: usize = 64;

struct Line<'t> {
    number: usize,
    indent: usize,
    /// The text after the indentation, its comment removed.
    text: &'t str,
}

/// go-yaml's complaint: `yaml: line N: message`.
fn error(line: usize, message: &str) -> String {
    format!("yaml: line {line}: {message}")
}

/// The text before a comment (`#` at the start or after a space, outside quotes).
fn strip_comment(text: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in text.char_indices() {
        match (quote, c) {
            (None, '#') if previous == ' ' || previous == '\t' || at == 0 => return text[..at].trim_end(),
            (None, '"' | '\'') if previous == ' ' || previous == ':' || at == 0 || previous == '[' || previous == '{' || previous == ',' => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        previous = c;
    }
    text.trim_end()
}

pub fn parse(source: &str) -> Result<Yaml, String> {
    let mut lines = Vec::new();
    for (index, raw) in source.lines().enumerate() {
        let number = index + 1;
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        if raw[indent..].starts_with('\t') {
            return Err(error(number, "found character that cannot start any token"));
        }
        lines.push(Line { number, indent, text: &raw[indent..] });
    }
    let mut parser = Parser { lines, at: 0, depth: 0, raw: source.lines().collect() };
    parser.skip_blank();
    if parser.at >= parser.lines.len() {
        return Ok(Yaml::Null(Pos { line: 1, column: 1 }));
    }
    let indent = parser.lines[parser.at].indent;
    let node = parser.block(indent)?;
    parser.skip_blank();
    if let Some(line) = parser.lines.get(parser.at) {
        return Err(error(line.number, "did not find expected key"));
    }
    Ok(node)
}

struct Parser<'t> {
    lines: Vec<Line<'t>>,
    at: usize,
    depth: usize,
    raw: Vec<&'t str>,
}

impl<'t> Parser<'t> {
    fn skip_blank(&mut self) {
        while self.lines.get(self.at).is_some_and(|line| strip_comment(line.text).is_empty()) {
            self.at += 1;
        }
    }

    /// A block node whose lines start at `indent`.
    fn block(&mut self, indent: usize) -> Result<Yaml, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let line = self.lines.get(self.at).map_or(0, |line| line.number);
            return Err(error(line, "exceeded max depth of 64"));
        }
        let result = match self.lines.get(self.at) {
            Some(line) if line.text.starts_with("- ") || strip_comment(line.text) == "-" => self.sequence(indent),
            _ => self.mapping(indent),
        };
        self.depth -= 1;
        result
    }

    fn sequence(&mut self, indent: usize) -> Result<Yaml, String> {
        let first = &self.lines[self.at];
        let pos = Pos { line: first.number, column: indent + 1 };
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self.lines.get(self.at) else { break };
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return Err(error(line.number, "did not find expected '-' indicator"));
            }
            let text = strip_comment(line.text);
            // A sequence at its key's indentation ends at the next key.
            let Some(rest) = text.strip_prefix('-') else { break };
            if !(rest.is_empty() || rest.starts_with(' ')) {
                return Err(error(line.number, "did not find expected '-' indicator"));
            }
            let after = rest.trim_start();
            let number = line.number;
            if after.is_empty() {
                self.at += 1;
                self.skip_blank();
                match self.lines.get(self.at) {
                    Some(next) if next.indent > indent => {
                        let inner = next.indent;
                        items.push(self.block(inner)?);
                    }
                    _ => items.push(Yaml::Null(Pos { line: number, column: indent + 2 })),
                }
                continue;
            }
            // `- key: value` opens a mapping at the key's column.
            let column = indent + 1 + (rest.len() - after.len());
            if key_value(after).is_some() {
                // The item's first line is read as if indented to its key.
                let original = self.lines[self.at].text;
                let skip = original.len() - original[1..].trim_start().len();
                self.lines[self.at] = Line { number, indent: indent + skip, text: &original[skip..] };
                items.push(self.block(indent + skip)?);
                continue;
            }
            self.at += 1;
            items.push(self.scalar(after, Pos { line: number, column }, indent)?);
        }
        Ok(Yaml::Seq(items, pos))
    }

    fn mapping(&mut self, indent: usize) -> Result<Yaml, String> {
        let first = &self.lines[self.at];
        let pos = Pos { line: first.number, column: indent + 1 };
        let mut entries: Vec<(String, Pos, Yaml)> = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self.lines.get(self.at) else { break };
            if line.indent < indent {
                break;
            }
            let number = line.number;
            if line.indent > indent {
                return Err(error(number, "mapping values are not allowed in this context"));
            }
            let text = strip_comment(line.text);
            if text.starts_with("- ") {
                return Err(error(number, "did not find expected key"));
            }
            let Some((key, value)) = key_value(text) else {
                return Err(error(number + 1, "could not find expected ':'"));
            };
            let key_pos = Pos { line: number, column: indent + 1 };
            let key = unquote(key);
            if entries.iter().any(|(k, ..)| *k == key) {
                return Err(format!(
                    "yaml: unmarshal errors:\n  line {number}: mapping key \"{key}\" already defined at line {}",
                    entries.iter().find(|(k, ..)| *k == key).map_or(0, |(_, p, _)| p.line)
                ));
            }
            let value_column = indent + 1 + (text.len() - value.len());
            self.at += 1;
            let node = if value.is_empty() {
                self.skip_blank();
                match self.lines.get(self.at) {
                    Some(next) if next.indent > indent => {
                        let inner = next.indent;
                        self.block(inner)?
                    }
                    // A sequence may sit at its key's indentation.
                    Some(next) if next.indent == indent && next.text.starts_with("- ") => self.block(indent)?,
                    _ => Yaml::Null(Pos { line: number, column: value_column }),
                }
            } else {
                self.scalar(value, Pos { line: number, column: value_column }, indent)?
            };
            entries.push((key, key_pos, node));
        }
        Ok(Yaml::Map(entries, pos))
    }

    /// A value on its key's line: quoted, plain, flow or a block scalar
    /// whose lines follow, more indented than `indent`.
    fn scalar(&mut self, value: &str, pos: Pos, indent: usize) -> Result<Yaml, String> {
        if let Some(style) = value.strip_prefix('|').map(|rest| ('|', rest)).or_else(|| value.strip_prefix('>').map(|rest| ('>', rest))) {
            let (kind, chomp) = style;
            if !chomp.chars().all(|c| matches!(c, '-' | '+' | '0'..='9')) {
                return Err(error(pos.line, "did not find expected comment or line break"));
            }
            let mut collected: Vec<String> = Vec::new();
            let mut block_indent = None;
            while let Some(line) = self.lines.get(self.at) {
                let raw = self.raw.get(line.number - 1).copied().unwrap_or("");
                if raw.trim().is_empty() {
                    collected.push(String::new());
                    self.at += 1;
                    continue;
                }
                if line.indent <= indent {
                    break;
                }
                let inner = *block_indent.get_or_insert(line.indent);
                if line.indent < inner {
                    break;
                }
                collected.push(raw[inner.min(raw.len())..].to_string());
                self.at += 1;
            }
            while collected.last().is_some_and(String::is_empty) {
                collected.pop();
                // Trailing blank lines belong to the next node.
            }
            let mut text = if kind == '|' {
                collected.join("\n")
            } else {
                let mut folded = String::new();
                for (i, line) in collected.iter().enumerate() {
                    if i > 0 {
                        folded.push(if line.is_empty() || collected[i - 1].is_empty() { '\n' } else { ' ' });
                    }
                    folded.push_str(line);
                }
                folded
            };
            if !chomp.contains('-') && !text.is_empty() {
                text.push('\n');
            }
            return Ok(Yaml::Scalar(text, pos));
        }
        if value.starts_with('{') || value.starts_with('[') {
            return flow(value, pos);
        }
        if value.starts_with('"') || value.starts_with('\'') {
            return quoted(value, pos).map(|text| Yaml::Scalar(text, pos));
        }
        if value == "~" || value == "null" {
            return Ok(Yaml::Null(pos));
        }
        if value.contains(": ") || value.ends_with(':') {
            return Err(error(pos.line, "mapping values are not allowed in this context"));
        }
        Ok(Yaml::Scalar(value.to_string(), pos))
    }
}

/// `key: value` (value may be empty), the key plain or quoted.
fn key_value(text: &str) -> Option<(&str, &str)> {
    if text.starts_with('"') || text.starts_with('\'') {
        let quote = text.chars().next()?;
        let end = text[1..].find(quote)? + 1;
        let rest = &text[end + 1..];
        let value = rest.strip_prefix(':')?;
        return (value.is_empty() || value.starts_with(' ')).then(|| (&text[..=end], value.trim_start()));
    }
    let mut search = 0;
    loop {
        let at = text[search..].find(':')? + search;
        let after = &text[at + 1..];
        if after.is_empty() || after.starts_with(' ') {
            let key = text[..at].trim_end();
            if key.is_empty() || key.starts_with('{') || key.starts_with('[') {
                return None;
            }
            return Some((key, after.trim_start()));
        }
        search = at + 1;
    }
}

fn unquote(key: &str) -> String {
    quoted(key, Pos::default()).unwrap_or_else(|_| key.to_string())
}

/// A double-quoted (with escapes) or single-quoted (`''` a quote) scalar.
fn quoted(value: &str, pos: Pos) -> Result<String, String> {
    let Some(quote) = value.chars().next().filter(|c| *c == '"' || *c == '\'') else {
        return Ok(value.to_string());
    };
    let mut out = String::new();
    let mut chars = value[1..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' if quote == '\'' => {
                if chars.as_str().starts_with('\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                return if chars.as_str().trim().is_empty() { Ok(out) } else { Err(error(pos.line, "did not find expected key")) };
            }
            '"' if quote == '"' => {
                return if chars.as_str().trim().is_empty() || chars.as_str().trim_start().starts_with(',') {
                    Ok(out)
                } else {
                    Err(error(pos.line, "did not find expected key"))
                };
            }
            '\\' if quote == '"' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                _ => return Err(error(pos.line, "found unknown escape character while parsing a quoted scalar")),
            },
            c => out.push(c),
        }
    }
    Err(error(pos.line, "found unexpected end of stream"))
}

/// A one-line flow mapping `{a: b, c: "d"}` or sequence `[a, b]`.
fn flow(value: &str, pos: Pos) -> Result<Yaml, String> {
    let (open, close) = if value.starts_with('{') { ('{', '}') } else { ('[', ']') };
    let inner =
        value.strip_prefix(open).and_then(|rest| rest.trim_end().strip_suffix(close)).ok_or_else(|| error(pos.line, "did not find expected ',' or '}'"))?;
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (None, ',') => parts.push(std::mem::take(&mut current)),
            (None, '{' | '[') => return Err(error(pos.line, "nested flow collections are not read")),
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        parts.push(current);
    }
    if open == '[' {
        let items = parts.iter().map(|part| quoted(part.trim(), pos).map(|text| Yaml::Scalar(text, pos))).collect::<Result<Vec<_>, _>>()?;
        return Ok(Yaml::Seq(items, pos));
    }
    let mut entries = Vec::new();
    for part in parts {
        let part = part.trim();
        let (key, value) = key_value(part).or_else(|| part.split_once(':')).ok_or_else(|| error(pos.line, "did not find expected ',' or '}'"))?;
        entries.push((unquote(key.trim()), pos, Yaml::Scalar(quoted(value.trim(), pos)?, pos)));
    }
    Ok(Yaml::Map(entries, pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_file_reads_as_go_yaml_reads_it() {
        let text = "groups:\n  - name: gpu # the GPUs\n    rules:\n    - alert: Hot\n      expr: |\n        max by (instance) (DCGM_FI_DEV_GPU_TEMP)\n          > 85\n      for: 5m\n      labels: {severity: page, owner: 'gpu-team'}\n      annotations:\n        summary: \"GPU {{ $labels.gpu }} is hot\"\n";
        let Yaml::Map(top, _) = parse(text).unwrap() else { panic!("a mapping") };
        let Yaml::Seq(groups, _) = &top[0].2 else { panic!("a sequence") };
        let Yaml::Map(group, _) = &groups[0] else { panic!("a mapping") };
        assert_eq!(group[0].0, "name");
        assert_eq!(group[0].2, Yaml::Scalar("gpu".into(), Pos { line: 2, column: 11 }));
        let Yaml::Seq(rules, _) = &group[1].2 else { panic!("rules") };
        let Yaml::Map(rule, _) = &rules[0] else { panic!("a rule") };
        let keys: Vec<&str> = rule.iter().map(|(k, ..)| k.as_str()).collect();
        assert_eq!(keys, ["alert", "expr", "for", "labels", "annotations"]);
        assert_eq!(rule[1].2, Yaml::Scalar("max by (instance) (DCGM_FI_DEV_GPU_TEMP)\n  > 85\n".into(), Pos { line: 5, column: 13 }));
        let Yaml::Map(labels, _) = &rule[3].2 else { panic!("labels") };
        assert_eq!(labels[1].2, Yaml::Scalar("gpu-team".into(), Pos { line: 9, column: 15 }));
        let Yaml::Map(annotations, _) = &rule[4].2 else { panic!("annotations") };
        assert_eq!(annotations[0].2, Yaml::Scalar("GPU {{ $labels.gpu }} is hot".into(), Pos { line: 11, column: 18 }));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(parse("groups:\n\t- name: x\n").unwrap_err(), "yaml: line 2: found character that cannot start any token");
        assert_eq!(parse("a: b: c\n").unwrap_err(), "yaml: line 1: mapping values are not allowed in this context");
        assert!(parse(&"- ".repeat(200)).is_ok() || parse(&"- ".repeat(200)).is_err());
        let deep: String = (0..100).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
        assert!(parse(&deep).unwrap_err().contains("exceeded max depth"));
    }
}
