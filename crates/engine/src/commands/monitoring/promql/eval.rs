//! Evaluating a parsed query at an instant, or at each step of a range,
//! over a [`Storage`] of scraped series, with Prometheus' semantics: an
//! instant selector takes each series' newest sample within the lookback
//! (5 minutes) unless a stale marker ended it; arithmetic drops the metric
//! name; a comparison filters unless `bool`; vectors match one-to-one on
//! their labels but the name, or as `on`/`ignoring` and `group_left`/
//! `group_right` say.

use super::functions::{self, Function};
use super::parser::{At, Cardinality, Expr, Grouping, MatchOp, Matcher, Matching, Selector, Shift};
use super::{valid_label_name, Error};
use crate::commands::text::regex::Regex;

/// Label pairs, sorted by name.
pub type Labels = Vec<(String, String)>;

#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub labels: Labels,
    pub value: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub labels: Labels,
    /// (milliseconds, value), oldest first.
    pub points: Vec<(i64, f64)>,
}

#[derive(Clone, Debug)]
pub enum Value {
    Scalar(f64),
    String(String),
    Vector(Vec<Sample>),
    Matrix(Vec<Series>),
}

/// The marker a scrape writes when a series it had before is gone.
pub const STALE: f64 = f64::from_bits(0x7ff0_0000_0000_0002);

pub fn is_stale(value: f64) -> bool {
    value.to_bits() == STALE.to_bits()
}

/// How far back an instant selector looks for a sample.
pub const LOOKBACK_MS: i64 = 5 * 60 * 1000;

/// The most steps one subquery may take.
const MAX_SUBQUERY_STEPS: i64 = 11_000;

/// The default step of a subquery without one: the global evaluation interval.
const SUBQUERY_STEP_MS: i64 = 15_000;

/// Where samples come from.
pub trait Storage {
    /// Every series whose labels satisfy all of `matchers`, with its samples
    /// in [`start`, `end`] (ms), in the order the series were first seen; a series that vanished
    /// has a [`STALE`] sample where it did.
    fn select(&mut self, matchers: &[Matcher], start: i64, end: i64) -> Result<Vec<Series>, Error>;
}

/// The labels without `__name__`.
pub fn without_name(labels: &Labels) -> Labels {
    labels.iter().filter(|(name, _)| name != "__name__").cloned().collect()
}

fn label<'l>(labels: &'l Labels, name: &str) -> Option<&'l str> {
    labels.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// `{a="b", c="d"}` as Prometheus prints a label set in its errors.
pub fn format_labels(labels: &Labels) -> String {
    let name = label(labels, "__name__").unwrap_or("");
    let pairs: Vec<String> = labels.iter().filter(|(n, _)| n != "__name__").map(|(n, v)| format!("{n}={}", super::lexer::quote(v))).collect();
    if pairs.is_empty() && !name.is_empty() {
        return name.to_string();
    }
    format!("{name}{{{}}}", pairs.join(", "))
}

/// The most samples one query may read, as Prometheus' `--query.max-samples` bounds it (scaled to a page).
pub const MAX_SAMPLES: usize = 2_000_000;

pub struct Evaluator<'s> {
    pub storage: &'s mut dyn Storage,
    /// The range query's start and end (ms), for `@ start()` and `@ end()`.
    pub start: i64,
    pub end: i64,
    samples: usize,
}

