//! The page's handle to the engine, which runs in a Web Worker with a module
//! of its own (the `engine_worker` binary, `worker.rs`): no command,
//! however long, blocks the page, and the page's module carries no
//! simulator. The app starts the worker as it loads, so it is ready by the
//! time a lab opens; each lab page listens to it in turn.
//!
//! A line that computes for more than [`RUNAWAY_MS`] of real time is
//! stopped by ending the worker; a new one resumes from the last session,
//! so the runaway line is never run again. The component tests, which
//! have no worker, run the engine in the page (`inline-engine` feature).

// With the engine in the page, the worker's plumbing is unused.
#![cfg_attr(feature = "inline-engine", allow(dead_code, unused_imports))]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};

use clusterlab_engine::service::{Reply, Request};
use clusterlab_engine::shell::SessionJson;
use gloo::timers::callback::Timeout;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{ErrorEvent, MessageEvent, Worker};
use yew::Callback;

use crate::worker::READY;

/// The worker's script, as Trunk's loader shim names it beside the page.
const WORKER_SCRIPT: &str = "engine_worker_loader.js";

/// How long a line may compute, in real time, before it is stopped.
pub const RUNAWAY_MS: u32 = 1000;

/// What the engine tells the page.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineEvent {
    Reply(Reply),
    /// The line `id` was stopped before it answered: by Ctrl-C, or because
    /// it ran past [`RUNAWAY_MS`]. The session is as it was before the line.
    Stopped {
        id: u64,
        by_user: bool,
    },
    /// The simulator failed; it was restarted from the last session.
    Crashed {
        running: Option<u64>,
        message: String,
    },
}

#[derive(Clone)]
pub struct Engine(Rc<RefCell<Inner>>);

impl PartialEq for Engine {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

struct Inner {
    host: Host,
    on_event: Callback<EngineEvent>,
    /// Requests written before the worker listens.
    waiting: Vec<String>,
    ready: bool,
    /// The lab and variant, and the session a restarted worker resumes from.
    lab: Option<(Rc<str>, u64)>,
    session: Option<SessionJson>,
    /// The line computing now, and the timer that stops it (armed once the
    /// worker has the line: a worker still starting is not a runaway).
    running: Option<(u64, Option<Timeout>)>,
    completions: BTreeMap<u64, Callback<Vec<String>>>,
    next_completion: u64,
}

enum Host {
    Worker {
        worker: Worker,
        _on_message: Closure<dyn FnMut(MessageEvent)>,
        _on_error: Closure<dyn FnMut(ErrorEvent)>,
    },
    #[cfg(feature = "inline-engine")]
    Inline(Rc<RefCell<clusterlab_engine::service::Service>>),
    /// No worker could start: every request fails with this.
    Missing(String),
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Host::Worker { worker, .. } = &self.host {
            worker.terminate();
        }
    }
}

#[cfg(feature = "inline-engine")]
fn spawn_worker(_: Weak<RefCell<Inner>>) -> Host {
    Host::Inline(Rc::new(RefCell::new(clusterlab_engine::service::Service::new())))
}

#[cfg(not(feature = "inline-engine"))]
fn spawn_worker(weak: Weak<RefCell<Inner>>) -> Host {
    let script = crate::worker::script_url(WORKER_SCRIPT);
    let worker = match started_worker().map_or_else(|| Worker::new(&script), Ok) {
        Ok(worker) => worker,
        Err(_) => return Host::Missing("this browser could not start the simulator's worker (Web Workers are needed)".into()),
    };
    let on_message = {
        let weak = weak.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            if let (Some(inner), Some(text)) = (weak.upgrade(), event.data().as_string()) {
                Inner::received(&inner, &text);
            }
        })
    };
    let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
        if let Some(inner) = weak.upgrade() {
            Inner::crashed(&inner, event.message());
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Host::Worker { worker, _on_message: on_message, _on_error: on_error }
}

