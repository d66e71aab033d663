//! kubectl's object printers over an object as the API server returns it:
//! `-o json` (Go's `json.MarshalIndent`, four spaces, keys sorted as Go
//! sorts a map's), `-o yaml` (sigs.k8s.io/yaml: keys sorted, a list's
//! dashes at its key's indentation, strings quoted when YAML would read them
//! as another type), `-o jsonpath=TEMPLATE` (client-go's JSONPath: fields,
//! `[*]`, indices, `['name']`, `[?(@.f=="v")]` filters, `range`/`end`,
//! quoted literals; a missing field prints nothing, as
//! `--allow-missing-template-keys` defaults) and `-o custom-columns=`.

/// A JSON value as the API server returns it, its objects' keys sorted as
/// Go sorts a map's. (Its own small type: serde_json's `Value` would cost
/// the page's worker more than these printers.)
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(i64),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::String(text.to_string())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::String(text)
    }
}

impl From<bool> for Value {
    fn from(flag: bool) -> Value {
        Value::Bool(flag)
    }
}

impl From<i64> for Value {
    fn from(number: i64) -> Value {
        Value::Number(number)
    }
}

impl From<u64> for Value {
    fn from(number: u64) -> Value {
        Value::Number(i64::try_from(number).unwrap_or(i64::MAX))
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

impl Value {
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets a field of an object, keeping the keys sorted.
    pub fn set(&mut self, key: &str, value: Value) {
        if let Value::Object(fields) = self {
            match fields.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
                Ok(at) => fields[at].1 = value,
                Err(at) => fields.insert(at, (key.to_string(), value)),
            }
        }
    }
}

/// An object from its fields.
pub fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    let mut fields: Vec<(String, Value)> = fields.into_iter().map(|(key, value)| (key.to_string(), value)).collect();
    crate::sort::sort_by(&mut fields, |a, b| a.0.cmp(&b.0));
    Value::Object(fields)
}

/// An object from fields gathered at run time.
pub fn object_from(fields: impl IntoIterator<Item = (String, Value)>) -> Value {
    let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
    crate::sort::sort_by(&mut fields, |a, b| a.0.cmp(&b.0));
    Value::Object(fields)
}

/// A JSON string as Go's encoder writes it (`<`, `>` and `&` escaped too).
fn quoted(text: &str) -> String {
    crate::commands::go_format::json_string(text, true)
}

/// Compact JSON, as JSONPath prints an object or a list.
fn compact(value: &Value) -> String {
    match value {
        Value::Object(fields) => format!("{{{}}}", fields.iter().map(|(k, v)| format!("{}:{}", quoted(k), compact(v))).collect::<Vec<_>>().join(",")),
        Value::Array(items) => format!("[{}]", items.iter().map(compact).collect::<Vec<_>>().join(",")),
        other => {
            let mut out = String::new();
            json_into(other, 0, &mut out);
            out
        }
    }
}

fn json_into(value: &Value, indent: usize, out: &mut String) {
    let (pad, inner) = (" ".repeat(indent), " ".repeat(indent + 4));
    match value {
        Value::Object(map) if !map.is_empty() => {
            *out += "{\n";
            for (at, (key, item)) in map.iter().enumerate() {
                *out += &format!("{inner}{}: ", quoted(key));
                json_into(item, indent + 4, out);
                *out += if at + 1 < map.len() { ",\n" } else { "\n" };
            }
            *out += &format!("{pad}}}");
        }
        Value::Array(items) if !items.is_empty() => {
            *out += "[\n";
            for (at, item) in items.iter().enumerate() {
                *out += &inner;
                json_into(item, indent + 4, out);
                *out += if at + 1 < items.len() { ",\n" } else { "\n" };
            }
            *out += &format!("{pad}]");
        }
        Value::Object(_) => *out += "{}",
        Value::Array(_) => *out += "[]",
        Value::String(text) => *out += &quoted(text),
        Value::Number(n) => *out += &n.to_string(),
        Value::Bool(b) => *out += &b.to_string(),
        Value::Null => *out += "null",
    }
}

/// Go's indented JSON (`json.MarshalIndent`, four spaces) with a final newline.
pub fn json(value: &Value) -> String {
    let mut out = String::new();
    json_into(value, 0, &mut out);
    out + "\n"
}

