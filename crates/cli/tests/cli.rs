//! The `clusterlab` binary, end to end.

use std::process::Command;

fn clusterlab(args: &[&str]) -> (String, String, i32) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_clusterlab")).args(args).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).output().expect("the binary runs");
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned(), output.status.code().unwrap_or(-1))
}

#[test]
fn run_lists_eight_gpus() {
    let (stdout, _, status) = clusterlab(&["run", "labs/first-look.toml", "--", "nvidia-smi", "-L"]);
    assert_eq!(status, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 8);
    for (index, line) in lines.iter().enumerate() {
        assert!(line.starts_with(&format!("GPU {index}: NVIDIA H100 80GB HBM3 (UUID: GPU-")), "{line}");
    }
}

#[test]
fn run_joins_words_into_one_line_and_exits_with_its_status() {
    let (stdout, _, status) = clusterlab(&["run", "labs/first-look.toml", "--", "nvidia-smi -L | wc -l"]);
    assert_eq!((stdout.as_str(), status), ("8\n", 0));
    let (_, stderr, status) = clusterlab(&["run", "labs/first-look.toml", "--", "ibstatt"]);
    assert_eq!((stderr.as_str(), status), ("-bash: ibstatt: command not found\n", 127));
}

#[test]
fn run_on_another_host_and_seed() {
    let (stdout, _, _) = clusterlab(&["run", "labs/first-look.toml", "--host", "gpu-002", "--", "hostname"]);
    assert_eq!(stdout, "gpu-002\n");
    let (one, _, _) = clusterlab(&["run", "labs/first-look.toml", "--seed", "1", "--", "nvidia-smi -L"]);
    let (two, _, _) = clusterlab(&["run", "labs/first-look.toml", "--seed", "2", "--", "nvidia-smi -L"]);
    let (one_again, _, _) = clusterlab(&["run", "labs/first-look.toml", "--seed", "1", "--", "nvidia-smi -L"]);
    assert_ne!(one, two);
    assert_eq!(one, one_again);
    let (_, stderr, status) = clusterlab(&["run", "labs/first-look.toml", "--host", "nope", "--", "hostname"]);
    assert_eq!(status, 2);
    assert!(stderr.contains("gpu-001, gpu-002"));
}

