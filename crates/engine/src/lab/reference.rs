//! The authoring reference (docs/authoring.md) as the author page shows it:
//! cut at its headings into sections with GitHub's anchors, its in-page
//! links pointing at the app's route for a section, so that a problem that
//! names a section can link straight to it.

use serde::{Deserialize, Serialize};

use super::doc::{inline_plain_text, Block, Doc, Inline};

/// The route that shows the reference; a section's is `ROUTE/ID`.
pub const ROUTE: &str = "#/author/reference";

/// The reference's data beside the labs' (`clusterlab build` writes it).
pub const FILE: &str = "authoring-reference.json";

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The document's first-level heading.
    pub title: String,
    /// What comes before the first section.
    pub intro: Vec<Block>,
    pub sections: Vec<Section>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// GitHub's anchor for the heading: the same fragment works on the
    /// repository's page and names the route here.
    pub id: String,
    /// 2 or more, as written.
    pub level: u8,
    pub title: Vec<Inline>,
    pub blocks: Vec<Block>,
}

impl Reference {
    pub fn from_doc(doc: Doc) -> Reference {
        let mut reference = Reference::default();
        for block in doc.0 {
            match block {
                Block::Heading(1, content) if reference.title.is_empty() => reference.title = inline_plain_text(&content),
                Block::Heading(level, title) => {
                    let id = anchor(&inline_plain_text(&title));
                    reference.sections.push(Section { id, level: level.max(2), title: links_to_routes(title), blocks: Vec::new() });
                }
                block => {
                    let block = route_block(block);
                    match reference.sections.last_mut() {
                        Some(section) => section.blocks.push(block),
                        None => reference.intro.push(block),
                    }
                }
            }
        }
        reference
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<Reference, String> {
        serde_json::from_str(text).map_err(|error| error.to_string())
    }

    /// The section a problem's words name: its anchor exactly, else the first
    /// whose anchor starts with them ("Tasks" finds "Tasks: judged on what ran").
    pub fn find(&self, words: &str) -> Option<&Section> {
        let wanted = anchor(words);
        self.sections.iter().find(|section| section.id == wanted).or_else(|| self.sections.iter().find(|section| section.id.starts_with(&wanted)))
    }
}

/// GitHub's heading anchor: lower case, letters, digits, `-` and `_` kept,
/// spaces to `-`, the rest dropped.
pub fn anchor(text: &str) -> String {
    text.trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Where a problem's text points into the reference (`docs/authoring.md`,
/// then perhaps `, Section`): the route to show, or None when it names none.
pub fn route_in(message: &str) -> Option<String> {
    let (_, after) = message.split_once("docs/authoring.md")?;
    let section = after.strip_prefix(", ").map(|rest| rest.split([')', ';', ':']).next().unwrap_or(rest).trim()).filter(|words| !words.is_empty());
    Some(match section {
        Some(words) => format!("{ROUTE}/{}", anchor(words)),
        None => ROUTE.to_string(),
    })
}

fn route_block(block: Block) -> Block {
    let blocks = |content: Vec<Block>| content.into_iter().map(route_block).collect();
    match block {
        Block::Paragraph(content) => Block::Paragraph(links_to_routes(content)),
        Block::Heading(level, content) => Block::Heading(level, links_to_routes(content)),
        Block::Quote(content) => Block::Quote(blocks(content)),
        Block::List { start, items } => Block::List { start, items: items.into_iter().map(blocks).collect() },
        Block::Table { head, rows } => Block::Table {
            head: head.into_iter().map(links_to_routes).collect(),
            rows: rows.into_iter().map(|row| row.into_iter().map(links_to_routes).collect()).collect(),
        },
        block @ (Block::Code(_) | Block::Rule) => block,
    }
}

/// `#anchor` links become the route to that section; links into the
/// repository (`../labs/`), which the app cannot open, become their words.
fn links_to_routes(content: Vec<Inline>) -> Vec<Inline> {
    content
        .into_iter()
        .map(|inline| match inline {
            Inline::Link { href, children } => {
                let children = links_to_routes(children);
                if let Some(fragment) = href.strip_prefix('#') {
                    Inline::Link { href: format!("{ROUTE}/{fragment}"), children }
                } else if href.starts_with("http://") || href.starts_with("https://") {
                    Inline::Link { href, children }
                } else {
                    Inline::Emphasis(children)
                }
            }
            Inline::Strong(children) => Inline::Strong(links_to_routes(children)),
            Inline::Emphasis(children) => Inline::Emphasis(links_to_routes(children)),
            inline => inline,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(words: &str) -> Vec<Inline> {
        vec![Inline::Text(words.to_string())]
    }

    #[test]
    fn anchors_are_githubs() {
        assert_eq!(anchor("`[[jobs]]`: training jobs"), "jobs-training-jobs");
        assert_eq!(anchor("`[policy]`: what guessing and hints cost"), "policy-what-guessing-and-hints-cost");
        assert_eq!(anchor("Launching from an LMS (cmi5)"), "launching-from-an-lms-cmi5");
        assert_eq!(anchor("Tasks: judged on what ran"), "tasks-judged-on-what-ran");
    }

    #[test]
    fn cuts_at_headings_and_routes_in_page_links() {
        let doc = Doc(vec![
            Block::Heading(1, text("Writing labs")),
            Block::Paragraph(text("intro")),
            Block::Heading(2, vec![Inline::Code("[lab]".into())]),
            Block::Paragraph(vec![
                Inline::Link { href: "#leaks".into(), children: text("Leaks") },
                Inline::Link { href: "../labs/".into(), children: text("the labs") },
                Inline::Link { href: "https://example.com/x".into(), children: text("x") },
            ]),
            Block::Heading(3, text("Tasks: judged on what ran")),
        ]);
        let reference = Reference::from_doc(doc);
        assert_eq!(reference.title, "Writing labs");
        assert_eq!(reference.intro, vec![Block::Paragraph(text("intro"))]);
        let ids: Vec<&str> = reference.sections.iter().map(|section| section.id.as_str()).collect();
        assert_eq!(ids, ["lab", "tasks-judged-on-what-ran"]);
        assert_eq!(
            reference.sections[0].blocks,
            vec![Block::Paragraph(vec![
                Inline::Link { href: "#/author/reference/leaks".into(), children: text("Leaks") },
                Inline::Emphasis(text("the labs")),
                Inline::Link { href: "https://example.com/x".into(), children: text("x") },
            ])]
        );
        assert_eq!(reference.find("Tasks").map(|section| section.id.as_str()), Some("tasks-judged-on-what-ran"));
        assert_eq!(reference.find("lab").map(|section| section.id.as_str()), Some("lab"));
    }

    /// Every section a problem names (`docs/authoring.md, X`) is in the
    /// reference, and every in-page link of the reference finds its section.
    #[test]
    fn the_sections_problems_and_links_name_exist() {
        let reference = Reference::from_doc(crate::lab::authoring::markdown::parse(include_str!("../../../../docs/authoring.md")));
        assert!(reference.sections.len() > 20, "{} sections", reference.sections.len());
        for named in ["Tasks", "Faults", "Jobs"] {
            assert!(reference.find(named).is_some(), "no section for {named}");
        }
        let mut hrefs = Vec::new();
        fn collect(content: &[Inline], hrefs: &mut Vec<String>) {
            for inline in content {
                match inline {
                    Inline::Link { href, children } => {
                        hrefs.push(href.clone());
                        collect(children, hrefs);
                    }
                    Inline::Strong(children) | Inline::Emphasis(children) => collect(children, hrefs),
                    _ => {}
                }
            }
        }
        fn walk(blocks: &[Block], hrefs: &mut Vec<String>) {
            for block in blocks {
                match block {
                    Block::Paragraph(content) | Block::Heading(_, content) => collect(content, hrefs),
                    Block::Quote(blocks) => walk(blocks, hrefs),
                    Block::List { items, .. } => items.iter().for_each(|item| walk(item, hrefs)),
                    Block::Table { head, rows } => head.iter().chain(rows.iter().flatten()).for_each(|cell| collect(cell, hrefs)),
                    Block::Code(_) | Block::Rule => {}
                }
            }
        }
        walk(&reference.intro, &mut hrefs);
        reference.sections.iter().for_each(|section| walk(&section.blocks, &mut hrefs));
        let routes: Vec<&String> = hrefs.iter().filter(|href| href.starts_with('#')).collect();
        assert!(!routes.is_empty());
        for href in routes {
            let id = href.strip_prefix(&format!("{ROUTE}/")).unwrap_or_else(|| panic!("{href} is not a section's route"));
            assert!(reference.sections.iter().any(|section| section.id == id), "{href} names no section");
        }
    }

    #[test]
    fn problems_point_at_their_section() {
        assert_eq!(route_in("no kind (docs/authoring.md, Tasks)").as_deref(), Some("#/author/reference/tasks"));
        assert_eq!(route_in("unknown fault kind `x`; the kinds are `a`, `b` (docs/authoring.md, Faults)").as_deref(), Some("#/author/reference/faults"));
        assert_eq!(route_in("see docs/authoring.md").as_deref(), Some("#/author/reference"));
        assert_eq!(route_in("unknown key `y`"), None);
    }
}
