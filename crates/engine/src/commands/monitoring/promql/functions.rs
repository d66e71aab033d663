//! PromQL's functions: each one's argument types (checked by the parser)
//! and what it computes, as Prometheus' `promql/functions.go` defines them.

use super::eval::{without_name, Labels, Sample};
use super::parser::Type;

#[derive(Debug)]
pub struct Function {
    pub name: &'static str,
    pub args: &'static [Type],
    /// How many of the last arguments may be left out.
    pub optional: usize,
    /// Whether the last argument may repeat.
    pub variadic: bool,
    pub returns: Type,
}

use Type::{Matrix as M, Scalar as S, String as Str, Vector as V};

const fn f(name: &'static str, args: &'static [Type], returns: Type) -> Function {
    Function { name, args, optional: 0, variadic: false, returns }
}

const fn optional(name: &'static str, args: &'static [Type], returns: Type) -> Function {
    Function { name, args, optional: 1, variadic: false, returns }
}

/// Every function, by name.
pub static FUNCTIONS: &[Function] = &[
    f("abs", &[V], V),
    f("absent", &[V], V),
    f("absent_over_time", &[M], V),
    f("acos", &[V], V),
    f("acosh", &[V], V),
    f("asin", &[V], V),
    f("asinh", &[V], V),
    f("atan", &[V], V),
    f("atanh", &[V], V),
    f("avg_over_time", &[M], V),
    f("ceil", &[V], V),
    f("changes", &[M], V),
    f("clamp", &[V, S, S], V),
    f("clamp_max", &[V, S], V),
    f("clamp_min", &[V, S], V),
    f("cos", &[V], V),
    f("cosh", &[V], V),
    f("count_over_time", &[M], V),
    optional("day_of_month", &[V], V),
    optional("day_of_week", &[V], V),
    optional("day_of_year", &[V], V),
    optional("days_in_month", &[V], V),
    f("deg", &[V], V),
    f("delta", &[M], V),
    f("deriv", &[M], V),
    f("exp", &[V], V),
    f("floor", &[V], V),
    f("histogram_quantile", &[S, V], V),
    optional("hour", &[V], V),
    f("idelta", &[M], V),
    f("increase", &[M], V),
    f("irate", &[M], V),
    Function { name: "label_join", args: &[V, Str, Str, Str], optional: 1, variadic: true, returns: V },
    f("label_replace", &[V, Str, Str, Str, Str], V),
    f("last_over_time", &[M], V),
    f("ln", &[V], V),
    f("log10", &[V], V),
    f("log2", &[V], V),
    f("max_over_time", &[M], V),
    f("min_over_time", &[M], V),
    optional("minute", &[V], V),
    optional("month", &[V], V),
    f("pi", &[], S),
    f("predict_linear", &[M, S], V),
    f("present_over_time", &[M], V),
    f("quantile_over_time", &[S, M], V),
    f("rad", &[V], V),
    f("rate", &[M], V),
    f("resets", &[M], V),
    optional("round", &[V, S], V),
    f("scalar", &[V], S),
    f("sgn", &[V], V),
    f("sin", &[V], V),
    f("sinh", &[V], V),
    f("sort", &[V], V),
    f("sort_desc", &[V], V),
    f("sqrt", &[V], V),
    f("stddev_over_time", &[M], V),
    f("stdvar_over_time", &[M], V),
    f("sum_over_time", &[M], V),
    f("tan", &[V], V),
    f("tanh", &[V], V),
    f("time", &[], S),
    f("timestamp", &[V], V),
    f("vector", &[S], V),
    optional("year", &[V], V),
];

pub fn find(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|function| function.name == name)
}

/// A function of one value, applied to each sample (its name dropped).
pub fn elementwise(name: &str, value: f64) -> Option<f64> {
    Some(match name {
        "abs" => value.abs(),
        "acos" => value.acos(),
        "acosh" => value.acosh(),
        "asin" => value.asin(),
        "asinh" => value.asinh(),
        "atan" => value.atan(),
        "atanh" => value.atanh(),
        "ceil" => value.ceil(),
        "cos" => value.cos(),
        "cosh" => value.cosh(),
        "deg" => value.to_degrees(),
        "exp" => value.exp(),
        "floor" => value.floor(),
        "ln" => value.ln(),
        "log10" => value.log10(),
        "log2" => value.log2(),
        "rad" => value.to_radians(),
        "sgn" => {
            if value > 0.0 {
                1.0
            } else if value < 0.0 {
                -1.0
            } else {
                value
            }
        }
        "sin" => value.sin(),
        "sinh" => value.sinh(),
        "sqrt" => value.sqrt(),
        "tan" => value.tan(),
        "tanh" => value.tanh(),
        _ => return None,
    })
}

