//! The worker side of the engine (the `engine_worker` binary): requests
//! arrive as JSON and are answered by the engine's [`Service`]; "ready"
//! tells the page the worker listens. Nothing here touches the page, so
//! the worker's module carries no UI code.

use std::cell::RefCell;

use clusterlab_engine::service::{Reply, Request, Service};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// A worker script beside the page, as an absolute URL (a worker's
/// script resolves against the document's base, wherever the site is served).
pub fn script_url(name: &str) -> String {
    gloo::utils::document()
        .base_uri()
        .ok()
        .flatten()
        .and_then(|base| web_sys::Url::new_with_base(name, &base).ok())
        .map_or_else(|| name.to_string(), |url| url.href())
}

/// What the worker says once it listens.
pub const READY: &str = "ready";

thread_local! {
    static SERVICE: RefCell<Service> = RefCell::new(Service::new());
}

/// Answers requests until the page terminates the worker.
pub fn serve() {
    let Ok(scope) = js_sys::global().dyn_into::<DedicatedWorkerGlobalScope>() else { return };
    let reply_to = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let request = event.data().as_string().map(|text| Request::from_json(&text));
        let opened = matches!(request, Some(Ok(Request::Open { .. })));
        let reply = match request {
            Some(Ok(request)) => SERVICE.with(|service| service.borrow_mut().handle(request)),
            Some(Err(message)) => Reply::Failed { message },
            None => Reply::Failed { message: "a request must be JSON text".to_string() },
        };
        let _ = reply_to.post_message(&JsValue::from_str(&reply.to_json()));
        if opened {
            SERVICE.with(|service| service.borrow().warm_up());
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The worker lives as long as the page keeps it: so does its handler.
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str(READY));
}