/// The worker index.html started beside this module, taken once (a worker
/// restarted after a runaway line is a new one). What it said before this
/// module listened reaches the handlers once they are set (index.html).
#[cfg(not(feature = "inline-engine"))]
fn started_worker() -> Option<Worker> {
    let window = gloo::utils::window();
    let key = JsValue::from_str("clusterlabWorker");
    let worker = js_sys::Reflect::get(&window, &key).ok()?.dyn_into::<Worker>().ok()?;
    let _ = js_sys::Reflect::delete_property(window.unchecked_ref::<js_sys::Object>(), &key);
    Some(worker)
}

impl Engine {
    /// Starts the engine's worker. Events go nowhere until a page listens.
    pub fn start() -> Engine {
        let inner = Rc::new(RefCell::new(Inner {
            host: Host::Missing(String::new()),
            on_event: Callback::noop(),
            waiting: Vec::new(),
            ready: false,
            lab: None,
            session: None,
            running: None,
            completions: BTreeMap::new(),
            next_completion: 0,
        }));
        let host = spawn_worker(Rc::downgrade(&inner));
        {
            let mut state = inner.borrow_mut();
            state.ready = !matches!(host, Host::Worker { .. });
            state.host = host;
        }
        Engine(inner)
    }

    /// Where the engine's events go from now on (the lab page that is open).
    pub fn listen(&self, on_event: Callback<EngineEvent>) {
        self.0.borrow_mut().on_event = on_event;
    }

    /// Opens a lab's session: its data, the variant, the session to resume.
    pub fn open(&self, lab: Rc<str>, seed: u64, session: SessionJson) {
        let request = Request::Open { lab: lab.to_string(), seed, session: Some(session.clone()) };
        {
            let mut inner = self.0.borrow_mut();
            inner.lab = Some((lab, seed));
            inner.session = Some(session);
            inner.running = None;
        }
        Inner::send(&self.0, request);
    }

    /// Runs a line; a [`Reply::Ran`] with the same id answers, or
    /// [`EngineEvent::Stopped`].
    pub fn run(&self, id: u64, line: String, shell: usize) {
        self.0.borrow_mut().running = Some((id, None));
        Inner::send(&self.0, Request::Run { id, line, shell });
        if self.0.borrow().ready {
            Inner::arm(&self.0);
        }
    }

    /// Ctrl-C, `at_ms` simulated milliseconds into the line `id`, which has
    /// answered already.
    pub fn interrupt(&self, id: u64, at_ms: u64) {
        Inner::send(&self.0, Request::Interrupt { id, at_ms });
    }

    /// Ctrl-C on a line still computing: the worker is ended and restarted.
    pub fn stop(&self, id: u64) {
        Inner::stop(&self.0, id, true);
    }

    /// Ctrl-C at the `> ` prompt of an incomplete command.
    pub fn cancel(&self, shell: usize) {
        Inner::send(&self.0, Request::Cancel { shell });
    }

    /// Closes a shell (a terminal tab); a [`Reply::Cancelled`] answers.
    pub fn close_shell(&self, shell: usize) {
        Inner::send(&self.0, Request::CloseShell { shell });
    }

    /// The metrics panel, drawn now; a [`Reply::Metrics`] answers.
    pub fn metrics(&self) {
        Inner::send(&self.0, Request::Metrics);
    }

    /// Tab completion for `line`.
    pub fn complete(&self, line: String, answer: Callback<Vec<String>>) {
        let id = {
            let mut inner = self.0.borrow_mut();
            inner.next_completion += 1;
            let id = inner.next_completion;
            inner.completions.insert(id, answer);
            id
        };
        Inner::send(&self.0, Request::Complete { id, line });
    }
}

impl Inner {
    /// Starts the runaway timer of the line computing now.
    fn arm(this: &Rc<RefCell<Inner>>) {
        let mut inner = this.borrow_mut();
        let Some((id, timer @ None)) = inner.running.as_mut() else { return };
        let (id, weak) = (*id, Rc::downgrade(this));
        *timer = Some(Timeout::new(RUNAWAY_MS, move || {
            if let Some(inner) = weak.upgrade() {
                Inner::stop(&inner, id, false);
            }
        }));
    }

