//! `#/author/room`: an instructor sets up a room once, and every trainee
//! opens its link (or scans its QR code off the projector) and types only
//! their name. The link carries the LRS endpoint, a token for its
//! Authorization header and a fresh registration; nothing of it is stored.

use clusterlab_engine::qr::QrCode;
use clusterlab_engine::xapi::{self, Room};
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// What the instructor types (held by the page only).
#[derive(Clone, Default, PartialEq)]
struct Form {
    endpoint: String,
    username: String,
    password: String,
    course: String,
}

fn room_link(form: &Form) -> Result<String, String> {
    let endpoint = form.endpoint.trim();
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
        return Err("The LRS endpoint is an http(s) address, such as https://lrs.example.org/xAPI/.".into());
    }
    let credentials = gloo::utils::window()
        .btoa(&format!("{}:{}", form.username, form.password))
        .map_err(|_| "The username and password must be plain text (Latin-1).".to_string())?;
    let now = js_sys::Date::now();
    let registration = xapi::uuid_for(&format!("room|{endpoint}|{now}|{}", js_sys::Math::random()));
    let room = Room { endpoint: endpoint.to_string(), token: format!("Basic {credentials}"), registration };
    let course: Vec<String> = form.course.split([',', ' ']).map(str::trim).filter(|id| !id.is_empty()).map(str::to_string).collect();
    Ok(room.link(&crate::fetch::site(), &course))
}

#[function_component(RoomPage)]
pub fn room_page() -> Html {
    let form = use_state(Form::default);
    let made = use_state(|| None::<Result<String, String>>);
    let field = |label: &'static str, kind: &'static str, value: &str, set: fn(&mut Form, String)| {
        let form = form.clone();
        let oninput = Callback::from(move |event: InputEvent| {
            let input: HtmlInputElement = event.target_unchecked_into();
            let mut next = (*form).clone();
            set(&mut next, input.value());
            form.set(next);
        });
        html! {
            <label class="lrs-field">
                <span>{ label }</span>
                <input type={kind} value={value.to_string()} {oninput} autocomplete="off" />
            </label>
        }
    };
    let make = {
        let (form, made) = (form.clone(), made.clone());
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            made.set(Some(room_link(&form)));
        })
    };
    let result = match &*made {
        None => html! {},
        Some(Err(why)) => html! { <p class="notice bad" role="alert">{ why.clone() }</p> },
        Some(Ok(link)) => {
            let copy = {
                let link = link.clone();
                Callback::from(move |_: MouseEvent| {
                    let _ = gloo::utils::window().navigator().clipboard().write_text(&link);
                })
            };
            let code = match QrCode::encode(link) {
                Some(code) => {
                    let side = (code.size + 8).to_string();
                    html! {
                        <svg class="room-qr" role="img" aria-label="QR code of the room link" viewBox={format!("0 0 {side} {side}")} shape-rendering="crispEdges">
                            <rect width={side.clone()} height={side} fill="#ffffff" />
                            <path d={code.svg_path(4)} fill="#000000" />
                        </svg>
                    }
                }
                None => html! { <p class="notice bad">{ "The link is too long for a QR code: name fewer labs." }</p> },
            };
            html! {
                <section class="room-link" aria-labelledby="room-link-heading">
                    <h2 id="room-link-heading">{ "The room's link" }</h2>
                    <label class="lrs-field"><span>{ "Room link" }</span><input type="text" readonly=true value={link.clone()} /></label>
                    <p><button type="button" onclick={copy}>{ "Copy the link" }</button></p>
                    { code }
                    <p class="room-note">{ "Project the code or share the link with this session's trainees only: it carries the LRS credentials as a token. Give the room credentials that can only write statements, and retire them after the session. Trainees keep the room until they close the tab; this page stores nothing." }</p>
                </section>
            }
        }
    };
    let f = &*form;
    html! {
        <main class="page room">
            <p><a href="#/">{ "Back to the catalog" }</a></p>
            <h1>{ "Set up a room" }</h1>
            <p class="lead">{ "One link for a session: each trainee who opens it sends their results to your Learning Record Store under one registration, and types only their name. Labs are simulations: nothing runs on a real cluster." }</p>
            <form class="lrs-form" onsubmit={make}>
                { field("LRS endpoint", "url", &f.endpoint, |f, v| f.endpoint = v) }
                { field("LRS username", "text", &f.username, |f, v| f.username = v) }
                { field("LRS password", "password", &f.password, |f, v| f.password = v) }
                { field("Labs of the session (ids, optional)", "text", &f.course, |f, v| f.course = v) }
                <div class="actions"><button type="submit" class="answer-button">{ "Make the room link" }</button></div>
            </form>
            { result }
        </main>
    }
}
