//! Compiles every lab in labs/ into the app: the site is static and offline,
//! so the catalog is fixed at build time.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let labs = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs");
    println!("cargo:rerun-if-changed={}", labs.display());
    let mut files: Vec<_> = std::fs::read_dir(&labs)
        .expect("labs/ exists")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    let mut code = String::from("/// (file name, TOML source) of every lab in labs/.\npub static LAB_SOURCES: &[(&str, &str)] = &[\n");
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().expect("a file name").to_string_lossy();
        writeln!(code, "    ({name:?}, include_str!({:?})),", path.display().to_string()).expect("write to a String");
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("labs.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
