//! cmi5: labs and their exams as assignable units (AUs) that an LMS
//! imports, launches and gets results from.
//!
//! - [`course_structure`] writes `cmi5.xml`: a block per lab holding its lab
//!   and its exam, each an AU whose `url` opens the app
//!   (`index.html?au=lab&lab=ID`, `index.html?au=exam&lab=ID`).
//! - An LMS launches an AU with `endpoint`, `fetch`, `actor`, `registration`
//!   and `activityId` appended to its url ([`Launch::from_query`]). The app
//!   POSTs to `fetch` once for its token, reads the `LMS.LaunchData` state
//!   document ([`LaunchData`]), then sends the statements cmi5 defines for an
//!   AU: `initialized` ([`Session::initialized`]); in Normal mode `passed`
//!   or `failed` and `completed` ([`Session::outcome`]); `terminated` last
//!   ([`Session::terminated`]). `launched` is the LMS's own.
//!
//! Statement ids are derived from the registration and what they say, so a
//! statement sent again (a retry) is stored once.

use serde_json::{json, Value};

use crate::report::Report;
use crate::xapi::uuid_for;

pub const CMI5_CATEGORY: &str = "https://w3id.org/xapi/cmi5/context/categories/cmi5";
pub const MOVEON_CATEGORY: &str = "https://w3id.org/xapi/cmi5/context/categories/moveon";
pub const MASTERY_SCORE: &str = "https://w3id.org/xapi/cmi5/context/extensions/masteryscore";
pub const LAUNCH_DATA: &str = "LMS.LaunchData";
const INITIALIZED: &str = "http://adlnet.gov/expapi/verbs/initialized";
const PASSED: &str = "http://adlnet.gov/expapi/verbs/passed";
const FAILED: &str = "http://adlnet.gov/expapi/verbs/failed";
const COMPLETED: &str = "http://adlnet.gov/expapi/verbs/completed";
const TERMINATED: &str = "http://adlnet.gov/expapi/verbs/terminated";

/// What an LMS's launch says: appended to the AU's url as its query.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub endpoint: String,
    pub fetch: String,
    pub actor: Value,
    pub registration: String,
    pub activity_id: String,
    /// The AU's own parameters: `lab` (the lab's id) and `au` (`lab` or `exam`).
    pub lab: String,
    pub exam: bool,
}

/// Decodes one `application/x-www-form-urlencoded` value.
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'+' => out.push(b' '),
            b'%' => match bytes.get(at + 1..at + 3).and_then(|hex| std::str::from_utf8(hex).ok()).and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                Some(byte) => {
                    out.push(byte);
                    at += 2;
                }
                None => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        at += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Encodes a query value.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

impl Launch {
    /// The launch in a url's query (`?endpoint=...&fetch=...`), None when it
    /// is not a cmi5 launch or misses a parameter cmi5 requires.
    pub fn from_query(query: &str) -> Option<Launch> {
        let pairs: Vec<(String, String)> = query
            .trim_start_matches('?')
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (decode(key), decode(value))
            })
            .collect();
        let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let actor: Value = serde_json::from_str(&get("actor")?).ok()?;
        if !actor.is_object() {
            return None;
        }
        let launch = Launch {
            endpoint: get("endpoint")?,
            fetch: get("fetch")?,
            actor,
            registration: get("registration")?,
            activity_id: get("activityId")?,
            lab: get("lab")?,
            exam: get("au").as_deref() == Some("exam"),
        };
        let lab_ok = !launch.lab.is_empty() && launch.lab.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        lab_ok.then_some(launch)
    }

    /// The xAPI base, ending with `/`.
    pub fn base(&self) -> String {
        if self.endpoint.ends_with('/') {
            self.endpoint.clone()
        } else {
            format!("{}/", self.endpoint)
        }
    }

    /// Where the launch data is: the State API's `LMS.LaunchData` document
    /// for this actor, AU and registration.
    pub fn launch_data_url(&self) -> String {
        format!(
            "{}activities/state?stateId={}&activityId={}&agent={}&registration={}",
            self.base(),
            encode(LAUNCH_DATA),
            encode(&self.activity_id),
            encode(&self.actor.to_string()),
            encode(&self.registration)
        )
    }

    /// Who the learner is, for drawing an exam's variant: the actor's
    /// account or mailbox.
    pub fn learner(&self) -> String {
        let text = |path: &[&str]| {
            let mut value = &self.actor;
            for key in path {
                value = value.get(key)?;
            }
            value.as_str().map(str::to_string)
        };
        text(&["account", "name"])
            .map(|name| format!("{}|{name}", text(&["account", "homePage"]).unwrap_or_default()))
            .or_else(|| text(&["mbox"]))
            .or_else(|| text(&["mbox_sha1sum"]))
            .or_else(|| text(&["openid"]))
            .unwrap_or_else(|| self.actor.to_string())
    }
}

