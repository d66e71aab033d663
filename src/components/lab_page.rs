//! One lab: briefing, questions and terminal, all views of the lab's store.

use clusterlab_engine::lab::catalog::Entry;
use yew::prelude::*;

use crate::components::focus_by_id;
use crate::components::markdown::Markdown;
use crate::components::metrics_panel::MetricsPanel;
use crate::components::notices::Notices;
use crate::components::question_card::QuestionCard;
use crate::components::terminal::Terminal;
use crate::fetch::{self, Keep, LoadedLab};
use crate::hooks::{use_fetched, use_lab_store, Route};
use crate::store::{Access, Action};

#[derive(Properties, PartialEq)]
pub struct LabLoaderProps {
    pub entry: Entry,
    /// The variant the address names (`#/lab/ID/variant/N`).
    #[prop_or_default]
    pub variant: Option<u64>,
    /// Taken as an exam at this variant (`#/exam/ID`).
    #[prop_or_default]
    pub exam: Option<u64>,
    /// The next lab on the catalog's path: id and title.
    #[prop_or_default]
    pub next: Option<(AttrValue, AttrValue)>,
}

/// Fetches the lab's data, then shows the lab.
#[function_component(LabLoader)]
pub fn lab_loader(props: &LabLoaderProps) -> Html {
    let exam = props.exam;
    let loaded = use_fetched(props.entry.clone(), move |entry| async move {
        fetch::lab(&entry).await.map(|mut loaded| {
            loaded.exam = exam;
            loaded
        })
    });
    if exam.is_none() && crate::storage::exam_running(&props.entry.id) {
        return html! {
            <main class="page lab">
                <h1>{ &props.entry.title }</h1>
                <p class="notice" role="status">{ "An exam of this lab is under way in this browser: its practice opens again once the exam is submitted." }</p>
                <a href={format!("#/exam/{}", props.entry.id)}>{ "Back to the exam" }</a>
            </main>
        };
    }
    match loaded {
        None => html! { <main class="page lab loading"><p>{ format!("Loading {}\u{2026}", props.entry.title) }</p></main> },
        Some(Err(message)) => html! {
            <main class="page lab">
                <h1>{ &props.entry.title }</h1>
                <p class="notice bad" role="alert">{ format!("This lab could not be loaded: {message}") }</p>
                <a href="#/">{ "Back to the catalog" }</a>
            </main>
        },
        Some(Ok(lab)) => {
            let key = lab.entry.digest.clone();
            html! { <LabPage {key} {lab} variant={props.variant} next={props.next.clone()} /> }
        }
    }
}

#[derive(Properties, PartialEq)]
pub struct LabPageProps {
    pub lab: LoadedLab,
    /// The variant the address asks for; the lab opens at it (asking first
    /// when it would replace progress on another).
    #[prop_or_default]
    pub variant: Option<u64>,
    /// The next lab on the catalog's path, offered once this one is done.
    #[prop_or_default]
    pub next: Option<(AttrValue, AttrValue)>,
}

