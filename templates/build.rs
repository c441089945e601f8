//! Validates and compiles every vendored template (`templates/*.json`) at build time: a broken
//! template fails `cargo build` with its file, line:column, JSON path and reason. Also embeds
//! each template's JSON text (`SOURCES`), for tools that compile templates further (token
//! masks).
use std::fmt::Write as _;

fn main() {
    template_build::Builder::new().dir(".").run();
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .expect("templates directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = String::from(
        "/// Every vendored template's JSON text: `(file stem, text)`, in file order.\n\
         pub static SOURCES: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let _ = writeln!(
            out,
            "    ({stem:?}, include_str!({:?})),",
            f.display().to_string()
        );
    }
    out.push_str("];\n");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("sources.rs");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(out.as_str()) {
        std::fs::write(&path, out).expect("write sources.rs");
    }
}
