//! Lab Markdown rendered as elements, never as an HTML string: the engine
//! parses it into a tree (raw HTML stays text), and only http(s) and
//! in-page links keep their target, so a lab file cannot inject markup.

use clusterlab_engine::lab::markdown::{self, Block, Inline};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct MarkdownProps {
    pub source: AttrValue,
    #[prop_or_default]
    pub class: Classes,
}

#[function_component(Markdown)]
pub fn markdown(props: &MarkdownProps) -> Html {
    let blocks = markdown::parse(&props.source);
    html! { <div class={classes!("markdown", props.class.clone())}>{ for blocks.iter().map(block) }</div> }
}

fn block(block: &Block) -> Html {
    match block {
        Block::Paragraph(content) => html! { <p>{ for content.iter().map(inline) }</p> },
        // Lab headings sit under the page's own h1/h2.
        Block::Heading(1, content) => html! { <h3>{ for content.iter().map(inline) }</h3> },
        Block::Heading(2, content) => html! { <h4>{ for content.iter().map(inline) }</h4> },
        Block::Heading(_, content) => html! { <h5>{ for content.iter().map(inline) }</h5> },
        Block::Quote(blocks) => html! { <blockquote>{ for blocks.iter().map(self::block) }</blockquote> },
        Block::List { ordered, items } => {
            let items = items.iter().map(|item| html! { <li>{ for item.iter().map(self::block) }</li> });
            if *ordered {
                html! { <ol>{ for items }</ol> }
            } else {
                html! { <ul>{ for items }</ul> }
            }
        }
        Block::Code(code) => html! { <pre><code>{ code }</code></pre> },
        Block::Rule => html! { <hr /> },
    }
}

fn inline(inline: &Inline) -> Html {
    match inline {
        Inline::Text(text) => html! { { text } },
        Inline::Code(code) => html! { <code>{ code }</code> },
        Inline::Strong(content) => html! { <strong>{ for content.iter().map(self::inline) }</strong> },
        Inline::Emphasis(content) => html! { <em>{ for content.iter().map(self::inline) }</em> },
        Inline::Link { href, children } => match markdown::safe_href(href) {
            Some(href) => html! {
                <a href={href.to_string()} target="_blank" rel="noopener noreferrer">{ for children.iter().map(self::inline) }</a>
            },
            None => html! { <a>{ for children.iter().map(self::inline) }</a> },
        },
    }
}
