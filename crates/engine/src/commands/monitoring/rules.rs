//! Prometheus' rule files (`rulefmt`): groups of alerting and recording
//! rules read from YAML and checked as Prometheus checks them, with its
//! messages; the rules the cluster's Prometheus has loaded (every file in
//! `/lustre/monitoring/rules`, from the moment it was last written: a
//! config reloader watches the directory); and each alerting rule's alerts
//! now, pending or firing, found by evaluating its expression at each of
//! the group's evaluations back from now.

use super::prometheus::scrape::Scrapes;
use super::promql::eval::{without_name, Evaluator, Labels, Value};
use super::promql::parser::{self, Expr};
use super::promql::valid_label_name;
use super::yaml::{self, Pos, Yaml};
use crate::model::storage::RULES_DIR;
use crate::model::Cluster;

/// The global evaluation interval.
pub const EVALUATION_INTERVAL_MS: i64 = 15_000;

/// The most evaluations an alert's history is walked back (two hours at 15 s).
const MAX_WALK: usize = 480;

#[derive(Clone, Debug)]
pub enum Name {
    Alert(String),
    Record(String),
}

#[derive(Clone, Debug)]
pub struct Rule {
    pub name: Name,
    pub expr_text: String,
    pub expr: Expr,
    pub for_ms: i64,
    pub keep_firing_for_ms: i64,
    pub labels: Labels,
    pub annotations: Labels,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    pub file: String,
    pub interval_ms: i64,
    pub rules: Vec<Rule>,
}

fn scalar(node: &Yaml) -> Option<String> {
    match node {
        Yaml::Scalar(text, _) => Some(text.clone()),
        Yaml::Null(_) => Some(String::new()),
        _ => None,
    }
}

fn duration(text: &str) -> Option<i64> {
    if text.is_empty() {
        return Some(0);
    }
    match super::promql::lexer::tokens(text).ok()?.as_slice() {
        [(super::promql::lexer::Token::Duration(ms), ..), (super::promql::lexer::Token::End, ..)] => Some(*ms),
        [(super::promql::lexer::Token::Number(n), ..), (super::promql::lexer::Token::End, ..)] if *n == 0.0 => Some(0),
        _ => None,
    }
}

fn valid_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// go-yaml's complaint about a field the type lacks.
fn unknown_field(pos: Pos, field: &str, kind: &str) -> String {
    format!("yaml: unmarshal errors:\n  line {}: field {field} not found in type rulefmt.{kind}", pos.line)
}

fn string_map(node: &Yaml, file: &str) -> Result<Labels, String> {
    match node {
        Yaml::Null(_) => Ok(Vec::new()),
        Yaml::Map(entries, _) => entries
            .iter()
            .map(|(key, pos, value)| {
                scalar(value).map(|v| (key.clone(), v)).ok_or_else(|| {
                    format!("{file}: yaml: unmarshal errors:\n  line {}: cannot unmarshal {} into Go value of type string", pos.line, value.tag())
                })
            })
            .collect(),
        other => Err(format!(
            "{file}: yaml: unmarshal errors:\n  line {}: cannot unmarshal {} into Go value of type map[string]string",
            other.pos().line,
            other.tag()
        )),
    }
}

