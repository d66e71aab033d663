//! One graded question: the prompt, an input for its type, hints on request,
//! and after an answer, whether it was right and why.

use std::rc::Rc;

use clusterlab_engine::grading::{items, shuffled, Grade, HandoffRecord, Verdict};
use clusterlab_engine::lab::{Question, QuestionKind};
use web_sys::HtmlInputElement;
use yew::prelude::*;

use clusterlab_engine::store::Answer;

use crate::components::focus_by_id;
use crate::components::markdown::Markdown;

#[derive(Properties)]
pub struct QuestionCardProps {
    pub question: Rc<Question>,
    pub number: usize,
    pub saved: Option<Answer>,
    /// False in a tab that shows the lab read-only.
    #[prop_or(true)]
    pub enabled: bool,
    pub hints_shown: usize,
    /// The engine's grade and words for the saved answer (None while an
    /// exam holds them back).
    pub grade: Option<Grade>,
    pub verdict: Option<Verdict>,
    /// Whether the question takes another answer.
    pub open: bool,
    /// An exam: no hints, answers kept without a verdict until it is submitted.
    #[prop_or(false)]
    pub exam: bool,
    /// Why the engine could not read the last answer (no attempt used).
    #[prop_or_default]
    pub unclear: Option<String>,
    pub on_answer: Callback<String>,
    pub on_hint: Callback<()>,
    /// The lab record its unsent draft is kept under (none: not kept).
    #[prop_or_default]
    pub draft_record: Option<AttrValue>,
}

impl PartialEq for QuestionCardProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.question, &other.question)
            && self.number == other.number
            && self.saved == other.saved
            && self.hints_shown == other.hints_shown
            && self.enabled == other.enabled
            && self.grade == other.grade
            && self.verdict == other.verdict
            && self.open == other.open
            && self.exam == other.exam
            && self.unclear == other.unclear
            && self.draft_record == other.draft_record
    }
}

