//! The boundaries ARCHITECTURE.md states, checked on the source itself.

use std::path::{Path, PathBuf};

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

fn src(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(relative)
}

/// The engine's layers, lowest first: model <- perf <- commands <- shell <-
/// lab, facts, grading, store <- service (and the authoring tools, which run
/// sessions to check labs), then the exports (xAPI, cmi5). A folder or file
/// names nothing above it.
const UPPER: &[&str] = &[
    "crate::perf",
    "crate::commands",
    "crate::shell",
    "crate::lab",
    "crate::facts",
    "crate::grading",
    "crate::store",
    "crate::service",
    "crate::report",
    "crate::xapi",
    "crate::cmi5",
];

/// The layers above the `n`th of `UPPER`'s order (0: the model, below them all).
const fn above(n: usize) -> &'static [&'static str] {
    UPPER.split_at(n).1
}

/// Each row: where, what it must not name, and the known exceptions (file,
/// path) with their reason in ARCHITECTURE.md.
const LAYERS: &[(&str, &[&str], &[(&str, &str)])] = &[
    ("model", above(0), &[]),
    ("perf", above(1), &[]),
    ("commands", above(2), &[]),
    ("shell", above(3), &[]),
    ("lab/mod.rs", &["crate::shell", "crate::store", "crate::service", "crate::report"], &[]),
    ("lab/evidence.rs", &["crate::shell", "crate::store", "crate::service", "crate::report"], &[]),
    ("facts.rs", &["crate::shell", "crate::store", "crate::service", "crate::report"], &[]),
    ("grading.rs", &["crate::shell", "crate::store", "crate::service", "crate::report"], &[]),
    ("store.rs", &["crate::service", "crate::report"], &[]),
];

#[test]
fn no_layer_names_one_above_it() {
    let mut found = Vec::new();
    for (place, forbidden, exceptions) in LAYERS {
        let path = src(place);
        let files = if path.is_dir() { sources(&path) } else { vec![path] };
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            let relative = file.strip_prefix(src("")).unwrap_or(&file).to_string_lossy().replace('\\', "/");
            for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim_start().starts_with("//")) {
                for path in forbidden.iter().filter(|path| line.contains(*path)) {
                    let excepted = exceptions.iter().any(|(where_, what)| relative == *where_ && line.contains(what));
                    if !excepted {
                        found.push(format!("{relative}:{}: names {path}: {}", number + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "a layer names one above it:\n{}", found.join("\n"));
}

/// Commands run other command lines through the `Runner` they are given;
/// the shell depends on the commands, never the reverse.
#[test]
fn no_module_under_commands_names_the_shell() {
    let forbidden_paths = ["crate::shell", "super::shell", "clusterlab_engine::shell"];
    let forbidden_names = ["Session", "SessionSnapshot", "Interp", "Interactive", "Nesting", "ShellState"];
    let mut found = Vec::new();
    for file in sources(&src("commands")) {
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        // Code, not comments or strings: prose and messages may say
        // "interactive" or "nesting".
        for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim_start().starts_with("//")) {
            let code: String = line.split('"').step_by(2).collect::<Vec<_>>().join(" ");
            let names: Vec<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
            let named = forbidden_names.iter().any(|name| names.contains(name));
            if named || forbidden_paths.iter().any(|path| line.contains(path)) {
                found.push(format!("{}:{}: {}", file.display(), number + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the commands tree names the shell:\n{}", found.join("\n"));
}

/// The engine is tested natively: no web framework or browser binding.
#[test]
fn the_engine_has_no_web_dependencies() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    for web in ["yew", "web-sys", "gloo", "wasm-bindgen", "js-sys"] {
        assert!(!manifest.lines().any(|line| line.trim_start().starts_with(web)), "{web} in the engine's manifest");
    }
}

/// The engine is a function of its inputs: no state hidden in globals that
/// one command, line or lab could leave behind for the next (limits and
/// budgets are carried by the values that spend them). Immutable statics
/// (signatures, tables) are fine; a thread-local, a `static mut` or a
/// static with interior mutability is not.
#[test]
fn the_engine_keeps_no_global_mutable_state() {
    let mutable = ["Cell<", "RefCell<", "Mutex<", "RwLock<", "Atomic", "OnceLock<", "LazyLock<", "OnceCell<", "Lazy<"];
    let mut found = Vec::new();
    for file in sources(&src("")) {
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim_start().starts_with("//")) {
            let code = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
            let global_mutable = code.contains("thread_local!")
                || code.starts_with("static mut ")
                || (code.starts_with("static ") && mutable.iter().any(|kind| code.split('=').next().is_some_and(|ty| ty.contains(kind))));
            if global_mutable {
                found.push(format!("{}:{}: {}", file.display(), number + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "global mutable state in the engine:\n{}", found.join("\n"));
}

/// One sort for the engine (`sort.rs`): each standard `sort*` call site
/// compiles its own copy of the sort into the browser's modules. Tests, at
/// the end of a file, may use the standard ones.
#[test]
fn the_engine_sorts_through_one_sort() {
    let calls = [".sort()", ".sort_by(", ".sort_by_key(", ".sort_unstable", ".sort_by_cached_key("];
    let mut found = Vec::new();
    for file in sources(&src("")) {
        if file.ends_with("sort.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (number, line) in code.lines().enumerate().filter(|(_, line)| !line.trim_start().starts_with("//")) {
            if calls.iter().any(|call| line.contains(call)) {
                found.push(format!("{}:{}: {}", file.display(), number + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "use crate::sort instead:\n{}", found.join("\n"));
}
