//! Errors of `rtpl parse` name what they are about, and a closed stdout ends quietly.

#[allow(dead_code)] // `data` is for the other CLI tests.
mod common;

use std::io::Read;
use std::process::{Command, Stdio};

use common::rtpl;

#[test]
fn invalid_utf8_in_the_output_names_the_file_and_the_byte() {
    let dir = std::env::temp_dir().join(format!("rtpl-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let output = dir.join("bad.txt");
    std::fs::write(&output, b"ab\xffcd").expect("write");
    let template = concat!(env!("CARGO_MANIFEST_DIR"), "/../templates/qwen3.json");
    let output = output.to_str().expect("UTF-8 path");
    let (code, stdout, stderr) = rtpl(&["parse", "--template", template, "--prefix", "", output]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr.trim(),
        format!("rtpl: {output}: parse error: invalid UTF-8 in the output at byte 2")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_stdout_ends_list_and_check_quietly() {
    let template = concat!(env!("CARGO_MANIFEST_DIR"), "/../templates/qwen3.json");
    for args in [vec!["list"], vec!["check", template, template, template]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rtpl"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rtpl runs");
        // Close the read end at once: every write of rtpl meets a broken pipe.
        drop(child.stdout.take());
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            e.read_to_string(&mut stderr).expect("stderr");
        }
        let status = child.wait().expect("rtpl exits");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
    }
}
