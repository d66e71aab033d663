//! Markdown rendered to Yew nodes, never to an HTML string: raw HTML in the
//! source is shown as text and links only keep safe schemes, so a lab file
//! cannot inject markup or script.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use yew::prelude::*;
use yew::virtual_dom::VTag;

#[derive(Properties, PartialEq)]
pub struct MarkdownProps {
    pub source: AttrValue,
    #[prop_or_default]
    pub class: Classes,
}

#[function_component(Markdown)]
pub fn markdown(props: &MarkdownProps) -> Html {
    html! { <div class={classes!("markdown", props.class.clone())}>{ render(&props.source) }</div> }
}

/// Only links to the web or within the page; no `javascript:` or `data:`.
fn safe_href(href: &str) -> Option<String> {
    let lower = href.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with('#')).then(|| href.to_string())
}

fn element(tag: &Tag) -> VTag {
    let name = match tag {
        Tag::Paragraph => "p",
        Tag::Heading { level, .. } => match level {
            HeadingLevel::H1 => "h3",
            HeadingLevel::H2 => "h4",
            _ => "h5",
        },
        Tag::BlockQuote(_) => "blockquote",
        Tag::CodeBlock(_) => "pre",
        Tag::List(Some(_)) => "ol",
        Tag::List(None) => "ul",
        Tag::Item => "li",
        Tag::Emphasis => "em",
        Tag::Strong => "strong",
        Tag::Strikethrough => "s",
        Tag::Link { .. } => "a",
        _ => "span",
    };
    let mut node = VTag::new(name);
    if let Tag::Link { dest_url, .. } = tag {
        if let Some(href) = safe_href(dest_url) {
            node.add_attribute("href", href);
            node.add_attribute("target", "_blank");
            node.add_attribute("rel", "noopener noreferrer");
        }
    }
    node
}

pub fn render(source: &str) -> Html {
    // A stack of open elements; the bottom one collects the top level.
    let mut stack: Vec<VTag> = vec![VTag::new("div")];
    let mut in_code_block = false;
    for event in Parser::new(source) {
        match event {
            Event::Start(tag) => {
                in_code_block |= matches!(tag, Tag::CodeBlock(_));
                stack.push(element(&tag));
            }
            Event::End(end) => {
                if matches!(end, TagEnd::CodeBlock) {
                    in_code_block = false;
                }
                if stack.len() > 1 {
                    let done = stack.pop().expect("checked above");
                    stack.last_mut().expect("the root is never popped").add_child(done.into());
                }
            }
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                let parent = stack.last_mut().expect("the root is never popped");
                if in_code_block {
                    let mut code = VTag::new("code");
                    code.add_child(html! { { text.to_string() } });
                    parent.add_child(code.into());
                } else {
                    parent.add_child(html! { { text.to_string() } });
                }
            }
            Event::Code(text) => {
                let mut code = VTag::new("code");
                code.add_child(html! { { text.to_string() } });
                stack.last_mut().expect("the root is never popped").add_child(code.into());
            }
            Event::SoftBreak => stack.last_mut().expect("the root is never popped").add_child(html! { { " " } }),
            Event::HardBreak => stack.last_mut().expect("the root is never popped").add_child(html! { <br /> }),
            Event::Rule => stack.last_mut().expect("the root is never popped").add_child(html! { <hr /> }),
            _ => {}
        }
    }
    while stack.len() > 1 {
        let done = stack.pop().expect("checked by the loop");
        stack.last_mut().expect("the root is never popped").add_child(done.into());
    }
    let root = stack.pop().expect("the root");
    root.into()
}
