//! The Markdown of briefings, prompts, hints and explanations, parsed into a
//! small tree that the app renders as elements (never as an HTML string).
//!
//! It covers what lab text uses: paragraphs, headings, block quotes, bullet
//! and numbered lists (nested by indentation), fenced code, rules, and inline
//! code, strong, emphasis and links. Raw HTML has no meaning here: it stays
//! text. Own code rather than a full CommonMark crate keeps the browser build
//! small.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    Paragraph(Vec<Inline>),
    Heading(u8, Vec<Inline>),
    Quote(Vec<Block>),
    List { ordered: bool, items: Vec<Vec<Block>> },
    Code(String),
    Rule,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Code(String),
    Strong(Vec<Inline>),
    Emphasis(Vec<Inline>),
    Link { href: String, children: Vec<Inline> },
}

pub fn parse(source: &str) -> Vec<Block> {
    let lines: Vec<&str> = source.lines().collect();
    blocks(&lines)
}

/// `- `, `* `, `+ ` or `12. `: the marker's width and whether it is ordered.
fn list_marker(line: &str) -> Option<(usize, bool)> {
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    if indent > 3 {
        return None;
    }
    if let Some(rest) = trimmed.strip_prefix(['-', '*', '+']) {
        if rest.starts_with(' ') && !is_rule(line) {
            return Some((indent + 2, false));
        }
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) && trimmed[digits..].starts_with(". ") {
        return Some((indent + digits + 2, true));
    }
    None
}

fn is_rule(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    compact.len() >= 3 && (compact.chars().all(|c| c == '-') || compact.chars().all(|c| c == '*') || compact.chars().all(|c| c == '_'))
}

fn heading(line: &str) -> Option<(u8, &str)> {
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&level) && (trimmed.len() == level || trimmed[level..].starts_with(' ')) {
        Some((level as u8, trimmed[level..].trim().trim_end_matches('#').trim_end()))
    } else {
        None
    }
}

fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~")
}

fn is_quote(line: &str) -> bool {
    line.trim_start().starts_with('>')
}

/// Does this line start a block other than a paragraph?
fn starts_block(line: &str) -> bool {
    heading(line).is_some() || is_fence(line) || is_quote(line) || list_marker(line).is_some() || is_rule(line)
}

fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if line.trim().is_empty() {
            at += 1;
        } else if is_fence(line) {
            let fence = &line.trim_start()[..3];
            let mut code = Vec::new();
            at += 1;
            while at < lines.len() && !lines[at].trim_start().starts_with(fence) {
                code.push(lines[at]);
                at += 1;
            }
            at += 1;
            out.push(Block::Code(code.join("\n")));
        } else if let Some((level, text)) = heading(line) {
            out.push(Block::Heading(level, inlines(text)));
            at += 1;
        } else if is_rule(line) {
            out.push(Block::Rule);
            at += 1;
        } else if is_quote(line) {
            let mut inner = Vec::new();
            while at < lines.len() && is_quote(lines[at]) {
                let text = lines[at].trim_start()[1..].strip_prefix(' ').unwrap_or(&lines[at].trim_start()[1..]);
                inner.push(text);
                at += 1;
            }
            out.push(Block::Quote(blocks(&inner)));
        } else if let Some((_, ordered)) = list_marker(line) {
            let mut items: Vec<Vec<Block>> = Vec::new();
            while at < lines.len() {
                let Some((width, this_ordered)) = list_marker(lines[at]) else { break };
                if this_ordered != ordered {
                    break;
                }
                let mut item = vec![&lines[at][width.min(lines[at].len())..]];
                at += 1;
                // The item goes on while lines are indented under it, or are
                // lazy continuations of its text.
                while at < lines.len() {
                    let next = lines[at];
                    let indented = next.len() - next.trim_start().len() >= width.min(4).max(2);
                    if next.trim().is_empty() {
                        let continues = lines.get(at + 1).is_some_and(|after| {
                            !after.trim().is_empty() && after.len() - after.trim_start().len() >= 2
                        });
                        if !continues {
                            break;
                        }
                        item.push("");
                    } else if indented {
                        item.push(strip_indent(next, width));
                    } else if starts_block(next) {
                        break;
                    } else {
                        item.push(next.trim_start());
                    }
                    at += 1;
                }
                items.push(blocks(&item));
            }
            out.push(Block::List { ordered, items });
        } else {
            let mut text = vec![line.trim()];
            at += 1;
            while at < lines.len() && !lines[at].trim().is_empty() && !starts_block(lines[at]) {
                text.push(lines[at].trim());
                at += 1;
            }
            out.push(Block::Paragraph(inlines(&text.join("\n"))));
        }
    }
    out
}

fn strip_indent(line: &str, width: usize) -> &str {
    let spaces = line.len() - line.trim_start().len();
    &line[spaces.min(width)..]
}

/// Finds `closer` in `chars` from `from`, returning its position.
fn find(chars: &[char], from: usize, closer: &[char]) -> Option<usize> {
    (from..chars.len().saturating_sub(closer.len() - 1)).find(|&at| chars[at..].starts_with(closer))
}

