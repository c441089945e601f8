//! The parent side of both binaries: runs an engine's worker process over a job file and
//! kills it when a schema passes the time cap, then goes on with a fresh worker at the next
//! schema. The worker speaks the line protocol of `crate::harness`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

/// What happened to one schema in one engine.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The engine refused the schema (its error, on one line).
    Rejected(String),
    /// The compile did not finish within the cap.
    CompileTimeout,
    /// The compile finished (in `compile_ns`), the walks did not within the cap.
    WalkTimeout { compile_ns: u64 },
    /// The worker died (a stack overflow, an abort).
    Crashed,
    /// The worker's `RESULT` JSON.
    Done(Value),
}

/// How the time cap applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// To each step of a job: the compile, then the walks, each get the whole cap.
    PerStep(Duration),
    /// To a whole job: compile and walks together.
    PerJob(Duration),
}

/// How to start a worker: `exe --worker ENGINE --jobs FILE --start K` plus `args`.
pub struct Spawn<'a> {
    pub exe: &'a Path,
    pub engine: &'a str,
    pub jobs: &'a Path,
    pub args: &'a [String],
    /// Whether the worker's stderr goes to ours (otherwise it is dropped).
    pub stderr: bool,
}

struct Worker {
    child: Child,
    lines: Receiver<String>,
}

impl Spawn<'_> {
    fn start(&self, start: usize) -> Worker {
        let mut child = Command::new(self.exe)
            .args(["--worker", self.engine, "--jobs"])
            .arg(self.jobs)
            .args(["--start", &start.to_string()])
            .args(self.args)
            .stdout(Stdio::piped())
            .stderr(if self.stderr {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .expect("spawn worker");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Worker { child, lines: rx }
    }
}

impl Worker {
    fn next(&self, wait: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(wait)
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the worker of `spawn` over its n jobs: per job the outcome. Also returns what the
/// worker's `READY` line says after the tag (the bench's vocabulary preparation time and
/// heap), as numbers.
pub fn run_engine(spawn: &Spawn, n: usize, cap: Cap) -> (Vec<Outcome>, Vec<i64>) {
    let engine = spawn.engine;
    let mut outcomes: Vec<Option<Outcome>> = vec![None; n];
    let mut ready = Vec::new();
    let mut start = 0;
    let started = Instant::now();
    let mut last_printed = usize::MAX;
    let (cap, per_step) = match cap {
        Cap::PerStep(d) => (d, true),
        Cap::PerJob(d) => (d, false),
    };
    while start < n {
        let worker = spawn.start(start);
        match worker.next(Duration::from_secs(300)) {
            Ok(line) if line.starts_with("READY") => {
                ready = line
                    .split(' ')
                    .skip(1)
                    .map(|x| x.parse().unwrap_or(0))
                    .collect();
            }
            other => panic!("{engine}: worker did not start: {other:?}"),
        }
        let mut k = start;
        let mut compile_ns = None;
        let mut restart = false;
        let mut deadline = Instant::now() + cap;
        while k < n {
            match worker.next(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    let mut parts = line.splitn(3, ' ');
                    let tag = parts.next().unwrap_or("");
                    let idx: usize = parts
                        .next()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(usize::MAX);
                    let rest = parts.next().unwrap_or("");
                    assert_eq!(idx, k, "{engine}: out of order line {line}");
                    let done = match tag {
                        "PREPARED" => None,
                        "COMPILED" => {
                            compile_ns = rest.parse().ok();
                            None
                        }
                        "REJECTED" => Some(Outcome::Rejected(rest.to_string())),
                        "RESULT" => Some(Outcome::Done(
                            serde_json::from_str(rest).expect("result JSON"),
                        )),
                        _ => panic!("{engine}: unexpected line {line}"),
                    };
                    // A new job, or with a per-step cap a new step, gets the whole cap.
                    if per_step || done.is_some() {
                        deadline = Instant::now() + cap;
                    }
                    if let Some(outcome) = done {
                        outcomes[k] = Some(outcome);
                        k += 1;
                        compile_ns = None;
                    }
                }
                Err(e) => {
                    outcomes[k] = Some(match (e, compile_ns) {
                        (RecvTimeoutError::Timeout, None) => Outcome::CompileTimeout,
                        (RecvTimeoutError::Timeout, Some(c)) => {
                            Outcome::WalkTimeout { compile_ns: c }
                        }
                        (RecvTimeoutError::Disconnected, _) => Outcome::Crashed,
                    });
                    k += 1;
                    restart = true;
                    break;
                }
            }
            if k % 25 == 0 && k != last_printed {
                last_printed = k;
                eprint!(
                    "\r{engine}: {k}/{n} ({:.0} s)   ",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        worker.kill();
        start = k;
        if !restart {
            break;
        }
    }
    eprintln!(
        "\r{engine}: {n}/{n} done in {:.1} s        ",
        started.elapsed().as_secs_f64()
    );
    let outcomes = outcomes
        .into_iter()
        .map(|o| o.expect("every job has an outcome"))
        .collect();
    (outcomes, ready)
}
