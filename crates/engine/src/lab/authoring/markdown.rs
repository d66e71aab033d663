//! Lab Markdown (CommonMark with tables), parsed by pulldown-cmark into the
//! [`Doc`] tree that lab data carries. Raw HTML becomes text; a link keeps
//! its target only when it is http(s), a `#fragment`, or a `{var}` checked
//! when a variant substitutes it. Nesting deeper than [`MAX_DEPTH`] is
//! flattened into the deepest container, so no lab text can make the tree
//! (or the app's rendering of it) arbitrarily deep.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::lab::doc::{safe_href, Block, Doc, Inline};

/// How deep blocks and inline markup may nest in a lab's text.
pub use crate::limits::MAX_MARKDOWN_DEPTH as MAX_DEPTH;

/// An element being built.
enum Open {
    /// A container of blocks (the document, a quote, a list item, a table
    /// cell's parent): its blocks, and loose inline content that becomes a
    /// paragraph (tight list items hold text without a paragraph).
    Blocks {
        kind: BlocksKind,
        blocks: Vec<Block>,
        loose: Vec<Inline>,
    },
    /// A container of inlines.
    Inlines {
        kind: InlinesKind,
        inlines: Vec<Inline>,
    },
    Code(String),
    List {
        start: Option<u64>,
        items: Vec<Vec<Block>>,
    },
    Table {
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
        row: Vec<Vec<Inline>>,
    },
}

enum BlocksKind {
    Document,
    Quote,
    Item,
}

enum InlinesKind {
    Paragraph,
    Heading(u8),
    Strong,
    Emphasis,
    /// A link whose target is kept, or `None` for one whose children are
    /// spliced into the text (an unsafe target, an image's alt text).
    Link(Option<String>),
    Cell,
}