/// What the LMS's `LMS.LaunchData` document says.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchData {
    pub context_template: Value,
    /// `Normal`, `Browse` or `Review`: only Normal sends passed, failed and completed.
    pub launch_mode: String,
    pub mastery_score: Option<f64>,
    pub move_on: String,
    pub return_url: Option<String>,
}

impl LaunchData {
    pub fn from_json(text: &str) -> Result<LaunchData, String> {
        let value: Value = serde_json::from_str(text).map_err(|error| format!("the LMS's launch data is not JSON: {error}"))?;
        let context_template = value.get("contextTemplate").cloned().filter(Value::is_object).ok_or("the LMS's launch data has no contextTemplate")?;
        let launch_mode = value.get("launchMode").and_then(Value::as_str).unwrap_or("Normal").to_string();
        if !matches!(launch_mode.as_str(), "Normal" | "Browse" | "Review") {
            return Err(format!("the LMS's launch data has an unknown launchMode `{launch_mode}`"));
        }
        Ok(LaunchData {
            context_template,
            launch_mode,
            mastery_score: value.get("masteryScore").and_then(Value::as_f64).filter(|s| (0.0..=1.0).contains(s)),
            move_on: value.get("moveOn").and_then(Value::as_str).unwrap_or("NotApplicable").to_string(),
            return_url: value.get("returnURL").and_then(Value::as_str).filter(|u| !u.is_empty()).map(str::to_string),
        })
    }

    /// Whether this launch records an outcome (Normal mode).
    pub fn records_outcome(&self) -> bool {
        self.launch_mode == "Normal"
    }
}

/// One AU session: the launch, its data, and when it started.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub launch: Launch,
    pub data: LaunchData,
}

/// An ISO 8601 duration (`PT1H2M3.4S`), as xAPI results carry them.
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    let (hours, rest) = (ms / 3_600_000, ms % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let seconds = rest as f64 / 1000.0;
    let mut text = "PT".to_string();
    if hours > 0 {
        text += &format!("{hours}H");
    }
    if minutes > 0 {
        text += &format!("{minutes}M");
    }
    text + &format!("{}S", (seconds * 100.0).round() / 100.0)
}

impl Session {
    /// A statement cmi5 defines: the launch's actor, the AU as object, the
    /// registration, the context template with the cmi5 category (and the
    /// moveOn one when it carries success or completion).
    fn statement(&self, verb: &str, display: &str, result: Option<Value>, now: &str, moveon: bool, mastery: bool) -> Value {
        let mut context = self.data.context_template.clone();
        let object = context.as_object_mut().expect("checked when read");
        object.insert("registration".into(), json!(self.launch.registration));
        let activities = object.entry("contextActivities").or_insert_with(|| json!({}));
        if !activities.is_object() {
            *activities = json!({});
        }
        let category = activities.as_object_mut().expect("an object").entry("category").or_insert_with(|| json!([]));
        if !category.is_array() {
            *category = json!([]);
        }
        let list = category.as_array_mut().expect("an array");
        for (id, wanted) in [(CMI5_CATEGORY, true), (MOVEON_CATEGORY, moveon)] {
            if wanted && !list.iter().any(|a| a.get("id").and_then(Value::as_str) == Some(id)) {
                list.push(json!({ "id": id, "objectType": "Activity" }));
            }
        }
        if let (true, Some(score)) = (mastery, self.data.mastery_score) {
            let extensions = object.entry("extensions").or_insert_with(|| json!({}));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(MASTERY_SCORE.into(), json!(score));
            }
        }
        // Stable across retries: passed, failed and completed once per
        // registration and AU; initialized and terminated once per session.
        let session = self
            .data
            .context_template
            .pointer("/extensions/https:~1~1w3id.org~1xapi~1cmi5~1context~1extensions~1sessionid")
            .map_or(String::new(), Value::to_string);
        let once_per_session = matches!(verb, INITIALIZED | TERMINATED);
        let what = format!("{}|{}|{verb}|{}", self.launch.registration, self.launch.activity_id, if once_per_session { session.as_str() } else { "" });
        let mut statement = json!({
            "id": uuid_for(&what),
            "actor": self.launch.actor,
            "verb": { "id": verb, "display": { "en-US": display } },
            "object": { "objectType": "Activity", "id": self.launch.activity_id },
            "context": context,
            "timestamp": now,
        });
        if let Some(result) = result {
            statement["result"] = result;
        }
        statement
    }

    /// The first statement of a session.
    pub fn initialized(&self, now: &str) -> Value {
        self.statement(INITIALIZED, "initialized", None, now, false, false)
    }

    /// What the learner achieved: `passed` or `failed` (against the LMS's
    /// masteryScore, else the lab's pass mark) and `completed` once every
    /// question is answered; nothing outside Normal mode, nor while an exam
    /// is still being taken.
    pub fn outcome(&self, report: &Report, now: &str, elapsed_ms: i64) -> Vec<Value> {
        if !self.data.records_outcome() || !report.graded {
            return Vec::new();
        }
        let scaled = if report.possible == 0 { 1.0 } else { f64::from(report.score) / f64::from(report.possible) };
        let passed = match self.data.mastery_score {
            Some(mastery) => scaled + 1e-9 >= mastery,
            None => report.passed,
        };
        let score = json!({ "raw": report.score, "min": 0, "max": report.possible, "scaled": (scaled * 10_000.0).round() / 10_000.0 });
        let (verb, display) = if passed { (PASSED, "passed") } else { (FAILED, "failed") };
        let mut out =
            vec![self.statement(verb, display, Some(json!({ "score": score, "success": passed, "duration": duration(elapsed_ms) })), now, true, true)];
        if report.completed {
            out.push(self.statement(COMPLETED, "completed", Some(json!({ "completion": true, "duration": duration(elapsed_ms) })), now, true, false));
        }
        out
    }

    /// The last statement of a session.
    pub fn terminated(&self, now: &str, elapsed_ms: i64) -> Value {
        self.statement(TERMINATED, "terminated", Some(json!({ "duration": duration(elapsed_ms) })), now, false, false)
    }
}

