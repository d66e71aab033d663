//! Lab text rendered as elements, never as an HTML string: the tree comes
//! with the lab's data (parsed when the lab was built), raw HTML in it is
//! text, and links keep only http(s) and in-page targets.

use std::rc::Rc;

use clusterlab_engine::lab::doc::{Block, Doc, Inline};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct MarkdownProps {
    /// Compared by pointer first: an unchanged doc does not re-render.
    pub doc: Rc<Doc>,
    #[prop_or_default]
    pub class: Classes,
}

#[function_component(Markdown)]
pub fn markdown(props: &MarkdownProps) -> Html {
    html! { <div class={classes!("markdown", props.class.clone())}>{ for props.doc.0.iter().map(block) }</div> }
}

pub fn inlines(content: &[Inline]) -> Html {
    content.iter().map(inline).collect::<Html>()
}

fn block(block: &Block) -> Html {
    match block {
        Block::Paragraph(content) => html! { <p>{ inlines(content) }</p> },
        // Lab headings sit under the page's own h1/h2.
        Block::Heading(1, content) => html! { <h3>{ inlines(content) }</h3> },
        Block::Heading(2, content) => html! { <h4>{ inlines(content) }</h4> },
        Block::Heading(_, content) => html! { <h5>{ inlines(content) }</h5> },
        Block::Quote(blocks) => html! { <blockquote>{ for blocks.iter().map(self::block) }</blockquote> },
        Block::List { start, items } => {
            let items = items.iter().map(|item| html! { <li>{ for item.iter().map(self::block) }</li> });
            match start {
                Some(start) => html! { <ol start={start.to_string()}>{ for items }</ol> },
                None => html! { <ul>{ for items }</ul> },
            }
        }
        Block::Code(code) => html! { <pre><code>{ code }</code></pre> },
        Block::Table { head, rows } => html! {
            <div class="table-scroll">
                <table>
                    <thead><tr>{ for head.iter().map(|cell| html! { <th scope="col">{ inlines(cell) }</th> }) }</tr></thead>
                    <tbody>{ for rows.iter().map(|row| html! { <tr>{ for row.iter().map(|cell| html! { <td>{ inlines(cell) }</td> }) }</tr> }) }</tbody>
                </table>
            </div>
        },
        Block::Rule => html! { <hr /> },
    }
}

fn inline(inline: &Inline) -> Html {
    match inline {
        Inline::Text(text) => html! { { text } },
        Inline::Code(code) => html! { <code>{ code }</code> },
        Inline::Strong(content) => html! { <strong>{ inlines(content) }</strong> },
        Inline::Emphasis(content) => html! { <em>{ inlines(content) }</em> },
        // The engine keeps only safe targets.
        Inline::Link { href, children } if href.starts_with('#') => html! { <a href={href.clone()}>{ inlines(children) }</a> },
        Inline::Link { href, children } => html! {
            <a href={href.clone()} target="_blank" rel="noopener noreferrer">{ inlines(children) }</a>
        },
        Inline::Break => html! { <br /> },
    }
}