#[test]
fn check_reports_file_line_col() {
    let dir = std::env::temp_dir().join(format!("clusterlab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[lab]\nid = \"x\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h1000\"\ncount = 1\n").unwrap();
    let bad = bad.to_string_lossy().into_owned();
    let (stdout, _, status) = clusterlab(&["check", "--format", "short", "labs/first-look.toml", &bad]);
    assert_eq!(status, 1);
    assert_eq!(stdout, format!("{bad}:6:10: unknown preset `hgx-h1000` (did you mean `hgx-h100`?); presets are `hgx-h100`, `hgx-h200`, `hgx-a100`\n"));
    let (stdout, _, status) = clusterlab(&["check", "labs/first-look.toml"]);
    assert_eq!((stdout.as_str(), status), ("", 0));
    // The same lab id twice: the second is located at its id.
    let (stdout, _, status) = clusterlab(&["check", "--format", "short", "labs/first-look.toml", "labs/first-look.toml"]);
    assert_eq!((stdout.as_str(), status), ("labs/first-look.toml:3:6: lab id `first-look` is also used by labs/first-look.toml\n", 1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_reports_as_cargo_does_by_default() {
    let dir = std::env::temp_dir().join(format!("clusterlab-cli-pretty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[lab]\nid = \"x\"\ntitel = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h1000\"\ncount = 1\n").unwrap();
    let bad = bad.to_string_lossy().into_owned();
    let (stdout, _, status) = clusterlab(&["check", &bad]);
    assert_eq!(status, 1);
    assert_eq!(
        stdout,
        format!(
            "error: unknown key `titel` (did you mean `title`?); expected one of `id`, `title`, `summary`, `briefing`, `level`, `minutes`, `stage`, `tags`, `requires`, `pass`, `exam_minutes`\n \
             --> {bad}:3:1\n  |\n3 | titel = \"t\"\n  | ^^^^^\n\n\
             error: could not check `{bad}` due to 1 previous error\n"
        )
    );
    std::fs::write(&bad, "[lab]\nid = \"x\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h1000\"\ncount = 0\n").unwrap();
    let (stdout, _, _) = clusterlab(&["check", "--format=pretty", &bad]);
    assert!(stdout.contains(&format!("error: `count` must be between 1 and 4096\n --> {bad}:7:9\n  |\n7 | count = 0\n  |         ^\n")), "{stdout}");
    assert!(stdout.ends_with(&format!("error: could not check `{bad}` due to 2 previous errors\n")), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(clusterlab(&[]).2, 2);
    assert_eq!(clusterlab(&["run", "labs/first-look.toml", "nvidia-smi"]).2, 2);
    assert_eq!(clusterlab(&["run", "labs/first-look.toml", "--seed", "x", "--", "hostname"]).2, 2);
    assert_eq!(clusterlab(&["check"]).2, 2);
    assert_eq!(clusterlab(&["check", "--format", "long", "labs/first-look.toml"]).2, 2);
    assert_eq!(clusterlab(&["build", "labs"]).2, 2);
    assert_eq!(clusterlab(&["frobnicate"]).2, 2);
    let (_, stderr, status) = clusterlab(&["play", "labs/first-look.toml", "--sed", "3"]);
    assert_eq!(status, 2);
    assert!(stderr.contains("--seed"), "a close option is suggested: {stderr}");
}

#[test]
fn help_says_labs_are_simulations_and_each_subcommand_has_its_own() {
    let (stdout, _, status) = clusterlab(&["--help"]);
    assert_eq!(status, 0);
    assert!(stdout.contains("nothing runs on a real cluster"), "{stdout}");
    for command in ["check", "build", "run", "play", "schema"] {
        assert!(stdout.contains(&format!("\n  {command} ")), "{command} is listed: {stdout}");
        let (help, _, status) = clusterlab(&[command, "--help"]);
        assert_eq!(status, 0, "{command}");
        assert!(help.contains(&format!("Usage: clusterlab {command}")), "{help}");
        assert_eq!(clusterlab(&["help", command]).0, help);
    }
    assert!(clusterlab(&["-h"]).0.contains("(a simulation: nothing runs on a real cluster)"));
    let (play, _, _) = clusterlab(&["play", "--help"]);
    assert!(play.contains("--seed <N>") && play.contains("--host <HOST>") && play.contains("answer ID VALUE"), "{play}");
    let (check, _, _) = clusterlab(&["check", "-h"]);
    assert!(check.contains("[possible values: pretty, short]"), "{check}");
    assert_eq!(clusterlab(&["--version"]).0, format!("clusterlab {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn options_take_their_value_after_an_equals_sign_too() {
    let (spaced, _, _) = clusterlab(&["run", "labs/first-look.toml", "--seed", "7", "--host", "gpu-002", "--", "nvidia-smi -L"]);
    let (joined, _, status) = clusterlab(&["run", "labs/first-look.toml", "--seed=7", "--host=gpu-002", "--", "nvidia-smi -L"]);
    assert_eq!(status, 0);
    assert_eq!(spaced, joined);
    // Options may come after the lab file or before it.
    let (before, _, _) = clusterlab(&["run", "--seed=7", "--host=gpu-002", "labs/first-look.toml", "--", "nvidia-smi -L"]);
    assert_eq!(before, joined);
}

#[test]
fn schema_is_json_and_names_every_fault_kind() {
    let (stdout, _, status) = clusterlab(&["schema"]);
    assert_eq!(status, 0);
    let schema: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let kinds = &schema["properties"]["faults"]["items"]["properties"]["kind"]["enum"];
    for (kind, _, _) in clusterlab_engine::lab::FAULT_KINDS {
        assert!(kinds.as_array().expect("a list").iter().any(|k| k == kind), "{kind}");
    }
    assert_eq!(schema["properties"]["cluster"]["properties"]["preset"]["enum"][0], "hgx-h100");
}

#[test]
fn build_writes_lab_data_and_a_catalog_or_nothing() {
    let out = std::env::temp_dir().join(format!("clusterlab-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let out_arg = out.display().to_string();
    let (_, stderr, status) = clusterlab(&["build", "labs", "--out", &out_arg]);
    assert_eq!(status, 0, "{stderr}");
    let index = std::fs::read_to_string(out.join("index.json")).expect("a catalog");
    let catalog: serde_json::Value = serde_json::from_str(&index).unwrap();
    let labs = catalog["labs"].as_array().unwrap();
    assert!(labs.len() >= 3);
    for lab in labs {
        let file = out.join(lab["file"].as_str().unwrap());
        assert!(std::fs::read_to_string(file).unwrap().starts_with("{\"format\":2,\"lab\":{\"id\":"));
    }

    // A broken lab fails the build with its located problem, and nothing is written.
    let bad = std::env::temp_dir().join(format!("clusterlab-bad-labs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&bad);
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::copy("../../tests/bad-labs/unknown-preset.toml", bad.join("unknown-preset.toml")).unwrap();
    let empty_out = bad.join("out");
    let (_, stderr, status) = clusterlab(&["build", &bad.display().to_string(), "--out", &empty_out.display().to_string()]);
    assert_eq!(status, 1);
    assert!(stderr.contains("error: unknown preset") && stderr.contains("unknown-preset.toml:7:10\n"), "{stderr}");
    assert!(stderr.ends_with(&format!("error: could not build `{}` due to 1 previous error; nothing was written\n", bad.display())), "{stderr}");
    assert!(!empty_out.exists());
    let (_, stderr, status) = clusterlab(&["build", "--format", "short", &bad.display().to_string(), "--out", &empty_out.display().to_string()]);
    assert_eq!(status, 1);
    assert!(stderr.contains("unknown-preset.toml:7:10: unknown preset"), "{stderr}");
    assert!(stderr.contains("build failed: 1 problem"), "{stderr}");
    assert!(!empty_out.exists());
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&bad);
}

#[test]
#[cfg(unix)]
fn arguments_that_are_not_utf8_do_not_panic() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let output = Command::new(env!("CARGO_BIN_EXE_clusterlab"))
        .args([OsStr::new("run"), OsStr::new("labs/first-look.toml"), OsStr::new("--"), OsStr::from_bytes(b"echo \xff")])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "\u{fffd}\n");
}

#[test]
fn test_runs_solutions_and_wrong_diagnoses() {
    let (stdout, _, status) = clusterlab(&["test", "labs/slow-rail.toml"]);
    assert_eq!(status, 0, "{stdout}");
    assert!(stdout.contains("test slow-rail seed 1 (with bad_hca = \"mlx5_3\", bad_node = \"gpu-002\"): solution 11/11 ... ok\n"), "{stdout}");
    assert!(stdout.contains(": wrong diagnosis 0/11 ... ok\n"), "{stdout}");
    assert!(stdout.contains("test slow-rail adversary: strategy a (answer everything with nothing run) earns "), "{stdout}");
    assert!(stdout.ends_with("test result: ok. 1 lab passed; 0 failed\n"), "{stdout}");

    // A solution that skips the repair, and a lab without one.
    let dir = std::env::temp_dir().join(format!("clusterlab-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/slow-rail.toml")).unwrap();
    let no_repair = source.replace("  \"dctech reseat-cable {bad_node} {bad_hca}\",\n", "");
    assert_ne!(no_repair, source);
    std::fs::write(dir.join("a-no-repair.toml"), no_repair).unwrap();
    let unsolved = source[..source.find("[solution]").unwrap()].replace("id = \"slow-rail\"", "id = \"unsolved\"");
    std::fs::write(dir.join("b-unsolved.toml"), unsolved).unwrap();
    let (stdout, _, status) = clusterlab(&["test", &dir.to_string_lossy()]);
    assert_eq!(status, 1, "{stdout}");
    // A failure names the expectation and what the cluster showed.
    assert!(stdout.contains("solution 6/11 ... FAILED\n  question `back-to-baseline` scored 0/3 with \u{201c}not yet\u{201d}: expected every fault on gpu-002 repaired; observed: not repaired: hca-link-degraded on gpu-002 mlx5_3;"), "{stdout}");
    assert!(stdout.contains("question `repeat-the-comparison` scored 0/2 with \u{201c}not yet\u{201d}: expected a successful run of all_reduce_perf once mlx5_3 of gpu-002 Active at its full rate held; observed: "), "{stdout}");
    assert!(stdout.contains("test unsolved ... FAILED\n"), "{stdout}");
    assert!(stdout.contains("has no [solution]"), "{stdout}");
    assert!(stdout.contains("test result: FAILED. 0 labs passed; 2 failed"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
