//! Percentiles and the units numbers are printed in.

use serde_json::Value;

/// The `q` quantile (0..=1) of `sorted` by the nearest-rank method (0 when empty).
pub fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// The median of `values` (the lower one of an even count; 0 when empty), sorting them.
pub fn median_i(values: &mut [i64]) -> i64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    values[(values.len() - 1) / 2]
}

/// The integer average of `v` (0 when empty).
pub fn avg(v: &[u64]) -> u64 {
    if v.is_empty() {
        0
    } else {
        v.iter().sum::<u64>() / v.len() as u64
    }
}

/// Nanoseconds in the unit that suits them (ns, µs, ms, s).
pub fn fmt_ns(ns: u64) -> String {
    let ns = ns as f64;
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// Bytes in KiB or MiB.
pub fn fmt_bytes(b: i64) -> String {
    let f = b as f64;
    if f.abs() >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", f / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", f / 1024.0)
    }
}

/// The unsigned integers of a JSON array (others skipped; empty when not an array).
pub fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}
