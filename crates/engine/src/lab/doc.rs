//! Lab text (briefings, prompts, hints, explanations) as a small Markdown
//! tree. The tree is made when a lab is built (CommonMark, parsed by
//! pulldown-cmark under the `authoring` feature) and travels in the lab's
//! data, so the app renders elements and carries no Markdown parser.
//!
//! Raw HTML has no meaning here: it is text. Only http(s) and in-page links
//! keep their target. `{var}`s stay in the text until a trainee's variant
//! substitutes them ([`Doc::substitute`]).

use serde::{Deserialize, Serialize};

use super::template::{self, Values};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Doc(pub Vec<Block>);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Block {
    Paragraph(Vec<Inline>),
    /// Level 1 to 6, as written; the app shifts them under its own headings.
    Heading(u8, Vec<Inline>),
    Quote(Vec<Block>),
    /// `start` is the first number of an ordered list, None for bullets.
    List {
        start: Option<u64>,
        items: Vec<Vec<Block>>,
    },
    Code(String),
    /// A header row, then body rows; each cell is inline text.
    Table {
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
    Rule,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Inline {
    Text(String),
    Code(String),
    Strong(Vec<Inline>),
    Emphasis(Vec<Inline>),
    /// Only http(s) and `#fragment` targets are kept (see [`safe_href`]).
    Link {
        href: String,
        children: Vec<Inline>,
    },
    /// A hard line break.
    Break,
}

/// The target a link may keep: http(s) or a fragment in the page.
pub fn safe_href(href: &str) -> Option<&str> {
    let lower = href.trim_start().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with('#')).then_some(href)
}

impl Doc {
    /// A paragraph of plain text.
    pub fn text(text: impl Into<String>) -> Doc {
        Doc(vec![Block::Paragraph(vec![Inline::Text(text.into())])])
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The doc with `{var}`s replaced by their values; the name of the first
    /// variable that has none when one is missing. A substituted link target
    /// that is no longer safe loses its target.
    pub fn substitute(&self, values: &Values) -> Result<Doc, String> {
        let blocks = self.0.iter().map(|block| substitute_block(block, values)).collect::<Result<_, _>>()?;
        Ok(Doc(blocks))
    }

    /// The words, without markup: for summaries, titles and search.
    pub fn plain_text(&self) -> String {
        let mut out = String::new();
        for block in &self.0 {
            block_text(block, &mut out);
        }
        out.trim_end().to_string()
    }
}

fn substitute_block(block: &Block, values: &Values) -> Result<Block, String> {
    let inlines = |content: &[Inline]| -> Result<Vec<Inline>, String> { content.iter().map(|inline| substitute_inline(inline, values)).collect() };
    let blocks = |content: &[Block]| -> Result<Vec<Block>, String> { content.iter().map(|block| substitute_block(block, values)).collect() };
    Ok(match block {
        Block::Paragraph(content) => Block::Paragraph(inlines(content)?),
        Block::Heading(level, content) => Block::Heading(*level, inlines(content)?),
        Block::Quote(content) => Block::Quote(blocks(content)?),
        Block::List { start, items } => Block::List { start: *start, items: items.iter().map(|item| blocks(item)).collect::<Result<_, _>>()? },
        Block::Code(code) => Block::Code(template::substitute(code, values)?),
        Block::Table { head, rows } => Block::Table {
            head: head.iter().map(|cell| inlines(cell)).collect::<Result<_, _>>()?,
            rows: rows.iter().map(|row| row.iter().map(|cell| inlines(cell)).collect::<Result<_, _>>()).collect::<Result<_, _>>()?,
        },
        Block::Rule => Block::Rule,
    })
}

fn substitute_inline(inline: &Inline, values: &Values) -> Result<Inline, String> {
    let inlines = |content: &[Inline]| -> Result<Vec<Inline>, String> { content.iter().map(|inline| substitute_inline(inline, values)).collect() };
    Ok(match inline {
        Inline::Text(text) => Inline::Text(template::substitute(text, values)?),
        Inline::Code(code) => Inline::Code(template::substitute(code, values)?),
        Inline::Strong(content) => Inline::Strong(inlines(content)?),
        Inline::Emphasis(content) => Inline::Emphasis(inlines(content)?),
        Inline::Link { href, children } => {
            let href = template::substitute(href, values)?;
            let children = inlines(children)?;
            match safe_href(&href) {
                Some(_) => Inline::Link { href, children },
                None => Inline::Emphasis(children),
            }
        }
        Inline::Break => Inline::Break,
    })
}

fn block_text(block: &Block, out: &mut String) {
    match block {
        Block::Paragraph(content) | Block::Heading(_, content) => {
            inline_text(content, out);
            out.push('\n');
        }
        Block::Quote(blocks) => blocks.iter().for_each(|block| block_text(block, out)),
        Block::List { items, .. } => items.iter().flatten().for_each(|block| block_text(block, out)),
        Block::Code(code) => {
            out.push_str(code);
            out.push('\n');
        }
        Block::Table { head, rows } => {
            for row in std::iter::once(head).chain(rows) {
                for (at, cell) in row.iter().enumerate() {
                    if at > 0 {
                        out.push('\t');
                    }
                    inline_text(cell, out);
                }
                out.push('\n');
            }
        }
        Block::Rule => {}
    }
}

/// Inline text without markup (a heading's words, say).
pub fn inline_plain_text(content: &[Inline]) -> String {
    let mut out = String::new();
    inline_text(content, &mut out);
    out.trim_end().to_string()
}

fn inline_text(content: &[Inline], out: &mut String) {
    for inline in content {
        match inline {
            Inline::Text(text) | Inline::Code(text) => out.push_str(text),
            Inline::Strong(children) | Inline::Emphasis(children) | Inline::Link { children, .. } => inline_text(children, out),
            Inline::Break => out.push('\n'),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> Values {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn substitutes_everywhere_and_keeps_links_safe() {
        let doc = Doc(vec![
            Block::Heading(2, vec![Inline::Text("On {node}".into())]),
            Block::Paragraph(vec![Inline::Code("ibstat {hca}".into()), Inline::Link { href: "{url}".into(), children: vec![Inline::Text("docs".into())] }]),
        ]);
        let done = doc.substitute(&values(&[("node", "gpu-002"), ("hca", "mlx5_1"), ("url", "javascript:x")])).unwrap();
        assert_eq!(done.plain_text(), "On gpu-002\nibstat mlx5_1docs");
        assert!(matches!(&done.0[1], Block::Paragraph(inlines) if matches!(inlines[1], Inline::Emphasis(_))));
        assert_eq!(doc.substitute(&values(&[("node", "a")])), Err("hca".to_string()));
    }

    #[test]
    fn only_web_and_fragment_links_are_safe() {
        assert!(safe_href("https://example.org").is_some());
        assert!(safe_href("#q2").is_some());
        assert!(safe_href("JavaScript:alert(1)").is_none());
        assert!(safe_href("data:text/html,x").is_none());
    }
}