fn level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Appends text, merging with the text before (pulldown splits runs at
/// delimiters, which would split `{var}`s).
fn push_text(inlines: &mut Vec<Inline>, text: &str) {
    if text.is_empty() {
        return;
    }
    match inlines.last_mut() {
        Some(Inline::Text(existing)) => existing.push_str(text),
        _ => inlines.push(Inline::Text(text.to_string())),
    }
}

struct Builder {
    stack: Vec<Open>,
    /// Start events past MAX_DEPTH, whose ends are skipped too.
    ignored: usize,
}

impl Builder {
    /// Where inline content goes: the innermost inline container, or the
    /// loose content of the innermost block container.
    fn inlines(&mut self) -> Option<&mut Vec<Inline>> {
        match self.stack.last_mut()? {
            Open::Inlines { inlines, .. } => Some(inlines),
            Open::Blocks { loose, .. } => Some(loose),
            Open::Code(_) | Open::List { .. } | Open::Table { .. } => None,
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(Open::Code(code)) = self.stack.last_mut() {
            code.push_str(text);
        } else if let Some(inlines) = self.inlines() {
            push_text(inlines, text);
        }
    }

    fn inline(&mut self, inline: Inline) {
        if let Some(inlines) = self.inlines() {
            inlines.push(inline);
        }
    }

    /// Adds a finished block to the innermost block container.
    fn block(&mut self, block: Block) {
        if let Some(Open::Blocks { blocks, loose, .. }) = self.stack.last_mut() {
            if !loose.is_empty() {
                blocks.push(Block::Paragraph(std::mem::take(loose)));
            }
            blocks.push(block);
        }
    }

    fn start(&mut self, tag: Tag) {
        if self.stack.len() >= MAX_DEPTH {
            self.ignored += 1;
            return;
        }
        let inlines = |kind| Open::Inlines { kind, inlines: Vec::new() };
        let open = match tag {
            Tag::Paragraph | Tag::HtmlBlock => inlines(InlinesKind::Paragraph),
            Tag::Heading { level: heading, .. } => inlines(InlinesKind::Heading(level(heading))),
            Tag::BlockQuote(_) => Open::Blocks { kind: BlocksKind::Quote, blocks: Vec::new(), loose: Vec::new() },
            Tag::CodeBlock(_) => Open::Code(String::new()),
            Tag::List(start) => Open::List { start, items: Vec::new() },
            Tag::Item => Open::Blocks { kind: BlocksKind::Item, blocks: Vec::new(), loose: Vec::new() },
            Tag::Table(_) => Open::Table { head: Vec::new(), rows: Vec::new(), row: Vec::new() },
            Tag::TableCell => inlines(InlinesKind::Cell),
            Tag::Strong => inlines(InlinesKind::Strong),
            Tag::Emphasis => inlines(InlinesKind::Emphasis),
            Tag::Link { dest_url, .. } => {
                let href = dest_url.to_string();
                // A `{var}` target is checked when a variant substitutes it.
                let kept = (safe_href(&href).is_some() || href.contains('{')).then_some(href);
                inlines(InlinesKind::Link(kept))
            }
            Tag::Image { .. } => inlines(InlinesKind::Link(None)),
            // Rows and heads live in their table; other extensions are not enabled.
            _ => return,
        };
        self.stack.push(open);
    }

    fn end(&mut self, tag: TagEnd) {
        if self.ignored > 0 {
            self.ignored -= 1;
            return;
        }
        match tag {
            TagEnd::TableHead => {
                if let Some(Open::Table { head, row, .. }) = self.stack.last_mut() {
                    *head = std::mem::take(row);
                }
                return;
            }
            TagEnd::TableRow => {
                if let Some(Open::Table { rows, row, .. }) = self.stack.last_mut() {
                    rows.push(std::mem::take(row));
                }
                return;
            }
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::Heading(_)
            | TagEnd::BlockQuote(_)
            | TagEnd::CodeBlock
            | TagEnd::List(_)
            | TagEnd::Item
            | TagEnd::Table
            | TagEnd::TableCell
            | TagEnd::Strong
            | TagEnd::Emphasis
            | TagEnd::Link
            | TagEnd::Image => {}
            _ => return,
        }
        // The document itself is never closed here.
        if self.stack.len() <= 1 {
            return;
        }
        let Some(open) = self.stack.pop() else { return };
        match open {
            Open::Inlines { kind, inlines } => match kind {
                InlinesKind::Paragraph if inlines.is_empty() => {}
                InlinesKind::Paragraph => self.block(Block::Paragraph(inlines)),
                InlinesKind::Heading(level) => self.block(Block::Heading(level, inlines)),
                InlinesKind::Strong => self.inline(Inline::Strong(inlines)),
                InlinesKind::Emphasis => self.inline(Inline::Emphasis(inlines)),
                InlinesKind::Link(Some(href)) => self.inline(Inline::Link { href, children: inlines }),
                InlinesKind::Link(None) => {
                    for inline in inlines {
                        match inline {
                            Inline::Text(text) => self.text(&text),
                            other => self.inline(other),
                        }
                    }
                }
                InlinesKind::Cell => {
                    if let Some(Open::Table { row, .. }) = self.stack.last_mut() {
                        row.push(inlines);
                    }
                }
            },
            Open::Blocks { kind, mut blocks, loose } => {
                if !loose.is_empty() {
                    blocks.push(Block::Paragraph(loose));
                }
                match kind {
                    BlocksKind::Quote => self.block(Block::Quote(blocks)),
                    BlocksKind::Item => {
                        if let Some(Open::List { items, .. }) = self.stack.last_mut() {
                            items.push(blocks);
                        }
                    }
                    BlocksKind::Document => {}
                }
            }
            Open::Code(code) => self.block(Block::Code(code)),
            Open::List { start, items } => self.block(Block::List { start, items }),
            Open::Table { head, rows, .. } => self.block(Block::Table { head, rows }),
        }
    }

    fn finish(mut self) -> Doc {
        // Balanced events leave only the document open.
        while self.stack.len() > 1 {
            self.ignored = 0;
            self.end(TagEnd::Paragraph);
        }
        match self.stack.pop() {
            Some(Open::Blocks { mut blocks, loose, .. }) => {
                if !loose.is_empty() {
                    blocks.push(Block::Paragraph(loose));
                }
                Doc(blocks)
            }
            _ => Doc::default(),
        }
    }
}

/// Parses lab Markdown into the tree lab data carries.
pub fn parse(source: &str) -> Doc {
    let mut builder = Builder { stack: vec![Open::Blocks { kind: BlocksKind::Document, blocks: Vec::new(), loose: Vec::new() }], ignored: 0 };
    for event in Parser::new_ext(source, Options::ENABLE_TABLES) {
        match event {
            Event::Start(tag) => builder.start(tag),
            Event::End(tag) => builder.end(tag),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => builder.text(&text),
            Event::Code(code) => builder.inline(Inline::Code(code.to_string())),
            Event::SoftBreak => builder.text(" "),
            Event::HardBreak => builder.inline(Inline::Break),
            Event::Rule => builder.block(Block::Rule),
            Event::TaskListMarker(done) => builder.text(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(name) => builder.text(&format!("[^{name}]")),
            Event::InlineMath(text) | Event::DisplayMath(text) => builder.text(&text),
        }
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(text: &str) -> Inline {
        Inline::Text(text.to_string())
    }

    #[test]
    fn blocks_and_inlines() {
        let doc = parse("# Title\n\nSome **bold** and *em* and `code`.\n\n- one\n- two {bad_node}\n\n> quoted\n\n```\nnvidia-smi -L\n```\n\n---\n");
        assert_eq!(
            doc.0,
            vec![
                Block::Heading(1, vec![text("Title")]),
                Block::Paragraph(vec![
                    text("Some "),
                    Inline::Strong(vec![text("bold")]),
                    text(" and "),
                    Inline::Emphasis(vec![text("em")]),
                    text(" and "),
                    Inline::Code("code".into()),
                    text("."),
                ]),
                Block::List { start: None, items: vec![vec![Block::Paragraph(vec![text("one")])], vec![Block::Paragraph(vec![text("two {bad_node}")])]] },
                Block::Quote(vec![Block::Paragraph(vec![text("quoted")])]),
                Block::Code("nvidia-smi -L\n".into()),
                Block::Rule,
            ]
        );
    }

    #[test]
    fn raw_html_is_text_and_unsafe_links_lose_their_target() {
        let doc = parse("Hello <script>x</script> [bad](javascript:alert(1)) [good](https://example.org) [var]({url})");
        let Block::Paragraph(inlines) = &doc.0[0] else { panic!("{doc:?}") };
        assert_eq!(inlines[0], text("Hello <script>x</script> bad "));
        assert_eq!(inlines[1], Inline::Link { href: "https://example.org".into(), children: vec![text("good")] });
        assert_eq!(inlines[3], Inline::Link { href: "{url}".into(), children: vec![text("var")] });
    }

    #[test]
    fn tables_and_ordered_lists() {
        let doc = parse("| rail | Gb/s |\n|---|---|\n| mlx5_0 | 392 |\n\n3. third\n4. fourth\n");
        assert_eq!(doc.0[0], Block::Table { head: vec![vec![text("rail")], vec![text("Gb/s")]], rows: vec![vec![vec![text("mlx5_0")], vec![text("392")]]] });
        assert!(matches!(&doc.0[1], Block::List { start: Some(3), items } if items.len() == 2));
    }

    #[test]
    fn deep_nesting_is_flattened() {
        let quotes = ">".repeat(30_000) + " deep";
        let doc = parse(&quotes);
        fn depth(blocks: &[Block]) -> usize {
            blocks.iter().map(|b| if let Block::Quote(inner) = b { 1 + depth(inner) } else { 1 }).max().unwrap_or(0)
        }
        assert!(depth(&doc.0) <= MAX_DEPTH);
        assert_eq!(doc.plain_text(), "deep");
        let lists: String = (0..2_000).map(|i| format!("{}- item\n", "  ".repeat(i))).collect();
        assert!(!parse(&lists).is_empty());
    }
}
