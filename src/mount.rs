//! How a lazily loaded module shows its pages: it gives index.html a mount
//! and an unmount function, and renders its Yew app into a root of its own
//! (a sibling of the page's `#app`, so two apps never share a subtree).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use yew::{AppHandle, BaseComponent};

/// Sets `window[mount]` to render `C` into `#root_id` (once) and
/// `window[unmount]` to destroy it, for as long as the page lives.
pub fn expose<C>(root_id: &'static str, mount: &str, unmount: &str)
where
    C: BaseComponent<Properties = ()>,
{
    let mounted: Rc<RefCell<Option<AppHandle<C>>>> = Rc::new(RefCell::new(None));
    let on_mount = {
        let mounted = mounted.clone();
        Closure::<dyn Fn()>::new(move || {
            if mounted.borrow().is_some() {
                return;
            }
            if let Some(root) = gloo::utils::document().get_element_by_id(root_id) {
                root.set_inner_html("");
                *mounted.borrow_mut() = Some(yew::Renderer::<C>::with_root(root).render());
            }
        })
    };
    let on_unmount = Closure::<dyn Fn()>::new(move || {
        // Taken first: destroying the app must not find it still borrowed.
        let handle = mounted.borrow_mut().take();
        if let Some(handle) = handle {
            handle.destroy();
        }
    });
    let window = gloo::utils::window();
    let _ = js_sys::Reflect::set(&window, &mount.into(), on_mount.as_ref());
    let _ = js_sys::Reflect::set(&window, &unmount.into(), on_unmount.as_ref());
    on_mount.forget();
    on_unmount.forget();
}
