//! TOML highlighting for the lab file's editor: the text as HTML with a
//! class per token (`tok-table`, `tok-key`, `tok-string`, `tok-number`,
//! `tok-bool`, `tok-comment`), every character escaped. Only colour comes
//! from here: the text area above it is what the instructor edits.

/// Past this size the editor shows the text plain: highlighting costs a
/// pass per keystroke.
pub const HIGHLIGHT_UP_TO: usize = 256 * 1024;

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
}

fn span(out: &mut String, class: &str, text: &str) {
    if text.is_empty() {
        return;
    }
    out.push_str("<span class=\"");
    out.push_str(class);
    out.push_str("\">");
    escape_into(out, text);
    out.push_str("</span>");
}

/// Where a string that starts at `rest[0]` ends in `rest` (past its closing
/// quote), or None when it runs past the line (unterminated, or a
/// multi-line string that goes on).
fn string_end(rest: &str, quote: char, multi: bool) -> Option<usize> {
    let opener = if multi { 3 } else { 1 };
    let close: String = std::iter::repeat_n(quote, opener).collect();
    let mut at = opener;
    while at < rest.len() {
        let tail = &rest[at..];
        if quote == '"' && tail.starts_with('\\') {
            at += 1 + tail[1..].chars().next().map_or(0, char::len_utf8);
            continue;
        }
        if tail.starts_with(close.as_str()) {
            // `""""` closes with the last three quotes.
            let extra = tail[close.len()..].chars().take_while(|c| *c == quote).count().min(2);
            return Some(at + close.len() + extra);
        }
        at += tail.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// The text as highlighted HTML.
pub fn toml_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    if text.len() > HIGHLIGHT_UP_TO {
        escape_into(&mut out, text);
        return out;
    }
    // The quote of a multi-line string still open at a line's start.
    let mut open: Option<char> = None;
    for line in text.split_inclusive('\n') {
        let mut rest = line;
        if let Some(quote) = open {
            let close: String = std::iter::repeat_n(quote, 3).collect();
            match rest.find(close.as_str()) {
                Some(at) => {
                    span(&mut out, "tok-string", &rest[..at + 3]);
                    rest = &rest[at + 3..];
                    open = None;
                }
                None => {
                    span(&mut out, "tok-string", rest);
                    continue;
                }
            }
        } else {
            let body = rest.trim_start();
            escape_into(&mut out, &rest[..rest.len() - body.len()]);
            rest = body;
            if rest.starts_with('[') {
                let end = rest.find(['#', '\n']).unwrap_or(rest.len());
                let header = rest[..end].trim_end();
                span(&mut out, "tok-table", header);
                rest = &rest[header.len()..];
            } else if let Some(equals) = rest.find('=').filter(|at| !rest[..*at].contains(['#', '"', '\''])) {
                span(&mut out, "tok-key", &rest[..equals]);
                out.push('=');
                rest = &rest[equals + 1..];
            }
        }
        while !rest.is_empty() {
            let c = rest.chars().next().unwrap_or(' ');
            let (class, len) = match c {
                '#' => ("tok-comment", rest.trim_end_matches('\n').len().max(1)),
                '"' | '\'' => {
                    let multi = rest.starts_with(if c == '"' { "\"\"\"" } else { "'''" });
                    match string_end(rest, c, multi) {
                        Some(end) => ("tok-string", end),
                        None => {
                            if multi {
                                open = Some(c);
                            }
                            ("tok-string", rest.len())
                        }
                    }
                }
                '0'..='9' | '+' | '-' => ("tok-number", rest.find(|c: char| !(c.is_ascii_alphanumeric() || "+-._:".contains(c))).unwrap_or(rest.len())),
                't' if rest.starts_with("true") => ("tok-bool", 4),
                'f' if rest.starts_with("false") => ("tok-bool", 5),
                _ => ("", c.len_utf8()),
            };
            if class.is_empty() {
                escape_into(&mut out, &rest[..len]);
            } else {
                span(&mut out, class, &rest[..len]);
            }
            rest = &rest[len..];
        }
    }
    // A final empty line needs a character to take its height.
    if text.is_empty() || text.ends_with('\n') {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_tables_keys_values_and_comments_and_escapes_the_rest() {
        let html = toml_html("[lab] # top\nid = \"a<b\"\ncount = 2\nok = true\n");
        assert_eq!(
            html,
            "<span class=\"tok-table\">[lab]</span> <span class=\"tok-comment\"># top</span>\n\
             <span class=\"tok-key\">id </span>= <span class=\"tok-string\">\"a&lt;b\"</span>\n\
             <span class=\"tok-key\">count </span>= <span class=\"tok-number\">2</span>\n\
             <span class=\"tok-key\">ok </span>= <span class=\"tok-bool\">true</span>\n "
        );
    }

    #[test]
    fn multi_line_strings_span_lines_and_bad_text_never_panics() {
        let html = toml_html("text = \"\"\"\nline <1>\n\"\"\" # done\n");
        assert!(html.contains("<span class=\"tok-string\">line &lt;1&gt;\n</span>"), "{html}");
        assert!(html.contains("<span class=\"tok-comment\"># done</span>"), "{html}");
        for text in ["\"", "'''", "\"\\", "a = \"é\\", "[", "= = =", "x = \"\"\"\"", "\u{1F600} = 1"] {
            let _ = toml_html(text);
        }
    }
}
