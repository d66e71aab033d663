//! The lab's shells as tabs above the terminal (a perftest server in one,
//! its client in another), with "+ New shell" and each tab's close button.
//! Tabs change between lines, never while one runs.

use yew::prelude::*;

use crate::store::{Action, LabStore};

#[derive(Properties, PartialEq)]
pub struct ShellTabsProps {
    pub store: UseReducerHandle<LabStore>,
}

#[function_component(ShellTabs)]
pub fn shell_tabs(props: &ShellTabsProps) -> Html {
    let store = &props.store;
    let switching = !store.owner() || store.busy();
    let tabs = store.shells.iter().map(|view| {
        let id = view.id;
        let number = id.saturating_add(1);
        let in_use = id == store.shell;
        let select = {
            let store = store.clone();
            Callback::from(move |_: MouseEvent| store.dispatch(Action::SwitchShell(id)))
        };
        let close = {
            let store = store.clone();
            Callback::from(move |_: MouseEvent| store.dispatch(Action::CloseShell(id)))
        };
        let news = store.unseen.contains(&id);
        let label = if news { format!("Shell {number}: {} (new output)", view.host) } else { format!("Shell {number}: {}", view.host) };
        html! {
            <span class={classes!("shell-tab", in_use.then_some("in-use"))}>
                <button type="button" aria-pressed={in_use.to_string()} aria-label={label} onclick={select} disabled={switching && !in_use}>
                    { format!("{number}: {}", view.host) }
                    if news { <span class="news" aria-hidden="true">{ " \u{25cf}" }</span> }
                </button>
                if store.shells.len() > 1 {
                    <button type="button" class="close-shell" aria-label={format!("Close shell {number}")} onclick={close} disabled={switching}>{ "\u{d7}" }</button>
                }
            </span>
        }
    });
    let new_shell = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(Action::NewShell))
    };
    let full = store.shells.len() >= clusterlab_engine::limits::MAX_SHELLS;
    html! {
        <div class="shell-tabs" role="group" aria-label="Shells">
            { for tabs }
            <button type="button" class="new-shell" onclick={new_shell} disabled={switching || full}
                title={if full { "A lab has at most four shells" } else { "Open another shell on the lab" }}>{ "+ New shell" }</button>
        </div>
    }
}
