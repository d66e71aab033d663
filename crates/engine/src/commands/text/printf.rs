//! `printf`: bash's builtin. The format is reused until the arguments run
//! out; `%s %b %c %d %i %u %o %x %X %e %f %g %%` with flags, width and
//! precision. Widths are bounded (a word may be at most 1 MiB).

use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::limits::MAX_WORD_BYTES;

pub struct Printf;

static SIGNATURE: Signature = Signature {
    name: "printf",
    summary: "format and print arguments",
    usage: "printf format [arguments]",
    flags: &[],
    examples: &[
        Example { command: "printf '%-8s %s\\n' $(hostname) ok", description: "aligned columns" },
        Example { command: "printf '%.1f GB/s\\n' 45.678", description: "a number with one decimal" },
    ],
};

/// The escapes of a format string (and of `%b` arguments): the character
/// and how many characters of `chars` (which starts at the backslash) it took.
fn escape(chars: &[char]) -> (Option<char>, usize) {
    let Some(&c) = chars.get(1) else {
        return (Some('\\'), 1);
    };
    let simple = match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        'a' => Some('\x07'),
        'b' => Some('\x08'),
        'f' => Some('\x0c'),
        'v' => Some('\x0b'),
        'e' | 'E' => Some('\x1b'),
        '\\' => Some('\\'),
        '"' => Some('"'),
        _ => None,
    };
    if simple.is_some() {
        return (simple, 2);
    }
    let (radix, max, skip) = match c {
        '0'..='7' => (8, 3, 1),
        'x' => (16, 2, 2),
        _ => return (None, 2),
    };
    let digits: String = chars[skip..].iter().take(max).take_while(|d| d.is_digit(radix)).collect();
    match u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32) {
        Some(ch) => (Some(ch), skip + digits.len()),
        None => (None, 2),
    }
}

/// A whole text with its escapes replaced (unknown ones kept as written).
fn unescape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    while at < chars.len() {
        if chars[at] != '\\' {
            out.push(chars[at]);
            at += 1;
            continue;
        }
        let (meant, taken) = escape(&chars[at..]);
        match meant {
            Some(c) => out.push(c),
            None => out.extend(&chars[at..at + taken]),
        }
        at += taken;
    }
    out
}

struct Spec {
    flags: String,
    width: Option<usize>,
    precision: Option<usize>,
    conversion: char,
}

/// A number argument as bash reads it: decimal, 0x hex, 0 octal, 'c (a
/// character's code); Err for text that is none of these.
fn integer(arg: &str) -> Result<i64, ()> {
    let text = arg.trim();
    if let Some(quoted) = text.strip_prefix(['\'', '"']) {
        return Ok(quoted.chars().next().map_or(0, |c| c as i64));
    }
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).map_err(|_| ())?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).map_err(|_| ())?
    } else {
        digits.parse::<i64>().map_err(|_| ())?
    };
    Ok(if negative { value.wrapping_neg() } else { value })
}

fn pad(text: String, spec: &Spec) -> String {
    let width = spec.width.unwrap_or(0);
    let len = text.chars().count();
    if len >= width {
        return text;
    }
    let fill = width - len;
    if spec.flags.contains('-') {
        format!("{text}{}", " ".repeat(fill))
    } else if spec.flags.contains('0') && !matches!(spec.conversion, 's' | 'b' | 'c') {
        let (sign, digits) = if text.starts_with(['-', '+']) { text.split_at(1) } else { ("", text.as_str()) };
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{text}", " ".repeat(fill))
    }
}

fn convert(spec: &Spec, arg: Option<&str>, errors: &mut String) -> String {
    let arg_text = arg.unwrap_or("");
    let number = |errors: &mut String| match arg {
        None => 0,
        Some(text) => integer(text).unwrap_or_else(|()| {
            errors.push_str(&format!("-bash: printf: {text}: invalid number\n"));
            0
        }),
    };
    let text = match spec.conversion {
        's' => match spec.precision {
            Some(precision) => arg_text.chars().take(precision).collect(),
            None => arg_text.to_string(),
        },
        'b' => unescape(arg_text),
        'c' => arg_text.chars().next().map(String::from).unwrap_or_default(),
        'd' | 'i' => {
            let value = number(errors);
            let sign = if spec.flags.contains('+') && value >= 0 {
                "+"
            } else if spec.flags.contains(' ') && value >= 0 {
                " "
            } else {
                ""
            };
            format!("{sign}{value}")
        }
        'u' => (number(errors) as u64).to_string(),
        'o' => format!("{:o}", number(errors)),
        'x' => format!("{:x}", number(errors)),
        'X' => format!("{:X}", number(errors)),
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            let value = match arg {
                None => 0.0,
                Some(text) => text.trim().parse::<f64>().unwrap_or_else(|_| {
                    errors.push_str(&format!("-bash: printf: {text}: invalid number\n"));
                    0.0
                }),
            };
            let precision = spec.precision.unwrap_or(6);
            let text = match spec.conversion {
                'e' => c_exponent(format!("{value:.precision$e}")),
                'E' => c_exponent(format!("{value:.precision$e}")).to_ascii_uppercase(),
                'g' | 'G' => {
                    let shown = format!("{value:.p$}", p = precision.saturating_sub(1).min(17));
                    shown.trim_end_matches('0').trim_end_matches('.').to_string()
                }
                _ => format!("{value:.precision$}"),
            };
            if spec.flags.contains('+') && value >= 0.0 {
                format!("+{text}")
            } else {
                text
            }
        }
        other => format!("%{other}"),
    };
    pad(text, spec)
}