/// A rule file's groups, or every error promtool reports for it (each
/// naming the file).
pub fn parse_file(file: &str, text: &str) -> Result<Vec<Group>, Vec<String>> {
    let root = yaml::parse(text).map_err(|error| vec![format!("{file}: {error}")])?;
    let entries = match &root {
        Yaml::Map(entries, _) => entries.clone(),
        Yaml::Null(_) => Vec::new(),
        other => {
            return Err(vec![format!("{file}: yaml: unmarshal errors:\n  line {}: cannot unmarshal {} into rulefmt.RuleGroups", other.pos().line, other.tag())])
        }
    };
    let mut errors = Vec::new();
    let mut groups = Vec::new();
    for (key, pos, value) in &entries {
        if key != "groups" {
            return Err(vec![format!("{file}: {}", unknown_field(*pos, key, "RuleGroups"))]);
        }
        let items = match value {
            Yaml::Seq(items, _) => items.clone(),
            Yaml::Null(_) => Vec::new(),
            other => {
                return Err(vec![format!(
                    "{file}: yaml: unmarshal errors:\n  line {}: cannot unmarshal {} into Go struct field RuleGroups.groups of type []rulefmt.RuleGroup",
                    other.pos().line,
                    other.tag()
                )])
            }
        };
        for item in &items {
            match group(file, item, &groups) {
                Ok(parsed) => groups.push(parsed),
                Err(mut found) => {
                    if found.first().is_some_and(|e| e.contains("yaml: unmarshal errors")) {
                        return Err(found);
                    }
                    errors.append(&mut found);
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(groups)
    } else {
        Err(errors)
    }
}

fn group(file: &str, node: &Yaml, earlier: &[Group]) -> Result<Group, Vec<String>> {
    let Yaml::Map(entries, group_pos) = node else {
        return Err(vec![format!(
            "{file}: yaml: unmarshal errors:\n  line {}: cannot unmarshal {} into Go value of type rulefmt.RuleGroup",
            node.pos().line,
            node.tag()
        )]);
    };
    let mut name = String::new();
    let mut name_pos = *group_pos;
    let mut interval_ms = EVALUATION_INTERVAL_MS;
    let mut rule_nodes = Vec::new();
    for (key, pos, value) in entries {
        match key.as_str() {
            "name" => {
                name = scalar(value).unwrap_or_default();
                name_pos = value.pos();
            }
            "interval" => match scalar(value).as_deref().and_then(duration) {
                Some(ms) if ms > 0 => interval_ms = ms,
                _ => return Err(vec![format!("{file}: not a valid duration string: {:?}", scalar(value).unwrap_or_default())]),
            },
            "limit" | "query_offset" => {}
            "rules" => match value {
                Yaml::Seq(items, _) => rule_nodes = items.clone(),
                Yaml::Null(_) => {}
                other => {
                    return Err(vec![format!(
                    "{file}: yaml: unmarshal errors:\n  line {}: cannot unmarshal {} into Go struct field RuleGroup.groups.rules of type []rulefmt.RuleNode",
                    other.pos().line,
                    other.tag()
                )])
                }
            },
            other => return Err(vec![format!("{file}: {}", unknown_field(*pos, other, "RuleGroup"))]),
        }
    }
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push(format!("{file}: {}:{}: Groupname must not be empty", name_pos.line, name_pos.column));
    }
    if earlier.iter().any(|group| group.name == name) && !name.is_empty() {
        errors.push(format!("{file}: {}:{}: groupname: \"{name}\" is repeated in the same file", name_pos.line, name_pos.column));
    }
    let mut rules = Vec::new();
    for (index, node) in rule_nodes.iter().enumerate() {
        match rule(file, &name, index + 1, node) {
            Ok(parsed) => rules.push(parsed),
            Err(mut found) => {
                if found.first().is_some_and(|e| e.contains("yaml: unmarshal errors")) {
                    return Err(found);
                }
                errors.append(&mut found);
            }
        }
    }
    if errors.is_empty() {
        Ok(Group { name, file: file.to_string(), interval_ms, rules })
    } else {
        Err(errors)
    }
}

fn rule(file: &str, group: &str, index: usize, node: &Yaml) -> Result<Rule, Vec<String>> {
    let Yaml::Map(entries, rule_pos) = node else {
        return Err(vec![format!(
            "{file}: yaml: unmarshal errors:\n  line {}: cannot unmarshal {} into Go value of type rulefmt.RuleNode",
            node.pos().line,
            node.tag()
        )]);
    };
    let (mut alert, mut record, mut expr, mut for_text, mut keep_text) = (None, None, None, None, None);
    let (mut labels, mut annotations) = (None, None);
    for (key, pos, value) in entries {
        let field = || scalar(value).map(|text| (text, value.pos()));
        match key.as_str() {
            "alert" => alert = field(),
            "record" => record = field(),
            "expr" => expr = field(),
            "for" => for_text = field(),
            "keep_firing_for" => keep_text = field(),
            "labels" => labels = Some(string_map(value, file).map_err(|e| vec![e])?),
            "annotations" => annotations = Some(string_map(value, file).map_err(|e| vec![e])?),
            other => return Err(vec![format!("{file}: {}", unknown_field(*pos, other, "Rule"))]),
        }
    }
    let shown = alert.as_ref().or(record.as_ref()).map(|(name, _)| name.clone()).unwrap_or_default();
    let expr_pos = expr.as_ref().map_or(*rule_pos, |(_, pos)| *pos);
    let name_pos = alert.as_ref().or(record.as_ref()).map_or(expr_pos, |(_, pos)| *pos);
    let at = |pos: Pos, message: String| format!("{file}: {}:{}: group {group:?}, rule {index}, {shown:?}: {message}", pos.line, pos.column);
    let mut errors = Vec::new();
    match (&alert, &record) {
        (Some(_), Some(_)) => errors.push(at(name_pos, "only one of 'record' and 'alert' must be set".into())),
        (None, None) => errors.push(at(name_pos, "one of 'record' or 'alert' must be set".into())),
        _ => {}
    }
    let expr_text = expr.as_ref().map(|(text, _)| text.clone()).unwrap_or_default();
    let parsed = if expr_text.trim().is_empty() {
        errors.push(at(expr_pos, "field 'expr' must be set in rule".into()));
        None
    } else {
        match parser::parse(&expr_text) {
            Ok(parsed) => Some(parsed),
            Err(error) => {
                errors.push(at(expr_pos, format!("could not parse expression: {error}")));
                None
            }
        }
    };
    if let Some((name, _)) = &record {
        if !valid_metric_name(name) {
            errors.push(at(name_pos, format!("invalid recording rule name: {name}")));
        }
        if annotations.as_ref().is_some_and(|a| !a.is_empty()) {
            errors.push(at(name_pos, "invalid field 'annotations' in recording rule".into()));
        }
        if for_text.is_some() {
            errors.push(at(name_pos, "invalid field 'for' in recording rule".into()));
        }
        if keep_text.is_some() {
            errors.push(at(name_pos, "invalid field 'keep_firing_for' in recording rule".into()));
        }
    }
    let mut check_duration = |text: &Option<(String, Pos)>| match text {
        None => 0,
        Some((text, pos)) => duration(text).unwrap_or_else(|| {
            errors.push(format!("{file}: {}:{}: not a valid duration string: {text:?}", pos.line, pos.column));
            0
        }),
    };
    let for_ms = check_duration(&for_text);
    let keep_firing_for_ms = check_duration(&keep_text);
    let labels = labels.unwrap_or_default();
    let annotations = annotations.unwrap_or_default();
    for (name, _) in &labels {
        if !valid_label_name(name) {
            errors.push(at(name_pos, format!("invalid label name: {name}")));
        }
    }
    for (name, _) in &annotations {
        if !valid_label_name(name) {
            errors.push(at(name_pos, format!("invalid annotation name: {name}")));
        }
    }
    let (Some(expr), true) = (parsed, errors.is_empty()) else { return Err(errors) };
    let name = match (alert, record) {
        (Some((name, _)), _) => Name::Alert(name),
        (_, Some((name, _))) => Name::Record(name),
        _ => return Err(errors),
    };
    let sorted = |mut labels: Labels| {
        crate::sort::sort_by(&mut labels, |a, b| a.0.cmp(&b.0));
        labels
    };
    Ok(Rule { name, expr_text, expr, for_ms, keep_firing_for_ms, labels: sorted(labels), annotations: sorted(annotations) })
}

/// The rules the cluster's Prometheus has loaded: every valid `*.yml` or
/// `*.yaml` file in the rules directory, each with the instant (ms) it was
/// last written, from when its rules are evaluated.
pub fn loaded(cluster: &Cluster) -> Vec<(Group, i64)> {
    let Some(node) = cluster.nodes.first() else { return Vec::new() };
    let prefix = format!("{RULES_DIR}/");
    let mut out = Vec::new();
    for (path, text) in &node.files {
        let Some(name) = path.strip_prefix(&prefix) else { continue };
        if name.contains('/') || !(name.ends_with(".yml") || name.ends_with(".yaml")) {
            continue;
        }
        let written = cluster
            .changes()
            .iter()
            .rev()
            .find_map(|(at, change)| matches!(change, crate::model::change::Change::WriteFile { path: p, .. } if p == path).then_some(*at))
            .unwrap_or(cluster.started_at());
        if let Ok(groups) = parse_file(path, text) {
            out.extend(groups.into_iter().map(|group| (group, written * 1000)));
        }
    }
    out
}

/// One alert of a rule now.
#[derive(Clone, Debug)]
pub struct Alert {
    pub labels: Labels,
    pub annotations: Labels,
    pub firing: bool,
    pub active_at_ms: i64,
    /// Kept firing by `keep_firing_for` since its expression stopped giving it.
    pub keep_firing_since_ms: Option<i64>,
    pub value: f64,
}

/// What an alerting rule's expression gives at `at`: each alert's labels
/// (the sample's without its name, the rule's, `alertname`) and value.
fn active(storage: &mut Scrapes, rule: &Rule, alert: &str, at: i64) -> Vec<(Labels, f64)> {
    let Ok(Value::Vector(samples)) = Evaluator::new(storage, at, at).eval(&rule.expr, at) else { return Vec::new() };
    samples
        .into_iter()
        .map(|sample| {
            let mut labels = without_name(&sample.labels);
            for (name, value) in rule.labels.iter().chain(std::iter::once(&("alertname".to_string(), alert.to_string()))) {
                super::promql::functions::set_label(&mut labels, name, value.clone());
            }
            (labels, sample.value)
        })
        .collect()
}

/// The group's last evaluation at or before `now_ms`, since `loaded_ms`.
pub fn last_evaluation(group: &Group, loaded_ms: i64, now_ms: i64) -> Option<i64> {
    (now_ms >= loaded_ms).then(|| loaded_ms + (now_ms - loaded_ms) / group.interval_ms * group.interval_ms)
}

/// An alerting rule's alerts at its group's last evaluation: those its
/// expression gives then, each active since the first of the unbroken
/// run of evaluations that gave it, firing once that is `for` old; and,
/// with `keep_firing_for`, those that fired and stopped holding less than
/// that long ago, still firing.
pub fn alerts(storage: &mut Scrapes, group: &Group, rule: &Rule, loaded_ms: i64, now_ms: i64) -> Vec<Alert> {
    let Name::Alert(alert) = &rule.name else { return Vec::new() };
    let Some(last) = last_evaluation(group, loaded_ms, now_ms) else { return Vec::new() };
    let interval = group.interval_ms;
    let keep_steps = usize::try_from(rule.keep_firing_for_ms / interval).unwrap_or(0);
    // The evaluations back from the last: what each gave.
    let mut history: Vec<(i64, Vec<(Labels, f64)>)> = vec![(last, active(storage, rule, alert, last))];
    let mut watched: Vec<Labels> = history[0].1.iter().map(|(labels, _)| labels.clone()).collect();
    while history.len() <= MAX_WALK {
        let t = last - interval * history.len() as i64;
        let within_keep = history.len() <= keep_steps;
        let newest = &history[history.len() - 1].1;
        if t < loaded_ms || !(within_keep || newest.iter().any(|(labels, _)| watched.contains(labels))) {
            break;
        }
        let then = active(storage, rule, alert, t);
        if within_keep {
            for (labels, _) in &then {
                if !watched.contains(labels) {
                    watched.push(labels.clone());
                }
            }
        }
        history.push((t, then));
    }
    let present = |step: usize, labels: &Labels| history.get(step).and_then(|(_, given)| given.iter().find(|(l, _)| l == labels).map(|(_, v)| *v));
    let mut out = Vec::new();
    for labels in watched {
        // The newest evaluation that gave it, and the start of that run.
        let Some(newest) = (0..history.len()).find(|step| present(*step, &labels).is_some()) else { continue };
        let mut oldest = newest;
        while oldest + 1 < history.len() && present(oldest + 1, &labels).is_some() {
            oldest += 1;
        }
        let (active_at_ms, ended_at) = (history[oldest].0, history[newest].0);
        let firing = ended_at - active_at_ms >= rule.for_ms;
        let keep_firing_since_ms = (newest > 0).then(|| history[newest - 1].0);
        if newest > 0 && !(firing && last - history[newest - 1].0 < rule.keep_firing_for_ms) {
            continue;
        }
        let value = present(newest, &labels).unwrap_or(f64::NAN);
        let annotations = rule.annotations.iter().map(|(name, text)| (name.clone(), expand(text, &labels, value))).collect();
        out.push(Alert { firing, labels, annotations, active_at_ms, keep_firing_since_ms, value });
    }
    out
}

/// Whether the loaded alerting rule `name` has an alert for `node` now
/// and finds nothing on the healthy cluster (the lab's jobs running), and
/// what was seen: the `alert` state fact.
pub fn judge(cluster: &Cluster, name: &str, node: &str) -> (bool, String) {
    let now = super::prometheus::now_ms(cluster);
    let loaded = loaded(cluster);
    let found =
        loaded.iter().find_map(|(group, at)| group.rules.iter().find(|rule| matches!(&rule.name, Name::Alert(n) if n == name)).map(|rule| (group, *at, rule)));
    let Some((group, at, rule)) = found else {
        return (false, format!("Prometheus has loaded no alerting rule named {name}"));
    };
    let mut storage = Scrapes::new(cluster, now);
    let alerts = alerts(&mut storage, group, rule, at, now);
    let names_node = |labels: &Labels| labels.iter().any(|(_, value)| value == node || value.strip_prefix(node).is_some_and(|rest| rest.starts_with(':')));
    let Some(alert) = alerts.iter().find(|alert| names_node(&alert.labels)) else {
        return (false, format!("{name} has {} alert(s), none for {node}", alerts.len()));
    };
    let healthy = cluster.healthy_running();
    let mut storage = Scrapes::new(&healthy, now);
    let quiet = match Evaluator::new(&mut storage, now, now).eval(&rule.expr, now) {
        Ok(Value::Vector(samples)) => samples.len(),
        _ => 0,
    };
    if quiet > 0 {
        return (false, format!("{name}'s expression also finds {quiet} series on the healthy cluster"));
    }
    let state = if alert.firing { "firing" } else { "pending" };
    (true, format!("{name} is {state} for {node} and quiet on the healthy cluster"))
}

/// An annotation's template: `{{ $labels.NAME }}`, `{{ $value }}`,
/// `{{ $value | humanize }}` and `{{ printf "%.Nf" $value }}`.
pub fn expand(template: &str, labels: &Labels, value: f64) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out += &rest[..start];
        let Some(end) = rest[start..].find("}}") else {
            out += &rest[start..];
            return out;
        };
        let action = rest[start + 2..start + end].trim_matches(|c: char| c == '-' || c.is_whitespace());
        out += &action_value(action, labels, value).unwrap_or_else(|| format!("{{{{{action}}}}}"));
        rest = &rest[start + end + 2..];
    }
    out + rest
}

