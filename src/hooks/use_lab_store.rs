//! The lab page's store and what it is wired to: the saved record it starts
//! from and is written back to after every change, the engine it asks for
//! each line (once per request the store describes), and the other tabs on
//! the same lab.

use std::cell::RefCell;
use std::rc::Rc;

use clusterlab_engine::shell::SessionJson;
use clusterlab_engine::store::LabState;
use gloo::timers::callback::Timeout;
use yew::prelude::*;

use crate::engine::Engine;
use crate::fetch::{Keep, LoadedLab};
use crate::storage;
use crate::store::{Access, Action, LabStore};
use crate::tabs::{Signal, TabLink};

/// What changes in the saved record, to save only when it does.
fn fingerprint(state: &LabState) -> (usize, usize, usize, u32, u32, usize, u64) {
    let last = state.transcript.last().map_or(0, |entry| Rc::as_ptr(entry) as usize);
    let attempts = state.answers.values().map(|answer| answer.attempts).sum();
    let hints = state.hints_shown.values().sum();
    (Rc::as_ptr(&state.session) as usize, state.transcript.len(), last, attempts, hints, state.screen_from, state.seed)
}

/// The minutes an exam of `lab` allows: its `exam_minutes`, else its
/// `minutes`, else half an hour.
pub fn exam_minutes(lab: &clusterlab_engine::lab::Lab) -> u32 {
    lab.exam_minutes.or(lab.minutes).unwrap_or(30).max(1)
}

/// Changes are saved this long after the last one (and at once when the
/// page is hidden or left), so that saving never delays a frame.
const SAVE_AFTER_MS: u32 = 250;

/// How long a tab waits for the holder to let go before taking over anyway
/// (the holder may have been closed).
const TAKE_OVER_WAIT_MS: u32 = 800;