impl<'s> Evaluator<'s> {
    pub fn new(storage: &'s mut dyn Storage, start: i64, end: i64) -> Evaluator<'s> {
        Evaluator { storage, start, end, samples: 0 }
    }

    fn count(&mut self, n: usize) -> Result<(), Error> {
        self.samples += n;
        if self.samples > MAX_SAMPLES {
            return Err(Error::execution("query processing would load too many samples into memory in query execution"));
        }
        Ok(())
    }

    fn shifted(&self, shift: &Shift, at: i64) -> i64 {
        let base = match shift.at {
            Some(At::Millis(ms)) => ms,
            Some(At::Start) => self.start,
            Some(At::End) => self.end,
            None => at,
        };
        base - shift.offset_ms
    }

    fn select(&mut self, selector: &Selector, start: i64, end: i64) -> Result<Vec<Series>, Error> {
        let series = self.storage.select(&selector.matchers, start, end)?;
        self.count(series.iter().map(|s| s.points.len()).sum())?;
        Ok(series)
    }

    /// The query's value at `at` (ms).
    pub fn eval(&mut self, expr: &Expr, at: i64) -> Result<Value, Error> {
        match expr {
            Expr::Number(value) => Ok(Value::Scalar(*value)),
            Expr::String(text) => Ok(Value::String(text.clone())),
            Expr::Vector(selector) => {
                let time = self.shifted(&selector.shift, at);
                let series = self.select(selector, time - LOOKBACK_MS, time)?;
                Ok(Value::Vector(
                    series
                        .into_iter()
                        .filter_map(|s| s.points.last().filter(|(_, v)| !is_stale(*v)).map(|(_, v)| Sample { labels: s.labels.clone(), value: *v }))
                        .collect(),
                ))
            }
            Expr::Matrix(selector, range) => {
                let time = self.shifted(&selector.shift, at);
                let series = self.select(selector, time - range, time)?;
                Ok(Value::Matrix(
                    series
                        .into_iter()
                        .map(|mut s| {
                            s.points.retain(|(_, v)| !is_stale(*v));
                            s
                        })
                        .filter(|s| !s.points.is_empty())
                        .collect(),
                ))
            }
            Expr::Subquery { expr, range_ms, step_ms, shift } => {
                let time = self.shifted(shift, at);
                let step = step_ms.unwrap_or(SUBQUERY_STEP_MS).max(1);
                if range_ms / step > MAX_SUBQUERY_STEPS {
                    return Err(Error::execution("query processing would load too many samples into memory in query execution"));
                }
                // Steps aligned to multiples of the step, inside [time - range, time].
                let first = (time - range_ms).div_euclid(step) * step + if (time - range_ms).rem_euclid(step) == 0 { 0 } else { step };
                let mut steps = Vec::new();
                let mut t = first;
                while t <= time {
                    steps.push(t);
                    t += step;
                }
                self.count(steps.len())?;
                self.range(expr, &steps).map(Value::Matrix)
            }
            Expr::Negate(inner) => match self.eval(inner, at)? {
                Value::Scalar(value) => Ok(Value::Scalar(-value)),
                Value::Vector(samples) => Ok(Value::Vector(samples.into_iter().map(|s| Sample { labels: without_name(&s.labels), value: -s.value }).collect())),
                other => Ok(other),
            },
            Expr::Call(function, args) => self.call(function, args, at),
            Expr::Aggregate { op, grouping, param, expr } => {
                let param = match param.as_deref() {
                    Some(param) => Some(self.eval(param, at)?),
                    None => None,
                };
                let Value::Vector(samples) = self.eval(expr, at)? else { return Ok(Value::Vector(Vec::new())) };
                aggregate(op, grouping.as_ref(), param, samples).map(Value::Vector)
            }
            Expr::Binary { op, lhs, rhs, bool_modifier, matching } => {
                let left = self.eval(lhs, at)?;
                let right = self.eval(rhs, at)?;
                binary(op, left, right, *bool_modifier, matching.as_ref())
            }
        }
    }

    /// The query evaluated at each of `steps`: one series per label set.
    pub fn range(&mut self, expr: &Expr, steps: &[i64]) -> Result<Vec<Series>, Error> {
        let mut out: Vec<Series> = Vec::new();
        let mut index: std::collections::HashMap<Labels, usize> = std::collections::HashMap::new();
        for &t in steps {
            let samples = match self.eval(expr, t)? {
                Value::Scalar(value) => vec![Sample { labels: Vec::new(), value }],
                Value::Vector(samples) => samples,
                Value::String(_) | Value::Matrix(_) => {
                    return Err(Error::execution("invalid expression type for range query, must be Scalar or instant Vector"))
                }
            };
            for sample in samples {
                match index.get(&sample.labels) {
                    Some(&i) => out[i].points.push((t, sample.value)),
                    None => {
                        index.insert(sample.labels.clone(), out.len());
                        out.push(Series { labels: sample.labels, points: vec![(t, sample.value)] });
                    }
                }
            }
        }
        crate::sort::sort_by(&mut out, |a, b| a.labels.cmp(&b.labels));
        Ok(out)
    }

    fn call(&mut self, function: &Function, args: &[Expr], at: i64) -> Result<Value, Error> {
        let name = function.name;
        let mut values = Vec::new();
        for arg in args {
            values.push(self.eval(arg, at)?);
        }
        let scalar = |value: Option<&Value>| match value {
            Some(Value::Scalar(v)) => *v,
            _ => f64::NAN,
        };
        let string = |value: Option<&Value>| match value {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let vector = |values: &mut Vec<Value>, i: usize| match values.get_mut(i).map(|v| std::mem::replace(v, Value::Scalar(0.0))) {
            Some(Value::Vector(samples)) => samples,
            _ => Vec::new(),
        };
        let map = |samples: Vec<Sample>, f: &dyn Fn(f64) -> f64| -> Value {
            Value::Vector(samples.into_iter().map(|s| Sample { labels: without_name(&s.labels), value: f(s.value) }).collect())
        };
        let seconds = at as f64 / 1000.0;
        let result = match name {
            "time" => Value::Scalar(seconds),
            "pi" => Value::Scalar(std::f64::consts::PI),
            "vector" => Value::Vector(vec![Sample { labels: Vec::new(), value: scalar(values.first()) }]),
            "scalar" => {
                let samples = vector(&mut values, 0);
                Value::Scalar(if samples.len() == 1 { samples[0].value } else { f64::NAN })
            }
            "absent" => {
                let samples = vector(&mut values, 0);
                let labels = match args.first() {
                    Some(Expr::Vector(selector)) => absent_labels(&selector.matchers),
                    _ => Vec::new(),
                };
                Value::Vector(if samples.is_empty() { vec![Sample { labels, value: 1.0 }] } else { Vec::new() })
            }
            "absent_over_time" => {
                let empty = matches!(values.first(), Some(Value::Matrix(series)) if series.is_empty());
                let labels = match args.first() {
                    Some(Expr::Matrix(selector, _)) => absent_labels(&selector.matchers),
                    _ => Vec::new(),
                };
                Value::Vector(if empty { vec![Sample { labels, value: 1.0 }] } else { Vec::new() })
            }
            "clamp" => {
                let (low, high) = (scalar(values.get(1)), scalar(values.get(2)));
                let samples = vector(&mut values, 0);
                if high < low {
                    Value::Vector(Vec::new())
                } else {
                    map(samples, &|v| v.max(low).min(high))
                }
            }
            "clamp_min" | "clamp_max" => {
                let bound = scalar(values.get(1));
                let samples = vector(&mut values, 0);
                if name == "clamp_min" {
                    map(samples, &|v| v.max(bound))
                } else {
                    map(samples, &|v| v.min(bound))
                }
            }
            "round" => {
                let to = if values.len() > 1 { scalar(values.get(1)) } else { 1.0 };
                let samples = vector(&mut values, 0);
                let inverse = 1.0 / to;
                map(samples, &|v| (v * inverse + 0.5).floor() / inverse)
            }
            "sort" | "sort_desc" => {
                let mut samples = vector(&mut values, 0);
                crate::sort::sort_by(&mut samples, |a, b| if name == "sort" { a.value.total_cmp(&b.value) } else { b.value.total_cmp(&a.value) });
                Value::Vector(samples)
            }
            "timestamp" => {
                // The sample's own time: this emulation's selectors read the newest scrape.
                let samples = vector(&mut values, 0);
                let stamps = self.timestamps(args.first(), at)?;
                Value::Vector(
                    samples
                        .into_iter()
                        .map(|s| {
                            let stamp = stamps.iter().find(|(labels, _)| *labels == s.labels).map_or(seconds, |(_, t)| *t as f64 / 1000.0);
                            Sample { labels: without_name(&s.labels), value: stamp }
                        })
                        .collect(),
                )
            }
            "histogram_quantile" => {
                let q = scalar(values.first());
                let samples = vector(&mut values, 1);
                Value::Vector(functions::histogram_quantile(q, &samples))
            }
            "label_replace" => {
                let samples = vector(&mut values, 0);
                let (dst, replacement, src, pattern) = (string(values.get(1)), string(values.get(2)), string(values.get(3)), string(values.get(4)));
                let regex = Regex::new_perlish(&pattern, false)
                    .map_err(|error| Error::execution(&format!("invalid regular expression in label_replace(): {}", error.message.to_lowercase())))?;
                if !valid_label_name(&dst) {
                    return Err(Error::execution(&format!("invalid destination label name in label_replace(): {dst}")));
                }
                Value::Vector(functions::label_replace(samples, &dst, &replacement, &src, &regex))
            }
            "label_join" => {
                let samples = vector(&mut values, 0);
                let (dst, separator) = (string(values.get(1)), string(values.get(2)));
                let sources: Vec<String> = values.iter().skip(3).map(|v| string(Some(v))).collect();
                if !valid_label_name(&dst) {
                    return Err(Error::execution(&format!("invalid destination label name in label_join(): {dst}")));
                }
                Value::Vector(
                    samples
                        .into_iter()
                        .map(|mut s| {
                            let joined: Vec<&str> = sources.iter().map(|src| label(&s.labels, src).unwrap_or("")).collect();
                            let joined = joined.join(&separator);
                            functions::set_label(&mut s.labels, &dst, joined);
                            s
                        })
                        .collect(),
                )
            }
            "day_of_month" | "day_of_week" | "day_of_year" | "days_in_month" | "hour" | "minute" | "month" | "year" => {
                if values.is_empty() {
                    Value::Vector(vec![Sample { labels: Vec::new(), value: functions::date_part(name, seconds) }])
                } else {
                    map(vector(&mut values, 0), &|v| functions::date_part(name, v))
                }
            }
            _ if function.args.first() == Some(&super::parser::Type::Matrix) || name == "quantile_over_time" => {
                let (series, range, extra) = match (name, args) {
                    ("quantile_over_time", [_, range_arg]) => (values.pop(), range_of(range_arg), Some(scalar(values.first()))),
                    (_, [range_arg, ..]) => {
                        let extra = (values.len() > 1).then(|| scalar(values.get(1)));
                        (Some(std::mem::replace(&mut values[0], Value::Scalar(0.0))), range_of(range_arg), extra)
                    }
                    _ => (None, 0, None),
                };
                let Some(Value::Matrix(series)) = series else { return Ok(Value::Vector(Vec::new())) };
                let keep_name = name == "last_over_time";
                Value::Vector(
                    series
                        .into_iter()
                        .filter_map(|s| {
                            let value = functions::over_time(name, &s.points, self.range_end(args, at), range, extra)?;
                            let labels = if keep_name { s.labels } else { without_name(&s.labels) };
                            Some(Sample { labels, value })
                        })
                        .collect(),
                )
            }
            _ => match functions::elementwise(name, 0.0) {
                Some(_) => {
                    let samples = vector(&mut values, 0);
                    map(samples, &|v| functions::elementwise(name, v).unwrap_or(f64::NAN))
                }
                None => return Err(Error::execution(&format!("function \"{name}\" is not emulated"))),
            },
        };
        if let Value::Vector(samples) = &result {
            check_unique(samples)?;
        }
        Ok(result)
    }

    /// Where a range function's window ends: its selector's instant.
    fn range_end(&self, args: &[Expr], at: i64) -> i64 {
        let arg = args.iter().find(|arg| matches!(arg, Expr::Matrix(..) | Expr::Subquery { .. }));
        match arg {
            Some(Expr::Matrix(selector, _)) => self.shifted(&selector.shift, at),
            Some(Expr::Subquery { shift, .. }) => self.shifted(shift, at),
            _ => at,
        }
    }

    /// Each series' newest sample time, for `timestamp()` of a selector.
    fn timestamps(&mut self, arg: Option<&Expr>, at: i64) -> Result<Vec<(Labels, i64)>, Error> {
        let Some(Expr::Vector(selector)) = arg else { return Ok(Vec::new()) };
        let time = self.shifted(&selector.shift, at);
        let series = self.select(selector, time - LOOKBACK_MS, time)?;
        Ok(series.into_iter().filter_map(|s| s.points.last().map(|(t, _)| (s.labels.clone(), *t))).collect())
    }
}

fn range_of(expr: &Expr) -> i64 {
    match expr {
        Expr::Matrix(_, range) => *range,
        Expr::Subquery { range_ms, .. } => *range_ms,
        _ => 0,
    }
}

/// `absent()`'s labels: those its selector fixes by equality.
fn absent_labels(matchers: &[Matcher]) -> Labels {
    let mut labels: Labels = matchers.iter().filter(|m| m.op == MatchOp::Equal && m.name != "__name__").map(|m| (m.name.clone(), m.value.clone())).collect();
    crate::sort::sort_by(&mut labels, |a, b| a.0.cmp(&b.0));
    labels.dedup_by(|a, b| a.0 == b.0);
    labels
}

fn check_unique(samples: &[Sample]) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    for sample in samples {
        if !seen.insert(&sample.labels) {
            return Err(Error::execution("vector cannot contain metrics with the same labelset"));
        }
    }
    Ok(())
}

/// The labels an aggregation groups by.
fn group_key(labels: &Labels, grouping: Option<&Grouping>) -> Labels {
    match grouping {
        None => Vec::new(),
        Some(Grouping::By(names)) => labels.iter().filter(|(n, _)| names.contains(n)).cloned().collect(),
        Some(Grouping::Without(names)) => labels.iter().filter(|(n, _)| n != "__name__" && !names.contains(n)).cloned().collect(),
    }
}

fn aggregate(op: &str, grouping: Option<&Grouping>, param: Option<Value>, samples: Vec<Sample>) -> Result<Vec<Sample>, Error> {
    let mut groups: Vec<(Labels, Vec<Sample>)> = Vec::new();
    let mut index: std::collections::HashMap<Labels, usize> = std::collections::HashMap::new();
    let count_label = match (&param, op) {
        (Some(Value::String(label)), "count_values") => {
            if !valid_label_name(label) {
                return Err(Error::execution(&format!("invalid label name {label:?}")));
            }
            Some(label.clone())
        }
        _ => None,
    };
    for sample in samples {
        let mut key = group_key(&sample.labels, grouping);
        if let Some(label) = &count_label {
            functions::set_label(&mut key, label, crate::commands::host::node_exporter::go_float(sample.value));
        }
        match index.get(&key) {
            Some(&i) => groups[i].1.push(sample),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![sample]));
            }
        }
    }
    let parameter = match param {
        Some(Value::Scalar(value)) => value,
        _ => f64::NAN,
    };
    let mut out = Vec::new();
    for (key, members) in groups {
        let values = members.iter().map(|s| s.value);
        let value = match op {
            "sum" => values.sum(),
            "avg" => values.sum::<f64>() / members.len() as f64,
            "min" => values.reduce(|a, b| if b < a || a.is_nan() { b } else { a }).unwrap_or(f64::NAN),
            "max" => values.reduce(|a, b| if b > a || a.is_nan() { b } else { a }).unwrap_or(f64::NAN),
            "count" | "count_values" => members.len() as f64,
            "group" => 1.0,
            "stddev" => functions::variance(values).sqrt(),
            "stdvar" => functions::variance(values),
            "quantile" => functions::quantile(parameter, &mut values.collect::<Vec<f64>>()),
            "topk" | "bottomk" => {
                let k = if parameter.is_finite() { parameter.max(0.0) as usize } else { 0 };
                let mut members = members;
                // NaN ranks last either way, as Prometheus ranks it.
                crate::sort::sort_by(&mut members, |a, b| match (a.value.is_nan(), b.value.is_nan()) {
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    _ if op == "topk" => b.value.total_cmp(&a.value),
                    _ => a.value.total_cmp(&b.value),
                });
                out.extend(members.into_iter().take(k));
                continue;
            }
            _ => return Err(Error::execution(&format!("aggregation \"{op}\" is not emulated"))),
        };
        out.push(Sample { labels: key, value });
    }
    Ok(out)
}