#[function_component(LabPage)]
pub fn lab_page(props: &LabPageProps) -> Html {
    let (store, engine, take_over) = use_lab_store(props.lab.clone());
    let lab = &store.lab.lab;
    let owner = store.owner();

    // Unsent drafts are kept under the lab's record (`storage::draft`).
    let draft_record = AttrValue::from(store.lab.record_id());
    let start_over = |next_seed: fn(u64) -> u64, question: &'static str| {
        let store = store.clone();
        let record = draft_record.clone();
        Callback::from(move |_| {
            if gloo::dialogs::confirm(question) {
                crate::storage::clear_drafts(&record);
                store.dispatch(Action::Restart { seed: next_seed(store.state.seed) });
            }
        })
    };
    let reset = start_over(|seed| seed, "Start this lab over? Your answers and terminal history will be cleared.");
    let new_variant =
        start_over(|seed| seed.saturating_add(1), "Start over with another variant of this lab? Your answers and terminal history will be cleared.");

    let cards = store.questions.iter().enumerate().map(|(at, question)| {
        let on_answer = {
            let store = store.clone();
            let id = question.id.clone();
            Callback::from(move |response| store.dispatch(Action::Answer { question: id.clone(), response, now_ms: js_sys::Date::now() as i64 }))
        };
        let on_hint = {
            let store = store.clone();
            let id = question.id.clone();
            Callback::from(move |()| store.dispatch(Action::ShowHint { question: id.clone() }))
        };
        // The engine's grade and words; an exam holds them back until it is submitted.
        let reveals = store.state.reveals();
        let grade = store.state.grade(question).filter(|_| reveals);
        let verdict = store.state.verdict(question).filter(|_| reveals);
        let open = if store.state.exam.is_some() { store.state.exam_running() } else { store.state.open(question) };
        let unclear = store.unclear.as_ref().filter(|(id, _)| *id == question.id).map(|(_, why)| why.clone());
        html! {
            <QuestionCard key={question.id.clone()} question={question.clone()} number={at + 1}
                saved={store.state.answers.get(&question.id).cloned()}
                hints_shown={store.state.hints_shown.get(&question.id).copied().unwrap_or(0) as usize}
                {grade} {verdict} {open} exam={store.state.exam.is_some()} {unclear}
                enabled={owner} {on_answer} {on_hint} draft_record={draft_record.clone()} />
        }
    });
    let held_elsewhere = match store.access {
        Access::Owner => html! {},
        Access::HeldElsewhere => {
            let take_over = take_over.clone();
            html! {
                <div class="notice held" role="status">
                    <p>{ "This lab is open in another tab. This tab shows it read-only and follows what the other tab does." }</p>
                    <button type="button" class="take-over" onclick={move |_| take_over.emit(())}>{ "Take over here" }</button>
                </div>
            }
        }
        Access::TakingOver => html! { <div class="notice held" role="status"><p>{ "Taking the lab over from the other tab\u{2026}" }</p></div> },
    };
    let dismiss = {
        let store = store.clone();
        Callback::from(move |at| store.dispatch(Action::Dismiss(at)))
    };
    let trainee = props.lab.keep == Keep::Saved;
    let exam = store.state.exam.clone();
    // An exam's clock: the wall clock, read every second while it runs.
    let now_ms = use_state(|| js_sys::Date::now() as i64);
    {
        let now_ms = now_ms.clone();
        let running = store.state.exam_running();
        use_effect_with(running, move |running| {
            let ticking = running.then(|| gloo::timers::callback::Interval::new(1000, move || now_ms.set(js_sys::Date::now() as i64)));
            move || drop(ticking)
        });
    }
    {
        // At the time limit the exam submits itself, once the engine has the
        // lab open and no line runs (its checks are decided on the cluster).
        let store = store.clone();
        let ready = store.engine == crate::store::EngineStatus::Ready && !store.busy() && store.owner();
        let due = ready && exam.as_ref().is_some_and(|exam| exam.submitted.is_none() && exam.left_ms(*now_ms) == 0);
        use_effect_with(due, move |due| {
            if *due && store.owner() {
                store.dispatch(Action::SubmitExam { now_ms: js_sys::Date::now() as i64, at_limit: true });
            }
        });
    }
    let submit_exam = {
        let store = store.clone();
        Callback::from(move |_| {
            if gloo::dialogs::confirm("Submit the exam? Your answers are final, and the checks are decided on the cluster as it is now.") {
                store.dispatch(Action::SubmitExam { now_ms: js_sys::Date::now() as i64, at_limit: false });
            }
        })
    };
    let exam_bar = match &exam {
        None => html! {},
        Some(exam) => {
            let review = format!("#/review/{}/exam", lab.id);
            match exam.submitted {
                None => {
                    let left = exam.left_ms(*now_ms) / 1000;
                    html! {
                        <section class="exam-bar" aria-label="Exam">
                            <p>
                                <strong>{ "Exam" }</strong>
                                { format!(" \u{b7} variant {} \u{b7} no hints, no verdicts until you submit \u{b7} ", store.state.seed) }
                                <span role="timer" aria-live="off" class="exam-clock">{ format!("{}:{:02} left", left / 60, left % 60) }</span>
                            </p>
                            <button type="button" class="submit-exam" onclick={submit_exam} disabled={!owner}>{ "Submit the exam" }</button>
                        </section>
                    }
                }
                Some(submission) => html! {
                    <section class="exam-bar submitted" aria-label="Exam" role="status">
                        <p>
                            <strong>{ "Exam submitted" }</strong>
                            { if submission.at_limit { " at the time limit" } else { "" } }
                            { format!(" \u{b7} {} / {} points \u{b7} ", store.score(), lab.points_possible()) }
                            <a href={review}>{ "Review your exam" }</a>
                        </p>
                    </section>
                },
            }
        }
    };
    {
        // The page is named after the lab, and the keyboard starts in its terminal.
        let title = format!("{} \u{2014} ClusterLab", lab.title);
        use_effect_with((), move |_| {
            if trainee {
                gloo::utils::document().set_title(&title);
                focus_by_id("terminal-input", false);
            }
            move || {
                if trainee {
                    gloo::utils::document().set_title("ClusterLab");
                }
            }
        });
    }
    {
        // The address names the variant shown, so an instructor can say
        // "open variant 3"; one that names another variant switches to it.
        let store = store.clone();
        let wanted = props.variant;
        let id = lab.id.clone();
        // The variant last asked for: each request is acted on once.
        let asked = use_mut_ref(|| None::<u64>);
        use_effect_with((wanted, store.state.seed), move |(wanted, seed)| {
            if !trainee || store.state.exam.is_some() {
                return;
            }
            let new_request = *wanted != std::mem::replace(&mut *asked.borrow_mut(), *wanted);
            if let Some(wanted) = wanted.filter(|wanted| new_request && wanted != seed) {
                let fresh = store.state.transcript.is_empty() && store.state.answers.is_empty();
                if fresh || gloo::dialogs::confirm(&format!("This address opens variant {wanted} of the lab. Your answers and terminal history on variant {seed} will be cleared. Switch to variant {wanted}?")) {
                    store.dispatch(Action::Restart { seed: wanted });
                    return;
                }
            }
            // Only a catalog lab's address names it (a lab from a link keeps its link).
            let on_lab_route = gloo::utils::window().location().hash().is_ok_and(|hash| hash.starts_with("#/lab/"));
            if let (true, Ok(history)) = (on_lab_route, gloo::utils::window().history()) {
                let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("#/lab/{id}/variant/{seed}")));
            }
        });
    }

    // Once no question takes another answer: the lab is done, with its
    // result against the pass mark, the review and the next lab.
    let done = exam.is_none() && trainee && !store.questions.is_empty() && store.questions.iter().all(|question| !store.state.open(question));
    let completion = if done {
        let (score, possible) = (store.score(), lab.points_possible());
        let verdict = match lab.pass {
            Some(pass) if u64::from(score) * 100 >= u64::from(pass) * u64::from(possible) => format!(" Passed (the pass mark is {pass}%)."),
            Some(pass) => format!(" Not passed yet (the pass mark is {pass}%): start over or try another variant."),
            None => String::new(),
        };
        html! {
            <div class="completion" role="status">
                <p><strong>{ "Lab complete: " }</strong>{ format!("{score} / {possible} points.{verdict}") }</p>
                <p>
                    <a href={format!("#/review/{}", lab.id)}>{ "Review what you did" }</a>
                    if let Some((id, title)) = &props.next {
                        { " \u{b7} " }<a href={Route::Lab(id.to_string(), None).to_hash()}>{ format!("Next on the path: {title}") }</a>
                    }
                </p>
            </div>
        }
    } else {
        html! {}
    };

    // A preview sits inside the author page's own `main`.
    let landmark = if trainee { "main" } else { "section" };
    html! {
        <@{landmark} class="page lab" data-lab={lab.id.clone()}>
            if trainee {
                <div class="skip-links">
                    <button type="button" onclick={|_| focus_by_id("terminal-input", true)}>{ "Skip to the terminal" }</button>
                    <button type="button" onclick={|_| focus_by_id("questions-heading", true)}>{ "Skip to the questions" }</button>
                </div>
            }
            <div class="lab-head">
                <div>
                    // In a preview the author page's "Write a lab" is the
                    // page's one h1, and its variant control the only one.
                    <@{if trainee { "h1" } else { "h3" }}>{ &lab.title }</@>
                    <p class="summary">{ &lab.summary }</p>
                </div>
                if exam.is_none() {
                    <div class="score" aria-live="polite">
                        <span class="score-value">{ format!("{} / {}", store.score(), lab.points_possible()) }</span>
                        <span class="score-label">{ "points" }</span>
                        if trainee {
                            <a class="review-link" href={format!("#/review/{}", lab.id)}>{ "Review" }</a>
                        }
                        <button type="button" class="reset-button" onclick={reset} disabled={!owner}>{ "Start over" }</button>
                        if !lab.vars.is_empty() && trainee {
                            <button type="button" class="variant-button" onclick={new_variant} disabled={!owner}
                                title="The same lab with other faulty parts">{ format!("Variant {} \u{2192} next", store.state.seed) }</button>
                        }
                    </div>
                }
            </div>
            { exam_bar }
            { completion }
            { held_elsewhere }
            <Notices notices={store.notices.clone()} on_dismiss={dismiss} />
            // Briefing, a job's metrics, terminal, questions: one column
            // on a narrow screen; wider, the terminal stands beside the
            // rest (style.css).
            <div class="lab-body">
                <section class="briefing" aria-labelledby="briefing-heading">
                    <h2 id="briefing-heading">{ "Briefing" }</h2>
                    <Markdown doc={store.briefing.clone()} />
                    <details class="topology">
                        <summary>{ "The cluster in words" }</summary>
                        <p>{ clusterlab_engine::lab::topology_text(&lab.cluster) }</p>
                    </details>
                </section>
                if lab.jobs.is_some() {
                    <MetricsPanel store={store.clone()} />
                }
                <section class="terminal-pane" aria-label="Terminal">
                    <Terminal store={store.clone()} engine={engine.clone()} />
                </section>
                <section class="questions" aria-labelledby="questions-heading">
                    <h2 id="questions-heading" tabindex="-1">{ "Questions" }</h2>
                    { for cards }
                </section>
            </div>
        </@>
    }
}
