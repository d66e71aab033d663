//! The review page, `#/review/ID`: each question with the answer given, its
//! points and explanation, the score against the lab's pass mark, and the
//! evidence bundle (Markdown, JSON) and results (CSV) to download. It reads
//! the lab's saved record and never changes it.

use std::rc::Rc;

use clusterlab_engine::report::{self, points, Report, Signed};
use clusterlab_engine::shell::SessionJson;
use gloo::events::EventListener;
use yew::prelude::*;

use crate::components::lrs_panel::LrsPanel;
use crate::download::download;
use crate::{fetch, storage};

/// The lab the address names.
fn lab_id() -> Option<String> {
    let hash = gloo::utils::window().location().hash().unwrap_or_default();
    hash.strip_prefix("#/review/").map(|id| id.trim_end_matches('/').to_string()).filter(|id| !id.is_empty())
}

enum Loaded {
    Report(Rc<Report>),
    NotStarted(String),
    Failed(String),
}

async fn load(address: String) -> Loaded {
    // `#/review/ID/exam` reviews the lab's exam.
    let (id, exam) = match address.strip_suffix("/exam") {
        Some(id) => (id.to_string(), true),
        None => (address, false),
    };
    let catalog = match fetch::catalog().await {
        Ok(catalog) => catalog,
        Err(message) => return Loaded::Failed(message),
    };
    let Some(entry) = catalog.find(&id) else {
        return Loaded::Failed(format!("There is no lab called \u{201c}{id}\u{201d} in this catalog."));
    };
    let loaded = match fetch::lab(entry).await {
        Ok(loaded) => loaded,
        Err(message) => return Loaded::Failed(message),
    };
    let initial = SessionJson::initial(loaded.lab.first_host());
    match storage::reload(&loaded.lab, &entry.digest, &initial, exam) {
        Some(state) => Loaded::Report(Rc::new(report::report(&loaded.lab, &state))),
        None => Loaded::NotStarted(loaded.lab.title.clone()),
    }
}

#[function_component(ReviewApp)]
pub fn review_app() -> Html {
    let id = use_state(lab_id);
    {
        let id = id.clone();
        use_effect_with((), move |_| {
            let listener = EventListener::new(&gloo::utils::window(), "hashchange", move |_| id.set(lab_id()));
            move || drop(listener)
        });
    }
    let loaded = use_state(|| None::<Loaded>);
    {
        let loaded = loaded.clone();
        use_effect_with((*id).clone(), move |id| {
            loaded.set(None);
            if let Some(id) = id.clone() {
                wasm_bindgen_futures::spawn_local(async move { loaded.set(Some(load(id).await)) });
            }
        });
    }
    let Some(id) = (*id).clone() else { return html! {} };
    let body = match &*loaded {
        None => html! { <p class="loading">{ "Loading your results\u{2026}" }</p> },
        Some(Loaded::Failed(message)) => html! {
            <>
                <h1>{ "The results could not be loaded" }</h1>
                <p class="notice bad" role="alert">{ message }</p>
            </>
        },
        Some(Loaded::NotStarted(title)) => html! {
            <>
                <h1>{ format!("Review: {title}") }</h1>
                <p>{ "This browser has no answers for this lab yet." }</p>
                <a href={format!("#/lab/{id}")}>{ "Open the lab" }</a>
            </>
        },
        Some(Loaded::Report(report)) => html! { <ReviewView report={report.clone()} /> },
    };
    gloo::utils::document().set_title(&match &*loaded {
        Some(Loaded::Report(report)) => format!("Review: {} \u{2014} ClusterLab", report.title),
        _ => "Review \u{2014} ClusterLab".to_string(),
    });
    html! { <main class="page review">{ body }</main> }
}

/// An exam's time and submission, in words.
fn exam_line(exam: &report::ExamReport) -> String {
    if !exam.submitted {
        return format!("Exam in progress ({} minutes allowed): the results show once it is submitted.", exam.minutes);
    }
    let took = exam.took_ms.max(0) / 60_000;
    let how = if exam.at_limit { "at the time limit" } else { "by the learner" };
    format!("Exam: submitted {how} after {took} of {} minutes.", exam.minutes)
}

#[derive(Properties, PartialEq)]
struct ReviewViewProps {
    report: Rc<Report>,
}

