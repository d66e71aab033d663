//! The author page's checks, in a worker of their own: the page posts the
//! lab file's text as it changes; the worker answers each text twice (the
//! quick pass, then the deep one, `live::check_in_passes`). Only the newest
//! text's answers matter: older ones are dropped by their id.

use std::cell::RefCell;
use std::rc::Rc;

use clusterlab_engine::lab::authoring::live::{check_in_passes, Checked};
use serde::{Deserialize, Serialize};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, ErrorEvent, MessageEvent, Worker};
use yew::Callback;

/// The checker's script, as Trunk's loader shim names it beside the page.
const WORKER_SCRIPT: &str = "author_checker_loader.js";

/// What the checker says once it listens.
const READY: &str = "ready";

#[derive(Serialize, Deserialize)]
struct Request {
    id: u64,
    source: String,
}

#[derive(Serialize, Deserialize)]
struct Reply {
    id: u64,
    checked: Checked,
}

/// The worker's side (the `author_checker` binary): answers each request
/// with its passes.
pub fn serve() {
    let Ok(scope) = js_sys::global().dyn_into::<DedicatedWorkerGlobalScope>() else { return };
    let reply_to = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let Some(request) = event.data().as_string().and_then(|text| serde_json::from_str::<Request>(&text).ok()) else { return };
        check_in_passes(&request.source, |checked| {
            if let Ok(text) = serde_json::to_string(&Reply { id: request.id, checked }) {
                let _ = reply_to.post_message(&JsValue::from_str(&text));
            }
        });
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str(READY));
}

/// What the page hears from the checker.
#[derive(Clone, Debug, PartialEq)]
pub enum Heard {
    /// A pass over the newest text.
    Checked(Rc<Checked>),
    /// The checker failed on the newest text; it restarts for the next one.
    Failed(String),
}

/// The page's handle to the checker worker.
pub struct Checker(Rc<RefCell<Inner>>);

struct Inner {
    worker: Option<Worker>,
    ready: bool,
    /// The newest text, waiting for the worker to listen.
    waiting: Option<String>,
    newest: u64,
    on_heard: Callback<Heard>,
    _handlers: Option<(Closure<dyn FnMut(MessageEvent)>, Closure<dyn FnMut(ErrorEvent)>)>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(worker) = &self.worker {
            worker.terminate();
        }
    }
}

impl Checker {
    pub fn start(on_heard: Callback<Heard>) -> Checker {
        let inner = Rc::new(RefCell::new(Inner { worker: None, ready: false, waiting: None, newest: 0, on_heard, _handlers: None }));
        Inner::spawn(&inner);
        Checker(inner)
    }

    /// Checks `source`; earlier texts' answers are dropped from now on.
    pub fn check(&self, source: &str) {
        let mut inner = self.0.borrow_mut();
        inner.newest += 1;
        let request = serde_json::to_string(&Request { id: inner.newest, source: source.to_string() }).unwrap_or_default();
        match (&inner.worker, inner.ready) {
            (Some(worker), true) => {
                let _ = worker.post_message(&JsValue::from_str(&request));
            }
            _ => inner.waiting = Some(request),
        }
        if inner.worker.is_none() {
            drop(inner);
            Inner::spawn(&self.0);
        }
    }
}

impl Inner {
    fn spawn(inner: &Rc<RefCell<Inner>>) {
        let script = crate::worker::script_url(WORKER_SCRIPT);
        let Ok(worker) = Worker::new(&script) else {
            let on_heard = inner.borrow().on_heard.clone();
            on_heard.emit(Heard::Failed("this browser could not start the checker's worker (Web Workers are needed)".into()));
            return;
        };
        let weak = Rc::downgrade(inner);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let (Some(inner), Some(text)) = (weak.upgrade(), event.data().as_string()) else { return };
            if text == READY {
                let mut now = inner.borrow_mut();
                now.ready = true;
                if let (Some(worker), Some(request)) = (now.worker.clone(), now.waiting.take()) {
                    let _ = worker.post_message(&JsValue::from_str(&request));
                }
                return;
            }
            let Ok(reply) = serde_json::from_str::<Reply>(&text) else { return };
            let (newest, on_heard) = {
                let now = inner.borrow();
                (now.newest, now.on_heard.clone())
            };
            if reply.id == newest {
                on_heard.emit(Heard::Checked(Rc::new(reply.checked)));
            }
        });
        let weak = Rc::downgrade(inner);
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            let Some(inner) = weak.upgrade() else { return };
            let on_heard = {
                let mut now = inner.borrow_mut();
                if let Some(worker) = now.worker.take() {
                    worker.terminate();
                }
                now.ready = false;
                now.on_heard.clone()
            };
            on_heard.emit(Heard::Failed(format!("the checker stopped ({}); it starts again with your next change", event.message())));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let mut now = inner.borrow_mut();
        now.worker = Some(worker);
        now.ready = false;
        now._handlers = Some((on_message, on_error));
    }
}
