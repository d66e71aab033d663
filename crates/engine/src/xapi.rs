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

pub const VERSION: &str = "1.0.3";
const ANSWERED: &str = "http://adlnet.gov/expapi/verbs/answered";
const COMPLETED: &str = "http://adlnet.gov/expapi/verbs/completed";
const INTERACTION: &str = "http://adlnet.gov/expapi/activities/cmi.interaction";
const ASSESSMENT: &str = "http://adlnet.gov/expapi/activities/assessment";

/// Who the statements are about, as the trainee gave it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Actor {
    pub name: String,
    /// An email address (without `mailto:`); empty in a room, where the
    /// name is an account on the app's site within the room's registration.
    pub email: String,
}

impl Actor {
    fn agent(&self, site: &str) -> Value {
        if self.email.is_empty() {
            json!({ "objectType": "Agent", "name": self.name, "account": { "homePage": site, "name": self.name } })
        } else {
            json!({ "objectType": "Agent", "name": self.name, "mbox": format!("mailto:{}", self.email) })
        }
    }
}

/// A room an instructor set up: where everyone's results go for one session
/// (the endpoint and a token for its Authorization header) and the
/// registration that groups them. It travels in a link (the page keeps it
/// for the browser session only, never in storage that outlives it).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Room {
    pub endpoint: String,
    /// The Authorization header's value, e.g. `Basic ...`.
    pub token: String,
    pub registration: String,
}

impl Room {
    /// The link trainees open: the catalog (of `course`'s labs, when given)
    /// with the room in the address.
    pub fn link(&self, site: &str, course: &[String]) -> String {
        let site = site.trim_end_matches('/');
        let ids: Vec<String> = course.iter().map(|id| crate::cmi5::encode(id)).collect();
        let course = if ids.is_empty() { String::new() } else { format!("course={}&", ids.join(",")) };
        format!(
            "{site}/#/?{course}room={}&token={}&registration={}",
            crate::cmi5::encode(&self.endpoint),
            crate::cmi5::encode(&self.token),
            crate::cmi5::encode(&self.registration)
        )
    }
}

/// Statement and activity ids: deterministic UUIDs (`rng::uuid_for`).
pub use crate::rng::uuid_for;

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
/// activities' IRIs start with it), `now` the ISO 8601 time of sending, and
/// `registration` a room's, which the statements' context carries.
/// Empty while an exam is being taken: its results are not known yet.
pub fn statements(report: &Report, actor: &Actor, site: &str, now: &str, registration: Option<&str>) -> Vec<Value> {
    if !report.graded {
        return Vec::new();
    }
    let site = site.trim_end_matches('/');
    let lab_iri = format!("{site}/labs/{}", report.lab);
    let actor = actor.agent(site);
    let variant = json!({ format!("{site}/xapi/variant"): report.variant });
    // A registration is part of what a statement says: the same results sent
    // in two rooms are two statements.
    let room = registration.map_or(String::new(), |registration| format!("{registration}|"));
    let mut out: Vec<Value> = report
        .questions
        .iter()
        .filter_map(|row| row.answer.as_ref().map(|answer| (row, answer)))
        .map(|(row, answer): (&Row, &String)| {
            let what = format!("{room}{}|{}|{}|{}|{}|{}", report.lab, report.variant, row.id, row.attempts, row.points, answer);
            let mut statement = json!({
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
            });
            in_registration(&mut statement, registration);
            statement
        })
        .collect();
    let attempts: u32 = report.questions.iter().map(|row| row.attempts).sum();
    let what = format!("{room}{}|{}|lab|{attempts}|{}|{}", report.lab, report.variant, report.score, report.completed);
    let mut completed = json!({
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
    });
    in_registration(&mut completed, registration);
    out.push(completed);
    out
}

fn in_registration(statement: &mut Value, registration: Option<&str>) {
    if let (Some(registration), Some(context)) = (registration, statement.get_mut("context").and_then(Value::as_object_mut)) {
        context.insert("registration".into(), json!(registration));
    }
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
            signed: None,
        }
    }

    #[test]
    fn one_statement_per_answer_and_one_for_the_lab() {
        let actor = Actor { name: "Ada".into(), email: "ada@example.org".into() };
        let statements = statements(&report(), &actor, "http://127.0.0.1:8080/", "2026-12-02T08:00:00Z", None);
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
        let again = super::statements(&report(), &actor, "http://127.0.0.1:8080", "2026-12-02T09:00:00Z", None);
        assert_eq!(again[0]["id"], first["id"]);
        let mut changed = report();
        changed.questions[0].attempts = 2;
        assert_ne!(super::statements(&changed, &actor, "http://127.0.0.1:8080", "", None)[0]["id"], first["id"]);
        assert!(first["context"].get("registration").is_none());
    }

    #[test]
    fn in_a_room_the_name_is_an_account_and_the_registration_is_in_every_context() {
        let actor = Actor { name: "Ada".into(), email: String::new() };
        let registration = "6f1b7d9e-3c2a-4b8e-9d1f-0a2b3c4d5e6f";
        let statements = statements(&report(), &actor, "https://labs.example.org/", "2026-12-02T08:00:00Z", Some(registration));
        for statement in &statements {
            assert_eq!(statement["context"]["registration"], registration);
            assert_eq!(statement["actor"]["account"], json!({ "homePage": "https://labs.example.org", "name": "Ada" }));
            assert!(statement["actor"].get("mbox").is_none());
        }
        let elsewhere = super::statements(&report(), &actor, "https://labs.example.org/", "2026-12-02T08:00:00Z", None);
        assert_ne!(statements[0]["id"], elsewhere[0]["id"], "another registration, another statement");
    }

    #[test]
    fn a_room_link_carries_the_room_in_the_address() {
        let room = Room { endpoint: "https://lrs.example.org/xAPI/".into(), token: "Basic YTpi".into(), registration: "r-1".into() };
        assert_eq!(
            room.link("https://labs.example.org/", &[]),
            "https://labs.example.org/#/?room=https%3A%2F%2Flrs.example.org%2FxAPI%2F&token=Basic%20YTpi&registration=r-1"
        );
        assert!(room
            .link("https://labs.example.org", &["lost-gpu".into(), "slow-rail".into()])
            .starts_with("https://labs.example.org/#/?course=lost-gpu,slow-rail&room="));
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