/// A string as go-yaml writes it: plain unless YAML would read it as
/// something else (a number, a boolean, null, a timestamp) or it holds
/// characters that need quotes.
fn yaml_string(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let keyword = matches!(lower.as_str(), "" | "~" | "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n");
    let numeric = text.parse::<f64>().is_ok() || text.starts_with(|c: char| c.is_ascii_digit()) && text.contains(['-', ':']);
    let special = text.starts_with(['-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' '])
        || text.ends_with(' ')
        || text.contains(": ")
        || text.contains(" #")
        || text.contains(['\n', '\t']);
    if keyword || numeric || special {
        quoted(text)
    } else {
        text.to_string()
    }
}

fn yaml_scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => yaml_string(s),
        Value::Array(_) => "[]".to_string(),
        Value::Object(_) => "{}".to_string(),
    }
}

fn yaml_into(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                match item {
                    Value::Object(inner) if !inner.is_empty() => {
                        *out += &format!("{pad}{}:\n", yaml_string(key));
                        yaml_into(item, indent + 2, out);
                    }
                    Value::Array(inner) if !inner.is_empty() => {
                        *out += &format!("{pad}{}:\n", yaml_string(key));
                        yaml_into(item, indent, out);
                    }
                    _ => *out += &format!("{pad}{}: {}\n", yaml_string(key), yaml_scalar(item)),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(inner) if !inner.is_empty() => {
                        // The first key on the dash's line, the rest under it.
                        let mut nested = String::new();
                        yaml_into(item, indent + 2, &mut nested);
                        *out += &format!("{pad}- {}", nested.get(indent + 2..).unwrap_or_default());
                    }
                    _ => *out += &format!("{pad}- {}\n", yaml_scalar(item)),
                }
            }
        }
        scalar => *out += &format!("{pad}{}\n", yaml_scalar(scalar)),
    }
}

pub fn yaml(value: &Value) -> String {
    let mut out = String::new();
    yaml_into(value, 0, &mut out);
    out
}

/// One step of a JSONPath.
#[derive(Debug, Clone)]
enum Step {
    Field(String),
    All,
    Index(i64),
    /// `[?(@.path == "value")]` (or `!=`), or `[?(@.path)]`: present.
    Filter(Vec<Step>, Option<(bool, String)>),
}

/// Parses `.a.b[*]['c.d'][0][?(@.x=="y")]` into steps.
fn parse_path(text: &str) -> Result<Vec<Step>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut steps = Vec::new();
    let mut at = 0;
    if chars.first() == Some(&'@') {
        at = 1;
    }
    while at < chars.len() {
        match chars[at] {
            '.' => {
                at += 1;
                let mut name = String::new();
                while at < chars.len() && chars[at] != '.' && chars[at] != '[' {
                    if chars[at] == '\\' && at + 1 < chars.len() {
                        at += 1;
                    }
                    name.push(chars[at]);
                    at += 1;
                }
                if !name.is_empty() {
                    steps.push(Step::Field(name));
                }
            }
            '[' => {
                let close = bracket_end(&chars, at).ok_or_else(|| format!("unterminated array in {text}"))?;
                let inner: String = chars[at + 1..close].iter().collect();
                let inner = inner.trim();
                if inner == "*" {
                    steps.push(Step::All);
                } else if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
                    let (path, test) =
                        match filter.split_once("==").map(|(p, v)| (p, (true, v))).or_else(|| filter.split_once("!=").map(|(p, v)| (p, (false, v)))) {
                            Some((path, (equal, value))) => (path.trim(), Some((equal, value.trim().trim_matches(['"', '\'']).to_string()))),
                            None => (filter.trim(), None),
                        };
                    steps.push(Step::Filter(parse_path(path)?, test));
                } else if let Some(name) = inner.strip_prefix('\'').and_then(|n| n.strip_suffix('\'')) {
                    steps.push(Step::Field(name.to_string()));
                } else if let Ok(index) = inner.parse::<i64>() {
                    steps.push(Step::Index(index));
                } else {
                    return Err(format!("invalid array index {inner}"));
                }
                at = close + 1;
            }
            c if c.is_whitespace() => at += 1,
            other => return Err(format!("unrecognized character in action: U+{:04X} '{other}'", other as u32)),
        }
    }
    Ok(steps)
}

