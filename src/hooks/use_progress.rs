//! A lab's progress reducer, saved in localStorage after every change and
//! restored on load, so nothing typed or answered is lost by a reload.

use gloo::storage::{LocalStorage, Storage};
use yew::prelude::*;

use crate::state::Progress;

fn storage_key(lab_id: &str) -> String {
    format!("clusterlab.progress.{lab_id}")
}

#[hook]
pub fn use_progress(lab_id: &str) -> UseReducerHandle<Progress> {
    let key = storage_key(lab_id);
    let progress = {
        let key = key.clone();
        use_reducer(move || LocalStorage::get::<Progress>(&key).unwrap_or_default())
    };
    {
        let progress = progress.clone();
        use_effect_with((*progress).clone(), move |saved| {
            // Storage can be full or disabled; the lab still works, unsaved.
            let _ = LocalStorage::set(&key, saved);
        });
    }
    progress
}
