//! The standing notice that everything here is simulated.

use yew::prelude::*;

#[function_component(SimulationNotice)]
pub fn simulation_notice() -> Html {
    html! {
        <div class="simulation-notice" role="note">
            <strong>{ "Simulation. " }</strong>
            { "Every cluster here is fictional and every output is generated in your browser. Nothing you type runs on a real cluster." }
        </div>
    }
}
