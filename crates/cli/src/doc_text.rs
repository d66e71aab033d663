//! Lab text (a `Doc`) as plain terminal text: paragraphs apart, lists with
//! their marks, quotes with `> `, code indented. Control characters in a
//! lab's text are shown as U+FFFD: a lab file is read, never obeyed by the
//! terminal (the app's "text, never markup").

use clusterlab_engine::lab::doc::{Block, Inline};
use clusterlab_engine::lab::Doc;

/// The doc as lines of text, each starting with `indent`.
pub fn render(doc: &Doc, indent: &str) -> String {
    let mut out = String::new();
    blocks(&doc.0, indent, &mut out);
    out
}

/// Text from a lab with its control characters (other than a line end)
/// made visible.
pub fn safe(text: &str) -> String {
    text.chars().map(|c| if c.is_control() && c != '\n' { '\u{fffd}' } else { c }).collect()
}

fn blocks(content: &[Block], indent: &str, out: &mut String) {
    for (at, block) in content.iter().enumerate() {
        if at > 0 {
            out.push('\n');
        }
        block_text(block, indent, out);
    }
}

fn block_text(block: &Block, indent: &str, out: &mut String) {
    match block {
        Block::Paragraph(content) | Block::Heading(_, content) => lines(&inlines(content), indent, indent, out),
        Block::Quote(content) => blocks(content, &format!("{indent}> "), out),
        Block::List { start, items } => {
            for (at, item) in items.iter().enumerate() {
                let mark = match start {
                    Some(first) => format!("{}. ", first.saturating_add(at as u64)),
                    None => "- ".to_string(),
                };
                let mut text = String::new();
                blocks(item, "", &mut text);
                let rest = format!("{indent}{}", " ".repeat(mark.len()));
                lines(text.trim_end(), &format!("{indent}{mark}"), &rest, out);
            }
        }
        Block::Code(code) => lines(code.trim_end_matches('\n'), &format!("{indent}    "), &format!("{indent}    "), out),
        Block::Table { head, rows } => {
            for row in std::iter::once(head).chain(rows) {
                let cells: Vec<String> = row.iter().map(|cell| inlines(cell)).collect();
                lines(&cells.join(" | "), indent, indent, out);
            }
        }
        Block::Rule => lines("---", indent, indent, out),
    }
}

/// `text`'s lines, the first after `first`, the others after `rest`.
fn lines(text: &str, first: &str, rest: &str, out: &mut String) {
    for (at, line) in text.split('\n').enumerate() {
        out.push_str(if at == 0 { first } else { rest });
        out.push_str(&safe(line));
        out.push('\n');
    }
}

fn inlines(content: &[Inline]) -> String {
    let mut out = String::new();
    for inline in content {
        match inline {
            Inline::Text(text) => out.push_str(text),
            Inline::Code(code) => {
                out.push('`');
                out.push_str(code);
                out.push('`');
            }
            Inline::Strong(children) | Inline::Emphasis(children) => out.push_str(&inlines(children)),
            Inline::Link { href, children } => {
                let text = inlines(children);
                out.push_str(&text);
                if text != *href && !href.starts_with('#') {
                    out.push_str(&format!(" <{href}>"));
                }
            }
            Inline::Break => out.push('\n'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_shape() {
        let doc = Doc(vec![
            Block::Paragraph(vec![Inline::Text("Use ".into()), Inline::Code("nvidia-smi".into()), Inline::Text(".".into())]),
            Block::List {
                start: None,
                items: vec![vec![Block::Paragraph(vec![Inline::Text("one".into())])], vec![Block::Paragraph(vec![Inline::Text("two".into())])]],
            },
            Block::Quote(vec![Block::Paragraph(vec![Inline::Text("A simulation.\u{1b}[2J".into())])]),
            Block::List { start: Some(3), items: vec![vec![Block::Paragraph(vec![Inline::Text("a\nb".into())])]] },
        ]);
        assert_eq!(render(&doc, "  "), "  Use `nvidia-smi`.\n\n  - one\n  - two\n\n  > A simulation.\u{fffd}[2J\n\n  3. a\n     b\n");
    }
}
