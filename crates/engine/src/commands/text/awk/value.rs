//! awk's values: strings, numbers and the strnums fields hold, with the
//! conversions POSIX gives them (and gawk's number output).

#[derive(Clone, Debug)]
pub(super) enum Value {
    Num(f64),
    Str(String),
    /// Input data (fields, `-v` values) that looks numeric compares as a number.
    StrNum(String),
}

/// awk's string-to-number: the longest leading number, else 0.
pub(super) fn leading_number(text: &str) -> f64 {
    let trimmed = text.trim_start_matches([' ', '\t', '\n']);
    let bytes = trimmed.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    let mut digits = 0;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
        digits += 1;
    }
    if bytes.get(end) == Some(&b'.') {
        end += 1;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return 0.0;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut probe = end + 1;
        if matches!(bytes.get(probe), Some(b'+' | b'-')) {
            probe += 1;
        }
        if bytes.get(probe).is_some_and(u8::is_ascii_digit) {
            end = probe;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
        }
    }
    trimmed[..end].parse().unwrap_or(0.0)
}

pub(super) fn looks_numeric(text: &str) -> bool {
    let trimmed = text.trim_matches([' ', '\t', '\n']);
    !trimmed.is_empty()
        && trimmed.trim_start_matches(['+', '-']).starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && trimmed.parse::<f64>().is_ok()
        && !trimmed.contains(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
}

/// gawk prints integral values as integers and others with `%.6g` (the
/// default CONVFMT and OFMT; the machine applies others).
pub(super) fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan".into() } else { "+nan".into() };
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf".into() } else { "+inf".into() };
    }
    // Integral values print whole, however large (gawk's `%.0f` past a long).
    if n == n.trunc() {
        return if n.abs() < 1e16 { format!("{}", n as i64) } else { format!("{n:.0}") };
    }
    format_g(n, 6, false)
}

/// C's `%.Pg`.
pub(super) fn format_g(n: f64, precision: usize, alternate: bool) -> String {
    let precision = precision.max(1);
    if n == 0.0 {
        return "0".into();
    }
    let exponent = n.abs().log10().floor() as i32;
    // Rounding may carry into the next power of ten.
    let scientific = format!("{:.*e}", precision - 1, n);
    let (mantissa, exp) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exp: i32 = exp.parse().unwrap_or(exponent);
    let trim = |text: String| -> String {
        if alternate || !text.contains('.') {
            text
        } else {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        let mantissa = trim(mantissa.to_string());
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim(format!("{n:.decimals$}"))
    }
}

impl Value {
    pub(super) fn num(&self) -> f64 {
        match self {
            Value::Num(n) => *n,
            Value::Str(s) | Value::StrNum(s) => leading_number(s),
        }
    }

    pub(super) fn string(&self) -> String {
        match self {
            Value::Num(n) => number_to_string(*n),
            Value::Str(s) | Value::StrNum(s) => s.clone(),
        }
    }

    pub(super) fn truthy(&self) -> bool {
        match self {
            Value::Num(n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::StrNum(s) => {
                if looks_numeric(s) {
                    leading_number(s) != 0.0
                } else {
                    !s.is_empty()
                }
            }
        }
    }

    pub(super) fn is_numeric(&self) -> bool {
        match self {
            Value::Num(_) => true,
            Value::Str(_) => false,
            Value::StrNum(s) => looks_numeric(s),
        }
    }
}