#[function_component(QuestionCard)]
pub fn question_card(props: &QuestionCardProps) -> Html {
    let question = &props.question;
    let saved_response = props.saved.as_ref().map(|s| s.response.clone()).unwrap_or_default();
    // What was typed or picked and not sent survives a reload (read once, as the card mounts).
    let draft = use_state(|| {
        let kept = props.draft_record.as_ref().map(|record| crate::storage::draft(record, &format!("question.{}", question.id)));
        kept.filter(|kept| !kept.is_empty()).unwrap_or_else(|| saved_response.clone())
    });
    {
        // Another tab's answer, shown when this one follows it (not at
        // first: the kept draft stands then).
        let draft = draft.clone();
        let first = use_mut_ref(|| true);
        use_effect_with(props.saved.clone(), move |saved| {
            if let Some(saved) = saved.as_ref().filter(|_| !std::mem::replace(&mut *first.borrow_mut(), false)) {
                draft.set(saved.response.clone());
            }
        });
    }
    {
        // A draft equal to the answer sent is no draft.
        let record = props.draft_record.clone();
        let slot = format!("question.{}", question.id);
        use_effect_with(((*draft).clone(), saved_response), move |(text, sent)| {
            if let Some(record) = record {
                crate::storage::set_draft(&record, &slot, if text == sent { "" } else { text });
            }
        });
    }
    // After an answer, the focus goes to its verdict (read out, then Tab
    // goes on to the next question) instead of staying on a changed button.
    let verdict_ref = use_node_ref();
    let answered = use_mut_ref(|| false);
    let submit = {
        let draft = draft.clone();
        let on_answer = props.on_answer.clone();
        let question = question.clone();
        let answered = answered.clone();
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            // An untouched order question is answered in the order shown;
            // a task or state question is checked by the store, whatever is sent.
            let response = match &question.kind {
                QuestionKind::Order { items } if draft.is_empty() => shuffled(items, &question).join("\n"),
                QuestionKind::Task { .. } | QuestionKind::State { .. } => "check".to_string(),
                _ => (*draft).clone(),
            };
            if !response.trim().is_empty() {
                *answered.borrow_mut() = true;
                on_answer.emit(response);
            }
        })
    };
    let input = match &question.kind {
        QuestionKind::Choice { choices, .. } => html! {
            <fieldset class="choices">
                <legend class="visually-hidden">{ format!("Answer to question {}", props.number) }</legend>
                { for choices.iter().map(|choice| {
                    let pick = {
                        let draft = draft.clone();
                        let choice = choice.clone();
                        Callback::from(move |_| draft.set(choice.clone()))
                    };
                    html! {
                        <label class="choice">
                            <input type="radio" name={format!("q-{}", question.id)} value={choice.clone()}
                                checked={*draft == *choice} onchange={pick} />
                            <span>{ choice }</span>
                        </label>
                    }
                }) }
            </fieldset>
        },
        QuestionKind::Multi { choices, .. } => html! {
            <fieldset class="choices">
                <legend class="visually-hidden">{ format!("Answer to question {}", props.number) }</legend>
                { for choices.iter().map(|choice| {
                    let checked = items(&draft).contains(&choice.as_str());
                    let toggle = {
                        let draft = draft.clone();
                        let choice = choice.clone();
                        let choices = choices.clone();
                        Callback::from(move |_| {
                            let current: Vec<String> = items(&draft).into_iter().map(String::from).collect();
                            // Keep the choices' own order so the saved answer is stable.
                            let next: Vec<&String> = choices
                                .iter()
                                .filter(|c| if **c == choice { !checked } else { current.contains(c) })
                                .collect();
                            draft.set(next.iter().map(|c| c.as_str()).collect::<Vec<_>>().join("\n"));
                        })
                    };
                    html! {
                        <label class="choice">
                            <input type="checkbox" value={choice.clone()} {checked} onchange={toggle} />
                            <span>{ choice }</span>
                        </label>
                    }
                }) }
            </fieldset>
        },
        QuestionKind::Text { .. } | QuestionKind::Number { .. } => {
            let typed = {
                let draft = draft.clone();
                Callback::from(move |event: InputEvent| {
                    let field: HtmlInputElement = event.target_unchecked_into();
                    draft.set(field.value());
                })
            };
            let unit = match &question.kind {
                QuestionKind::Number { unit: Some(unit), .. } => html! { <span class="unit">{ unit }</span> },
                _ => html! {},
            };
            let mode = if matches!(question.kind, QuestionKind::Number { .. }) { "decimal" } else { "text" };
            html! {
                <div class="answer-row">
                    <input class="text-answer" type="text" inputmode={mode} value={(*draft).clone()} oninput={typed}
                        placeholder="Your answer" aria-label={format!("Answer to question {}", props.number)} />
                    { unit }
                </div>
            }
        }
        QuestionKind::Entity { choices, entity, .. } => {
            // Typed as an operator writes it (`GPU5`, `gpu-001:5`, a bus id),
            // with the cluster's names offered as the trainee types.
            let typed = {
                let draft = draft.clone();
                Callback::from(move |event: InputEvent| {
                    let field: HtmlInputElement = event.target_unchecked_into();
                    draft.set(field.value());
                })
            };
            let list = format!("entities-{}", question.id);
            let example = choices.first().cloned().unwrap_or_default();
            html! {
                <div class="answer-row">
                    <input class="entity-answer" type="text" list={list.clone()} value={(*draft).clone()} oninput={typed}
                        placeholder={format!("a {entity}, e.g. {example}")} autocomplete="off" spellcheck="false"
                        aria-label={format!("Answer to question {}: a {entity}", props.number)} />
                    <datalist id={list}>
                        { for choices.iter().map(|choice| html! { <option value={choice.clone()} /> }) }
                    </datalist>
                </div>
            }
        }
        QuestionKind::Task { .. } => html! { <p class="check-note">{ "Do it at the terminal, then check: what you ran decides." }</p> },
        QuestionKind::State { .. } => html! { <p class="check-note">{ "Change the cluster at the terminal, then check: its state decides." }</p> },
        QuestionKind::Handoff { fields, rubric, .. } => {
            let record = HandoffRecord::from_response(&draft);
            let update = |change: Rc<dyn Fn(&mut HandoffRecord)>| {
                let draft = draft.clone();
                let count = fields.len();
                move || {
                    let mut record = HandoffRecord::from_response(&draft);
                    record.fields.resize(count, String::new());
                    change(&mut record);
                    draft.set(record.to_response());
                }
            };
            html! {
                <div class="handoff">
                    { for fields.iter().enumerate().map(|(at, field)| {
                        let text = Rc::new(std::cell::RefCell::new(String::new()));
                        let write = update(Rc::new({
                            let text = text.clone();
                            move |record: &mut HandoffRecord| record.fields[at] = text.borrow().clone()
                        }));
                        let typed = Callback::from(move |event: InputEvent| {
                            let area: web_sys::HtmlTextAreaElement = event.target_unchecked_into();
                            *text.borrow_mut() = area.value();
                            write();
                        });
                        html! {
                            <label class="handoff-field">
                                <span>{ field.name.clone() }</span>
                                if field.review {
                                    <span class="review-note">{ " (reviewed by an instructor)" }</span>
                                }
                                <textarea rows="2" value={record.fields.get(at).cloned().unwrap_or_default()} oninput={typed} />
                            </label>
                        }
                    }) }
                    if !rubric.is_empty() {
                        <fieldset class="choices rubric">
                            <legend>{ "Check your record against the rubric (for yourself: not scored)" }</legend>
                            { for rubric.iter().enumerate().map(|(at, item)| {
                                let checked = record.checked.contains(&at);
                                let toggle = update(Rc::new(move |record: &mut HandoffRecord| {
                                    if checked { record.checked.retain(|c| *c != at) } else { record.checked.push(at) }
                                }));
                                html! {
                                    <label class="choice">
                                        <input type="checkbox" {checked} onchange={Callback::from(move |_| toggle())} />
                                        <span>{ item }</span>
                                    </label>
                                }
                            }) }
                        </fieldset>
                    }
                </div>
            }
        }
        QuestionKind::Order { items: reference } => {
            // Until the trainee moves something, show the items shuffled.
            let shown: Vec<String> = if draft.is_empty() { shuffled(reference, question) } else { items(&draft).into_iter().map(String::from).collect() };
            let last = shown.len().saturating_sub(1);
            html! {
                <ol class="order">
                    { for shown.iter().enumerate().map(|(at, item)| {
                        let swap = |with: usize| {
                            let draft = draft.clone();
                            let mut order = shown.clone();
                            order.swap(at, with);
                            let moved = order.join("\n");
                            Callback::from(move |_: MouseEvent| draft.set(moved.clone()))
                        };
                        html! {
                            <li>
                                <span class="order-item">{ item }</span>
                                <button type="button" class="move" aria-label={format!("Move {item} up")}
                                    disabled={at == 0} onclick={swap(at.saturating_sub(1))}>{ "\u{2191}" }</button>
                                <button type="button" class="move" aria-label={format!("Move {item} down")}
                                    disabled={at == last} onclick={swap((at + 1).min(last))}>{ "\u{2193}" }</button>
                            </li>
                        }
                    }) }
                </ol>
            }
        }
    };
    {
        let verdict_ref = verdict_ref.clone();
        let answered = answered.clone();
        use_effect_with(props.saved.clone(), move |_| {
            if std::mem::take(&mut *answered.borrow_mut()) {
                if let Some(verdict) = verdict_ref.cast::<web_sys::HtmlElement>() {
                    let _ = verdict.focus();
                }
            }
        });
    }
    let open = props.open;
    let checked_by_engine = matches!(question.kind, QuestionKind::Task { .. } | QuestionKind::State { .. });
    let verdict = match (&props.grade, &props.verdict) {
        (Some(grade), Some(verdict)) => html! { <>
            <div class={classes!("verdict", if grade.correct { "correct" } else { "incorrect" })} role="status" tabindex="-1" ref={verdict_ref.clone()}>
                <p>
                    <strong>{ verdict.word }</strong>
                    { format!(" \u{2014} {}{}{}", verdict.points, verdict.answered, verdict.attempts) }
                </p>
                if let Some(reading) = &verdict.reading {
                    <p class="reading">{ reading.clone() }</p>
                }
                if let Some(feedback) = &grade.feedback {
                    <Markdown doc={Rc::new(feedback.clone())} />
                }
                if (grade.correct || !open) && !grade.explanation.is_empty() {
                    <Markdown doc={Rc::new(grade.explanation.clone())} />
                }
            </div>
            // The verdict has the focus: one step back to the work (outside
            // the status region, which reads only the verdict).
            <button type="button" class="back-to-terminal" onclick={|_| focus_by_id("terminal-input", true)}>{ "Back to the terminal" }</button>
        </> },
        // An exam keeps the answer and says so, without a verdict.
        _ if props.exam && props.saved.is_some() && !checked_by_engine => html! {
            <div class="verdict held" role="status" tabindex="-1" ref={verdict_ref.clone()}>
                <p><strong>{ "Recorded" }</strong>{ " \u{2014} you may change it until you submit the exam" }</p>
            </div>
        },
        _ => html! {},
    };
    let unclear = match &props.unclear {
        Some(why) => html! { <p class="unclear" role="alert">{ format!("{why} No attempt was used.") }</p> },
        None => html! {},
    };
    let button = match (checked_by_engine, props.saved.is_some(), open) {
        (true, _, _) if props.exam => "Decided when you submit",
        (_, _, false) => "Answered",
        (true, false, _) => "Check",
        (true, true, _) => "Check again",
        (false, false, _) => "Answer",
        (false, true, _) if props.exam => "Change answer",
        (false, true, _) => "Answer again",
    };
    let button_enabled = props.enabled && open && !(props.exam && checked_by_engine);
    let shown = props.hints_shown.min(question.hints.len());
    // A hint asked for takes the focus: the button may be gone (the last
    // hint), and the hint is what to read next.
    let hints_ref = use_node_ref();
    let asked_hint = use_mut_ref(|| false);
    {
        let hints_ref = hints_ref.clone();
        let asked_hint = asked_hint.clone();
        use_effect_with(shown, move |_| {
            if std::mem::take(&mut *asked_hint.borrow_mut()) {
                if let Some(last) = hints_ref.cast::<web_sys::Element>().and_then(|list| list.last_element_child()) {
                    if let Ok(last) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(last) {
                        let _ = last.focus();
                    }
                }
            }
        });
    }
    let hint_button = if shown < question.hints.len() && !props.exam {
        let on_hint = props.on_hint.clone();
        let asked_hint = asked_hint.clone();
        let ask = move |_| {
            *asked_hint.borrow_mut() = true;
            on_hint.emit(());
        };
        html! { <button type="button" class="hint-button" disabled={!props.enabled} onclick={ask}>{ "Show a hint" }</button> }
    } else {
        html! {}
    };
    html! {
        <section class="question" data-question={question.id.clone()}>
            // Read as "Question 3, 2 points".
            <h3>{ format!("Question {}", props.number) }<span class="visually-hidden">{ ", " }</span><span class="points">{ clusterlab_engine::report::points(question.points) }</span></h3>
            <Markdown doc={Rc::new(question.prompt.clone())} />
            <form onsubmit={submit}>
                { input }
                <div class="actions">
                    <button type="submit" class="answer-button" disabled={!button_enabled}>{ button }</button>
                    { hint_button }
                </div>
            </form>
            if shown > 0 {
                <ul class="hints" ref={hints_ref}>{ for question.hints[..shown].iter().map(|hint| html! { <li tabindex="-1"><Markdown doc={Rc::new(hint.clone())} /></li> }) }</ul>
            }
            { unclear }
            { verdict }
        </section>
    }
}
