//! Lab files: every lab in labs/ loads and grades its own reference answers;
//! malformed labs get located, actionable errors.

use std::path::PathBuf;

use clusterlab_engine::lab::authoring::diagnostic::{self, Diagnostic};
use clusterlab_engine::lab::authoring::{check, compile};
use clusterlab_engine::load;

fn labs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../labs")
}

#[test]
fn every_shipped_lab_loads_and_its_reference_answers_grade_correct() {
    let mut count = 0;
    for entry in std::fs::read_dir(labs_dir()).expect("labs/ exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            let source = std::fs::read_to_string(&path).expect("readable lab");
            let compiled = compile(&source).unwrap_or_else(|problems| panic!("{}: {problems:?}", path.display()));
            let deep = check::deep(&compiled, &source);
            let lab = compiled.lab;
            assert!(deep.is_empty(), "{}: {deep:?}", path.display());
            let variant = lab.variant(1);
            assert!(!variant.questions.is_empty(), "{} has no questions", path.display());
            for question in &variant.questions {
                let grade = question.grade(&question.reference_answer());
                assert!(grade.correct, "{}: question {} rejects its own answer", path.display(), question.id);
                assert!(!question.grade("certainly wrong").correct);
            }
            count += 1;
        }
    }
    assert!(count >= 1);
}

const GOOD: &str = r#"[lab]
id = "ok"
title = "T"
summary = "S"

[cluster]
preset = "hgx-h100"
count = 2

[[questions]]
id = "q1"
type = "choice"
prompt = "P"
choices = ["a", "b"]
answer = "b"
"#;

fn errors(source: &str) -> Vec<String> {
    match load(source) {
        Ok(_) => vec![],
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn a_good_lab_loads_with_defaults() {
    let lab = load(GOOD).expect("valid");
    assert_eq!(lab.cluster.hostnames, ["gpu-001", "gpu-002"]);
    assert_eq!(lab.variant(0).questions[0].points, 1);
    assert!(lab.cluster.persistence);
}

#[test]
fn malformed_labs_get_located_errors() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "preset = \"hgx-h100\"",
            "preset = \"hgx-h10\"",
            "7:10: unknown preset `hgx-h10` (did you mean `hgx-h100`?); presets are `hgx-h100`, `hgx-h200`, `hgx-a100`",
        ),
        ("title = \"T\"", "titel = \"T\"", "3:1: unknown key `titel` (did you mean `title`?); expected one of"),
        ("answer = \"b\"", "answer = \"c\"", "15:10: question `q1`: the answer `c` is not among its choices"),
        ("type = \"choice\"", "type = \"choise\"", "12:8: unknown question type `choise` (did you mean `choice`?)"),
        ("id = \"ok\"", "id = \"Not OK\"", "2:6: lab id `Not OK` must use only a-z, 0-9 and -"),
        ("count = 2", "count = 0", "8:9: `count` must be between 1 and 4096"),
        ("count = 2", "count = 2\nnodes = [\"a\"]", "8:9: give either `nodes` or `count`, not both"),
        ("count = 2", "nodes = [\"a\", \"a\"]", "8:15: node `a` is listed twice"),
        ("summary = \"S\"\n", "", "1:1: missing key `summary` in [lab]"),
        ("title = \"T\"", "title = \"T", "3:"),
    ];
    for (from, to, expected) in cases {
        let source = GOOD.replacen(from, to, 1);
        let found = errors(&source);
        assert!(found.iter().any(|error| error.starts_with(expected)), "replacing {from:?} by {to:?}: expected {expected:?}, got {found:?}");
    }
}

#[test]
fn several_problems_are_reported_together() {
    let source = GOOD.replace("hgx-h100", "nope").replace("answer = \"b\"", "answer = \"z\"");
    assert_eq!(errors(&source).len(), 2);
}

/// Each file in tests/bad-labs/ ends with `# expect: LINE:COL: message`
/// lines (at the end, so they move no line): exactly the problems `load`
/// and the deep checks must report.
#[test]
fn the_bad_lab_corpus_gets_exactly_its_expected_errors() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/bad-labs");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/bad-labs exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_none_or(|ext| ext != "toml") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("readable lab");
        let expected: Vec<&str> = source.lines().filter_map(|line| line.strip_prefix("# expect: ")).collect();
        assert!(!expected.is_empty(), "{} has no `# expect:` line", path.display());
        let found: Vec<String> = match compile(&source) {
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
            Ok(compiled) => check::deep(&compiled, &source).iter().map(ToString::to_string).collect(),
        };
        assert_eq!(found, expected, "{}", path.display());
        count += 1;
    }
    assert!(count >= 15);
}

