//! One graded question: the prompt, an input for its type, hints on request,
//! and after an answer, whether it was right and why.

use std::rc::Rc;

use clusterlab_engine::lab::{Question, QuestionKind};
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::components::markdown::Markdown;
use crate::state::SavedAnswer;

#[derive(Properties)]
pub struct QuestionCardProps {
    pub question: Rc<Question>,
    pub number: usize,
    pub saved: Option<SavedAnswer>,
    pub hints_shown: usize,
    pub on_answer: Callback<String>,
    pub on_hint: Callback<()>,
}

impl PartialEq for QuestionCardProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.question, &other.question)
            && self.number == other.number
            && self.saved == other.saved
            && self.hints_shown == other.hints_shown
    }
}

#[function_component(QuestionCard)]
pub fn question_card(props: &QuestionCardProps) -> Html {
    let question = &props.question;
    let draft = use_state(|| props.saved.as_ref().map(|s| s.response.clone()).unwrap_or_default());
    let submit = {
        let draft = draft.clone();
        let on_answer = props.on_answer.clone();
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            if !draft.trim().is_empty() {
                on_answer.emit((*draft).clone());
            }
        })
    };
    let input = match &question.kind {
        QuestionKind::Choice { choices, .. } => html! {
            <fieldset class="choices">
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
        QuestionKind::Text { .. } => {
            let typed = {
                let draft = draft.clone();
                Callback::from(move |event: InputEvent| {
                    let field: HtmlInputElement = event.target_unchecked_into();
                    draft.set(field.value());
                })
            };
            html! {
                <input class="text-answer" type="text" value={(*draft).clone()} oninput={typed}
                    placeholder="Your answer" aria-label={format!("Answer to question {}", props.number)} />
            }
        }
    };
    let grade = props.saved.as_ref().map(|saved| question.grade(&saved.response));
    let verdict = match (&grade, &props.saved) {
        (Some(grade), Some(saved)) => html! {
            <div class={classes!("verdict", if grade.correct { "correct" } else { "incorrect" })} role="status">
                <p>
                    <strong>{ if grade.correct { "Correct" } else { "Not quite" } }</strong>
                    { format!(" \u{2014} {} / {} point{} \u{b7} answered \u{201c}{}\u{201d}", grade.points, grade.possible,
                        if grade.possible == 1 { "" } else { "s" }, saved.response) }
                    { if saved.attempts > 1 { format!(" \u{b7} {} attempts", saved.attempts) } else { String::new() } }
                </p>
                if grade.correct && !grade.explanation.is_empty() {
                    <Markdown source={grade.explanation.clone()} />
                }
            </div>
        },
        _ => html! {},
    };
    let shown = props.hints_shown.min(question.hints.len());
    let hint_button = if shown < question.hints.len() {
        let on_hint = props.on_hint.clone();
        html! { <button type="button" class="hint-button" onclick={move |_| on_hint.emit(())}>{ "Show a hint" }</button> }
    } else {
        html! {}
    };
    html! {
        <section class="question" data-question={question.id.clone()}>
            <h3>{ format!("Question {}", props.number) }<span class="points">{ format!("{} pt{}", question.points, if question.points == 1 { "" } else { "s" }) }</span></h3>
            <Markdown source={question.prompt.clone()} />
            <form onsubmit={submit}>
                { input }
                <div class="actions">
                    <button type="submit" class="answer-button">{ if props.saved.is_some() { "Answer again" } else { "Answer" } }</button>
                    { hint_button }
                </div>
            </form>
            if shown > 0 {
                <ul class="hints">{ for question.hints[..shown].iter().map(|hint| html! { <li><Markdown source={hint.clone()} /></li> }) }</ul>
            }
            { verdict }
        </section>
    }
}