/// Text for XML content and attributes.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A lab as the course structure lists it.
pub struct CourseLab<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub summary: &'a str,
    /// The pass mark in percent, when the lab sets one.
    pub pass: Option<u32>,
}

/// `cmi5.xml`: one block per lab holding two AUs, the lab for practice
/// (moveOn Completed) and its exam (moveOn Passed, with the pass mark as
/// masteryScore). `course_id` is an IRI the organisation owns; AU ids are
/// made from it.
pub fn course_structure(course_id: &str, title: &str, labs: &[CourseLab]) -> String {
    let course_id = course_id.trim_end_matches('/');
    let lang = |text: &str| format!("<langstring lang=\"en-US\">{}</langstring>", xml(text));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    out += "<courseStructure xmlns=\"https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd\">\n";
    out += &format!(
        "  <course id=\"{}\">\n    <title>{}</title>\n    <description>{}</description>\n  </course>\n",
        xml(course_id),
        lang(title),
        lang("Simulated GPU-cluster labs: every cluster and output is fictional; nothing runs on a real cluster.")
    );
    for lab in labs {
        let mastery = f64::from(lab.pass.unwrap_or(70).min(100)) / 100.0;
        out += &format!(
            "  <block id=\"{}\">\n    <title>{}</title>\n    <description>{}</description>\n",
            xml(&format!("{course_id}/labs/{}", lab.id)),
            lang(lab.title),
            lang(lab.summary)
        );
        out += &format!(
            "    <au id=\"{}\" moveOn=\"Completed\" launchMethod=\"AnyWindow\">\n      <title>{}</title>\n      <description>{}</description>\n      <url>index.html?au=lab&amp;lab={}</url>\n    </au>\n",
            xml(&format!("{course_id}/labs/{}/practice", lab.id)),
            lang(&format!("{} (practice)", lab.title)),
            lang(lab.summary),
            xml(lab.id)
        );
        out += &format!(
            "    <au id=\"{}\" moveOn=\"Passed\" masteryScore=\"{mastery}\" launchMethod=\"AnyWindow\">\n      <title>{}</title>\n      <description>{}</description>\n      <url>index.html?au=exam&amp;lab={}</url>\n    </au>\n",
            xml(&format!("{course_id}/labs/{}/exam", lab.id)),
            lang(&format!("{} (exam)", lab.title)),
            lang(&format!("{} Taken as an exam: no hints, no feedback until submitted, a time limit.", lab.summary)),
            xml(lab.id)
        );
        out += "  </block>\n";
    }
    out + "</courseStructure>\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch_query() -> String {
        let actor = r#"{"objectType":"Agent","account":{"homePage":"https://lms.example.org","name":"learner-7"},"name":"Ada"}"#;
        format!(
            "?au=exam&lab=slow-rail&endpoint={}&fetch={}&actor={}&registration={}&activityId={}",
            encode("http://127.0.0.1:9/xAPI/"),
            encode("http://127.0.0.1:9/fetch?k=1"),
            encode(actor),
            "760e3480-ba55-4991-94b0-01820dbd23a2",
            encode("https://example.org/course/labs/slow-rail/exam")
        )
    }

    #[test]
    fn a_launch_reads_from_the_query_and_needs_every_parameter() {
        let launch = Launch::from_query(&launch_query()).unwrap();
        assert_eq!((launch.lab.as_str(), launch.exam), ("slow-rail", true));
        assert_eq!(launch.fetch, "http://127.0.0.1:9/fetch?k=1");
        assert_eq!(launch.learner(), "https://lms.example.org|learner-7");
        assert!(launch.launch_data_url().starts_with("http://127.0.0.1:9/xAPI/activities/state?stateId=LMS.LaunchData&activityId=https%3A%2F%2F"));
        for missing in ["endpoint", "fetch", "actor", "registration", "activityId", "lab"] {
            let query: String =
                launch_query().split('&').filter(|p| !p.trim_start_matches('?').starts_with(&format!("{missing}="))).collect::<Vec<_>>().join("&");
            assert!(Launch::from_query(&query).is_none(), "{missing}");
        }
        assert!(Launch::from_query(&launch_query().replace("lab=slow-rail", "lab=..%2Fx")).is_none());
        assert!(Launch::from_query("?").is_none());
    }

    #[test]
    fn statements_follow_cmi5() {
        let launch = Launch::from_query(&launch_query()).unwrap();
        let data = LaunchData::from_json(r#"{"contextTemplate":{"contextActivities":{"grouping":[{"id":"https://example.org/course/labs/slow-rail/exam"}]},"extensions":{"https://w3id.org/xapi/cmi5/context/extensions/sessionid":"s1"}},"launchMode":"Normal","masteryScore":0.8,"moveOn":"Passed","returnURL":"https://lms.example.org/back"}"#).unwrap();
        let session = Session { launch, data };
        let first = session.initialized("2026-12-03T10:00:00Z");
        assert_eq!(first["verb"]["id"], INITIALIZED);
        assert_eq!(first["context"]["registration"], "760e3480-ba55-4991-94b0-01820dbd23a2");
        let categories = first["context"]["contextActivities"]["category"].as_array().unwrap();
        assert_eq!(categories.len(), 1);
        assert_eq!(first["context"]["extensions"]["https://w3id.org/xapi/cmi5/context/extensions/sessionid"], "s1");
        let report = Report {
            lab: "slow-rail".into(),
            title: "t".into(),
            variant: 3,
            note: "",
            score: 7,
            possible: 10,
            pass: Some(70),
            passed: true,
            graded: true,
            completed: true,
            questions: vec![],
            commands: vec![],
            exam: None,
            signed: None,
        };
        let outcome = session.outcome(&report, "2026-12-03T10:30:00Z", 1_800_000);
        // 0.7 against the LMS's masteryScore of 0.8: failed, whatever the lab's own pass mark.
        assert_eq!(outcome[0]["verb"]["id"], FAILED);
        assert_eq!(outcome[0]["result"]["success"], false);
        assert_eq!(outcome[0]["context"]["extensions"][MASTERY_SCORE], 0.8);
        assert!(outcome[0]["context"]["contextActivities"]["category"].as_array().unwrap().iter().any(|c| c["id"] == MOVEON_CATEGORY));
        assert_eq!(outcome[1]["verb"]["id"], COMPLETED);
        assert_eq!(outcome[1]["result"]["duration"], "PT30M0S");
        let last = session.terminated("2026-12-03T10:30:01Z", 1_801_000);
        assert!(!last["context"]["contextActivities"]["category"].as_array().unwrap().iter().any(|c| c["id"] == MOVEON_CATEGORY));
        let browse = Session { data: LaunchData { launch_mode: "Browse".into(), ..session.data.clone() }, ..session.clone() };
        assert!(browse.outcome(&report, "now", 0).is_empty());
    }

    #[test]
    fn the_course_structure_lists_a_lab_and_an_exam_per_block() {
        let xml = course_structure(
            "https://example.org/clusterlab",
            "ClusterLab",
            &[CourseLab { id: "slow-rail", title: "Jobs <slow>", summary: "s", pass: Some(70) }],
        );
        assert!(xml.contains("<au id=\"https://example.org/clusterlab/labs/slow-rail/exam\" moveOn=\"Passed\" masteryScore=\"0.7\""));
        assert!(xml.contains("<url>index.html?au=lab&amp;lab=slow-rail</url>"));
        assert!(xml.contains("Jobs &lt;slow&gt; (practice)"));
    }
}