fn bracket_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut quoted = None;
    for (at, c) in chars.iter().enumerate().skip(open) {
        match (quoted, c) {
            (Some(q), c) if *c == q => quoted = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quoted = Some(*c),
            (None, '[' | '(') => depth += 1,
            (None, ']' | ')') => {
                depth -= 1;
                if depth == 0 && *c == ']' {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

fn walk<'v>(values: Vec<&'v Value>, steps: &[Step]) -> Vec<&'v Value> {
    let mut current = values;
    for step in steps {
        let mut next = Vec::new();
        for value in current {
            match (step, value) {
                (Step::Field(name), Value::Object(_)) => next.extend(value.get(name)),
                (Step::All, Value::Array(items)) => next.extend(items.iter()),
                (Step::All, Value::Object(fields)) => next.extend(fields.iter().map(|(_, v)| v)),
                (Step::Index(index), Value::Array(items)) => {
                    let at = if *index < 0 { items.len() as i64 + index } else { *index };
                    next.extend(usize::try_from(at).ok().and_then(|at| items.get(at)));
                }
                (Step::Filter(path, test), Value::Array(items)) => next.extend(items.iter().filter(|item| {
                    let found = walk(vec![item], path);
                    match test {
                        None => !found.is_empty(),
                        Some((equal, wanted)) => found.iter().any(|v| text_of(v) == *wanted) == *equal,
                    }
                })),
                _ => {}
            }
        }
        current = next;
    }
    current
}

/// A value as JSONPath prints it: strings bare, the rest as compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => compact(other),
    }
}

/// A template's pieces: literal text and `{...}` actions.
fn actions(template: &str) -> Result<Vec<(bool, String)>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push((false, rest[..open].to_string()));
        }
        let chars: Vec<char> = rest[open..].chars().collect();
        let mut quoted = None;
        let mut end = None;
        for (at, c) in chars.iter().enumerate().skip(1) {
            match (quoted, c) {
                (Some(q), c) if *c == q => quoted = None,
                (Some(_), _) => {}
                (None, '"') => quoted = Some('"'),
                (None, '}') => {
                    end = Some(at);
                    break;
                }
                _ => {}
            }
        }
        let end = end.ok_or("unclosed action")?;
        let inner: String = chars[1..end].iter().collect();
        pieces.push((true, inner.trim().to_string()));
        let consumed: usize = chars[..=end].iter().map(|c| c.len_utf8()).sum();
        rest = &rest[open + consumed..];
    }
    if !rest.is_empty() {
        pieces.push((false, rest.to_string()));
    }
    Ok(pieces)
}

/// Unquotes a JSONPath string literal (`"\n"`, `"\t"`, `": "`).
fn literal(action: &str) -> Option<String> {
    let inner = action.strip_prefix('"')?.strip_suffix('"')?;
    Some(inner.replace("\\n", "\n").replace("\\t", "\t").replace("\\\"", "\""))
}

