//! The HTTP API's JSON as Prometheus writes it (jsoniter, compact, no
//! trailing newline): sample times in seconds with exactly three decimals
//! unless whole, values as strings in Go's shortest form, plain strings
//! HTML-escaped but label names and values not.

use crate::commands::monitoring::promql::eval::{Labels, Value};

/// A JSON string; `html` escapes `<`, `>` and `&` as Go's encoder does.
pub fn string(text: &str, html: bool) -> String {
    crate::commands::go_format::json_string(text, html)
}

/// A sample's time: `1435781451` or `1435781451.781`.
pub fn timestamp(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let abs = ms.unsigned_abs();
    if abs % 1000 == 0 {
        format!("{sign}{}", abs / 1000)
    } else {
        format!("{sign}{}.{:03}", abs / 1000, abs % 1000)
    }
}

/// Go's `strconv.FormatFloat(value, 'f', -1, 64)`.
pub fn float_f(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    format!("{value}")
}

/// A sample's value as the API writes it: `'f'`, or `'e'` for the very small and very large.
pub fn value(value: f64) -> String {
    let abs = value.abs();
    if value.is_finite() && abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        return float_e(value);
    }
    float_f(value)
}

/// Go's `strconv.FormatFloat(value, 'e', -1, 64)`: at least two exponent digits.
pub fn float_e(value: f64) -> String {
    if !value.is_finite() {
        return float_f(value);
    }
    let text = format!("{value:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(digits) => ('-', digits),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// A label set as an object, its names in order.
pub fn labels(labels: &Labels) -> String {
    let pairs: Vec<String> = labels.iter().map(|(name, value)| format!("{}:{}", string(name, false), string(value, false))).collect();
    format!("{{{}}}", pairs.join(","))
}

/// A query's `data`: its result type and result at `at_ms`.
pub fn result(value: &Value, at_ms: i64) -> String {
    match value {
        Value::Scalar(v) => format!("{{\"resultType\":\"scalar\",\"result\":[{},\"{}\"]}}", scalar_time(at_ms), float_f(*v)),
        Value::String(s) => format!("{{\"resultType\":\"string\",\"result\":[{},{}]}}", scalar_time(at_ms), string(s, true)),
        Value::Vector(samples) => {
            let items: Vec<String> =
                samples.iter().map(|s| format!("{{\"metric\":{},\"value\":[{},\"{}\"]}}", labels(&s.labels), timestamp(at_ms), self::value(s.value))).collect();
            format!("{{\"resultType\":\"vector\",\"result\":[{}]}}", items.join(","))
        }
        Value::Matrix(series) => matrix(series),
    }
}

pub fn matrix(series: &[crate::commands::monitoring::promql::eval::Series]) -> String {
    let items: Vec<String> = series
        .iter()
        .map(|s| {
            let points: Vec<String> = s.points.iter().map(|(t, v)| format!("[{},\"{}\"]", timestamp(*t), value(*v))).collect();
            format!("{{\"metric\":{},\"values\":[{}]}}", labels(&s.labels), points.join(","))
        })
        .collect();
    format!("{{\"resultType\":\"matrix\",\"result\":[{}]}}", items.join(","))
}

/// A scalar's time: encoding/json's shortest float of the seconds.
fn scalar_time(ms: i64) -> String {
    float_f(ms as f64 / 1000.0)
}

pub fn success(data: &str) -> String {
    format!("{{\"status\":\"success\",\"data\":{data}}}")
}

pub fn error(kind: &str, message: &str) -> String {
    format!("{{\"status\":\"error\",\"errorType\":\"{kind}\",\"error\":{}}}", string(message, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_go_writes_them() {
        assert_eq!(timestamp(1_435_781_451_781), "1435781451.781");
        assert_eq!(timestamp(1_435_781_451_000), "1435781451");
        assert_eq!(timestamp(1_010), "1.010");
        assert_eq!(timestamp(-1), "-0.001");
        assert_eq!(value(1234567.8), "1234567.8");
        assert_eq!(value(0.0000012345678), "0.0000012345678");
        assert_eq!(value(1.2345678e-67), "1.2345678e-67");
        assert_eq!(value(1e-7), "1e-07");
        assert_eq!(value(1e21), "1e+21");
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(float_e(1.0), "1e+00");
        assert_eq!(float_e(25.0), "2.5e+01");
        assert_eq!(string("a<b", true), "\"a\\u003cb\"");
    }
}
