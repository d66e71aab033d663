//! A lab's results as xAPI 1.0.3 statements for a Learning Record Store:
//! one per answered question (`answered`, with its score, success and the
//! response) and one for the lab (`completed`, with the score, whether it
//! passed and whether every question was answered).
//!
//! Statement ids are derived from what they say (lab, variant, question,
//! attempt, result), so sending the same results twice (a retry after the
//! network came back) stores them once.

use serde_json::{json, Value};

use crate::report::{Report, Row};
use crate::rng::stable_hash;

pub const VERSION: &str = "1.0.3";
const ANSWERED: &str = "http://adlnet.gov/expapi/verbs/answered";
const COMPLETED: &str = "http://adlnet.gov/expapi/verbs/completed";
const INTERACTION: &str = "http://adlnet.gov/expapi/activities/cmi.interaction";
const ASSESSMENT: &str = "http://adlnet.gov/expapi/activities/assessment";

/// Who the statements are about, as the trainee gave it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Actor {
    pub name: String,
    /// An email address (without `mailto:`).
    pub email: String,
}

/// A version 4 UUID made from `text`, stable across runs and platforms.
pub fn uuid_for(text: &str) -> String {
    let high = stable_hash(format!("xapi-high:{text}").as_bytes());
    let low = stable_hash(format!("xapi-low:{text}").as_bytes());
    let high = (high & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    let low = (low & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xffff, high & 0xffff, low >> 48, low & 0xffff_ffff_ffff)
}

/// The cmi.interaction type a question is.
fn interaction(kind: &str) -> &'static str {
    match kind {
        "choice" | "multi" | "entity" => "choice",
        "number" => "numeric",
        "order" => "sequencing",
        "handoff" => "long-fill-in",
        "task" | "state" => "performance",
        _ => "fill-in",
    }
}

fn scaled(points: u32, possible: u32) -> f64 {
    if possible == 0 {
        1.0
    } else {
        f64::from(points) / f64::from(possible)
    }
}

/// Every statement the report makes: `site` is the app's address (the
/// activities' IRIs start with it), `now` the ISO 8601 time of sending.
/// Empty while an exam is being taken: its results are not known yet.
pub fn statements(report: &Report, actor: &Actor, site: &str, now: &str) -> Vec<Value> {
    if !report.graded {
        return Vec::new();
    }
    let site = site.trim_end_matches('/');
    let lab_iri = format!("{site}/labs/{}", report.lab);
    let actor = json!({ "objectType": "Agent", "name": actor.name, "mbox": format!("mailto:{}", actor.email) });
    let variant = json!({ format!("{site}/xapi/variant"): report.variant });
    let mut out: Vec<Value> = report
        .questions
        .iter()
        .filter_map(|row| row.answer.as_ref().map(|answer| (row, answer)))
        .map(|(row, answer): (&Row, &String)| {
            let what = format!("{}|{}|{}|{}|{}|{}", report.lab, report.variant, row.id, row.attempts, row.points, answer);
            json!({
                "id": uuid_for(&what),
                "actor": actor,
                "verb": { "id": ANSWERED, "display": { "en-US": "answered" } },
                "object": {
                    "objectType": "Activity",
                    "id": format!("{lab_iri}/questions/{}", row.id),
                    "definition": {
                        "name": { "en-US": row.prompt.trim().chars().take(200).collect::<String>() },
                        "type": INTERACTION,
                        "interactionType": interaction(row.kind),
                    }
                },
                "result": {
                    "score": { "raw": row.points, "min": 0, "max": row.possible, "scaled": scaled(row.points, row.possible) },
                    "success": row.correct,
                    "completion": true,
                    "response": answer,
                },
                "context": {
                    "contextActivities": { "parent": [{ "objectType": "Activity", "id": lab_iri }] },
                    "extensions": variant,
                },
                "timestamp": now,
            })
        })
        .collect();
    let attempts: u32 = report.questions.iter().map(|row| row.attempts).sum();
    let what = format!("{}|{}|lab|{attempts}|{}|{}", report.lab, report.variant, report.score, report.completed);
    out.push(json!({
        "id": uuid_for(&what),
        "actor": actor,
        "verb": { "id": COMPLETED, "display": { "en-US": "completed" } },
        "object": {
            "objectType": "Activity",
            "id": lab_iri,
            "definition": { "name": { "en-US": report.title }, "type": ASSESSMENT },
        },
        "result": {
            "score": { "raw": report.score, "min": 0, "max": report.possible, "scaled": scaled(report.score, report.possible) },
            "success": report.passed,
            "completion": report.completed,
        },
        "context": { "extensions": variant },
        "timestamp": now,
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Command, Row};

    fn report() -> Report {
        let row = |id: &str, answer: Option<&str>, correct: bool| Row {
            id: id.into(),
            kind: "choice",
            prompt: format!("Prompt of {id}"),
            answer: answer.map(str::to_string),
            correct,
            points: u32::from(correct),
            possible: 1,
            attempts: u32::from(answer.is_some()),
            hints: 0,
            explanation: String::new(),
            reading: None,
        };
        Report {
            lab: "slow-rail".into(),
            title: "One slow rail".into(),
            variant: 3,
            note: crate::report::SIMULATION_NOTE,
            score: 1,
            possible: 3,
            pass: Some(70),
            passed: false,
            graded: true,
            completed: false,
            questions: vec![row("a", Some("gpu-002"), true), row("b", Some("mlx5_0"), false), row("c", None, false)],
            commands: Vec::<Command>::new(),
            exam: None,
        }
    }

    #[test]
    fn one_statement_per_answer_and_one_for_the_lab() {
        let actor = Actor { name: "Ada".into(), email: "ada@example.org".into() };
        let statements = statements(&report(), &actor, "http://127.0.0.1:8080/", "2026-12-02T08:00:00Z");
        assert_eq!(statements.len(), 3, "two answers and the lab");
        let first = &statements[0];
        assert_eq!(first["verb"]["id"], ANSWERED);
        assert_eq!(first["object"]["id"], "http://127.0.0.1:8080/labs/slow-rail/questions/a");
        assert_eq!(first["result"]["score"]["raw"], 1);
        assert_eq!(first["result"]["success"], true);
        assert_eq!(first["actor"]["mbox"], "mailto:ada@example.org");
        assert_eq!(first["context"]["contextActivities"]["parent"][0]["id"], "http://127.0.0.1:8080/labs/slow-rail");
        let lab = &statements[2];
        assert_eq!(lab["verb"]["id"], COMPLETED);
        assert_eq!((lab["result"]["success"].clone(), lab["result"]["completion"].clone()), (json!(false), json!(false)));
        assert_eq!(lab["result"]["score"]["scaled"], json!(1.0 / 3.0));
        // The same results give the same ids; another answer another id.
        let again = super::statements(&report(), &actor, "http://127.0.0.1:8080", "2026-12-02T09:00:00Z");
        assert_eq!(again[0]["id"], first["id"]);
        let mut changed = report();
        changed.questions[0].attempts = 2;
        assert_ne!(super::statements(&changed, &actor, "http://127.0.0.1:8080", "")[0]["id"], first["id"]);
    }

    #[test]
    fn ids_are_version_4_uuids() {
        for text in ["", "a", "slow-rail|3|a|1|1|gpu-002"] {
            let id = uuid_for(text);
            let parts: Vec<&str> = id.split('-').collect();
            assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12], "{id}");
            assert!(parts[2].starts_with('4') && "89ab".contains(&parts[3][..1]), "{id}");
        }
        assert_ne!(uuid_for("a"), uuid_for("b"));
    }
}
