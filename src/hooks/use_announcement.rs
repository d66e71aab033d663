//! What screen readers hear of the terminal: each new output once it has
//! printed, cut to its first lines (not 3,000 lines at once), and who and
//! where the prompt is after `ssh` or `sudo -i`. "Read last output" sets
//! the same live region.

use yew::prelude::*;

use crate::scrollback::spoken;
use crate::store::LabStore;

#[hook]
pub fn use_announcement(store: &UseReducerHandle<LabStore>) -> UseStateHandle<String> {
    let announcement = use_state(String::new);
    {
        let announcement = announcement.clone();
        let announced = use_mut_ref(|| None::<usize>);
        let last = store.state.transcript.len().checked_sub(1);
        let settled = last.filter(|at| *at >= store.live_from && store.revealing.is_none() && !store.busy());
        // This tab's output, and which other tabs printed (a server's results).
        // Who and where the prompt is (`user@gpu-002`): after `ssh` or `sudo -i` it is said.
        let identity = store.prompt.split(':').next().unwrap_or_default().to_string();
        let spoken_identity = use_mut_ref(|| identity.clone());
        let text = settled.map(|_| {
            let mine = store.last_entry().map_or_else(String::new, |entry| spoken(&entry.text()));
            let others: String = store.unseen.iter().map(|shell| format!("\nShell {} has new output.", shell + 1)).collect();
            mine + &others
        });
        use_effect_with(settled, move |settled| {
            if let (Some(at), Some(mut text)) = (*settled, text) {
                if *announced.borrow() != Some(at) {
                    *announced.borrow_mut() = Some(at);
                    if *spoken_identity.borrow() != identity && identity.contains('@') {
                        let (user, host) = identity.split_once('@').unwrap_or_default();
                        text += &format!("\nNow {user} on {host}.");
                        *spoken_identity.borrow_mut() = identity;
                    }
                    announcement.set(text);
                }
            }
        });
    }
    announcement
}