/// A function over each series' samples in its range, at `at` (ms) with
/// the range `range_ms`: None leaves the series out of the result.
pub fn over_time(name: &str, points: &[(i64, f64)], at: i64, range_ms: i64, extra: Option<f64>) -> Option<f64> {
    let values = || points.iter().map(|(_, v)| *v);
    let count = points.len() as f64;
    match name {
        "rate" => extrapolated(points, at - range_ms, at, true, true),
        "increase" => extrapolated(points, at - range_ms, at, true, false),
        "delta" => extrapolated(points, at - range_ms, at, false, false),
        "irate" | "idelta" => {
            let [.., (t0, v0), (t1, v1)] = points else { return None };
            let mut change = v1 - v0;
            if name == "irate" {
                if *v1 < *v0 {
                    change = *v1;
                }
                let seconds = (t1 - t0) as f64 / 1000.0;
                if seconds == 0.0 {
                    return None;
                }
                change /= seconds;
            }
            Some(change)
        }
        "deriv" => (points.len() >= 2).then(|| regression(points, points[0].0).0),
        "predict_linear" => (points.len() >= 2).then(|| {
            let (slope, intercept) = regression(points, at);
            intercept + slope * extra.unwrap_or(0.0)
        }),
        "resets" => Some(points.windows(2).filter(|pair| pair[1].1 < pair[0].1).count() as f64),
        "changes" => Some(points.windows(2).filter(|pair| pair[1].1 != pair[0].1 && !(pair[1].1.is_nan() && pair[0].1.is_nan())).count() as f64),
        _ if points.is_empty() => None,
        "avg_over_time" => Some(mean(values())),
        "min_over_time" => values().reduce(|a, b| if b < a || a.is_nan() { b } else { a }),
        "max_over_time" => values().reduce(|a, b| if b > a || a.is_nan() { b } else { a }),
        "sum_over_time" => Some(values().sum()),
        "count_over_time" => Some(count),
        "last_over_time" => points.last().map(|(_, v)| *v),
        "present_over_time" => Some(1.0),
        "stddev_over_time" => Some(variance(values()).sqrt()),
        "stdvar_over_time" => Some(variance(values())),
        "quantile_over_time" => {
            let mut sorted: Vec<f64> = values().collect();
            Some(quantile(extra.unwrap_or(f64::NAN), &mut sorted))
        }
        _ => None,
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut count) = (0.0, 0.0);
    for value in values {
        sum += value;
        count += 1.0;
    }
    sum / count
}

pub fn variance(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let average = mean(values.clone());
    mean(values.map(|v| (v - average) * (v - average)))
}

/// The φ-quantile of `values`, interpolated between ranks as Prometheus does.
pub fn quantile(q: f64, values: &mut [f64]) -> f64 {
    if values.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    crate::sort::sort_by(values, |a, b| a.total_cmp(b));
    let rank = q * (values.len() - 1) as f64;
    let lower = rank.floor().max(0.0) as usize;
    let upper = (lower + 1).min(values.len() - 1);
    let weight = rank - rank.floor();
    values[lower] * (1.0 - weight) + values[upper] * weight
}

/// Least squares over the points, time in seconds from `intercept_at` (ms):
/// (slope, intercept).
fn regression(points: &[(i64, f64)], intercept_at: i64) -> (f64, f64) {
    let n = points.len() as f64;
    let (mut sum_x, mut sum_y, mut sum_xy, mut sum_x2) = (0.0, 0.0, 0.0, 0.0);
    for (t, v) in points {
        let x = (t - intercept_at) as f64 / 1000.0;
        sum_x += x;
        sum_y += v;
        sum_xy += x * v;
        sum_x2 += x * x;
    }
    let covariance = sum_xy - sum_x * sum_y / n;
    let variance = sum_x2 - sum_x * sum_x / n;
    let slope = covariance / variance;
    (slope, sum_y / n - slope * sum_x / n)
}