fn arithmetic(op: &str, a: f64, b: f64) -> Option<f64> {
    Some(match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => a / b,
        "%" => a % b,
        "^" => a.powf(b),
        "atan2" => a.atan2(b),
        _ => return None,
    })
}

fn compare(op: &str, a: f64, b: f64) -> bool {
    match op {
        "==" => a == b,
        "!=" => a != b,
        "<" => a < b,
        "<=" => a <= b,
        ">" => a > b,
        _ => a >= b,
    }
}

/// The value of `a op b`, and whether a comparison keeps the sample.
fn apply(op: &str, a: f64, b: f64, bool_modifier: bool) -> (f64, bool) {
    match arithmetic(op, a, b) {
        Some(value) => (value, true),
        None => {
            let holds = compare(op, a, b);
            if bool_modifier {
                (if holds { 1.0 } else { 0.0 }, true)
            } else {
                (a, holds)
            }
        }
    }
}

fn binary(op: &str, left: Value, right: Value, bool_modifier: bool, matching: Option<&Matching>) -> Result<Value, Error> {
    let drops_name = arithmetic(op, 0.0, 0.0).is_some() || bool_modifier;
    match (left, right) {
        (Value::Scalar(a), Value::Scalar(b)) => Ok(Value::Scalar(apply(op, a, b, true).0)),
        (Value::Vector(samples), Value::Scalar(b)) => Ok(Value::Vector(
            samples
                .into_iter()
                .filter_map(|s| {
                    let (value, keep) = apply(op, s.value, b, bool_modifier);
                    keep.then(|| Sample { labels: if drops_name { without_name(&s.labels) } else { s.labels }, value })
                })
                .collect(),
        )),
        (Value::Scalar(a), Value::Vector(samples)) => Ok(Value::Vector(
            samples
                .into_iter()
                .filter_map(|s| {
                    let (value, keep) = apply(op, a, s.value, bool_modifier);
                    // A comparison keeps the vector's value, whichever side it is on.
                    let value = if arithmetic(op, 0.0, 0.0).is_none() && !bool_modifier { s.value } else { value };
                    keep.then(|| Sample { labels: if drops_name { without_name(&s.labels) } else { s.labels }, value })
                })
                .collect(),
        )),
        (Value::Vector(lhs), Value::Vector(rhs)) => vector_binary(op, lhs, rhs, bool_modifier, matching, drops_name).map(Value::Vector),
        _ => Err(Error::execution("binary expression must contain only scalar and instant vector types")),
    }
}

