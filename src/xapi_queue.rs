//! Statements on their way to a Learning Record Store: the LRS the trainee
//! configured, and a queue in localStorage that survives a reload and is
//! sent again when the network comes back. Statement ids are stable, so a
//! batch sent twice is stored once.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

const SETTINGS_KEY: &str = "clusterlab.lrs";
const QUEUE_KEY: &str = "clusterlab.xapi.queue";
/// The ids the LRS has stored: a statement made again is not sent again (a
/// batch holding one id the LRS has, with another timestamp, is refused whole).
const SENT_KEY: &str = "clusterlab.xapi.sent";
/// The most statements kept waiting, and ids remembered; the oldest go first.
pub const MAX_QUEUED: usize = 5000;
pub const MAX_REMEMBERED: usize = 20000;

/// Where and as whom to send, as the trainee typed it (kept in this browser).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The LRS's xAPI base, e.g. `https://lrs.example.org/xAPI/`.
    pub endpoint: String,
    pub username: String,
    pub password: String,
    pub name: String,
    pub email: String,
}

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

pub fn settings() -> Settings {
    read(SETTINGS_KEY)
}

pub fn save_settings(settings: &Settings) {
    write(SETTINGS_KEY, settings);
}

fn read<T: serde::de::DeserializeOwned + Default>(key: &str) -> T {
    storage().and_then(|s| s.get_item(key).ok().flatten()).and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
}

fn write<T: Serialize + ?Sized>(key: &str, value: &T) {
    if let (Some(storage), Ok(text)) = (storage(), serde_json::to_string(value)) {
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
    /// The LRS could not be reached: they stay queued (how many, and why).
    Offline(usize, String),
    /// The LRS answered with an error: they stay queued.
    Refused(usize, String),
}

fn statements_url(endpoint: &str) -> String {
    format!("{}/statements", endpoint.trim().trim_end_matches('/'))
}

/// Sends the whole queue in one request; what was stored leaves the queue.
pub async fn flush(settings: &Settings) -> Sent {
    let queue = queued();
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
        let credentials = window.btoa(&format!("{}:{}", settings.username, settings.password))?;
        headers.set("Authorization", &format!("Basic {credentials}"))?;
        let init = web_sys::RequestInit::new();
        init.set_method("POST");
        init.set_headers(&headers);
        init.set_body(&body.into());
        web_sys::Request::new_with_str_and_init(&statements_url(&settings.endpoint), &init)
    })();
    let request = match request {
        Ok(request) => request,
        Err(_) => return Sent::Refused(count, format!("\u{201c}{}\u{201d} is not an address a request can go to", settings.endpoint)),
    };
    let response = match JsFuture::from(window.fetch_with_request(&request)).await {
        Ok(response) => response.unchecked_into::<web_sys::Response>(),
        Err(_) => return Sent::Offline(count, "the LRS could not be reached".into()),
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
