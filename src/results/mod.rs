//! The results module (the `results` binary): the review page of a lab a
//! trainee has worked (`#/review/ID`), with the evidence bundle and the
//! results to download. Only that page loads it (index.html's
//! `clusterlabResults`), so the trainee's lab page carries none of it.
//!
//! It renders into `#results-root`, beside the app's `#app`.

use std::cell::RefCell;

use wasm_bindgen::closure::Closure;
use yew::AppHandle;

use crate::components::review_page::ReviewApp;

thread_local! {
    static MOUNTED: RefCell<Option<AppHandle<ReviewApp>>> = const { RefCell::new(None) };
}

/// The module's entry point: the functions index.html calls to show and
/// leave the review page.
pub fn start() {
    let window = gloo::utils::window();
    let mount = Closure::<dyn Fn()>::new(|| {
        MOUNTED.with(|mounted| {
            if mounted.borrow().is_some() {
                return;
            }
            if let Some(root) = gloo::utils::document().get_element_by_id("results-root") {
                root.set_inner_html("");
                *mounted.borrow_mut() = Some(yew::Renderer::<ReviewApp>::with_root(root).render());
            }
        });
    });
    let unmount = Closure::<dyn Fn()>::new(|| {
        let handle = MOUNTED.with(|mounted| mounted.borrow_mut().take());
        if let Some(handle) = handle {
            handle.destroy();
        }
    });
    let _ = js_sys::Reflect::set(&window, &"clusterlabMountResults".into(), mount.as_ref());
    let _ = js_sys::Reflect::set(&window, &"clusterlabUnmountResults".into(), unmount.as_ref());
    mount.forget();
    unmount.forget();
}
