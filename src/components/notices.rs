//! Notices about the lab's saved progress and the simulator: what happened
//! and what the trainee can do. Each can be dismissed.

use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct NoticesProps {
    pub notices: Vec<String>,
    pub on_dismiss: Callback<usize>,
}

#[function_component(Notices)]
pub fn notices(props: &NoticesProps) -> Html {
    if props.notices.is_empty() {
        return html! {};
    }
    html! {
        <div class="notices" role="status" aria-live="polite">
            { for props.notices.iter().enumerate().map(|(at, notice)| {
                let on_dismiss = props.on_dismiss.clone();
                html! {
                    <div class="notice">
                        <p>{ notice }</p>
                        <button type="button" class="dismiss" aria-label="Dismiss this notice"
                            onclick={move |_| on_dismiss.emit(at)}>{ "Dismiss" }</button>
                    </div>
                }
            }) }
        </div>
    }
}
