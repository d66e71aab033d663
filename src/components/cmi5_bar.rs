//! A lab or an exam launched by an LMS (cmi5): the bar above the page that
//! runs the AU's session. It fetches the launch's token (once: it is kept
//! for the browser session), reads `LMS.LaunchData`, sends `initialized`,
//! opens the lab or the exam, and when the learner finishes (an exam: when
//! it is submitted) sends the outcome cmi5 defines and `terminated`, then
//! returns to the LMS's `returnURL`. The engine makes every statement
//! (`clusterlab_engine::cmi5`); this only carries them.

use std::rc::Rc;

use clusterlab_engine::cmi5::{Launch, LaunchData, Session};
use clusterlab_engine::shell::SessionJson;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use yew::prelude::*;

use crate::{fetch, storage};

/// What the session keeps across reloads (sessionStorage: the token is the
/// LMS's for this browser session only, never kept longer).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Kept {
    token: String,
    started_ms: i64,
    initialized: bool,
    terminated: bool,
}

/// One session per launch: the registration holds every AU of a course,
/// and each launch has a fetch URL of its own.
fn kept_key(launch: &Launch) -> String {
    let launch_id = format!("{}|{}|{}", launch.registration, launch.activity_id, launch.fetch);
    format!("clusterlab.cmi5.{:016x}", clusterlab_engine::rng::stable_hash(launch_id.as_bytes()))
}

/// Where the browser remembers that an AU's outcome went out for a
/// registration: cmi5 takes passed, failed and completed once.
fn outcome_key(launch: &Launch) -> String {
    let id = format!("{}|{}", launch.registration, launch.activity_id);
    format!("clusterlab.cmi5.outcome.{:016x}", clusterlab_engine::rng::stable_hash(id.as_bytes()))
}

fn outcome_sent(launch: &Launch) -> bool {
    gloo::utils::window().local_storage().ok().flatten().and_then(|s| s.get_item(&outcome_key(launch)).ok().flatten()).is_some()
}

fn remember_outcome(launch: &Launch) {
    if let Some(storage) = gloo::utils::window().local_storage().ok().flatten() {
        let _ = storage.set_item(&outcome_key(launch), "sent");
    }
}

fn session_storage() -> Option<web_sys::Storage> {
    gloo::utils::window().session_storage().ok().flatten()
}

fn read_kept(launch: &Launch) -> Option<Kept> {
    session_storage()?.get_item(&kept_key(launch)).ok().flatten().and_then(|text| serde_json::from_str(&text).ok())
}

fn write_kept(launch: &Launch, kept: &Kept) {
    if let (Some(storage), Ok(text)) = (session_storage(), serde_json::to_string(kept)) {
        let _ = storage.set_item(&kept_key(launch), &text);
    }
}

fn now_iso() -> String {
    js_sys::Date::new_0().to_iso_string().into()
}

/// One request: `method` to `url` with the token (when given) and a JSON body.
async fn request(method: &str, url: &str, token: Option<&str>, body: Option<String>) -> Result<(u16, String), String> {
    let window = gloo::utils::window();
    let request = (|| -> Result<web_sys::Request, wasm_bindgen::JsValue> {
        let headers = web_sys::Headers::new()?;
        if let Some(token) = token {
            headers.set("Authorization", &format!("Basic {token}"))?;
            headers.set("X-Experience-API-Version", clusterlab_engine::xapi::VERSION)?;
        }
        if body.is_some() {
            headers.set("Content-Type", "application/json")?;
        }
        let init = web_sys::RequestInit::new();
        init.set_method(method);
        init.set_headers(&headers);
        if let Some(body) = &body {
            init.set_body(&body.into());
        }
        web_sys::Request::new_with_str_and_init(url, &init)
    })()
    .map_err(|_| format!("\u{201c}{url}\u{201d} is not an address a request can go to"))?;
    let response =
        JsFuture::from(window.fetch_with_request(&request)).await.map_err(|_| format!("{url} could not be reached"))?.unchecked_into::<web_sys::Response>();
    let text = match response.text() {
        Ok(promise) => JsFuture::from(promise).await.ok().and_then(|t| t.as_string()).unwrap_or_default(),
        Err(_) => String::new(),
    };
    Ok((response.status(), text))
}

