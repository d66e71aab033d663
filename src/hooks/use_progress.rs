//! A lab's progress reducer, saved in localStorage after every change and
//! restored on load, so nothing typed or answered is lost by a reload.

use yew::prelude::*;

use crate::state::Progress;

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

fn storage_key(lab_id: &str) -> String {
    format!("clusterlab.progress.{lab_id}")
}

#[hook]
pub fn use_progress(lab_id: &str) -> UseReducerHandle<Progress> {
    let key = storage_key(lab_id);
    let progress = {
        let key = key.clone();
        use_reducer(move || storage().and_then(|s| s.get_item(&key).ok().flatten()).map_or_else(Progress::default, |text| Progress::decode(&text)))
    };
    {
        let progress = progress.clone();
        use_effect_with((*progress).clone(), move |saved| {
            // Storage can be full or disabled; the lab still works, unsaved.
            if let Some(storage) = storage() {
                let _ = storage.set_item(&key, &saved.encode());
            }
        });
    }
    progress
}