    fn send(this: &Rc<RefCell<Inner>>, request: Request) {
        let text = request.to_json();
        let mut inner = this.borrow_mut();
        if !inner.ready {
            inner.waiting.push(text);
            return;
        }
        match &inner.host {
            Host::Worker { worker, .. } => {
                let _ = worker.post_message(&JsValue::from_str(&text));
            }
            Host::Missing(message) => {
                let reply = Reply::Failed { message: message.clone() }.to_json();
                let weak = Rc::downgrade(this);
                Timeout::new(0, move || {
                    if let Some(inner) = weak.upgrade() {
                        Inner::received(&inner, &reply);
                    }
                })
                .forget();
            }
            #[cfg(feature = "inline-engine")]
            Host::Inline(service) => {
                // Answer later, as a worker would: the caller never sees a reply re-entrantly.
                let service = service.clone();
                let weak = Rc::downgrade(this);
                Timeout::new(0, move || {
                    let reply = service.borrow_mut().handle(request);
                    if let Some(inner) = weak.upgrade() {
                        Inner::received(&inner, &reply.to_json());
                    }
                })
                .forget();
            }
        }
    }

    fn received(this: &Rc<RefCell<Inner>>, text: &str) {
        if text == READY {
            let waiting = {
                let mut inner = this.borrow_mut();
                inner.ready = true;
                std::mem::take(&mut inner.waiting)
            };
            if let Host::Worker { worker, .. } = &this.borrow().host {
                for request in waiting {
                    let _ = worker.post_message(&JsValue::from_str(&request));
                }
            }
            Inner::arm(this);
            return;
        }
        let reply = match Reply::from_json(text) {
            Ok(reply) => reply,
            Err(message) => Reply::Failed { message },
        };
        let on_event = {
            let mut inner = this.borrow_mut();
            match &reply {
                Reply::Opened { session, .. } => inner.session = Some(session.clone()),
                Reply::Ran { id, session, .. } => {
                    if inner.running.as_ref().is_some_and(|(running, _)| running == id) {
                        inner.running = None;
                    }
                    inner.session = Some(session.clone());
                }
                Reply::Completions { id, words } => {
                    if let Some(answer) = inner.completions.remove(id) {
                        drop(inner);
                        answer.emit(words.clone());
                    }
                    return;
                }
                Reply::Cancelled { session, .. } => inner.session = Some(session.clone()),
                Reply::Failed { .. } | Reply::Metrics { .. } => {}
            }
            inner.on_event.clone()
        };
        on_event.emit(EngineEvent::Reply(reply));
    }

    /// Ends the worker running `id` and starts another from the last session.
    fn stop(this: &Rc<RefCell<Inner>>, id: u64, by_user: bool) {
        let running = this.borrow().running.as_ref().map(|(running, _)| *running);
        if running != Some(id) {
            return;
        }
        Inner::restart(this);
        let on_event = this.borrow().on_event.clone();
        on_event.emit(EngineEvent::Stopped { id, by_user });
    }

    fn crashed(this: &Rc<RefCell<Inner>>, message: String) {
        let running = this.borrow().running.as_ref().map(|(id, _)| *id);
        Inner::restart(this);
        let on_event = this.borrow().on_event.clone();
        on_event.emit(EngineEvent::Crashed { running, message });
    }

    fn restart(this: &Rc<RefCell<Inner>>) {
        let reopen = {
            let mut inner = this.borrow_mut();
            inner.running = None;
            inner.completions.clear();
            if let Host::Worker { worker, .. } = &inner.host {
                worker.terminate();
            }
            inner.host = spawn_worker(Rc::downgrade(this));
            inner.ready = !matches!(inner.host, Host::Worker { .. });
            inner.waiting.clear();
            inner.lab.clone().map(|(lab, seed)| Request::Open { lab: lab.to_string(), seed, session: inner.session.clone() })
        };
        if let Some(open) = reopen {
            Inner::send(this, open);
        }
    }
}