async fn send(launch: &Launch, token: &str, statements: Vec<Value>) -> Result<(), String> {
    if statements.is_empty() {
        return Ok(());
    }
    let body = serde_json::to_string(&statements).map_err(|e| e.to_string())?;
    let (status, text) = request("POST", &format!("{}statements", launch.base()), Some(token), Some(body)).await?;
    // 409: statements with these ids are stored already (a retry after a reload).
    if (200..300).contains(&status) || status == 409 {
        Ok(())
    } else {
        Err(format!("the LMS's record store refused the statements ({status}): {}", text.chars().take(200).collect::<String>()))
    }
}

/// The session, from the launch: the token, the launch data, `initialized`.
async fn start(launch: Launch) -> Result<(Session, Kept), String> {
    let mut kept = match read_kept(&launch) {
        Some(kept) => kept,
        None => {
            // The fetch URL answers once: its token serves the whole session.
            let (status, text) = request("POST", &launch.fetch, None, None).await?;
            let value: Value = serde_json::from_str(&text).map_err(|_| format!("the LMS's token service answered {status} without a token"))?;
            let Some(token) = value.get("auth-token").and_then(Value::as_str) else {
                let why = value.get("error-text").and_then(Value::as_str).unwrap_or("no token");
                return Err(format!("the LMS gave no token ({why}): launch the lab again from the LMS"));
            };
            let kept = Kept { token: token.to_string(), started_ms: js_sys::Date::now() as i64, ..Kept::default() };
            write_kept(&launch, &kept);
            kept
        }
    };
    let (status, text) = request("GET", &launch.launch_data_url(), Some(&kept.token), None).await?;
    if !(200..300).contains(&status) {
        return Err(format!("the LMS's launch data could not be read ({status})"));
    }
    let data = LaunchData::from_json(&text)?;
    let session = Session { launch, data };
    if !kept.initialized {
        send(&session.launch, &kept.token, vec![session.initialized(&now_iso())]).await?;
        kept.initialized = true;
        write_kept(&session.launch, &kept);
    }
    Ok((session, kept))
}

/// Sends the outcome of the learner's record and `terminated`; the return
/// address when the LMS gave one.
async fn finish(session: Rc<Session>, kept: Kept) -> Result<Option<String>, String> {
    let launch = &session.launch;
    let catalog = fetch::catalog().await?;
    let entry = catalog.find(&launch.lab).ok_or_else(|| format!("there is no lab called {} here", launch.lab))?;
    let loaded = fetch::lab(entry).await?;
    let initial = SessionJson::initial(loaded.lab.first_host());
    let state = storage::reload(&loaded.lab, &entry.digest, &initial, launch.exam).ok_or("this browser has no record of the lab yet")?;
    let report = clusterlab_engine::report::report(&loaded.lab, &state);
    let elapsed = js_sys::Date::now() as i64 - kept.started_ms;
    let mut statements = if outcome_sent(launch) { Vec::new() } else { session.outcome(&report, &now_iso(), elapsed) };
    let recorded = !statements.is_empty();
    statements.push(session.terminated(&now_iso(), elapsed));
    send(launch, &kept.token, statements).await?;
    if recorded {
        remember_outcome(launch);
    }
    let mut kept = kept;
    kept.terminated = true;
    write_kept(launch, &kept);
    Ok(session.data.return_url.clone())
}

/// Whether the launched exam has been submitted in this browser.
async fn exam_submitted(launch: &Launch) -> bool {
    let Ok(catalog) = fetch::catalog().await else { return false };
    let Some(entry) = catalog.find(&launch.lab) else { return false };
    let Ok(loaded) = fetch::lab(entry).await else { return false };
    let initial = SessionJson::initial(loaded.lab.first_host());
    storage::reload(&loaded.lab, &entry.digest, &initial, true).is_some_and(|state| state.exam.is_some_and(|exam| exam.submitted.is_some()))
}

#[derive(Clone, PartialEq)]
enum Status {
    Starting,
    Ready,
    Sending,
    Done(Option<String>),
    Failed(String),
}

