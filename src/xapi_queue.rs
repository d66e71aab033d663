//! Statements on their way to a Learning Record Store: the LRS the trainee
//! configured (or the room an instructor's link set up), and a queue in
//! localStorage that survives a reload and is sent again when the network
//! comes back. Statement ids are stable, so a batch sent twice is stored once.

use clusterlab_engine::xapi::Room;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

const SETTINGS_KEY: &str = "clusterlab.lrs";
/// In sessionStorage: the LRS credentials typed in this session, and a room.
const CREDENTIALS_KEY: &str = "clusterlab.lrs.credentials";
const ROOM_KEY: &str = "clusterlab.room";
const QUEUE_KEY: &str = "clusterlab.xapi.queue";
/// The ids the LRS has stored: a statement made again is not sent again (a
/// batch holding one id the LRS has, with another timestamp, is refused whole).
const SENT_KEY: &str = "clusterlab.xapi.sent";
/// The most statements kept waiting, and ids remembered; the oldest go first.
pub const MAX_QUEUED: usize = 5000;
pub const MAX_REMEMBERED: usize = 20000;

/// Where and as whom to send, as the trainee typed it. The endpoint, name
/// and email are kept in this browser; the username and password only for
/// this browser session (sessionStorage), never where they outlive it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The LRS's xAPI base, e.g. `https://lrs.example.org/xAPI/`.
    pub endpoint: String,
    #[serde(default, skip_serializing)]
    pub username: String,
    #[serde(default, skip_serializing)]
    pub password: String,
    pub name: String,
    pub email: String,
}

/// The credentials as this session keeps them.
#[derive(Default, Serialize, Deserialize)]
struct Credentials {
    username: String,
    password: String,
}

/// Where statements go and the Authorization header they carry, and the
/// room's registration when it is a room's LRS: only the statements made in
/// that room go there (and only those made outside any room go elsewhere).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destination {
    pub endpoint: String,
    pub authorization: String,
    pub registration: Option<String>,
}

/// Whether `statement` goes to `destination`: made in its room, or in none.
fn goes_to(statement: &Value, destination: &Destination) -> bool {
    statement["context"]["registration"].as_str() == destination.registration.as_deref()
}

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

fn session() -> Option<web_sys::Storage> {
    gloo::utils::window().session_storage().ok().flatten()
}

pub fn settings() -> Settings {
    let mut settings: Settings = read(SETTINGS_KEY);
    if !settings.username.is_empty() || !settings.password.is_empty() {
        // A record from before credentials left localStorage: they move to
        // this session, and the kept record loses them.
        save_settings(&settings);
    }
    let credentials: Credentials = read_from(session(), CREDENTIALS_KEY);
    if !credentials.username.is_empty() || !credentials.password.is_empty() {
        settings.username = credentials.username;
        settings.password = credentials.password;
    }
    settings
}

pub fn save_settings(settings: &Settings) {
    write(SETTINGS_KEY, settings);
    write_to(session(), CREDENTIALS_KEY, &Credentials { username: settings.username.clone(), password: settings.password.clone() });
}

/// The room this session joined through an instructor's link (index.html
/// keeps it in sessionStorage and takes it out of the address).
pub fn room() -> Option<Room> {
    let room: Room = read_from(session(), ROOM_KEY);
    (!room.endpoint.trim().is_empty()).then_some(room)
}

/// Where queued statements go now: the room's LRS, else the one typed.
pub fn destination() -> Option<Destination> {
    if let Some(room) = room() {
        return Some(Destination { endpoint: room.endpoint, authorization: room.token, registration: Some(room.registration) });
    }
    let settings = settings();
    if settings.endpoint.trim().is_empty() {
        return None;
    }
    let credentials = gloo::utils::window().btoa(&format!("{}:{}", settings.username, settings.password)).unwrap_or_default();
    Some(Destination { endpoint: settings.endpoint.trim().to_string(), authorization: format!("Basic {credentials}"), registration: None })
}

fn read<T: serde::de::DeserializeOwned + Default>(key: &str) -> T {
    read_from(storage(), key)
}

fn read_from<T: serde::de::DeserializeOwned + Default>(storage: Option<web_sys::Storage>, key: &str) -> T {
    storage.and_then(|s| s.get_item(key).ok().flatten()).and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
}

fn write<T: Serialize + ?Sized>(key: &str, value: &T) {
    write_to(storage(), key, value);
}

