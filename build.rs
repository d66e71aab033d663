//! Compiles every lab in labs/ into the app. Each lab is loaded and checked
//! here, at build time (a broken lab fails the build with its FILE:LINE:COL
//! problems), then written in as the Rust expression of its parsed file: the
//! app needs neither the TOML parser nor the checks, which would not fit the
//! browser build's size budget.

use std::fmt::Write;
use std::path::Path;

use clusterlab_engine::lab::codegen::lab_expression;

fn main() {
    let labs = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs");
    println!("cargo:rerun-if-changed={}", labs.display());
    let mut files: Vec<_> = std::fs::read_dir(&labs)
        .expect("labs/ exists")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    let mut table = String::from("/// (file name, builder) of every lab in labs/, checked at build time.\npub static LAB_FILES: &[(&str, fn() -> ::clusterlab_engine::lab::file::LabFile)] = &[\n");
    let mut builders = String::new();
    for (at, path) in files.iter().enumerate() {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().expect("a file name").to_string_lossy();
        let source = std::fs::read_to_string(path).expect("a readable lab file");
        let expression = lab_expression(&source).unwrap_or_else(|problems| {
            let shown: Vec<String> = problems.iter().map(|p| p.render(&format!("labs/{name}"))).collect();
            panic!("a lab in labs/ has problems:\n{}", shown.join("\n"))
        });
        writeln!(table, "    ({name:?}, lab_{at}),").expect("write to a String");
        writeln!(builders, "fn lab_{at}() -> ::clusterlab_engine::lab::file::LabFile {{\n    {expression}\n}}").expect("write to a String");
    }
    table.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("labs.rs");
    std::fs::write(out, table + &builders).expect("OUT_DIR is writable");
}