fn action_value(action: &str, labels: &Labels, value: f64) -> Option<String> {
    let label = |name: &str| labels.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
    if let Some(name) = action.strip_prefix("$labels.") {
        return Some(label(name));
    }
    match action.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["$value"] => Some(crate::commands::host::node_exporter::go_float(value)),
        ["$value", "|", "humanize"] | ["humanize", "$value"] => Some(humanize(value)),
        ["printf", format, "$value"] => {
            let digits: usize = format.trim_matches('"').strip_prefix("%.")?.strip_suffix('f')?.parse().ok()?;
            Some(format!("{value:.digits$}", digits = digits.min(20)))
        }
        _ => None,
    }
}

/// Prometheus' `humanize`: four significant digits and an SI prefix.
fn humanize(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return crate::commands::host::node_exporter::go_float(value);
    }
    let (mut scaled, mut prefix) = (value, "");
    if value.abs() >= 1.0 {
        for p in ["k", "M", "G", "T", "P", "E", "Z", "Y"] {
            if scaled.abs() < 1000.0 {
                break;
            }
            scaled /= 1000.0;
            prefix = p;
        }
    } else {
        for p in ["m", "u", "n", "p", "f", "a", "z", "y"] {
            if scaled.abs() >= 1.0 {
                break;
            }
            scaled *= 1000.0;
            prefix = p;
        }
    }
    // Go's %.4g: four significant digits, trailing zeros dropped.
    let digits = 4 - (scaled.abs().log10().floor() as i32 + 1).clamp(0, 4);
    let text = format!("{scaled:.prec$}", prec = digits.max(0) as usize);
    let trimmed = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
    format!("{trimmed}{prefix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        parse_file("r.yml", text).err().unwrap_or_default()
    }

    #[test]
    fn rules_check_as_rulefmt_checks_them() {
        let good = "groups:\n- name: gpu\n  rules:\n  - alert: GpuPowerCapped\n    expr: DCGM_FI_DEV_POWER_USAGE < 400\n    for: 5m\n    labels:\n      severity: warning\n  - record: instance:up:sum\n    expr: sum by (instance) (up)\n";
        let groups = parse_file("r.yml", good).unwrap();
        assert_eq!(groups[0].rules.len(), 2);
        assert_eq!(groups[0].rules[0].for_ms, 300_000);
        assert_eq!(
            errors("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: sum(up\n"),
            ["r.yml: 5:11: group \"g\", rule 1, \"A\": could not parse expression: 1:7: parse error: unclosed left parenthesis"]
        );
        assert_eq!(errors("groups:\n- name: g\n  rules:\n  - expr: up\n"), ["r.yml: 4:11: group \"g\", rule 1, \"\": one of 'record' or 'alert' must be set"]);
        assert_eq!(
            errors("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    severity: page\n"),
            ["r.yml: yaml: unmarshal errors:\n  line 6: field severity not found in type rulefmt.Rule"]
        );
        assert_eq!(errors("groups:\n- name: g\n- name: g\n"), ["r.yml: 3:9: groupname: \"g\" is repeated in the same file"]);
    }

    #[test]
    fn annotations_fill_their_templates() {
        let labels = vec![("gpu".to_string(), "3".to_string()), ("instance".to_string(), "gpu-002:9400".to_string())];
        assert_eq!(expand("GPU {{ $labels.gpu }} on {{$labels.instance}} draws {{ $value }} W", &labels, 345.5), "GPU 3 on gpu-002:9400 draws 345.5 W");
        assert_eq!(expand("{{ $value | humanize }}", &labels, 1234567.0), "1.235M");
        assert_eq!(expand("{{ printf \"%.1f\" $value }}", &labels, 2.25), "2.2");
    }
}