fn write_to<T: Serialize + ?Sized>(storage: Option<web_sys::Storage>, key: &str, value: &T) {
    if let (Some(storage), Ok(text)) = (storage, serde_json::to_string(value)) {
        let _ = storage.set_item(key, &text);
    }
}

pub fn queued() -> Vec<Value> {
    read(QUEUE_KEY)
}

fn save_queue(queue: &[Value]) {
    write(QUEUE_KEY, queue);
}

/// Adds statements to the queue, each id once, leaving out those the LRS has.
pub fn enqueue(statements: Vec<Value>) {
    let mut queue = queued();
    let sent: Vec<String> = read(SENT_KEY);
    for statement in statements {
        let id = statement["id"].as_str().unwrap_or_default();
        if !queue.iter().any(|queued| queued["id"] == statement["id"]) && !sent.iter().any(|done| done == id) {
            queue.push(statement);
        }
    }
    let overflow = queue.len().saturating_sub(MAX_QUEUED);
    queue.drain(..overflow);
    save_queue(&queue);
}

/// What a send did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sent {
    /// Every queued statement reached the LRS (how many).
    All(usize),
    Nothing,
    /// The browser is offline: they stay queued (how many).
    Offline(usize),
    /// The browser is online but the LRS could not be reached (a wrong
    /// address, or an LRS that does not take requests from this site).
    Unreachable(usize),
    /// The LRS answered with an error: they stay queued.
    Refused(usize, String),
}

fn statements_url(endpoint: &str) -> String {
    format!("{}/statements", endpoint.trim().trim_end_matches('/'))
}

/// Queued statements that go to `destination` (where they go now), and
/// those that wait for another (a room's made outside it, or the reverse).
pub fn waiting(destination: Option<&Destination>) -> (usize, usize) {
    let queue = queued();
    let here = destination.map_or(0, |destination| queue.iter().filter(|statement| goes_to(statement, destination)).count());
    (here, queue.len() - here)
}

/// Sends the statements of the queue that go to `destination` in one
/// request; what was stored leaves the queue.
pub async fn flush(destination: &Destination) -> Sent {
    let queue: Vec<Value> = queued().into_iter().filter(|statement| goes_to(statement, destination)).collect();
    if queue.is_empty() {
        return Sent::Nothing;
    }
    let count = queue.len();
    let window = gloo::utils::window();
    let Ok(body) = serde_json::to_string(&queue) else { return Sent::Refused(count, "the statements could not be written".into()) };
    let request = (|| -> Result<web_sys::Request, wasm_bindgen::JsValue> {
        let headers = web_sys::Headers::new()?;
        headers.set("Content-Type", "application/json")?;
        headers.set("X-Experience-API-Version", clusterlab_engine::xapi::VERSION)?;
        headers.set("Authorization", &destination.authorization)?;
        let init = web_sys::RequestInit::new();
        init.set_method("POST");
        init.set_headers(&headers);
        init.set_body(&body.into());
        web_sys::Request::new_with_str_and_init(&statements_url(&destination.endpoint), &init)
    })();
    let request = match request {
        Ok(request) => request,
        Err(_) => return Sent::Refused(count, format!("\u{201c}{}\u{201d} is not an address a request can go to", destination.endpoint)),
    };
    let response = match JsFuture::from(window.fetch_with_request(&request)).await {
        Ok(response) => response.unchecked_into::<web_sys::Response>(),
        Err(_) if !window.navigator().on_line() => return Sent::Offline(count),
        Err(_) => return Sent::Unreachable(count),
    };
    // 409: statements with these ids are stored already (a retry).
    if response.ok() || response.status() == 409 {
        // Statements queued while this one was on its way stay queued.
        let rest: Vec<Value> = queued().into_iter().filter(|statement| !queue.iter().any(|sent| sent["id"] == statement["id"])).collect();
        save_queue(&rest);
        let mut sent: Vec<String> = read(SENT_KEY);
        sent.extend(queue.iter().filter_map(|statement| statement["id"].as_str().map(str::to_string)));
        let overflow = sent.len().saturating_sub(MAX_REMEMBERED);
        sent.drain(..overflow);
        write(SENT_KEY, &sent);
        return Sent::All(count);
    }
    Sent::Refused(count, format!("the LRS answered {} {}", response.status(), response.status_text()))
}
