//! Times the phases of compiling the benchmark's tool schemas (schema -> HIR, HIR -> NFA,
//! NFA -> DFA, the whole `compile_schema`): `cargo run --release -p constrain --example
//! compile_profile [FILE]` (default `bench-constrain/schemas/tools.json`, a JSON array of
//! `[name, schema]` or `{"name", "schema"}` entries or bare schemas).
use std::time::{Duration, Instant};

use constrain::json::{JsonOptions, SchemaLanguage};
use constrain::template::{compile_schema, Options};
use regex_automata::dfa::{dense, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::MatchKind;
use serde_json::Value;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../bench-constrain/schemas/tools.json"
        )
        .into()
    });
    let list: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let schemas: Vec<Value> = list
        .into_iter()
        .map(|v| match v {
            Value::Array(mut a) if a.len() == 2 => a.pop().unwrap(),
            Value::Object(ref o) if o.contains_key("schema") => o["schema"].clone(),
            Value::Object(ref o) if o.contains_key("parameters") => o["parameters"].clone(),
            v => v,
        })
        .collect();
    let (mut hir_t, mut nfa_t, mut dfa_t, mut all_t) = (
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
    );
    let (mut nfa_states, mut dfa_states, mut table_states) = (0usize, 0usize, 0usize);
    let mut alls = Vec::new();
    for schema in &schemas {
        let t = Instant::now();
        let Ok(hir) = SchemaLanguage::new(schema, JsonOptions::default()).compile() else {
            continue;
        };
        hir_t += t.elapsed();
        let t = Instant::now();
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().shrink(false))
            .build_from_hir(&hir)
            .unwrap();
        nfa_t += t.elapsed();
        nfa_states += nfa.states().len();
        let t = Instant::now();
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .match_kind(MatchKind::All)
                    .minimize(false)
                    .byte_classes(true),
            )
            .build_from_nfa(&nfa)
            .unwrap();
        dfa_t += t.elapsed();
        dfa_states += dfa.memory_usage() / (4 * dfa.stride());
        let t = Instant::now();
        let c = compile_schema(Some(schema), &Options::default()).unwrap();
        let e = t.elapsed();
        all_t += e;
        alls.push(e);
        table_states += c.machine.table.len();
    }
    if std::env::var_os("ONLY_HIR").is_some() {
        for _ in 0..20 {
            for schema in &schemas {
                let _ = SchemaLanguage::new(schema, JsonOptions::default()).compile();
            }
        }
        return;
    }
    if std::env::var_os("ONLY_COMPILE").is_some() {
        let t = Instant::now();
        for _ in 0..5 {
            for schema in &schemas {
                let _ = compile_schema(Some(schema), &Options::default());
            }
        }
        println!("5 rounds {:?}", t.elapsed());
    }
    alls.sort();
    let n = alls.len() as u32;
    println!("{n} schemas; per schema: hir {:?}, nfa {:?} ({} states), dfa {:?} ({} states), compile_schema {:?} ({} states), p50 {:?}",
        hir_t / n, nfa_t / n, nfa_states / n as usize, dfa_t / n, dfa_states / n as usize, all_t / n, table_states / n as usize, alls[alls.len() / 2]);
}