#[test]
fn variants_follow_the_seed_and_substitute_everywhere() {
    let source = r#"[lab]
id = "variants"
title = "T"
summary = "S"

[cluster]
preset = "hgx-h100"
count = 4

[vars]
bad_node = { one_of = ["gpu-002", "gpu-003"] }
bad_gpu = { range = [0, 7] }

[[faults]]
kind = "gpu-fallen-off-bus"
node = "{bad_node}"
gpu = "{bad_gpu}"

[[questions]]
id = "node"
type = "choice"
prompt = "Which node lost GPU {bad_gpu}?"
choices = ["gpu-001", "gpu-002", "gpu-003", "gpu-004"]
answer = "{bad_node}"

[[questions]]
id = "gpu"
type = "number"
prompt = "Which GPU index?"
answer = "{bad_gpu}"
"#;
    let compiled = compile(source).expect("valid");
    let lab = &compiled.lab;
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let variant = lab.variant(seed);
        let node = variant.values["bad_node"].clone();
        let gpu = variant.values["bad_gpu"].clone();
        assert!(variant.questions[0].prompt.plain_text().ends_with(&format!("GPU {gpu}?")));
        assert!(variant.questions[0].grade(&node).correct);
        assert!(variant.questions[1].grade(&gpu).correct);
        seen.insert((node, gpu));
        // The same seed, the same lab.
        assert_eq!(lab.variant(seed).values, variant.values);
    }
    assert!(seen.len() > 4, "seeds should spread over the variants: {seen:?}");
    // The first prompt names the GPU the second question asks for: a leak.
    let leaks: Vec<String> = check::deep(&compiled, source).iter().map(|d| d.message.clone()).collect();
    assert_eq!(leaks.len(), 1, "{leaks:?}");
    assert!(leaks[0].starts_with("question `gpu`: its answer depends on `bad_gpu`, and the prompt of question `node` changes with it"), "{leaks:?}");
}

/// The worked example in docs/authoring.md must check clean, as an author
/// who copies it expects.
#[test]
fn the_documented_example_checks_clean() {
    let docs = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/authoring.md")).expect("docs/authoring.md exists");
    let example = docs
        .split("## A complete example")
        .nth(1)
        .and_then(|section| section.split("```toml\n").nth(1))
        .and_then(|rest| rest.split("```").next())
        .expect("a ```toml block under \"A complete example\"");
    let compiled = compile(example).unwrap_or_else(|problems| panic!("{problems:?}"));
    assert!(check::deep(&compiled, example).is_empty());
    assert_eq!(compiled.lab.variant(3).questions.len(), 2);
}

/// The app gets labs as data (`clusterlab build`'s JSON); it must get the
/// same lab as the checks saw.
#[test]
fn lab_data_is_the_lab_the_checks_saw() {
    for name in ["first-look.toml", "slow-rail.toml", "lost-gpu.toml"] {
        let source = std::fs::read_to_string(labs_dir().join(name)).expect("a shipped lab");
        let checked = load(&source).expect("valid");
        let data = clusterlab_engine::Lab::from_json(&checked.to_json()).expect("reads back");
        for seed in [0, 1, 7] {
            let (a, b) = (checked.variant(seed), data.variant(seed));
            assert_eq!((a.values, a.briefing, a.questions), (b.values, b.briefing, b.questions));
        }
        let run = |lab: &clusterlab_engine::Lab| clusterlab_engine::Session::new(lab.instantiate(3), lab.first_host()).run("nvidia-smi; ibstat").text();
        assert_eq!(run(&checked), run(&data), "{name}");
    }
}

#[test]
fn diagnostics_locate_inside_a_character_at_its_start() {
    let source = "a = 1\nbé = 2\n";
    assert_eq!(Diagnostic::at(source, 8, "x").to_string(), "2:2: x");
    assert_eq!(Diagnostic::spanning(source, 6..9, "x").width, 2);
}

#[test]
fn diagnostics_render_as_cargo_does() {
    let source = "[cluster]\npreset = \"hgx-h1000\"\n";
    let found = Diagnostic::spanning(source, 19..30, "unknown preset").render_pretty("lab.toml", source);
    assert_eq!(found, "error: unknown preset\n --> lab.toml:2:10\n  |\n2 | preset = \"hgx-h1000\"\n  |          ^^^^^^^^^^^\n");
    // Line numbers of two digits widen the gutter; a tab shows as four spaces.
    let source = format!("{}\tkey = 1\r\n", "\n".repeat(11));
    let found = Diagnostic::spanning(&source, 12..15, "unknown key").render_pretty("f", &source);
    assert_eq!(found, "error: unknown key\n  --> f:12:2\n   |\n12 |     key = 1\n   |     ^^^\n");
    // At the end of a line, the caret follows it.
    assert_eq!(Diagnostic::at("a", 1, "m").render_pretty("f", "a"), "error: m\n --> f:1:2\n  |\n1 | a\n  |  ^\n");
    assert_eq!(Diagnostic::at("a\n", 2, "m").render_pretty("f", "a\n"), "error: m\n --> f:2:1\n  |\n2 | \n  | ^\n");
    assert_eq!(diagnostic::summary("check", "f", 1), "error: could not check `f` due to 1 previous error");
    assert_eq!(diagnostic::summary("check", "f", 2), "error: could not check `f` due to 2 previous errors");
}

