//! Property tests: no command line, argv or lab file makes the engine panic.

use clusterlab_engine::commands;
use clusterlab_engine::{load, Session};
use proptest::prelude::*;

fn session() -> Session {
    let lab = load("[lab]\nid = \"p\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\ncount = 1\n").unwrap();
    Session::new(lab.instantiate(7), "gpu-001")
}

fn shellish() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "nvidia-smi",
        "-L",
        "-i",
        "0",
        "--id=",
        "|",
        "||",
        "&&",
        ";",
        "&",
        "'",
        "\"",
        "$",
        "${",
        "}",
        "$?",
        "\\",
        " ",
        "wc",
        "-l",
        "echo",
        "-e",
        "\\c",
        "help",
        "hostname",
        "clear",
        "--",
        "-",
        "é",
        "\t",
        "#",
    ]);
    prop::collection::vec(pieces, 0..12).prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn no_line_panics(line in shellish()) {
        let _ = session().run(&line);
    }

    #[test]
    fn no_arbitrary_text_panics(line in "\\PC{0,40}") {
        let _ = session().run(&line);
    }

    #[test]
    fn no_argv_panics_any_command(args in prop::collection::vec("[-a-zA-Z0-9=,.]{0,8}", 0..6)) {
        for command in commands::all() {
            let line = format!("{} {}", command.signature().name, args.join(" "));
            let _ = session().run(&line);
        }
    }

    #[test]
    fn mutated_lab_files_never_panic_the_loader(cut in 0usize..400, insert in "\\PC{0,6}") {
        let source = include_str!("../../../labs/first-look.toml");
        let mut at = cut.min(source.len());
        while !source.is_char_boundary(at) {
            at -= 1;
        }
        let mutated = format!("{}{}{}", &source[..at], insert, &source[at..]);
        let _ = load(&mutated);
    }
}

proptest! {
    #[test]
    fn markdown_never_panics_and_survives_the_trip_to_lab_data(source in "[-*_`#>|{}<\\[\\]()!\\\\ a-z0-9.\n]{0,120}") {
        let doc = clusterlab_engine::lab::authoring::markdown::parse(&source);
        let text = serde_json::to_string(&doc).unwrap();
        let back: clusterlab_engine::lab::Doc = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, doc);
    }

    #[test]
    fn every_shipped_lab_survives_mutation(cut in 0usize..2000, insert in "\\PC{0,6}") {
        for source in [
            include_str!("../../../labs/slow-rail.toml"),
            include_str!("../../../labs/lost-gpu.toml"),
        ] {
            let mut at = cut.min(source.len());
            while !source.is_char_boundary(at) {
                at -= 1;
            }
            let _ = load(&format!("{}{}{}", &source[..at], insert, &source[at..]));
        }
    }
}

/// Values that tend to break parsers: empty, negative, huge, lists, units.
const AWKWARD: &[&str] = &[
    "",
    "0",
    "-1",
    "7",
    "99999999999999999999",
    "mlx5_0",
    "mlx5_9",
    "gpu-001",
    "gpu-[001-002]",
    "a,b",
    "1G",
    "8",
    "csv,noheader",
    "index,name",
    "%",
    "'",
    "--",
    "-",
    "18515",
    "1e3",
];

proptest! {
    /// Each command's own declared flags, with awkward values, in any order.
    #[test]
    fn declared_flags_with_awkward_values_never_panic(picks in prop::collection::vec((0usize..64, 0usize..AWKWARD.len()), 0..6)) {
        for command in commands::all() {
            let signature = command.signature();
            let mut line = signature.name.to_string();
            for (flag_at, value_at) in &picks {
                if let Some(flag) = signature.flags.get(flag_at % signature.flags.len().max(1)) {
                    let name = flag.long.map(|l| format!("--{l}")).or(flag.short.map(|s| format!("-{s}"))).unwrap_or_default();
                    line.push(' ');
                    line.push_str(&name);
                }
                line.push(' ');
                line.push_str(&format!("'{}'", AWKWARD[*value_at].replace('\'', "")));
            }
            let _ = session().run(&line);
        }
    }
}
