//! How Go's standard library writes values that several tools print:
//! one place, so that kubectl's JSON and Prometheus' API agree.

/// A JSON string as `encoding/json` writes it; `html` escapes `<`, `>` and
/// `&` too, as its encoder does by default.
pub fn json_string(text: &str, html: bool) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            '\n' => out += "\\n",
            '\r' => out += "\\r",
            '\t' => out += "\\t",
            '<' | '>' | '&' if html => out += &format!("\\u{:04x}", c as u32),
            c if (c as u32) < 0x20 => out += &format!("\\u{:04x}", c as u32),
            c => out.push(c),
        }
    }
    out + "\""
}
