//! The review page's "Send to a Learning Record Store": the LRS and the
//! trainee's name as xAPI needs them (or only the name, in a room an
//! instructor's link set up), a send that
//! queues the statements first, and retries while the page is open and
//! whenever the browser comes back online.

use std::rc::Rc;

use clusterlab_engine::report::Report;
use clusterlab_engine::xapi::{self, Actor, Room};
use gloo::events::EventListener;
use gloo::timers::callback::Interval;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::xapi_queue::{self, Destination, Sent, Settings};

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
        Sent::Offline(n) => format!("{n} {} wait to be sent: the browser is offline. They are sent again when it is back online.", plural(n)),
        Sent::Unreachable(n) => format!(
            "{n} {} wait to be sent: the LRS at {endpoint} could not be reached (a wrong address, or an LRS that does not accept requests from this site). They are tried again every 30 seconds.",
            plural(n)
        ),
        Sent::Refused(n, why) => format!("{n} {} wait to be sent: the LRS refused them ({why}). Check the endpoint and the credentials, then send again.", plural(n)),
    }
}

/// What Send still needs, in words: empty when it can send.
fn missing(settings: &Settings, room: Option<&Room>) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if room.is_none() && settings.endpoint.trim().is_empty() {
        missing.push("the LRS endpoint");
    }
    if settings.name.trim().is_empty() {
        missing.push("your name");
    }
    if room.is_none() && settings.email.trim().is_empty() {
        missing.push("your email");
    }
    missing
}

#[function_component(LrsPanel)]
pub fn lrs_panel(props: &LrsPanelProps) -> Html {
    let settings = use_state(xapi_queue::settings);
    let room = use_memo((), |()| xapi_queue::room());
    let status = use_state(|| {
        let (here, elsewhere) = xapi_queue::waiting(xapi_queue::destination().as_ref());
        let mut said = Vec::new();
        if here > 0 {
            said.push(format!("{here} statements wait to be sent."));
        }
        if elsewhere > 0 {
            said.push(format!("{elsewhere} statements made in another room (or outside this one) wait for that LRS: they are sent from a page opened there."));
        }
        (!said.is_empty()).then(|| said.join(" "))
    });
    let sending = use_state(|| false);
    let send_queue = {
        let (status, sending) = (status.clone(), sending.clone());
        Callback::from(move |destination: Destination| {
            let (status, sending) = (status.clone(), sending.clone());
            sending.set(true);
            wasm_bindgen_futures::spawn_local(async move {
                let sent = xapi_queue::flush(&destination).await;
                status.set(Some(say(&sent, &destination.endpoint)));
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
                    if let Some(destination) = xapi_queue::destination().filter(|destination| xapi_queue::waiting(Some(destination)).0 > 0) {
                        send_queue.emit(destination);
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
        let (settings, room, report, send_queue) = (settings.clone(), room.clone(), props.report.clone(), send_queue.clone());
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            // In a room the name is an account within the room's registration.
            let email = if room.is_some() { String::new() } else { settings.email.trim().to_string() };
            let actor = Actor { name: settings.name.trim().to_string(), email };
            let now = String::from(js_sys::Date::new_0().to_iso_string());
            let registration = room.as_ref().as_ref().map(|room| room.registration.as_str());
            xapi_queue::enqueue(xapi::statements(&report, &actor, &crate::fetch::site(), &now, registration));
            if let Some(destination) = xapi_queue::destination() {
                send_queue.emit(destination);
            }
        })
    };
    // "Not you?": the next person on this browser starts with no name, email
    // or credentials of the last.
    let clear = {
        let settings = settings.clone();
        Callback::from(move |_: MouseEvent| {
            let next = Settings { endpoint: settings.endpoint.clone(), ..Settings::default() };
            xapi_queue::save_settings(&next);
            settings.set(next);
        })
    };
    let s = &*settings;
    let needed = missing(s, room.as_ref().as_ref());
    let why_not = (!needed.is_empty()).then(|| format!("To send, fill in {}.", needed.join(", ")));
    let someone = !s.name.is_empty() || !s.email.is_empty() || !s.username.is_empty();
    html! {
        <section class="lrs" aria-labelledby="lrs-heading">
            <h2 id="lrs-heading">{ "Send to a Learning Record Store" }</h2>
            if let Some(room) = &*room {
                <p>{ format!("Your results as xAPI statements, one for each answered question and one for the lab, go to {}: the Learning Record Store your instructor set up for this session. Type your name as your instructor should see it.", room.endpoint) }</p>
            } else {
                <p>{ "Your results as xAPI statements: one for each answered question and one for the lab. The endpoint, your name and email stay in this browser; the username and password only until this tab closes. Statements that cannot be sent wait here and are sent again when the browser is online." }</p>
            }
            <form class="lrs-form" onsubmit={send}>
                if room.is_none() {
                    { field("LRS endpoint", "url", &s.endpoint, |s, v| s.endpoint = v) }
                    { field("LRS username", "text", &s.username, |s, v| s.username = v) }
                    { field("LRS password", "password", &s.password, |s, v| s.password = v) }
                }
                { field("Your name", "text", &s.name, |s, v| s.name = v) }
                if room.is_none() {
                    { field("Your email", "email", &s.email, |s, v| s.email = v) }
                }
                <div class="actions">
                    <button type="submit" class="answer-button" disabled={why_not.is_some() || *sending} aria-describedby="lrs-why-not">{ if *sending { "Sending\u{2026}" } else { "Send the results" } }</button>
                    if someone {
                        <button type="button" onclick={clear}>{ "Not you? Clear" }</button>
                    }
                </div>
                <p class="lrs-why-not" id="lrs-why-not">{ why_not.unwrap_or_default() }</p>
            </form>
            <p class="lrs-status" role="status">{ (*status).clone().unwrap_or_default() }</p>
        </section>
    }
}
