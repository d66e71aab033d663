//! The author module (the `author` binary, built with the `authoring`
//! feature): the author page (`#/author`, `#/author/KEY`) and labs opened
//! from share links (`#/shared/...`). Only those pages load it (see
//! `components/author_host.rs` and index.html's `clusterlabAuthor`), so the
//! trainee's module never carries the TOML parser, the checks or the
//! editor.
//!
//! It renders into `#author-root`. The checks run in a worker module of
//! their own (the `author_checker` binary, `checker.rs`), so that they
//! never block typing and this module carries no emulated command.

pub mod checker;
pub mod route;

use std::cell::RefCell;

use wasm_bindgen::closure::Closure;
use yew::AppHandle;

use crate::components::author::app::AuthorApp;

/// The lab a new author page starts from.
pub const STARTER: &str = include_str!("starter.toml");

thread_local! {
    static MOUNTED: RefCell<Option<AppHandle<AuthorApp>>> = const { RefCell::new(None) };
}

/// The module's entry point: the functions index.html calls to show and
/// leave the author pages.
pub fn start() {
    let window = gloo::utils::window();
    let mount = Closure::<dyn Fn()>::new(|| {
        MOUNTED.with(|mounted| {
            if mounted.borrow().is_some() {
                return;
            }
            if let Some(root) = gloo::utils::document().get_element_by_id("author-root") {
                root.set_inner_html("");
                *mounted.borrow_mut() = Some(yew::Renderer::<AuthorApp>::with_root(root).render());
            }
        });
    });
    let unmount = Closure::<dyn Fn()>::new(|| {
        // Taken first: destroying the app must not find it still borrowed.
        let handle = MOUNTED.with(|mounted| mounted.borrow_mut().take());
        if let Some(handle) = handle {
            handle.destroy();
        }
    });
    let _ = js_sys::Reflect::set(&window, &"clusterlabMountAuthor".into(), mount.as_ref());
    let _ = js_sys::Reflect::set(&window, &"clusterlabUnmountAuthor".into(), unmount.as_ref());
    // Called for as long as the page lives.
    mount.forget();
    unmount.forget();
}