#[function_component(ReviewView)]
fn review_view(props: &ReviewViewProps) -> Html {
    let report = &props.report;
    let failed = use_state(|| None::<String>);
    let save = |suffix: &'static str, mime: &'static str, text: fn(&Report) -> String| {
        let report = report.clone();
        let failed = failed.clone();
        Callback::from(move |_: MouseEvent| {
            let name = format!("clusterlab-{}-variant-{}-{suffix}", report.lab, report.variant);
            // Signed with the name typed below and the real time of writing.
            let trainee = crate::xapi_queue::settings().name;
            let written = String::from(js_sys::Date::new_0().to_iso_string());
            let signed = Report { signed: Some(Signed { trainee, written }), ..(*report).clone() };
            if download(&name, mime, &text(&signed)).is_err() {
                failed.set(Some(format!("{name} could not be downloaded in this browser.")));
            }
        })
    };
    let verdict_class = if report.passed { "passed" } else { "not-passed" };
    // While an exam is being taken the answers show, their grades do not.
    let graded = report.graded;
    html! {
        <>
            <h1>{ format!("Review: {}", report.title) }</h1>
            <p class="review-meta">{ format!("Variant {} \u{b7} ", report.variant) }
                if report.exam.is_some() {
                    <a href={format!("#/exam/{}/variant/{}", report.lab, report.variant)}>{ "Back to the exam" }</a>
                } else {
                    <a href={format!("#/lab/{}/variant/{}", report.lab, report.variant)}>{ "Back to the lab" }</a>
                }
            </p>
            if let Some(exam) = &report.exam {
                <p class="review-exam">{ exam_line(exam) }</p>
            }
            if graded {
                <p class={classes!("review-score", verdict_class)} role="status">
                    <strong>{ report.verdict() }</strong>
                    if !report.completed { { " \u{b7} some questions are not answered yet" } }
                </p>
            }
            <p class="review-note">{ report.note }</p>
            <div class="review-downloads" role="group" aria-label="Downloads">
                <button type="button" onclick={save("evidence.md", "text/markdown", Report::markdown)}>{ "Download the evidence (Markdown)" }</button>
                <button type="button" onclick={save("evidence.json", "application/json", Report::json)}>{ "Download the evidence (JSON)" }</button>
                <button type="button" onclick={save("results.csv", "text/csv", Report::csv)}>{ "Download the results (CSV)" }</button>
            </div>
            if let Some(message) = &*failed {
                <p class="notice bad" role="alert">{ message }</p>
            }
            if graded {
                <LrsPanel report={report.clone()} />
            }
            <h2>{ "Answers" }</h2>
            <ol class="review-questions">
                { for report.questions.iter().map(|row| html! {
                    <li class={classes!("review-question", if !graded { "held" } else if row.correct { "correct" } else { "incorrect" })} data-question={row.id.clone()}>
                        <p class="review-prompt">{ &row.prompt }</p>
                        <p class="review-answer">
                            <strong>{ if row.answer.is_none() { "Not answered" } else if !graded { "Answered" } else if row.correct { "Correct" } else { "Not correct" } }</strong>
                            { if graded { format!(" \u{2014} {} / {}", row.points, points(row.possible)) } else { format!(" \u{2014} {} possible", points(row.possible)) } }
                            { if row.hints > 0 { format!(" \u{b7} {} hint{}", row.hints, if row.hints == 1 { "" } else { "s" }) } else { String::new() } }
                        </p>
                        if let Some(answer) = &row.answer {
                            <pre class="review-given">{ answer }</pre>
                        }
                        if let Some(reading) = &row.reading {
                            <p class="review-reading">{ reading }</p>
                        }
                        if !row.explanation.trim().is_empty() {
                            <p class="review-explanation">{ &row.explanation }</p>
                        }
                    </li>
                }) }
            </ol>
            <h2>{ format!("Commands ({})", report.commands.len()) }</h2>
            <p>{ "Each command line you ran, with its host and the lab's simulated UTC time; the downloads hold their output." }</p>
            <ol class="review-commands">
                { for report.commands.iter().map(|command| html! {
                    <li><code>{ format!("{} {} $ {}", command.at, command.host, command.line) }</code>{ format!(" \u{2014} exit {}", command.status) }</li>
                }) }
            </ol>
        </>
    }
}