pub fn inlines(text: &str) -> Vec<Inline> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut plain = String::new();
    let mut at = 0;
    let flush = |plain: &mut String, out: &mut Vec<Inline>| {
        if !plain.is_empty() {
            out.push(Inline::Text(std::mem::take(plain)));
        }
    };
    while at < chars.len() {
        let c = chars[at];
        match c {
            '\\' if at + 1 < chars.len() && chars[at + 1].is_ascii_punctuation() => {
                plain.push(chars[at + 1]);
                at += 2;
            }
            '\n' => {
                plain.push(' ');
                at += 1;
            }
            '`' => {
                let run = chars[at..].iter().take_while(|&&d| d == '`').count();
                let fence: Vec<char> = vec!['`'; run];
                match find(&chars, at + run, &fence) {
                    Some(close) => {
                        flush(&mut plain, &mut out);
                        let code: String = chars[at + run..close].iter().collect();
                        out.push(Inline::Code(code.trim().replace('\n', " ")));
                        at = close + run;
                    }
                    None => {
                        plain.extend(&chars[at..at + run]);
                        at += run;
                    }
                }
            }
            '*' | '_' if chars.get(at + 1) == Some(&c) => {
                let marker = [c, c];
                match find(&chars, at + 2, &marker).filter(|&close| close > at + 2) {
                    Some(close) => {
                        flush(&mut plain, &mut out);
                        let inner: String = chars[at + 2..close].iter().collect();
                        out.push(Inline::Strong(inlines(&inner)));
                        at = close + 2;
                    }
                    None => {
                        plain.extend(&marker);
                        at += 2;
                    }
                }
            }
            '*' | '_' => {
                // `_` inside a word (snake_case) is not emphasis.
                let inside_word = c == '_' && at > 0 && chars[at - 1].is_alphanumeric();
                let close = if inside_word { None } else { find(&chars, at + 1, &[c]) };
                match close.filter(|&close| close > at + 1 && !chars[at + 1].is_whitespace()) {
                    Some(close) => {
                        flush(&mut plain, &mut out);
                        let inner: String = chars[at + 1..close].iter().collect();
                        out.push(Inline::Emphasis(inlines(&inner)));
                        at = close + 1;
                    }
                    None => {
                        plain.push(c);
                        at += 1;
                    }
                }
            }
            '[' => match link(&chars, at) {
                Some((label, href, end)) => {
                    flush(&mut plain, &mut out);
                    out.push(Inline::Link { href, children: inlines(&label) });
                    at = end;
                }
                None => {
                    plain.push(c);
                    at += 1;
                }
            },
            _ => {
                plain.push(c);
                at += 1;
            }
        }
    }
    flush(&mut plain, &mut out);
    out
}

/// `[label](href)` at `at`: the label, the href and where the link ends.
fn link(chars: &[char], at: usize) -> Option<(String, String, usize)> {
    let mut depth = 0;
    let mut close = None;
    for (offset, &c) in chars[at..].iter().enumerate() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(at + offset);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let mut depth = 0;
    for (offset, &c) in chars[close + 1..].iter().enumerate() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let end = close + 1 + offset;
                    let label: String = chars[at + 1..close].iter().collect();
                    let href: String = chars[close + 2..end].iter().collect();
                    return Some((label, href.trim().to_string(), end + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// Only links to the web or within the page are kept: no `javascript:`,
/// `data:` or other schemes.
pub fn safe_href(href: &str) -> Option<&str> {
    let lower = href.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with('#')).then_some(href)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Inline {
        Inline::Text(s.to_string())
    }

    #[test]
    fn paragraphs_lists_quotes_and_code() {
        let source = "You have **gpu-001**.\nUse it.\n\n- `nvidia-smi` prints\n  the table.\n- `help` lists\n\n> A *simulation*.\n\n```\nnvidia-smi -L\n```\n\n1. one\n2. two\n---\n## Next";
        let parsed = parse(source);
        assert_eq!(
            parsed,
            vec![
                Block::Paragraph(vec![text("You have "), Inline::Strong(vec![text("gpu-001")]), text(". Use it.")]),
                Block::List {
                    ordered: false,
                    items: vec![
                        vec![Block::Paragraph(vec![Inline::Code("nvidia-smi".into()), text(" prints the table.")])],
                        vec![Block::Paragraph(vec![Inline::Code("help".into()), text(" lists")])],
                    ]
                },
                Block::Quote(vec![Block::Paragraph(vec![text("A "), Inline::Emphasis(vec![text("simulation")]), text(".")])]),
                Block::Code("nvidia-smi -L".into()),
                Block::List {
                    ordered: true,
                    items: vec![vec![Block::Paragraph(vec![text("one")])], vec![Block::Paragraph(vec![text("two")])]]
                },
                Block::Rule,
                Block::Heading(2, vec![text("Next")]),
            ]
        );
    }

    #[test]
    fn nested_lists_by_indentation() {
        let parsed = parse("- outer\n  - inner\n- second");
        let Block::List { items, .. } = &parsed[0] else { panic!("a list: {parsed:?}") };
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[0][1], Block::List { items, .. } if items.len() == 1));
    }

    #[test]
    fn links_html_and_snake_case() {
        let parsed = inlines("<script>x</script> [bad](javascript:alert(1)) [good](https://example.org) gpu_id and a_b_c");
        assert_eq!(parsed[0], text("<script>x</script> "));
        assert_eq!(parsed[1], Inline::Link { href: "javascript:alert(1)".into(), children: vec![text("bad")] });
        assert_eq!(parsed[3], Inline::Link { href: "https://example.org".into(), children: vec![text("good")] });
        assert_eq!(parsed[4], text(" gpu_id and a_b_c"));
        assert_eq!(safe_href("javascript:alert(1)"), None);
        assert_eq!(safe_href(" JavaScript:x"), None);
        assert_eq!(safe_href("https://x"), Some("https://x"));
    }

    #[test]
    fn unclosed_markers_stay_text() {
        assert_eq!(inlines("a * b ` c [d"), vec![text("a * b ` c [d")]);
        assert_eq!(inlines("**"), vec![text("**")]);
        assert_eq!(inlines("awk '{print $1}'"), vec![text("awk '{print $1}'")]);
    }
}