/// `rate`, `increase` and `delta`: the change over the samples, corrected
/// for counter resets, extrapolated towards the range's ends (by at most
/// half a sample interval past the samples, and never below zero for a
/// counter), per second for a rate.
fn extrapolated(points: &[(i64, f64)], start: i64, end: i64, counter: bool, per_second: bool) -> Option<f64> {
    let [(first_t, first_v), .., (last_t, last_v)] = points else { return None };
    let mut change = last_v - first_v;
    if counter {
        for pair in points.windows(2) {
            if pair[1].1 < pair[0].1 {
                change += pair[0].1;
            }
        }
    }
    let sampled = (last_t - first_t) as f64 / 1000.0;
    let mut to_start = (first_t - start) as f64 / 1000.0;
    let to_end = (end - last_t) as f64 / 1000.0;
    let average = sampled / (points.len() - 1) as f64;
    // Past 1.1 intervals from an end, extrapolate half an interval only
    // (Prometheus 2.51 on: this first, then the counter's zero point).
    let threshold = average * 1.1;
    if to_start >= threshold {
        to_start = average / 2.0;
    }
    let to_end = if to_end >= threshold { average / 2.0 } else { to_end };
    if counter && change > 0.0 && *first_v >= 0.0 {
        let to_zero = sampled * (first_v / change);
        if to_zero < to_start {
            to_start = to_zero;
        }
    }
    let interval = sampled + to_start + to_end;
    let mut factor = interval / sampled;
    if per_second {
        factor /= (end - start) as f64 / 1000.0;
    }
    Some(change * factor)
}

/// `histogram_quantile(q, buckets)`: each group of `le` buckets (a
/// cumulative count per upper bound, `+Inf` last) gives the value below
/// which a share `q` of observations fell, interpolating linearly inside
/// the bucket it lands in.
pub fn histogram_quantile(q: f64, samples: &[Sample]) -> Vec<Sample> {
    let mut groups: Vec<(Labels, Vec<(f64, f64)>)> = Vec::new();
    for sample in samples {
        let Some(bound) = sample.labels.iter().find(|(name, _)| name == "le").map(|(_, v)| parse_bound(v)) else { continue };
        let Some(bound) = bound else { continue };
        let labels: Labels = without_name(&sample.labels).into_iter().filter(|(name, _)| name != "le").collect();
        match groups.iter_mut().find(|(l, _)| *l == labels) {
            Some((_, buckets)) => buckets.push((bound, sample.value)),
            None => groups.push((labels, vec![(bound, sample.value)])),
        }
    }
    groups.into_iter().map(|(labels, mut buckets)| Sample { labels, value: bucket_quantile(q, &mut buckets) }).collect()
}

fn parse_bound(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        _ => text.parse().ok(),
    }
}

fn bucket_quantile(q: f64, buckets: &mut [(f64, f64)]) -> f64 {
    if q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    crate::sort::sort_by(buckets, |a, b| a.0.total_cmp(&b.0));
    if buckets.len() < 2 || buckets.last().is_none_or(|(bound, _)| !bound.is_infinite()) {
        return f64::NAN;
    }
    // Counts that fall (a scrape between buckets' updates) are raised.
    for i in 1..buckets.len() {
        if buckets[i].1 < buckets[i - 1].1 {
            buckets[i].1 = buckets[i - 1].1;
        }
    }
    let total = buckets[buckets.len() - 1].1;
    if total == 0.0 {
        return f64::NAN;
    }
    let mut rank = q * total;
    let b = buckets.iter().position(|(_, count)| *count >= rank).unwrap_or(buckets.len() - 1);
    if b == buckets.len() - 1 {
        return buckets[buckets.len() - 2].0;
    }
    if b == 0 && buckets[0].0 <= 0.0 {
        return buckets[0].0;
    }
    let (mut start, end, mut count) = (0.0, buckets[b].0, buckets[b].1);
    if b > 0 {
        start = buckets[b - 1].0;
        count -= buckets[b - 1].1;
        rank -= buckets[b - 1].1;
    }
    start + (end - start) * (rank / count)
}

