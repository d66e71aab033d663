//! The metrics panel of a lab with training jobs: the engine draws each
//! job's step time, throughput and telemetry over simulated time as SVG
//! charts with a text summary each (`clusterlab_engine::metrics`); this
//! component only asks for them and shows them. Hidden until asked for, so
//! the engine draws nothing a trainee has not opened.

use std::rc::Rc;

use yew::prelude::*;

use crate::store::{Action, LabStore};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub store: UseReducerHandle<LabStore>,
}

#[function_component(MetricsPanel)]
pub fn metrics_panel(props: &Props) -> Html {
    let store = &props.store;
    let shown = store.metrics_shown;
    let toggle = {
        let dispatcher = store.dispatcher();
        Callback::from(move |_| dispatcher.dispatch(Action::ShowMetrics(!shown)))
    };
    let charts = match (shown, &store.metrics) {
        (false, _) => html! {},
        (true, None) => html! { <p class="metrics-waiting">{ "Drawing\u{2026}" }</p> },
        (true, Some(html)) => Html::from_html_unchecked(AttrValue::from(Rc::clone(html))),
    };
    html! {
        <section class="metrics" aria-labelledby="metrics-heading">
            <h2 id="metrics-heading">{ "Workload metrics" }</h2>
            <p>{ "The lab's jobs over simulated time, with the accepted baseline dashed and the moments their pace changed marked." }</p>
            <button type="button" class="metrics-toggle" aria-expanded={shown.to_string()} aria-controls="metrics-charts" onclick={toggle}>
                { if shown { "Hide metrics" } else { "Show metrics" } }
            </button>
            <div id="metrics-charts" class="metrics-charts">{ charts }</div>
        </section>
    }
}