#[test]
fn diagnostics_show_long_lines_and_control_characters_safely() {
    let source = format!("{}\u{1b}[31mX{}", "a".repeat(500), "b".repeat(500));
    let found = Diagnostic::at(&source, 500, "m").render_pretty("f", &source);
    let line = found.lines().nth(3).unwrap();
    assert!(line.starts_with("1 | ...") && line.ends_with("...") && line.chars().count() < 120, "{line}");
    assert!(!found.contains('\u{1b}'));
    let carets = found.lines().nth(4).unwrap();
    assert_eq!(carets.find('^').map(|at| line.chars().nth(at)), Some(Some('\u{fffd}')), "{found}");
}

#[test]
fn every_shipped_lab_names_two_other_ways_and_a_mistake() {
    // `clusterlab test` plays them; this keeps a lab from shipping without them.
    for entry in std::fs::read_dir(labs_dir()).expect("labs/ exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            let source = std::fs::read_to_string(&path).expect("readable lab");
            let compiled = compile(&source).unwrap_or_else(|problems| panic!("{}: {problems:?}", path.display()));
            let solution = compiled.solution.unwrap_or_else(|| panic!("{} has no [solution]", path.display()));
            assert!(solution.alternatives.len() >= 2, "{}: give two [[solution.alternatives]]", path.display());
            assert!(!solution.mistakes.is_empty(), "{}: give a [[solution.mistakes]]", path.display());
            assert!(solution.mistakes.iter().all(|m| m.at_most <= 0.5), "{}: a mistake may not pass for half the points", path.display());
        }
    }
}

#[test]
fn the_path_names_each_labs_prerequisites() {
    // The shipped labs make one catalog, where every lab after the guided
    // tour names a lab to pass first, and each comes earlier on the path.
    use clusterlab_engine::lab::catalog::{Catalog, Entry};
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(labs_dir()).expect("labs/ exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            let source = std::fs::read_to_string(&path).expect("readable lab");
            let lab = compile(&source).unwrap_or_else(|problems| panic!("{}: {problems:?}", path.display())).lab;
            entries.push(Entry::new(&lab, &lab.to_json()));
        }
    }
    let catalog = Catalog::new(entries);
    assert_eq!(catalog.requires_problems(), []);
    assert_eq!(catalog.labs[0].id, "onboarding");
    for lab in &catalog.labs[1..] {
        assert!(!lab.requires.is_empty(), "{}: name the lab to pass before it (`requires`)", lab.id);
    }
}

#[test]
fn prompts_past_the_beginner_level_name_neither_command_nor_tool() {
    // From intermediate on, a prompt says what to find or achieve; which
    // tool shows it is the trainee's call (a hint may name one, at a cost).
    const WORDS: &[&str] = &[
        "cat", "clear", "column", "cut", "date", "diff", "echo", "env", "false", "file", "find", "free", "groups", "head", "id", "kill", "less", "ls", "man",
        "more", "ping", "printf", "reboot", "seq", "sleep", "sort", "stat", "tail", "tee", "timeout", "true", "watch", "which", "yes", "ip", "df", "ps", "tr",
        "wc", "hostname", "dirname", "basename", "uptime", "xargs", "sudo", "dctech", "shutdown", "clush", "pdsh", "awk", "sed", "grep",
    ];
    let tools: Vec<&str> = clusterlab_engine::commands::all().iter().map(|command| command.signature().name).filter(|name| !WORDS.contains(name)).collect();
    assert!(tools.contains(&"all_reduce_perf") && tools.contains(&"ib_write_bw") && tools.contains(&"nvidia-smi"), "{tools:?}");
    let mut named = Vec::new();
    for entry in std::fs::read_dir(labs_dir()).expect("labs/ exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_none_or(|ext| ext != "toml") {
            continue;
        }
        let lab = load(&std::fs::read_to_string(&path).expect("readable lab")).expect("the lab loads");
        if lab.level.as_deref() == Some("beginner") {
            continue;
        }
        for question in &lab.variant(1).questions {
            let prompt = question.prompt.plain_text();
            let words: Vec<&str> = prompt.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).collect();
            if let Some(tool) = tools.iter().find(|tool| words.contains(tool)) {
                named.push(format!("{} {}: `{tool}`", lab.id, question.id));
            }
        }
    }
    assert!(named.is_empty(), "prompts that name a tool: {named:#?}");
}