fn execute(pieces: &[(bool, String)], scope: &Value, out: &mut String) -> Result<usize, String> {
    let mut at = 0;
    while at < pieces.len() {
        let (is_action, text) = &pieces[at];
        if !is_action {
            *out += text;
            at += 1;
            continue;
        }
        if let Some(text) = literal(text) {
            *out += &text;
        } else if let Some(path) = text.strip_prefix("range ") {
            let steps = parse_path(path.trim())?;
            // The body runs to its matching `end`.
            let mut depth = 1;
            let mut end = at + 1;
            while end < pieces.len() {
                match &pieces[end] {
                    (true, t) if t.starts_with("range ") => depth += 1,
                    (true, t) if t == "end" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
            if end >= pieces.len() {
                return Err("not in range, nothing to end".to_string());
            }
            for item in walk(vec![scope], &steps) {
                execute(&pieces[at + 1..end], item, out)?;
            }
            at = end;
        } else if text == "end" {
            return Err("not in range, nothing to end".to_string());
        } else {
            let steps = parse_path(text)?;
            let found: Vec<String> = walk(vec![scope], &steps).into_iter().map(text_of).collect();
            *out += &found.join(" ");
        }
        at += 1;
    }
    Ok(at)
}

/// The text `template` makes of `root`, or the parse error kubectl reports.
pub fn jsonpath(template: &str, root: &Value) -> Result<String, String> {
    let pieces = actions(template)?;
    let mut out = String::new();
    execute(&pieces, root, &mut out)?;
    Ok(out)
}

/// `-o custom-columns=NAME:.path,...`: the header row and one row per item,
/// tab-separated (kubectl aligns them with three spaces between columns);
/// a missing value is `<none>`.
pub fn custom_columns(spec: &str, items: &[&Value]) -> Result<Vec<String>, String> {
    let mut columns = Vec::new();
    for column in spec.split(',') {
        let Some((name, path)) = column.split_once(':') else {
            return Err(format!("expected <header>:<json-path-expr> in column specification, got {column}"));
        };
        let path = path.trim().trim_start_matches('{').trim_end_matches('}');
        let path = if path.starts_with('.') || path.starts_with('[') { path.to_string() } else { format!(".{path}") };
        columns.push((name.to_string(), parse_path(&path)?));
    }
    let mut rows = vec![columns.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join("\t")];
    for item in items {
        let cells: Vec<String> = columns
            .iter()
            .map(|(_, steps)| {
                let found: Vec<String> = walk(vec![*item], steps).into_iter().map(text_of).collect();
                if found.is_empty() {
                    "<none>".to_string()
                } else {
                    found.join(",")
                }
            })
            .collect();
        rows.push(cells.join("\t"));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_serde(value: &serde_json::Value) -> Value {
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.as_i64().unwrap_or_default()),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(items) => Value::Array(items.iter().map(from_serde).collect()),
            serde_json::Value::Object(map) => object_from(map.iter().map(|(k, v)| (k.clone(), from_serde(v)))),
        }
    }

    fn nodes() -> Value {
        from_serde(&serde_json::json!({
            "apiVersion": "v1",
            "items": [
                { "metadata": { "name": "gpu-001", "labels": { "nvidia.com/gpu.count": "8" } },
                  "status": { "allocatable": { "nvidia.com/gpu": "8" }, "conditions": [ { "type": "DiskPressure", "status": "False" }, { "type": "Ready", "status": "True" } ] } },
                { "metadata": { "name": "gpu-002", "labels": {} },
                  "status": { "allocatable": { "nvidia.com/gpu": "7" }, "conditions": [ { "type": "Ready", "status": "Unknown" } ] } }
            ],
            "kind": "List"
        }))
    }

    #[test]
    fn templates_as_client_go_runs_them() {
        let root = nodes();
        assert_eq!(jsonpath("{.items[*].metadata.name}", &root).unwrap(), "gpu-001 gpu-002");
        assert_eq!(
            jsonpath(r#"{range .items[*]}{.metadata.name}{"\t"}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}"#, &root).unwrap(),
            "gpu-001\t8\ngpu-002\t7\n"
        );
        assert_eq!(jsonpath(r#"{.items[?(@.metadata.name=="gpu-002")].status.conditions[?(@.type=="Ready")].status}"#, &root).unwrap(), "Unknown");
        assert_eq!(jsonpath("{.items[0].metadata.labels}", &root).unwrap(), r#"{"nvidia.com/gpu.count":"8"}"#);
        assert_eq!(jsonpath("{.items[-1].metadata.name} and {.nothing}", &root).unwrap(), "gpu-002 and ");
        assert_eq!(jsonpath("{.items[*].metadata['name']}", &root).unwrap(), "gpu-001 gpu-002");
        assert!(jsonpath("{.items[*}", &root).is_err());
        assert!(jsonpath("{end}", &root).is_err());
        let rows = custom_columns(
            "NAME:.metadata.name,GPUS:.status.allocatable.nvidia\\.com/gpu,X:.nope",
            &match root.get("items") {
                Some(Value::Array(items)) => items.iter().collect::<Vec<_>>(),
                _ => Vec::new(),
            },
        )
        .unwrap();
        assert_eq!(rows, ["NAME\tGPUS\tX", "gpu-001\t8\t<none>", "gpu-002\t7\t<none>"]);
    }

    #[test]
    fn yaml_and_json_as_kubectl_prints_them() {
        let root = nodes();
        let text = yaml(&root);
        assert!(
            text.starts_with("apiVersion: v1\nitems:\n- metadata:\n    labels:\n      nvidia.com/gpu.count: \"8\"\n    name: gpu-001\n  status:\n"),
            "{text}"
        );
        assert!(text.contains("    conditions:\n    - status: \"False\"\n      type: DiskPressure\n"), "{text}");
        assert!(text.contains("    labels: {}\n"), "{text}");
        assert!(json(&root).starts_with("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n"));
        assert!(json(&root).contains("\"labels\": {},\n"));
        assert_eq!(quoted("a<b\"\n"), "\"a\\u003cb\\\"\\n\"");
        assert_eq!(yaml_string("2026-01-15T08:34:56Z"), "\"2026-01-15T08:34:56Z\"");
        assert_eq!(yaml_string("amd64"), "amd64");
        assert_eq!(yaml_string("true"), "\"true\"");
    }
}
