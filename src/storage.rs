//! The lab's store in localStorage: one versioned record per lab, written
//! after every change, read back without running anything. A record that
//! cannot be read is never overwritten in silence: it is copied under a
//! backup key and the trainee is told where.

use clusterlab_engine::lab::Lab;
use clusterlab_engine::shell::SessionJson;
use clusterlab_engine::store::{LabState, Loaded};

/// Transcript output kept in a saved record, newest first: enough for a
/// full screen (10,000 lines) of ordinary output.
pub const OUTPUT_BUDGET: usize = 1_500_000;
/// Budgets tried, in turn, when the browser's storage is full.
const FALLBACK_BUDGETS: [usize; 2] = [200_000, 0];

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

/// The key of a lab's saved state; an exam of it is kept apart
/// (`exam.ID`), so practice never touches an exam's record.
pub fn key(record: &str) -> String {
    format!("clusterlab.lab.{record}")
}

/// The name a lab's record is kept under: its id, or, for an exam,
/// `exam.ID.LEARNER` (the learner as a digest): each learner on a shared
/// browser, and each LMS registration, takes an exam of their own.
pub fn record_id(lab_id: &str, exam: bool) -> String {
    if exam {
        format!("exam.{lab_id}.{:016x}", clusterlab_engine::rng::stable_hash(learner().as_bytes()))
    } else {
        lab_id.to_string()
    }
}

/// An exam not started yet: when it starts and how long it lasts.
#[derive(Clone, Copy, Debug)]
pub struct ExamStart {
    pub seed: u64,
    pub minutes: u32,
}

/// Who takes this browser's exams: the learner an LMS launched (cmi5),
/// else an id this browser made up once and keeps. An exam's variant is
/// drawn from it.
pub fn learner() -> String {
    const KEY: &str = "clusterlab.learner";
    let Some(storage) = storage() else { return "anonymous".to_string() };
    if let Some(known) = storage.get_item(KEY).ok().flatten().filter(|id| !id.is_empty()) {
        return known;
    }
    let made = format!("browser-{:016x}", (js_sys::Math::random() * 2f64.powi(53)) as u64);
    let _ = storage.set_item(KEY, &made);
    made
}

/// Remembers who the learner is (an LMS's launch says).
pub fn set_learner(id: &str) {
    if let Some(storage) = storage() {
        let _ = storage.set_item("clusterlab.learner", id);
    }
}

/// Whether this browser's learner has an exam of the lab under way: its
/// practice then stays closed (hints and verdicts there would answer it).
/// Read with the browser's JSON parser, as the catalog's summaries are.
pub fn exam_running(lab_id: &str) -> bool {
    let Some(text) = storage().and_then(|s| s.get_item(&key(&record_id(lab_id, true))).ok().flatten()) else { return false };
    let Ok(value) = js_sys::JSON::parse(&text) else { return false };
    let get = |value: &wasm_bindgen::JsValue, name: &str| js_sys::Reflect::get(value, &name.into()).ok().filter(|v| !v.is_undefined() && !v.is_null());
    let exam = get(&value, "state").and_then(|state| get(&state, "exam"));
    exam.is_some_and(|exam| get(&exam, "submitted").is_none())
}

/// Version 1 kept progress here.
fn old_key(lab_id: &str) -> String {
    format!("clusterlab.progress.{lab_id}")
}

/// What was read, and what the trainee must be told about it.
pub struct Restored {
    pub state: LabState,
    pub notice: Option<String>,
}

/// Copies `text` under a fresh backup key; the key, when it could be written.
fn back_up(storage: &web_sys::Storage, lab_id: &str, text: &str) -> Option<String> {
    let stamp = js_sys::Date::now() as u64;
    let key = format!("clusterlab.backup.{lab_id}.{stamp}");
    storage.set_item(&key, text).ok().map(|_| key)
}

/// The lab's saved state, or a fresh one; never a silent replacement. An
/// exam that has a record goes on from it, whatever variant is asked for:
/// an exam is taken once.
pub fn load(lab: &Lab, digest: &str, seed: u64, initial: &SessionJson, exam: Option<ExamStart>) -> Restored {
    let fresh = || match exam {
        Some(exam) => {
            let mut state = LabState::new(lab, digest, exam.seed, initial.clone());
            state.start_exam(js_sys::Date::now() as i64, exam.minutes);
            state
        }
        None => LabState::new(lab, digest, seed, initial.clone()),
    };
    let Some(storage) = storage() else {
        return Restored { state: fresh(), notice: Some("This browser does not let the page keep data: progress will not survive a reload.".into()) };
    };
    let record = record_id(&lab.id, exam.is_some());
    let old = if exam.is_some() { None } else { storage.get_item(&old_key(&lab.id)).ok().flatten() };
    let (text, from_old) = match storage.get_item(&key(&record)).ok().flatten() {
        Some(text) => (text, false),
        None => match old {
            Some(text) => (text, true),
            None => return Restored { state: fresh(), notice: None },
        },
    };
    match LabState::load(&text, lab, digest, initial) {
        Loaded::Restored(state) => Restored { state, notice: None },
        Loaded::Migrated(state, notice) => {
            if from_old {
                // Kept as it was, in case; the new record replaces it.
                let kept = back_up(&storage, &lab.id, &text);
                let _ = storage.remove_item(&old_key(&lab.id));
                let notice = match kept {
                    Some(backup) => format!("{notice} The old record is kept under the key \u{201c}{backup}\u{201d}."),
                    None => notice,
                };
                return Restored { state, notice: Some(notice) };
            }
            Restored { state, notice: Some(notice) }
        }
        Loaded::Unreadable(reason) => {
            let notice = match back_up(&storage, &lab.id, &text) {
                Some(backup) => format!(
                    "Your saved progress for this lab could not be read: {reason}. It was kept, unchanged, under the key \u{201c}{backup}\u{201d} in this browser's storage, and the lab starts fresh."
                ),
                None => format!(
                    "Your saved progress for this lab could not be read: {reason}. There was no room to keep a copy, so it stays under \u{201c}{}\u{201d} until this lab saves again.",
                    key(&record)
                ),
            };
            Restored { state: fresh(), notice: Some(notice) }
        }
    }
}

