//! A value fetched once per key (the catalog, a lab's data): None while it
//! loads, then what came back.

use std::future::Future;

use yew::prelude::*;

#[hook]
pub fn use_fetched<K, T, F, Fut>(key: K, fetch: F) -> Option<Result<T, String>>
where
    K: PartialEq + Clone + 'static,
    T: Clone + 'static,
    F: FnOnce(K) -> Fut + 'static,
    Fut: Future<Output = Result<T, String>> + 'static,
{
    let value = use_state(|| None);
    {
        let value = value.clone();
        use_effect_with(key, move |key| {
            value.set(None);
            let key = key.clone();
            wasm_bindgen_futures::spawn_local(async move { value.set(Some(fetch(key).await)) });
        });
    }
    (*value).clone()
}