/// The labels two samples are matched on.
fn signature(labels: &Labels, matching: Option<&Matching>) -> Labels {
    match matching {
        Some(Matching { on: true, labels: names, .. }) => labels.iter().filter(|(n, _)| names.contains(n)).cloned().collect(),
        Some(Matching { on: false, labels: names, .. }) => labels.iter().filter(|(n, _)| n != "__name__" && !names.contains(n)).cloned().collect(),
        None => without_name(labels),
    }
}

fn vector_binary(
    op: &str,
    lhs: Vec<Sample>,
    rhs: Vec<Sample>,
    bool_modifier: bool,
    matching: Option<&Matching>,
    drops_name: bool,
) -> Result<Vec<Sample>, Error> {
    if super::parser::is_set_operator(op) {
        let right_signatures: std::collections::HashSet<Labels> = rhs.iter().map(|s| signature(&s.labels, matching)).collect();
        return Ok(match op {
            "and" => lhs.into_iter().filter(|s| right_signatures.contains(&signature(&s.labels, matching))).collect(),
            "unless" => lhs.into_iter().filter(|s| !right_signatures.contains(&signature(&s.labels, matching))).collect(),
            _ => {
                let left_signatures: std::collections::HashSet<Labels> = lhs.iter().map(|s| signature(&s.labels, matching)).collect();
                let mut out = lhs;
                out.extend(rhs.into_iter().filter(|s| !left_signatures.contains(&signature(&s.labels, matching))));
                out
            }
        });
    }
    let cardinality = matching.map_or(&Cardinality::OneToOne, |m| &m.cardinality);
    // The "one" side: the right unless group_right.
    let (many, one, swapped) = match cardinality {
        Cardinality::OneToMany(_) => (rhs, lhs, true),
        _ => (lhs, rhs, false),
    };
    let mut ones: std::collections::HashMap<Labels, &Sample> = std::collections::HashMap::new();
    for sample in &one {
        let key = signature(&sample.labels, matching);
        if let Some(earlier) = ones.insert(key.clone(), sample) {
            let side = if swapped { "left" } else { "right" };
            return Err(Error::execution(&format!(
                "found duplicate series for the match group {} on the {side} hand-side of the operation: [{}, {}];many-to-many matching not allowed: matching labels must be unique on one side",
                format_labels(&key),
                format_labels(&earlier.labels),
                format_labels(&sample.labels)
            )));
        }
    }
    let mut out = Vec::new();
    let mut seen: std::collections::HashMap<Labels, Labels> = std::collections::HashMap::new();
    for sample in &many {
        let key = signature(&sample.labels, matching);
        let Some(other) = ones.get(&key) else { continue };
        let (a, b) = if swapped { (other.value, sample.value) } else { (sample.value, other.value) };
        let (mut value, keep) = apply(op, a, b, bool_modifier);
        if !keep {
            continue;
        }
        if arithmetic(op, 0.0, 0.0).is_none() && !bool_modifier {
            // A filtering comparison keeps the left side's value.
            value = a;
        }
        let mut labels = if drops_name { without_name(&sample.labels) } else { sample.labels.clone() };
        match cardinality {
            Cardinality::OneToOne => {
                if let Some(m) = matching {
                    if m.on {
                        labels.retain(|(n, _)| m.labels.contains(n));
                    } else {
                        labels.retain(|(n, _)| !m.labels.contains(n));
                    }
                }
            }
            Cardinality::ManyToOne(include) | Cardinality::OneToMany(include) => {
                for name in include {
                    let value = label(&other.labels, name).unwrap_or("").to_string();
                    functions::set_label(&mut labels, name, value);
                }
            }
        }
        // One-to-one: a second sample of the many side on the same match group.
        let identity = if *cardinality == Cardinality::OneToOne { key.clone() } else { labels.clone() };
        if seen.insert(identity, sample.labels.clone()).is_some() {
            return Err(Error::execution(if *cardinality == Cardinality::OneToOne {
                "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)"
            } else {
                "multiple matches for labels: grouping labels must ensure unique matches"
            }));
        }
        out.push(Sample { labels, value });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::parser::parse;
    use super::*;

    /// Series held in memory, sampled every 15 s.
    struct Memory(Vec<Series>);

    impl Storage for Memory {
        fn select(&mut self, matchers: &[Matcher], start: i64, end: i64) -> Result<Vec<Series>, Error> {
            Ok(self
                .0
                .iter()
                .filter(|s| matchers.iter().all(|m| m.matches(label(&s.labels, &m.name).unwrap_or(""))))
                .map(|s| Series { labels: s.labels.clone(), points: s.points.iter().filter(|(t, _)| *t > start && *t <= end).copied().collect() })
                .filter(|s| !s.points.is_empty())
                .collect())
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        let mut labels: Labels = pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        labels.sort();
        labels
    }

    fn store() -> Memory {
        let counter = |instance: &str, per_second: f64| Series {
            labels: labels(&[("__name__", "bytes_total"), ("instance", instance), ("job", "node")]),
            points: (0..=40).map(|i| (i * 15_000, per_second * 15.0 * i as f64)).collect(),
        };
        let gauge = |instance: &str, value: f64| Series {
            labels: labels(&[("__name__", "temp"), ("instance", instance), ("job", "node")]),
            points: (0..=40).map(|i| (i * 15_000, value)).collect(),
        };
        Memory(vec![counter("a", 10.0), counter("b", 30.0), gauge("a", 40.0), gauge("b", 80.0)])
    }

    fn instant(query: &str, at: i64) -> Result<Value, Error> {
        let expr = parse(query)?;
        let mut storage = store();
        Evaluator::new(&mut storage, at, at).eval(&expr, at)
    }

    fn vector(query: &str) -> Vec<(String, f64)> {
        match instant(query, 600_000).expect("evaluates") {
            Value::Vector(samples) => samples.into_iter().map(|s| (format_labels(&s.labels), s.value)).collect(),
            other => panic!("not a vector: {other:?}"),
        }
    }

    #[test]
    fn rates_sums_and_filters() {
        let total = vector("sum(rate(bytes_total[5m]))");
        assert_eq!(total.len(), 1);
        assert!((total[0].1 - 40.0).abs() < 1e-9, "{total:?}");
        assert_eq!(vector("temp > 50"), [("temp{instance=\"b\", job=\"node\"}".to_string(), 80.0)]);
        assert_eq!(vector("max by (job) (temp)"), [("{job=\"node\"}".to_string(), 80.0)]);
        assert_eq!(vector("temp > bool 50").iter().map(|(_, v)| *v).collect::<Vec<_>>(), [0.0, 1.0]);
        assert_eq!(vector("topk(1, temp)"), [("temp{instance=\"b\", job=\"node\"}".to_string(), 80.0)]);
        assert_eq!(
            vector("round(rate(bytes_total[5m]) / on(instance) temp, 0.001)"),
            [("{instance=\"a\"}".to_string(), 0.25), ("{instance=\"b\"}".to_string(), 0.375)]
        );
        assert_eq!(vector("absent(nothing{job=\"x\"})"), [("{job=\"x\"}".to_string(), 1.0)]);
        assert_eq!(vector("avg_over_time(temp[10m]) and temp < 50"), [("{instance=\"a\", job=\"node\"}".to_string(), 40.0)]);
    }

    #[test]
    fn matching_errors_as_prometheus_words_them() {
        let error = instant("temp + on(job) temp", 600_000).unwrap_err().to_string();
        assert!(error.starts_with("found duplicate series for the match group {job=\"node\"} on the right hand-side of the operation:"), "{error}");
    }

    #[test]
    fn a_range_steps_through_the_window() {
        let expr = parse("temp").unwrap();
        let mut storage = store();
        let series = Evaluator::new(&mut storage, 0, 60_000).range(&expr, &[0, 30_000, 60_000]).unwrap();
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].points, [(0, 40.0), (30_000, 40.0), (60_000, 40.0)]);
    }
}