/// Rust's `1.5e0` as C writes it: `1.5e+00`.
fn c_exponent(text: String) -> String {
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let (sign, digits) = match exponent.strip_prefix('-') {
                Some(digits) => ('-', digits),
                None => ('+', exponent),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => text,
    }
}

impl Command for Printf {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let Some(format) = args.first() else {
            return Output::error("-bash: printf: usage: printf [-v var] format [arguments]\n", 2);
        };
        let format: Vec<char> = format.chars().collect();
        let mut values = args[1..].iter().map(String::as_str);
        let (mut out, mut errors) = (String::new(), String::new());
        loop {
            let mut used = false;
            let mut at = 0;
            while at < format.len() {
                let c = format[at];
                if c == '\\' {
                    let (meant, taken) = escape(&format[at..]);
                    match meant {
                        Some(c) => out.push(c),
                        None => out.extend(&format[at..at + taken]),
                    }
                    at += taken;
                    continue;
                }
                if c != '%' {
                    out.push(c);
                    at += 1;
                    continue;
                }
                if format.get(at + 1) == Some(&'%') {
                    out.push('%');
                    at += 2;
                    continue;
                }
                at += 1;
                let flags: String = format[at..].iter().take_while(|c| "-+ 0#".contains(**c)).collect();
                at += flags.len();
                let number = |at: &mut usize| -> Option<usize> {
                    let digits: String = format[*at..].iter().take_while(|c| c.is_ascii_digit()).collect();
                    *at += digits.len();
                    (!digits.is_empty()).then(|| digits.parse::<usize>().unwrap_or(usize::MAX))
                };
                let width = number(&mut at);
                let precision = if format.get(at) == Some(&'.') {
                    at += 1;
                    Some(number(&mut at).unwrap_or(0))
                } else {
                    None
                };
                if width.unwrap_or(0) > MAX_WORD_BYTES || precision.unwrap_or(0) > MAX_WORD_BYTES {
                    return Output::error(format!("-bash: printf: width or precision over {MAX_WORD_BYTES}: out of range\n"), 1);
                }
                let Some(&conversion) = format.get(at) else {
                    errors.push_str("-bash: printf: missing format character\n");
                    break;
                };
                at += 1;
                if !"sbcdiuoxXeEfFgG".contains(conversion) {
                    errors.push_str(&format!("-bash: printf: `{conversion}': invalid format character\n"));
                    return Output { stdout: out, stderr: errors, status: 1, ..Output::default() };
                }
                let value = values.next();
                used |= value.is_some();
                out.push_str(&convert(&Spec { flags, width, precision, conversion }, value, &mut errors));
                if out.len() > crate::limits::MAX_OUTPUT_BYTES {
                    break;
                }
            }
            // The format is reused while arguments remain (and consumed some).
            if !used || values.len() == 0 || out.len() > crate::limits::MAX_OUTPUT_BYTES {
                break;
            }
        }
        let status = i32::from(!errors.is_empty());
        Output { stdout: out, stderr: errors, status, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn formats_like_bash() {
        let out = |line: &str| run_on_first_node(line).stdout;
        assert_eq!(out("printf '%s-%s\\n' a b c"), "a-b\nc-\n");
        assert_eq!(out("printf '%5d|%-5s|%05.1f\\n' 42 ab 3.14159"), "   42|ab   |003.1\n");
        assert_eq!(out("printf '%x %o %X %c %%\\n' 255 8 255 hello"), "ff 10 FF h %\n");
        assert_eq!(out("printf '%e\\n' 1500"), "1.500000e+03\n");
        assert_eq!(out("printf 'no newline'"), "no newline");
        assert_eq!(out("printf '%b' 'a\\tb\\n'"), "a\tb\n");
        let bad = run_on_first_node("printf '%d\\n' x");
        assert_eq!((bad.stdout.as_str(), bad.stderr.as_str(), bad.status), ("0\n", "-bash: printf: x: invalid number\n", 1));
        assert_eq!(run_on_first_node("printf '%9999999999s' x").status, 1);
    }
}
