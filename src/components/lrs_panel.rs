//! The review page's "Send to a Learning Record Store": the LRS and the
//! trainee's name as xAPI needs them (kept in this browser), a send that
//! queues the statements first, and retries while the page is open and
//! whenever the browser comes back online.

use std::rc::Rc;

use clusterlab_engine::report::Report;
use clusterlab_engine::xapi::{self, Actor};
use gloo::events::EventListener;
use gloo::timers::callback::Interval;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::xapi_queue::{self, Sent, Settings};

/// How often queued statements are tried again while the page is open.
const RETRY_MS: u32 = 30_000;

#[derive(Properties, PartialEq)]
pub struct LrsPanelProps {
    pub report: Rc<Report>,
}

fn say(sent: &Sent, endpoint: &str) -> String {
    let plural = |n: &usize| if *n == 1 { "statement" } else { "statements" };
    match sent {
        Sent::All(n) => format!("Sent {n} {} to {endpoint}.", plural(n)),
        Sent::Nothing => "Nothing new to send: the LRS has these results already.".to_string(),
        Sent::Offline(n, why) => format!("{n} {} wait to be sent: {why}. They are sent again when the browser is online.", plural(n)),
        Sent::Refused(n, why) => format!("{n} {} wait to be sent: {why}. Check the endpoint and the credentials, then send again.", plural(n)),
    }
}

/// The app's own address, which the statements' activity ids start with.
fn site() -> String {
    let location = gloo::utils::window().location();
    let origin = location.origin().unwrap_or_default();
    let path = location.pathname().unwrap_or_default();
    format!("{origin}{}", path.trim_end_matches("index.html"))
}

#[function_component(LrsPanel)]
pub fn lrs_panel(props: &LrsPanelProps) -> Html {
    let settings = use_state(xapi_queue::settings);
    let status = use_state(|| {
        let waiting = xapi_queue::queued().len();
        (waiting > 0).then(|| format!("{waiting} statements wait to be sent."))
    });
    let sending = use_state(|| false);
    let send_queue = {
        let (status, sending) = (status.clone(), sending.clone());
        Callback::from(move |settings: Settings| {
            if settings.endpoint.trim().is_empty() {
                return;
            }
            let (status, sending) = (status.clone(), sending.clone());
            sending.set(true);
            wasm_bindgen_futures::spawn_local(async move {
                let sent = xapi_queue::flush(&settings).await;
                status.set(Some(say(&sent, settings.endpoint.trim())));
                sending.set(false);
            });
        })
    };
    {
        // Retry what waits: now and then, and when the network comes back.
        let send_queue = send_queue.clone();
        use_effect_with((), move |_| {
            let retry = {
                let send_queue = send_queue.clone();
                move || {
                    if !xapi_queue::queued().is_empty() {
                        send_queue.emit(xapi_queue::settings());
                    }
                }
            };
            let online = EventListener::new(&gloo::utils::window(), "online", {
                let retry = retry.clone();
                move |_| retry()
            });
            let interval = Interval::new(RETRY_MS, retry);
            move || {
                drop(online);
                drop(interval);
            }
        });
    }
    let field = |label: &'static str, kind: &'static str, value: &str, set: fn(&mut Settings, String)| {
        let settings = settings.clone();
        let oninput = Callback::from(move |event: InputEvent| {
            let input: HtmlInputElement = event.target_unchecked_into();
            let mut next = (*settings).clone();
            set(&mut next, input.value());
            xapi_queue::save_settings(&next);
            settings.set(next);
        });
        html! {
            <label class="lrs-field">
                <span>{ label }</span>
                <input type={kind} value={value.to_string()} {oninput} autocomplete="off" />
            </label>
        }
    };
    let send = {
        let (settings, report, send_queue) = (settings.clone(), props.report.clone(), send_queue.clone());
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            let actor = Actor { name: settings.name.trim().to_string(), email: settings.email.trim().to_string() };
            let now = String::from(js_sys::Date::new_0().to_iso_string());
            xapi_queue::enqueue(xapi::statements(&report, &actor, &site(), &now));
            send_queue.emit((*settings).clone());
        })
    };
    let s = &*settings;
    let ready = !s.endpoint.trim().is_empty() && !s.email.trim().is_empty();
    html! {
        <section class="lrs" aria-labelledby="lrs-heading">
            <h2 id="lrs-heading">{ "Send to a Learning Record Store" }</h2>
            <p>{ "Your results as xAPI statements: one for each answered question and one for the lab. The endpoint, the credentials and your name stay in this browser. Statements that cannot be sent wait here and are sent again when the browser is online." }</p>
            <form class="lrs-form" onsubmit={send}>
                { field("LRS endpoint", "url", &s.endpoint, |s, v| s.endpoint = v) }
                { field("LRS username", "text", &s.username, |s, v| s.username = v) }
                { field("LRS password", "password", &s.password, |s, v| s.password = v) }
                { field("Your name", "text", &s.name, |s, v| s.name = v) }
                { field("Your email", "email", &s.email, |s, v| s.email = v) }
                <div class="actions">
                    <button type="submit" class="answer-button" disabled={!ready || *sending}>{ if *sending { "Sending\u{2026}" } else { "Send the results" } }</button>
                </div>
            </form>
            <p class="lrs-status" role="status">{ (*status).clone().unwrap_or_default() }</p>
        </section>
    }
}
