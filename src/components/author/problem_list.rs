//! The lab file's problems, each `LINE:COL: message`; picking one moves
//! the editor's cursor there.

use std::rc::Rc;

use clusterlab_engine::lab::authoring::live::Problem;
use clusterlab_engine::lab::reference;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ProblemListProps {
    pub problems: Rc<Vec<Problem>>,
    /// What the checks are doing, or found: read out as it changes.
    pub status: AttrValue,
    /// Picks a problem: its line and column. None: the list only shows.
    #[prop_or_default]
    pub on_pick: Option<Callback<(usize, usize)>>,
}

#[function_component(ProblemList)]
pub fn problem_list(props: &ProblemListProps) -> Html {
    let items = props.problems.iter().map(|problem| {
        let text = problem.to_string();
        // A problem that names the reference links to its section, in a
        // tab of its own so that the lab file stays as it is.
        let reference = reference::route_in(&problem.message).map(|route| {
            html! { <a class="problem-reference" href={route} target="_blank" rel="noopener">{ "Reference" }<span class="visually-hidden">{ " (opens in a new tab)" }</span></a> }
        });
        match &props.on_pick {
            Some(on_pick) => {
                let on_pick = on_pick.clone();
                let at = (problem.line, problem.column);
                html! { <li><button type="button" class="problem" onclick={move |_| on_pick.emit(at)}>{ text }</button>{ for reference }</li> }
            }
            None => html! { <li class="problem">{ text }{ for reference }</li> },
        }
    });
    html! {
        <section class="problems-pane">
            <h2>{ "Problems" }</h2>
            <p class="problems-status" role="status">{ props.status.clone() }</p>
            <ul class="problems" aria-label="Problems">{ for items }</ul>
        </section>
    }
}
