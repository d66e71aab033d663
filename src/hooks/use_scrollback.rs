//! The terminal's scrollback kept in line with the lab store: after each
//! change the writer (`scrollback::Writer`) appends what is new, opens the
//! pager a new output asks for, and scrolls to the end; a reveal stops when
//! the terminal goes.

use std::cell::RefCell;
use std::rc::Rc;

use clusterlab_engine::commands::Pager;
use web_sys::Element;
use yew::prelude::*;

use crate::scrollback::{scroll_down, Writer};
use crate::store::LabStore;

/// A pager open over the screen: its text, kind and page height.
pub type OpenPager = Option<(Rc<String>, Pager, usize)>;

#[hook]
pub fn use_scrollback(store: UseReducerHandle<LabStore>, scrollback_ref: NodeRef, pager: UseStateHandle<OpenPager>) -> Rc<RefCell<Writer>> {
    let writer: Rc<RefCell<Writer>> = use_mut_ref(Writer::new);
    {
        let this = writer.clone();
        use_effect_with(store.clone(), move |_| {
            let mut writer = this.borrow_mut();
            let first = writer.container.is_none();
            if first {
                writer.container = scrollback_ref.cast::<Element>();
                // One listener for every block's Copy button.
                if let Some(container) = writer.container.clone() {
                    let listener = gloo::events::EventListener::new(&container, "click", |event| {
                        let Some(button) =
                            event.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<Element>(t).ok()).filter(|t| t.class_name() == "copy-output")
                        else {
                            return;
                        };
                        let text = button
                            .closest(".entry")
                            .ok()
                            .flatten()
                            .and_then(|entry| entry.query_selector(".output").ok().flatten())
                            .and_then(|output| output.text_content());
                        if let Some(text) = text {
                            let _ = gloo::utils::window().navigator().clipboard().write_text(&text);
                        }
                    });
                    writer.copy_listener = Some(listener);
                }
            }
            let before = writer.rendered;
            writer.sync(&this, &store, &store.dispatcher());
            if first {
                crate::mark("clusterlab:screen");
            }

            if writer.rendered != before {
                scroll_down(writer.container.as_ref());
            }
            if let Some((text, kind)) = writer.pager.take() {
                let rows = writer.screen_rows();
                pager.set(Some((text, kind, rows)));
            }
        });
    }
    {
        // Stops a reveal when the terminal goes.
        let writer = writer.clone();
        use_effect_with((), move |_| move || writer.borrow_mut().reveal = None);
    }

    writer
}