/// Reads the saved record (the lab's, or its exam's) as another tab left it.
pub fn reload(lab: &Lab, digest: &str, initial: &SessionJson, exam: bool) -> Option<LabState> {
    let text = storage()?.get_item(&key(&record_id(&lab.id, exam))).ok().flatten()?;
    match LabState::load(&text, lab, digest, initial) {
        Loaded::Restored(state) | Loaded::Migrated(state, _) => Some(state),
        Loaded::Unreadable(_) => None,
    }
}

/// Saves the state; a notice when it could not be saved whole.
pub fn save(state: &LabState) -> Result<(), String> {
    let Some(storage) = storage() else { return Err("This browser does not let the page keep data.".into()) };
    let key = key(&record_id(&state.lab, state.exam.is_some()));
    if storage.set_item(&key, &state.save(OUTPUT_BUDGET)).is_ok() {
        return Ok(());
    }
    for budget in FALLBACK_BUDGETS {
        if storage.set_item(&key, &state.save(budget)).is_ok() {
            return Err(
                "The browser's storage is nearly full: older terminal output was left out of the saved progress. Answers and typed commands are kept.".into()
            );
        }
    }
    Err("The browser's storage is full: this lab's progress could not be saved. Free some space (other sites' data) to keep it.".into())
}

/// Forgets a lab's saved state (start over), and its drafts.
pub fn clear(lab_id: &str) {
    if let Some(storage) = storage() {
        let _ = storage.remove_item(&key(lab_id));
    }
    clear_drafts(lab_id);
}

/// Forgets a lab record's unsent drafts (the lab starts over).
pub fn clear_drafts(record: &str) {
    let Some(storage) = storage() else { return };
    let prefix = draft_key(record, "");
    let keys: Vec<String> = (0..storage.length().unwrap_or(0)).filter_map(|at| storage.key(at).ok().flatten()).collect();
    for key in keys.iter().filter(|key| key.starts_with(&prefix)) {
        let _ = storage.remove_item(key);
    }
}

fn draft_key(record: &str, slot: &str) -> String {
    format!("clusterlab.draft.{record}.{slot}")
}

/// What the trainee typed or picked and has not sent yet (the command
/// line, an answer), kept per lab record and slot so that a reload loses
/// none of it. Empty when there is none.
pub fn draft(record: &str, slot: &str) -> String {
    storage().and_then(|storage| storage.get_item(&draft_key(record, slot)).ok().flatten()).unwrap_or_default()
}

/// Keeps a draft; an empty one is removed.
pub fn set_draft(record: &str, slot: &str, text: &str) {
    let Some(storage) = storage() else { return };
    let key = draft_key(record, slot);
    let _ = if text.is_empty() { storage.remove_item(&key) } else { storage.set_item(&key, text) };
}

/// What the catalog shows of a lab's progress: its score now, the best it
/// reached, and the points possible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    pub score: u32,
    pub best: u32,
    pub possible: u32,
}

fn summary_key(lab_id: &str) -> String {
    format!("clusterlab.summary.{lab_id}")
}

/// A lab's summary, read with the browser's JSON parser (the catalog
/// carries no serde code for it).
pub fn summary(lab_id: &str) -> Option<Summary> {
    let text = storage()?.get_item(&summary_key(lab_id)).ok().flatten()?;
    let value = js_sys::JSON::parse(&text).ok()?;
    let number = |name: &str| js_sys::Reflect::get(&value, &name.into()).ok().and_then(|v| v.as_f64()).map(|n| n.clamp(0.0, f64::from(u32::MAX)) as u32);
    Some(Summary { score: number("score")?, best: number("best")?, possible: number("possible")? })
}

/// Records a lab's score; the best one stays.
pub fn save_summary(lab_id: &str, score: u32, possible: u32) {
    let best = summary(lab_id).map_or(0, |earlier| earlier.best).max(score);
    if let Some(storage) = storage() {
        let _ = storage.set_item(&summary_key(lab_id), &format!("{{\"score\":{score},\"best\":{best},\"possible\":{possible}}}"));
    }
}
