//! Two tabs on one lab never lose work. Tabs open on the same lab talk over a
//! `BroadcastChannel`: a tab that opens a lab another tab holds is told so,
//! shows the lab read-only, and offers to take over; on taking over, the
//! first tab saves, lets go and becomes read-only in turn. A read-only tab
//! follows the saved record as the other tab writes it.

use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use web_sys::{BroadcastChannel, MessageEvent, StorageEvent};
use yew::Callback;

/// What one tab says to the others about a lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// "I opened this lab": a tab that holds it answers `Holding`.
    Hello,
    /// "I hold this lab."
    Holding,
    /// "Let me have it": the holder saves, lets go and answers `Released`.
    TakeOver,
    /// "It is yours; I saved everything."
    Released,
}

impl Signal {
    fn word(self) -> &'static str {
        match self {
            Signal::Hello => "hello",
            Signal::Holding => "holding",
            Signal::TakeOver => "take-over",
            Signal::Released => "released",
        }
    }

    fn from_word(word: &str) -> Option<Signal> {
        [Signal::Hello, Signal::Holding, Signal::TakeOver, Signal::Released].into_iter().find(|s| s.word() == word)
    }
}

/// This tab's link to the others on one lab.
pub struct TabLink {
    channel: Option<BroadcastChannel>,
    tab: String,
    _messages: Option<EventListener>,
    _storage: EventListener,
}

impl TabLink {
    /// Joins the lab's channel. `on_signal` hears the other tabs;
    /// `on_saved` hears that another tab saved the lab's record `key`.
    pub fn join(lab_id: &str, key: String, on_signal: Callback<Signal>, on_saved: Callback<()>) -> TabLink {
        let tab = format!("{:016x}", (js_sys::Math::random() * 2f64.powi(52)) as u64);
        let channel = BroadcastChannel::new(&format!("clusterlab.lab.{lab_id}")).ok();
        let messages = channel.as_ref().map(|channel| {
            let me = tab.clone();
            EventListener::new(channel, "message", move |event| {
                let Some(text) = event.dyn_ref::<MessageEvent>().and_then(|event| event.data().as_string()) else { return };
                let Some((from, word)) = text.split_once(' ') else { return };
                if from != me {
                    if let Some(signal) = Signal::from_word(word) {
                        on_signal.emit(signal);
                    }
                }
            })
        });
        // `storage` fires in the other tabs of the origin when one writes.
        let storage = EventListener::new(&gloo::utils::window(), "storage", move |event| {
            if event.dyn_ref::<StorageEvent>().and_then(StorageEvent::key).is_some_and(|changed| changed == key) {
                on_saved.emit(());
            }
        });
        TabLink { channel, tab, _messages: messages, _storage: storage }
    }

    pub fn say(&self, signal: Signal) {
        if let Some(channel) = &self.channel {
            let _ = channel.post_message(&format!("{} {}", self.tab, signal.word()).into());
        }
    }
}

impl Drop for TabLink {
    fn drop(&mut self) {
        if let Some(channel) = &self.channel {
            channel.close();
        }
    }
}
