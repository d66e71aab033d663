//! "My labs": the lab files an instructor writes on the author page, kept
//! in this browser as one versioned record. The author page reads and
//! writes it (`list`, `save`, `remove`); a record that cannot be read is
//! copied under a backup key before anything replaces it, as progress is.
//! The catalog's "My labs" list is index.html's (`showMyLabs`): the
//! trainee's module carries no code for a record it never writes.

use serde::{Deserialize, Serialize};

/// The record's key in localStorage.
pub const KEY: &str = "clusterlab.my-labs";

/// The record's version this app writes.
const VERSION: u32 = 1;

/// One lab file the instructor edits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MyLab {
    /// Names the file in this browser (`#/author/KEY`); the lab's own id
    /// may change as it is edited.
    pub key: String,
    /// The title and summary the file had when it last compiled.
    pub title: String,
    pub summary: String,
    pub source: String,
    /// When it was last saved, in milliseconds since the epoch.
    pub saved_ms: f64,
}

#[derive(Serialize, Deserialize)]
struct Record {
    version: u32,
    labs: Vec<MyLab>,
}

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

/// The saved labs, newest first; with a notice when the record could not be
/// read (it was backed up, and the list starts empty).
pub fn list() -> (Vec<MyLab>, Option<String>) {
    let Some(text) = storage().and_then(|storage| storage.get_item(KEY).ok().flatten()) else {
        return (Vec::new(), None);
    };
    match serde_json::from_str::<Record>(&text) {
        Ok(record) if record.version == VERSION => {
            let mut labs = record.labs;
            labs.sort_by(|a, b| b.saved_ms.total_cmp(&a.saved_ms));
            (labs, None)
        }
        Ok(record) => (
            Vec::new(),
            Some(format!("Your saved labs were written by a newer ClusterLab (record version {}); this page leaves them untouched.", record.version)),
        ),
        Err(error) => (Vec::new(), Some(back_up(&text, &error.to_string()))),
    }
}

/// Keeps an unreadable record under a backup key, and says where.
fn back_up(text: &str, reason: &str) -> String {
    let key = format!("clusterlab.backup.my-labs.{}", js_sys::Date::now() as u64);
    match storage().map(|storage| storage.set_item(&key, text)) {
        Some(Ok(())) => {
            if let Some(storage) = storage() {
                let _ = storage.remove_item(KEY);
            }
            format!("Your saved labs could not be read ({reason}). They were kept, unchanged, under the key \u{201c}{key}\u{201d} in this browser's storage.")
        }
        _ => format!(
            "Your saved labs could not be read ({reason}), and there was no room to keep a copy; they stay under \u{201c}{KEY}\u{201d} until a lab is saved."
        ),
    }
}

fn write(labs: Vec<MyLab>) -> Result<(), String> {
    let storage = storage().ok_or("This browser does not let the page keep data: your lab is not saved.")?;
    let text = serde_json::to_string(&Record { version: VERSION, labs }).map_err(|error| error.to_string())?;
    storage.set_item(KEY, &text).map_err(|_| "The browser's storage is full: your lab could not be saved. Export it as a file to keep it.".to_string())
}

/// Saves `lab` (replacing the one with its key). A record of a newer
/// version is never overwritten.
pub fn save(lab: MyLab) -> Result<(), String> {
    let (mut labs, notice) = list();
    if let Some(notice) = notice.filter(|notice| notice.contains("newer ClusterLab")) {
        return Err(notice);
    }
    labs.retain(|other| other.key != lab.key);
    labs.insert(0, lab);
    write(labs)
}

/// Forgets the lab saved under `key`.
pub fn remove(key: &str) -> Result<(), String> {
    let (mut labs, _) = list();
    labs.retain(|other| other.key != key);
    write(labs)
}