#[hook]
pub fn use_lab_store(lab: LoadedLab) -> (UseReducerHandle<LabStore>, Rc<Engine>, Callback<()>) {
    let store = {
        let lab = lab.clone();
        use_reducer(move || {
            let initial = SessionJson::initial(lab.lab.first_host());
            crate::mark("clusterlab:lab-data");
            let restored = match lab.keep {
                Keep::Saved => {
                    let exam = lab.exam.map(|seed| storage::ExamStart { seed, minutes: exam_minutes(&lab.lab) });
                    storage::load(&lab.lab, &lab.entry.digest, 1, &initial, exam)
                }
                Keep::Preview { seed } => storage::Restored { state: LabState::new(&lab.lab, &lab.entry.digest, seed, initial), notice: None },
            };
            crate::mark("clusterlab:store");
            LabStore::new(lab, restored.state, restored.notice)
        })
    };
    // The store as it is now, for callbacks that run between renders.
    let latest: Rc<RefCell<Rc<LabStore>>> = use_mut_ref(|| Rc::new((*store).clone()));
    *latest.borrow_mut() = Rc::new((*store).clone());

    let engine = use_context::<Rc<Engine>>().expect("the app provides the engine");
    {
        let engine = engine.clone();
        let dispatcher = store.dispatcher();
        use_effect_with((), move |_| {
            engine.listen(Callback::from(move |event| dispatcher.dispatch(Action::Engine(event))));
            move || engine.listen(Callback::noop())
        });
    }

    // Requests the store describes, each sent once.
    {
        let engine = engine.clone();
        let store = store.clone();
        use_effect_with(store.session_epoch, move |_| {
            engine.open(store.lab.data.clone(), store.state.seed, (*store.state.session).clone());
        });
    }
    {
        let engine = engine.clone();
        let running = store.running.clone();
        use_effect_with(running.as_ref().map(|r| r.id), move |_| {
            if let Some(running) = running {
                engine.run(running.id, running.line, running.shell);
            }
        });
    }
    {
        let engine = engine.clone();
        use_effect_with(store.interrupting, move |interrupting| {
            if let Some((id, at_ms)) = *interrupting {
                engine.interrupt(id, at_ms);
            }
        });
    }
    {
        let engine = engine.clone();
        let shell = store.shell;
        use_effect_with(store.cancelling, move |cancelling| {
            if *cancelling > 0 {
                engine.cancel(shell);
            }
        });
    }
    {
        let engine = engine.clone();
        use_effect_with(store.closing, move |(count, shell)| {
            if *count > 0 {
                engine.close_shell(*shell);
            }
        });
    }
    {
        let engine = engine.clone();
        use_effect_with(store.metrics_asked, move |asked| {
            if *asked > 0 {
                engine.metrics();
            }
        });
    }
    {
        let engine = engine.clone();
        use_effect_with(store.stopping, move |stopping| {
            if let Some(id) = *stopping {
                engine.stop(id);
            }
        });
    }

    // The catalog's summary follows the score.
    {
        let store = store.clone();
        use_effect_with((store.score(), store.access.clone()), move |(score, access)| {
            if *access == Access::Owner && store.lab.keep == Keep::Saved && store.lab.exam.is_none() {
                storage::save_summary(&store.lab.lab.id, *score, store.lab.lab.points_possible());
            }
        });
    }

    // Saved shortly after every change, and at once when the page goes.
    let pending_save = use_mut_ref(|| None::<Timeout>);
    {
        let store = store.clone();
        let pending_save = pending_save.clone();
        use_effect_with((fingerprint(&store.state), store.access.clone()), move |(_, access)| {
            if *access == Access::Owner && store.lab.keep == Keep::Saved {
                let state = store.state.clone();
                let dispatcher = store.dispatcher();
                let pending = Rc::downgrade(&pending_save);
                *pending_save.borrow_mut() = Some(Timeout::new(SAVE_AFTER_MS, move || {
                    if let Some(pending) = pending.upgrade() {
                        pending.borrow_mut().take();
                    }
                    if let Err(notice) = storage::save(&state) {
                        dispatcher.dispatch(Action::Notice(notice));
                    }
                }));
            }
        });
    }
    {
        let pending_save = pending_save.clone();
        let latest = latest.clone();
        use_effect_with((), move |_| {
            let flush = Rc::new(move || {
                let now = latest.borrow().clone();
                if pending_save.borrow_mut().take().is_some() && now.owner() {
                    let _ = storage::save(&now.state);
                }
            });
            let on_hide = {
                let flush = flush.clone();
                gloo::events::EventListener::new(&gloo::utils::window(), "pagehide", move |_| flush())
            };
            let on_hidden = {
                let flush = flush.clone();
                gloo::events::EventListener::new(&gloo::utils::document(), "visibilitychange", move |_| {
                    if gloo::utils::document().hidden() {
                        flush();
                    }
                })
            };
            // Leaving the lab page saves too.
            move || {
                drop((on_hide, on_hidden));
                flush();
            }
        });
    }

    // The other tabs on this lab.
    let link = {
        let latest = latest.clone();
        let dispatcher = store.dispatcher();
        let pending_save = pending_save.clone();
        use_memo((), move |_| {
            let link: Rc<RefCell<Option<TabLink>>> = Rc::new(RefCell::new(None));
            if lab.keep != Keep::Saved {
                return link;
            }
            let on_signal = {
                let link = Rc::downgrade(&link);
                let latest = latest.clone();
                let dispatcher = dispatcher.clone();
                Callback::from(move |signal: Signal| {
                    let now = latest.borrow().clone();
                    let say = |signal| {
                        if let Some(link) = link.upgrade() {
                            if let Some(link) = link.borrow().as_ref() {
                                link.say(signal);
                            }
                        }
                    };
                    match signal {
                        Signal::Hello if now.owner() => say(Signal::Holding),
                        Signal::Holding if now.owner() => dispatcher.dispatch(Action::HeldElsewhere),
                        Signal::TakeOver if now.owner() => {
                            // Everything is saved before the other tab reads it.
                            pending_save.borrow_mut().take();
                            if let Err(notice) = storage::save(&now.state) {
                                dispatcher.dispatch(Action::Notice(notice));
                            }
                            dispatcher.dispatch(Action::LetGo);
                            say(Signal::Released);
                        }
                        Signal::Released if now.access == Access::TakingOver => {
                            let initial = SessionJson::initial(now.lab.lab.first_host());
                            dispatcher.dispatch(Action::TookOver(storage::reload(&now.lab.lab, &now.lab.entry.digest, &initial, now.lab.exam.is_some())));
                        }
                        _ => {}
                    }
                })
            };
            let on_saved = {
                let latest = latest.clone();
                let dispatcher = dispatcher.clone();
                Callback::from(move |()| {
                    let now = latest.borrow().clone();
                    if !now.owner() {
                        let initial = SessionJson::initial(now.lab.lab.first_host());
                        if let Some(state) = storage::reload(&now.lab.lab, &now.lab.entry.digest, &initial, now.lab.exam.is_some()) {
                            dispatcher.dispatch(Action::Follow(state));
                        }
                    }
                })
            };
            let record = lab.record_id();
            let joined = TabLink::join(&record, storage::key(&record), on_signal, on_saved);
            joined.say(Signal::Hello);
            *link.borrow_mut() = Some(joined);
            link
        })
    };

    // "Take over here": ask the holder, and take over anyway if it does not answer.
    let take_over = {
        let dispatcher = store.dispatcher();
        let latest = latest.clone();
        let wait = use_mut_ref(|| None::<Timeout>);
        Callback::from(move |()| {
            dispatcher.dispatch(Action::TakeOver);
            if let Some(link) = link.borrow().as_ref() {
                link.say(Signal::TakeOver);
            }
            let dispatcher = dispatcher.clone();
            let latest = latest.clone();
            *wait.borrow_mut() = Some(Timeout::new(TAKE_OVER_WAIT_MS, move || {
                let now = latest.borrow().clone();
                if now.access == Access::TakingOver {
                    let initial = SessionJson::initial(now.lab.lab.first_host());
                    dispatcher.dispatch(Action::TookOver(storage::reload(&now.lab.lab, &now.lab.entry.digest, &initial, now.lab.exam.is_some())));
                }
            }));
        })
    };
    (store, engine, take_over)
}
