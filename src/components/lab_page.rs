//! One lab: briefing, terminal and questions, with the trainee's progress.

use std::rc::Rc;

use clusterlab_engine::grading;
use clusterlab_engine::Lab;
use yew::prelude::*;

use crate::components::markdown::Markdown;
use crate::components::question_card::QuestionCard;
use crate::components::terminal::Terminal;
use crate::hooks::use_progress;
use crate::state::Action;

#[derive(Properties)]
pub struct LabPageProps {
    pub lab: Rc<Lab>,
}

impl PartialEq for LabPageProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.lab, &other.lab)
    }
}

#[function_component(LabPage)]
pub fn lab_page(props: &LabPageProps) -> Html {
    let lab = &props.lab;
    let progress = use_progress(&lab.id);
    // A new terminal (a fresh lab state) after each reset.
    let generation = use_state(|| 0u32);
    // The trainee's variant: its questions carry the values of the lab's variables.
    let variant = use_memo((lab.id.clone(), progress.seed), {
        let lab = lab.clone();
        move |(_, seed)| {
            let variant = lab.variant(*seed);
            let questions: Vec<Rc<_>> = variant.questions.into_iter().map(Rc::new).collect();
            (variant.briefing, questions)
        }
    });
    let (briefing, questions) = (&variant.0, &variant.1);

    let grades: Vec<_> = questions
        .iter()
        .filter_map(|q| progress.answers.get(&q.id).map(|saved| q.grade(&saved.response)))
        .collect();
    let (points, _) = grading::total(&grades);
    let possible = lab.points_possible();

    let on_run = {
        let progress = progress.clone();
        Callback::from(move |line: String| progress.dispatch(Action::Ran(line)))
    };
    let start_over = |action: fn() -> Action, question: &'static str| {
        let progress = progress.clone();
        let generation = generation.clone();
        Callback::from(move |_| {
            if gloo::dialogs::confirm(question) {
                progress.dispatch(action());
                generation.set(*generation + 1);
            }
        })
    };
    let reset = start_over(|| Action::Reset, "Start this lab over? Your answers and terminal history will be cleared.");
    let new_variant = start_over(
        || Action::NewVariant,
        "Start over with another variant of this lab? Your answers and terminal history will be cleared.",
    );

    let cards = questions.iter().enumerate().map(|(at, question)| {
        let on_answer = {
            let progress = progress.clone();
            let id = question.id.clone();
            Callback::from(move |response| progress.dispatch(Action::Answer { question: id.clone(), response }))
        };
        let on_hint = {
            let progress = progress.clone();
            let id = question.id.clone();
            Callback::from(move |()| progress.dispatch(Action::ShowHint { question: id.clone() }))
        };
        html! {
            <QuestionCard key={question.id.clone()} question={question.clone()} number={at + 1}
                saved={progress.answers.get(&question.id).cloned()}
                hints_shown={progress.hints_shown.get(&question.id).copied().unwrap_or(0)}
                {on_answer} {on_hint} />
        }
    });

    html! {
        <main class="page lab" data-lab={lab.id.clone()}>
            <div class="lab-head">
                <div>
                    <h1>{ &lab.title }</h1>
                    <p class="summary">{ &lab.summary }</p>
                </div>
                <div class="score" aria-live="polite">
                    <span class="score-value">{ format!("{points} / {possible}") }</span>
                    <span class="score-label">{ "points" }</span>
                    <button type="button" class="reset-button" onclick={reset}>{ "Start over" }</button>
                    if !lab.vars.is_empty() {
                        <button type="button" class="variant-button" onclick={new_variant}
                            title="The same lab with other faulty parts">{ format!("Variant {} \u{2192} next", progress.seed) }</button>
                    }
                </div>
            </div>
            <div class="lab-body">
                <section class="briefing-and-questions">
                    <section class="briefing">
                        <h2>{ "Briefing" }</h2>
                        <Markdown source={briefing.clone()} />
                    </section>
                    <section class="questions">
                        <h2>{ "Questions" }</h2>
                        { for cards }
                    </section>
                </section>
                <section class="terminal-pane">
                    <Terminal key={format!("{}-{}-{}", lab.id, progress.seed, *generation)}
                        lab={lab.clone()} seed={progress.seed}
                        replay={progress.commands.clone()}
                        {on_run} />
                </section>
            </div>
        </main>
    }
}
