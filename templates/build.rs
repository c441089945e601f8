//! Validates and compiles every vendored template (`templates/*.json`) at build time: a broken
//! template fails `cargo build` with its file, line:column, JSON path and reason.
fn main() {
    template_build::Builder::new().dir(".").run();
}
