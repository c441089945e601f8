//! What the CLI tests share: their data files and running the built `rtpl`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A file of `tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Runs `rtpl ARGS`: its exit code (-1 without one), stdout and stderr.
pub fn rtpl(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rtpl"))
        .args(args)
        .output()
        .expect("rtpl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