/// `label_replace(v, dst, replacement, src, regex)`: where the regex
/// matches all of `src`'s value, `dst` is set to the replacement with
/// `$1`-style groups filled in (an empty result removes the label).
pub fn label_replace(samples: Vec<Sample>, dst: &str, replacement: &str, src: &str, pattern: &crate::commands::text::regex::Regex) -> Vec<Sample> {
    samples
        .into_iter()
        .map(|mut sample| {
            let value = sample.labels.iter().find(|(name, _)| name == src).map(|(_, v)| v.clone()).unwrap_or_default();
            let chars: Vec<char> = value.chars().collect();
            if pattern.ends_from(&chars, 0).contains(&chars.len()) {
                let groups = pattern.captures(&chars, 0, chars.len());
                let group = |n: usize| groups.get(n).copied().flatten().map(|(a, b)| chars[a..b].iter().collect::<String>()).unwrap_or_default();
                let result = expand(replacement, group);
                set_label(&mut sample.labels, dst, result);
            }
            sample
        })
        .collect()
}

/// `$1`, `${1}` and `$$` in a replacement.
fn expand(template: &str, group: impl Fn(usize) -> String) -> String {
    let chars: Vec<char> = template.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '$' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'$') {
            out.push('$');
            i += 2;
            continue;
        }
        let (digits, end) = if chars.get(i + 1) == Some(&'{') {
            let close = chars[i..].iter().position(|c| *c == '}').map(|p| p + i);
            match close {
                Some(close) => (chars[i + 2..close].iter().collect::<String>(), close + 1),
                None => (String::new(), i + 1),
            }
        } else {
            let mut end = i + 1;
            while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                end += 1;
            }
            (chars[i + 1..end].iter().collect(), end)
        };
        if let Ok(n) = digits.parse::<usize>() {
            out += &group(n);
        }
        i = end.max(i + 1);
    }
    out
}

pub fn set_label(labels: &mut Labels, name: &str, value: String) {
    labels.retain(|(n, _)| n != name);
    if !value.is_empty() {
        labels.push((name.to_string(), value));
        crate::sort::sort_by(labels, |a, b| a.0.cmp(&b.0));
    }
}

/// The date functions, of a time in seconds (UTC).
pub fn date_part(name: &str, seconds: f64) -> f64 {
    let crate::model::time::Civil { year, month, day, hour, minute, .. } = crate::model::time::civil(seconds.floor() as i64);
    let days = days_in_month(year, month);
    match name {
        "day_of_month" => day as f64,
        "day_of_week" => ((seconds.floor() as i64).div_euclid(86_400) + 4).rem_euclid(7) as f64,
        "day_of_year" => {
            let before: i64 = (1..month).map(|m| days_in_month(year, m)).sum();
            (before + day as i64) as f64
        }
        "days_in_month" => days as f64,
        "hour" => hour as f64,
        "minute" => minute as f64,
        "month" => month as f64,
        _ => year as f64,
    }
}

fn days_in_month(year: i64, month: u32) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_extrapolates_to_the_window_as_prometheus_does() {
        // A counter growing 10 a second, scraped every 15 s, samples at
        // 15..300 s of a 300 s window ending at 300 s: exactly 10/s.
        let points: Vec<(i64, f64)> = (1..=20).map(|i| (i * 15_000, 1000.0 + 150.0 * i as f64)).collect();
        let rate = over_time("rate", &points, 300_000, 300_000, None).unwrap();
        assert!((rate - 10.0).abs() < 1e-9, "{rate}");
        // A reset in the middle is counted as a restart from zero.
        let reset = [(0, 100.0), (15_000, 250.0), (30_000, 50.0), (45_000, 200.0)];
        let increase = over_time("increase", &reset, 45_000, 45_000, None).unwrap();
        assert!((increase - 350.0).abs() < 1e-9, "{increase}");
    }

    #[test]
    fn histogram_quantiles_interpolate_in_their_bucket() {
        let bucket = |le: &str, count: f64| Sample { labels: vec![("le".into(), le.into())], value: count };
        let samples = [bucket("0.1", 50.0), bucket("0.5", 90.0), bucket("1", 100.0), bucket("+Inf", 100.0)];
        let result = histogram_quantile(0.9, &samples);
        assert_eq!(result.len(), 1);
        assert!((result[0].value - 0.5).abs() < 1e-9);
        assert!((histogram_quantile(0.5, &samples)[0].value - 0.1).abs() < 1e-9);
        assert!((histogram_quantile(0.7, &samples)[0].value - 0.3).abs() < 1e-9);
    }

    #[test]
    fn replacements_fill_their_groups() {
        assert_eq!(expand("$1-${2}x$$", |n| format!("g{n}")), "g1-g2x$");
    }
}