#[function_component(Cmi5Bar)]
pub fn cmi5_bar() -> Html {
    let launch = use_memo((), |_| Launch::from_query(&gloo::utils::window().location().search().unwrap_or_default()));
    let status = use_state(|| Status::Starting);
    let session = use_state(|| None::<(Rc<Session>, Kept)>);
    {
        let (launch, status, session) = (launch.clone(), status.clone(), session.clone());
        use_effect_with((), move |_| {
            if let Some(launch) = (*launch).clone() {
                // The learner as the LMS names them, in this registration: a
                // retake under a new registration is a new exam.
                storage::set_learner(&format!("{}|{}", launch.learner(), launch.registration));
                wasm_bindgen_futures::spawn_local(async move {
                    match start(launch.clone()).await {
                        Ok((started, kept)) => {
                            let terminated = kept.terminated;
                            let looking = !started.data.records_outcome();
                            session.set(Some((Rc::new(started), kept)));
                            status.set(if terminated { Status::Done(None) } else { Status::Ready });
                            // Open the lab, or the exam at the learner's variant;
                            // Browse and Review launches show the review, so
                            // that looking uses no attempt of an exam.
                            let hash = match (launch.exam, looking) {
                                (true, true) => format!("#/review/{}/exam", launch.lab),
                                (false, true) => format!("#/review/{}", launch.lab),
                                (true, false) => format!("#/exam/{}", launch.lab),
                                (false, false) => format!("#/lab/{}", launch.lab),
                            };
                            let at = gloo::utils::window().location().hash().unwrap_or_default();
                            if !at.starts_with(&hash) {
                                let _ = gloo::utils::window().location().set_hash(&hash);
                            }
                        }
                        Err(why) => status.set(Status::Failed(why)),
                    }
                });
            }
        });
    }
    let do_finish = {
        let (status, session) = (status.clone(), session.clone());
        Callback::from(move |()| {
            let Some((started, kept)) = (*session).clone() else { return };
            status.set(Status::Sending);
            let status = status.clone();
            wasm_bindgen_futures::spawn_local(async move {
                match finish(started, kept).await {
                    Ok(Some(back)) => {
                        status.set(Status::Done(Some(back.clone())));
                        let _ = gloo::utils::window().location().assign(&back);
                    }
                    Ok(None) => status.set(Status::Done(None)),
                    Err(why) => status.set(Status::Failed(why)),
                }
            });
        })
    };
    {
        // An exam finishes when it is submitted on the page.
        let (status, session, do_finish) = (status.clone(), session.clone(), do_finish.clone());
        let watching = *status == Status::Ready && session.as_ref().is_some_and(|(s, _)| s.launch.exam);
        use_effect_with(watching, move |watching| {
            let timer = watching.then(|| {
                let session = session.clone();
                gloo::timers::callback::Interval::new(2000, move || {
                    let Some((started, _)) = (*session).clone() else { return };
                    let (status, do_finish) = (status.clone(), do_finish.clone());
                    wasm_bindgen_futures::spawn_local(async move {
                        if *status == Status::Ready && exam_submitted(&started.launch).await {
                            do_finish.emit(());
                        }
                    });
                })
            });
            move || drop(timer)
        });
    }
    let Some(launch) = (*launch).clone() else {
        return html! {
            <div class="cmi5-bar failed" role="alert">
                <p>{ "This page was opened with LMS launch parameters that are incomplete or unreadable. Launch the lab again from your LMS." }</p>
            </div>
        };
    };
    let what = if launch.exam { "exam" } else { "lab" };
    let mode = session.as_ref().map(|(s, _)| s.data.launch_mode.clone()).unwrap_or_default();
    let body = match &*status {
        Status::Starting => html! { <p>{ format!("Connecting to your LMS to start this {what}\u{2026}") }</p> },
        Status::Ready if launch.exam => html! {
            <p>{ format!("Launched from your LMS ({mode} mode). Submit the exam on the page to send your result; you return to the LMS after.") }</p>
        },
        Status::Ready => {
            let finish = do_finish.clone();
            html! {
                <>
                    <p>{ format!("Launched from your LMS ({mode} mode). When you are done, send your result and return.") }</p>
                    <button type="button" class="cmi5-finish" onclick={move |_| finish.emit(())}>{ "Finish and return to the LMS" }</button>
                </>
            }
        }
        Status::Sending => html! { <p>{ "Sending your result to the LMS\u{2026}" }</p> },
        Status::Done(Some(back)) => html! { <p>{ "Your result was sent. Returning to the LMS: " }<a href={back.clone()}>{ "back to the LMS" }</a></p> },
        Status::Done(None) => html! { <p>{ "Your result was sent to the LMS. You may close this window." }</p> },
        Status::Failed(why) => html! { <p role="alert">{ format!("The LMS session could not go on: {why}.") }</p> },
    };
    html! {
        <div class={classes!("cmi5-bar", matches!(*status, Status::Failed(_)).then_some("failed"))} role="region" aria-label="LMS session">
            { body }
        </div>
    }
}
