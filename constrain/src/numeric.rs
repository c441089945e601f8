//! Numbers as exact languages: the JSON number texts of general mode and automata for
//! bounds, integrality and `multipleOf`, built directly as tables (no regex, no floating
//! point).
//!
//! General mode writes numbers in the forms serde_json (through ryu) writes them, so that
//! each value has few spellings and every predicate below is exact over them:
//!
//! * integer: `0|-?[1-9][0-9]*` from `i64::MIN` to `u64::MAX` (serde_json reads them
//!   exactly; `-0` is not written: it reads as a double); up to [`LOOSE_INT_DIGITS`] (39)
//!   digits where nothing but bounds within ±2^53 compares the number (a double reader
//!   keeps such an integer on the same side of them; Python's reads it exactly), except
//!   where a negated `const`/`enum` holding a number excludes values (general mode cuts
//!   integers past `u64::MAX`/`i64::MIN` there: [`crate::json::doubles_distinct_table`]);
//! * decimal: `-?(0|[1-9][0-9]*)\.[0-9]+` with at most [`SIGNIFICANT_DIGITS`] (15) digits
//!   from the first non-zero one (a number compared with nothing or only with inclusive
//!   bounds, [`PLAIN_DIGITS`]: 17, the shortest text of any double) and at most
//!   [`LEADING_ZEROS`] (6) zeros after the point before it;
//! * scientific: a normalized mantissa `[1-9](\.[0-9]*[1-9])?` (at most 15 digits, or 17 as
//!   above, the last one not zero), `e`, an optional sign and a non-zero exponent (without
//!   leading zeros, but for Python's one-zero padding: `1e-05`) from
//!   -307 to 308 (308 up to the largest double, `1.7976931348623157e+308`): `1e+308` as
//!   serde_json writes it, `1e308`, `1.5e-7`; from -324 (the smallest subnormal, `5e-324`)
//!   where 17 digits are written.
//!
//! So every written number is one a reader of `u64`/`i64`/`f64` sees exactly, in the same
//! order: 15 significant digits give every decimal its own double, and no number overflows
//! or falls among the subnormals. Where 17 digits, subnormals or long integers are
//! written, a reader may round a text, but rounding keeps the order, so the inclusive
//! bounds that alone compare them still hold. A validator on doubles (the `jsonschema`
//! crate, the structured-outputs checker) agrees with the exact decimal verdicts below.
//!
//! `E` may stand for `e` (serde_json writes `e`; instances written by other tools may not).
//! Not written: exponents with more than one leading zero or `e0`, mantissas like `10e3` or
//! `0.5e1`; for integers alone, scientific forms with fraction digits (`1.5e+20`). Over these forms the number machine ([`NumberSpec::table`]) decides exactly:
//! the value against inclusive or exclusive decimal bounds of any size (compared digit by
//! digit: a bound beyond the written forms admits all of them or none), whether the value
//! is an integer (draft 6 on: `1.0` and `1.5e1` are integers; draft 4: only the integer
//! form), and divisibility by decimal `multipleOf`s (a residue automaton over the digits;
//! with a `multipleOf` the scientific forms are not written, since their residues depend on
//! the exponent).

use std::cmp::Ordering;

use crate::dfa::{BuildError, Limits, Table};

/// Most digits of the integer part of a written number (every `u64` and `i64` fits).
pub const INT_DIGITS: usize = 20;
/// Most zeros after the point before the first non-zero digit of a decimal (ryu writes at
/// most 4: `0.0000123`; smaller numbers in scientific form).
pub const LEADING_ZEROS: u8 = 6;
/// Most digits of the fraction of a written number: the leading zeros and the significant
/// digits.
pub const FRAC_DIGITS: usize = LEADING_ZEROS as usize + SIGNIFICANT_DIGITS as usize;
/// Most digits of a written exponent (ryu writes `e-324` to `e308`).
pub const EXP_DIGITS: usize = 3;

/// An exact decimal number: `(-1)^neg * 0.d1 d2 ... dn * 10^point`, with no leading or
/// trailing zero digit (zero: no digits, `neg` false).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    neg: bool,
    digits: Vec<u8>,
    point: i64,
}

impl Decimal {
    /// Zero.
    pub fn zero() -> Self {
        Self {
            neg: false,
            digits: Vec::new(),
            point: 0,
        }
    }

    /// Reads a JSON number text (or what serde_json prints for a number: `1e308`, `0.1`).
    /// `None` for anything else, and for exponents past ±10^15.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let mut i = 0;
        let neg = bytes.first() == Some(&b'-');
        if neg {
            i += 1;
        }
        let mut mantissa = Vec::new();
        let mut int_len: i64 = 0;
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            mantissa.push(bytes[i] - b'0');
            int_len += 1;
            i += 1;
        }
        if i == start {
            return None;
        }
        if i < bytes.len() && bytes[i] == b'.' {
            i += 1;
            let f = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                mantissa.push(bytes[i] - b'0');
                i += 1;
            }
            if i == f {
                return None;
            }
        }
        let mut exp: i64 = 0;
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            i += 1;
            let eneg = match bytes.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let e = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                exp = exp.checked_mul(10)?.checked_add((bytes[i] - b'0') as i64)?;
                if exp > 1_000_000_000_000_000 {
                    return None;
                }
                i += 1;
            }
            if i == e {
                return None;
            }
            if eneg {
                exp = -exp;
            }
        }
        if i != bytes.len() {
            return None;
        }
        // Strip leading zeros (each moves the point left) and trailing zeros.
        let lead = mantissa.iter().take_while(|&&d| d == 0).count();
        let digits: Vec<u8> = mantissa[lead..].to_vec();
        let trail = digits.iter().rev().take_while(|&&d| d == 0).count();
        let digits = digits[..digits.len() - trail].to_vec();
        if digits.is_empty() {
            return Some(Self::zero());
        }
        Some(Self {
            neg,
            digits,
            point: int_len - lead as i64 + exp,
        })
    }

    /// From a JSON number: its shortest text, as serde_json prints it; a double past ±2^53
    /// (below 10^20) is its exact value instead, the integer Python's reader compares
    /// (`9.223372036854776e18` is 9223372036854775808, not ...6000: cold review).
    pub fn of(n: &serde_json::Number) -> Option<Self> {
        if n.is_f64() {
            if let Some(f) = n.as_f64().filter(|f| in_double_gap(f.abs())) {
                return Self::of_integral_f64(f);
            }
        }
        Self::parse(&n.to_string())
    }

    /// The exact value of a double holding an integer (Rust prints its every digit).
    pub(crate) fn of_integral_f64(f: f64) -> Option<Self> {
        Self::parse(&format!("{f:.0}"))
    }

    /// The double nearest the value (correctly rounded, as Rust's and Python's readers
    /// round; infinite past the largest).
    pub fn to_f64(&self) -> f64 {
        self.to_string().parse().unwrap_or(f64::NAN)
    }

    /// Whether an integer value past ±2^53 (below 10^20) is a double itself: then texts with
    /// a fraction or an exponent that read as that double are equal to it for Python's
    /// `jsonschema` (`1.23456789012345e18 == 1234567890123450112`).
    fn is_double_in_gap(&self) -> bool {
        let f = self.to_f64();
        self.is_integer()
            && in_double_gap(f.abs())
            && Self::of_integral_f64(f).is_some_and(|d| d == *self)
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the value is negative.
    pub fn is_negative(&self) -> bool {
        self.neg
    }

    /// Whether the value is an integer.
    pub fn is_integer(&self) -> bool {
        self.point >= self.digits.len() as i64
    }

    /// The absolute value's integer part as a `u64`, saturating.
    pub fn to_u64_saturating(&self) -> u64 {
        match self.int_digits(INT_DIGITS) {
            Some(d) => d
                .iter()
                .try_fold(0u64, |acc, &x| acc.checked_mul(10)?.checked_add(x as u64))
                .unwrap_or(u64::MAX),
            None => u64::MAX,
        }
    }

    /// Whether every integer is a multiple of this (positive) value: it is `1/k` for an
    /// integer `k`.
    pub fn divides_one(&self) -> bool {
        Divisor::new(self).is_some_and(|d| d.divides_one())
    }

    /// The value times `10^shift` as an `i128`, when that is an integer that fits.
    fn scaled_i128(&self, shift: i64) -> Option<i128> {
        let mut v: i128 = 0;
        for &d in &self.digits {
            v = v.checked_mul(10)?.checked_add(d as i128)?;
        }
        let e = self.point - self.digits.len() as i64 + shift;
        if e < 0 {
            return None;
        }
        let v = v.checked_mul(10i128.checked_pow(u32::try_from(e).ok()?)?)?;
        Some(if self.neg { -v } else { v })
    }

    /// Digits after the point in the shortest decimal form.
    fn scale(&self) -> i64 {
        (self.digits.len() as i64 - self.point).max(0)
    }

    /// The multiples of `self` (positive) between two bounds (`(value, exclusive)`), when
    /// there are at most `max` of them and the arithmetic fits in `i128`: what a `multipleOf`
    /// too fine for a residue automaton leaves in a bounded range.
    pub fn multiples_between(&self, lo: &Bound, hi: &Bound, max: usize) -> Option<Vec<Decimal>> {
        let shift = self.scale().max(lo.0.scale()).max(hi.0.scale());
        let (q, l, h) = (
            self.scaled_i128(shift)?,
            lo.0.scaled_i128(shift)?,
            hi.0.scaled_i128(shift)?,
        );
        if q <= 0 || l > h {
            return Some(Vec::new());
        }
        let first = l.div_euclid(q) + i128::from(l.rem_euclid(q) != 0);
        let last = h.div_euclid(q);
        if last < first || (last - first) as u128 >= max as u128 {
            return (last < first).then(Vec::new);
        }
        let mut out = Vec::new();
        for k in first..=last {
            let v = k.checked_mul(q)?;
            if (lo.1 && v == l) || (hi.1 && v == h) {
                continue;
            }
            out.push(Decimal::parse(&format!("{v}e-{shift}"))?);
        }
        Some(out)
    }

    /// The value negated.
    pub fn negated(&self) -> Self {
        Self {
            neg: !self.neg && !self.is_zero(),
            ..self.clone()
        }
    }

    /// The digits of the integer part of the absolute value (empty for 0 <= |x| < 1), when
    /// it has at most `cap` digits; `None` when it has more.
    fn int_digits(&self, cap: usize) -> Option<Vec<u8>> {
        if self.point <= 0 {
            return Some(Vec::new());
        }
        if self.point as u64 > cap as u64 {
            return None;
        }
        let p = self.point as usize;
        Some(
            (0..p)
                .map(|i| self.digits.get(i).copied().unwrap_or(0))
                .collect(),
        )
    }

    /// The digits of the fraction of the absolute value (no trailing zeros), when it has at
    /// most `cap` digits.
    fn frac_digits(&self, cap: usize) -> Option<Vec<u8>> {
        let n = self.digits.len() as i64;
        if self.point >= n {
            return Some(Vec::new());
        }
        let zeros = (-self.point).max(0);
        let len = zeros + n - self.point.max(0);
        if len as u64 > cap as u64 {
            return None;
        }
        let mut out = vec![0u8; zeros as usize];
        out.extend(&self.digits[self.point.max(0) as usize..]);
        Some(out)
    }

    /// Compares two decimals.
    pub fn cmp_value(&self, other: &Self) -> Ordering {
        let sign = |d: &Self| {
            if d.is_zero() {
                0
            } else if d.neg {
                -1
            } else {
                1
            }
        };
        let (a, b) = (sign(self), sign(other));
        if a != b {
            return a.cmp(&b);
        }
        if a == 0 {
            return Ordering::Equal;
        }
        let abs = self
            .point
            .cmp(&other.point)
            .then_with(|| self.digits.cmp(&other.digits));
        if a < 0 {
            abs.reverse()
        } else {
            abs
        }
    }

    /// `self = coefficient * 10^-scale` with an integer coefficient of at most 18 digits and
    /// `scale >= 0`, or `coefficient * 10^shift` for powers above: `(coefficient, scale)`
    /// where a negative scale multiplies. `None` when the coefficient is too large.
    fn as_scaled(&self) -> Option<(u64, i64)> {
        if self.digits.len() > 18 {
            return None;
        }
        let mut c: u64 = 0;
        for &d in &self.digits {
            c = c * 10 + d as u64;
        }
        // value = c * 10^(point - len)
        Some((c, self.digits.len() as i64 - self.point))
    }

    /// The texts this value has among the written forms (see the module documentation), as
    /// a regular expression: the integer form (integers), the decimal form with any number
    /// of trailing zeros, the scientific form. Empty when the value has no written form.
    pub fn spellings(&self) -> String {
        let sign = if self.neg { "-" } else { "" };
        let sig = SIGNIFICANT_DIGITS as usize;
        let mut out = Vec::new();
        if self.is_zero() {
            return format!("0|-?0\\.0{{1,{LEADING_ZEROS}}}");
        }
        if let (Some(int), Some(frac)) =
            (self.int_digits(INT_DIGITS), self.frac_digits(FRAC_DIGITS))
        {
            let text = |d: &[u8]| -> String { d.iter().map(|d| (b'0' + d) as char).collect() };
            let int_text = if int.is_empty() {
                "0".to_string()
            } else {
                text(&int)
            };
            if frac.is_empty() {
                let largest = Decimal::parse(if self.neg {
                    "-9223372036854775808"
                } else {
                    "18446744073709551615"
                })
                .unwrap_or_else(Decimal::zero);
                let within = if self.neg {
                    self.cmp_value(&largest) != Ordering::Less
                } else {
                    self.cmp_value(&largest) != Ordering::Greater
                };
                if within {
                    out.push(format!("{sign}{int_text}"));
                }
                if int.len() < sig {
                    out.push(format!("{sign}{int_text}\\.0{{1,{}}}", sig - int.len()));
                }
            } else {
                // Significant digits: from the first non-zero one on, appended zeros too.
                let leading = frac.iter().take_while(|&&d| d == 0).count();
                let used = if int.is_empty() {
                    frac.len() - leading
                } else {
                    int.len() + frac.len()
                };
                if used <= sig && (!int.is_empty() || leading <= LEADING_ZEROS as usize) {
                    let more = (sig - used).min(FRAC_DIGITS - frac.len());
                    out.push(format!("{sign}{int_text}\\.{}0{{0,{more}}}", text(&frac)));
                }
            }
        }
        if let Some(s) = self.scientific() {
            out.push(format!("{sign}{s}"));
        }
        // An integer past 2^53 that is a double: the scientific form of its shortest text
        // too, where that has at most 15 digits (the only written text reading as it).
        if self.is_double_in_gap() {
            let shortest = Self::parse(&format!("{:e}", self.to_f64().abs()));
            if let Some(s) = shortest
                .filter(|d| *d != *self)
                .and_then(|d| d.scientific())
            {
                out.push(format!("{sign}{s}"));
            }
        }
        out.join("|")
    }

    /// The scientific form of a non-zero value, if it has one.
    fn scientific(&self) -> Option<String> {
        if self.is_zero() || self.digits.len() > SIGNIFICANT_DIGITS as usize {
            return None;
        }
        let e = self.point - 1;
        // The exponent 308 up to the largest double (digits without trailing zeros compare
        // as sequences).
        let max: Vec<u8> = MAX_MANTISSA.iter().map(|c| c - b'0').collect();
        if e == 0 || !(-307..=308).contains(&e) || (e == 308 && self.digits > max) {
            return None;
        }
        let mut s = String::new();
        s.push((b'0' + self.digits[0]) as char);
        if self.digits.len() > 1 {
            s.push_str("\\.");
            s.extend(self.digits[1..].iter().map(|d| (b'0' + d) as char));
        }
        // Also with one padding zero, as the lexer reads it (Python's `1e-05`; `1e010`
        // too, which a negated `const: 1e10` must cut: cold review).
        let pad = "0?";
        if e > 0 {
            s.push_str(&format!("[eE]\\+?{pad}{e}"));
        } else {
            s.push_str(&format!("[eE]-{pad}{}", -e));
        }
        Some(s)
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let digits: String = self.digits.iter().map(|d| (b'0' + d) as char).collect();
        write!(
            f,
            "{}0.{digits}e{}",
            if self.neg { "-" } else { "" },
            self.point
        )
    }
}

/// A bound on the value: `(bound, exclusive)`.
pub type Bound = (Decimal, bool);

/// Magnitudes past 2^53 (where doubles skip integers) and below 10^20 (past the longest
/// integer text written): a text with a fraction or an exponent reads there as a double that
/// may differ from its decimal value, while an integer text stays exact.
fn in_double_gap(abs: f64) -> bool {
    abs > 9_007_199_254_740_992.0 && abs < 1e20
}

/// A bound past ±2^53 (below 10^20) moved inward to the nearest double and made inclusive
/// (`upper`: an upper bound), for the texts with a fraction or an exponent
/// ([`NumberSpec::table`]). Python's `jsonschema` compares such a text as the double it
/// reads (an integer text exactly): reading is monotone, so a text within a double bound
/// reads as a double within it, and none is written whose double falls beyond the bound
/// (`1.23456789012345e18`, the double ...112, under `exclusiveMaximum:
/// 1234567890123450100`: cold review). Such texts between the double and the bound are
/// refused (valid ones, rare).
fn double_bound(b: &Option<Bound>, upper: bool) -> Option<Bound> {
    let (v, exclusive) = b.as_ref()?;
    let mut f = v.to_f64();
    if !in_double_gap(f.abs()) {
        return Some((v.clone(), *exclusive));
    }
    let exact = Decimal::of_integral_f64(f)?;
    let order = exact.cmp_value(v);
    if upper && (order == Ordering::Greater || (order == Ordering::Equal && *exclusive)) {
        f = f.next_down();
    } else if !upper && (order == Ordering::Less || (order == Ordering::Equal && *exclusive)) {
        f = f.next_up();
    }
    Some((Decimal::of_integral_f64(f)?, false))
}

/// What the number machine admits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NumberSpec {
    /// Values that are integers (draft 4: texts of the integer form).
    pub integers: bool,
    /// Values that are not integers (draft 4: texts of the decimal and scientific forms).
    pub fractions: bool,
    /// Draft 4's reading of `integer`: by the written form, not the value (scientific forms
    /// of integer values, which draft 4 readers class differently, are not written).
    pub draft4: bool,
    /// Lower bound.
    pub lo: Option<Bound>,
    /// Upper bound.
    pub hi: Option<Bound>,
    /// The value is a multiple of each (positive).
    pub multiple_of: Vec<Decimal>,
    /// The value is a multiple of none of these (positive).
    pub not_multiple_of: Vec<Decimal>,
}

/// Why a number language cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumberError {
    /// A `multipleOf` whose digits do not fit a residue automaton (more than 18 significant
    /// digits, or a value that is not positive).
    Divisor(Decimal),
    /// A `multipleOf` whose residues are too many to build (more than `MAX_RESIDUES`
    /// residues times scaled digit positions).
    TooFine,
    /// The table passed the limits.
    Build(BuildError),
}

/// Most number tables [`NumberSpec::cached_table`] keeps.
const NUMBER_CACHE: usize = 512;

/// Most residues times scaled digit positions of one `multipleOf` (the residue automaton has
/// about that many states per position of the number).
const MAX_RESIDUES: u64 = 20_000;

/// A residue tracker for one divisor `q = coefficient * 10^-scale` (scale may be negative:
/// a multiplier), applied to the digits of the absolute value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Divisor {
    /// Modulus of the scaled value.
    modulus: u64,
    /// Fraction digits that count toward the scaled integer (`scale`, at least 0).
    scale: u64,
}

impl Divisor {
    /// Whether every integer is a multiple: `q = 1/k` for an integer `k`.
    fn divides_one(&self) -> bool {
        let mut p = 1 % self.modulus;
        for _ in 0..self.scale {
            p = p * 10 % self.modulus;
        }
        p == 0
    }

    fn new(q: &Decimal) -> Option<Self> {
        if q.is_zero() || q.neg {
            return None;
        }
        let (c, scale) = q.as_scaled()?;
        if scale >= 0 {
            Some(Self {
                modulus: c,
                scale: scale as u64,
            })
        } else {
            // q = c * 10^k: the value must be an integer divisible by c * 10^k.
            let k = (-scale) as u32;
            let m = 10u64.checked_pow(k).and_then(|p| p.checked_mul(c))?;
            Some(Self {
                modulus: m,
                scale: 0,
            })
        }
    }
}

/// Where the lexer of a number text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Lex {
    Start,
    Minus,
    /// The integer part `0`.
    Zero,
    /// Integer digits read (the first not zero).
    Int(u8),
    Dot,
    /// Fraction digits read; whether the last was not zero.
    Frac(u8, bool),
    E,
    EMinus,
    EPlus,
    /// A `0` right after `e`, `e-` or `e+`: Python's `repr` pads exponents to two digits
    /// (`1e-05`); one non-zero digit must follow.
    ExpPad,
    /// Exponent digits read (from the first non-zero one).
    Exp(u8),
}

/// A streaming comparison of the absolute value with a bound's absolute value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cmp {
    /// Integer digits read, capped at the bound's integer digits + 1.
    int_len: u16,
    /// The integer digits read against the bound's first ones.
    int_ord: Ordering,
    /// Fraction digits compared (capped at the bound's fraction digits).
    frac_pos: u16,
    frac_ord: Ordering,
    /// The mantissa digits against the bound's significant digits (scientific form).
    mant_pos: u16,
    mant_ord: Ordering,
    /// Exponent digits read, capped, and their order against the bound's exponent digits.
    exp_len: u8,
    exp_ord: Ordering,
}

/// A bound prepared for streaming comparison.
struct BoundDigits {
    zero: bool,
    /// Integer digits of |b| (`None`: more than can be written, so |v| < |b| in the integer
    /// and decimal forms).
    int: Option<Vec<u8>>,
    /// Fraction digits of |b| (`None`: more than can be written; only their prefix matters,
    /// kept as the full list).
    frac: Vec<u8>,
    /// Significant digits of |b|.
    sig: Vec<u8>,
    /// Exponent of |b| in scientific form (`point - 1`).
    exp: i64,
    /// The digits of `|exp|`.
    exp_digits: Vec<u8>,
}

impl BoundDigits {
    fn new(b: &Decimal) -> Self {
        let frac = if b.point >= b.digits.len() as i64 {
            Vec::new()
        } else {
            let zeros = (-b.point).max(0) as usize;
            let mut f = vec![0u8; zeros.min(FRAC_DIGITS + 1)];
            if zeros <= FRAC_DIGITS {
                f.extend(&b.digits[b.point.max(0) as usize..]);
            }
            f
        };
        Self {
            zero: b.is_zero(),
            int: b.int_digits(INT_DIGITS),
            frac,
            sig: b.digits.clone(),
            exp: b.point - 1,
            exp_digits: (b.point - 1)
                .unsigned_abs()
                .to_string()
                .bytes()
                .map(|c| c - b'0')
                .collect(),
        }
    }
}

impl Cmp {
    fn new() -> Self {
        Self {
            int_len: 0,
            int_ord: Ordering::Equal,
            frac_pos: 0,
            frac_ord: Ordering::Equal,
            mant_pos: 0,
            mant_ord: Ordering::Equal,
            exp_len: 0,
            exp_ord: Ordering::Equal,
        }
    }

    /// A mantissa digit: of the integer part (`int`: not the lone `0`) or of the fraction;
    /// `sci`: a scientific mantissa is still possible (the integer part is one digit).
    fn digit(mut self, b: &BoundDigits, d: u8, int: bool, sci: bool) -> Self {
        let step = |pos: &mut u16, ord: &mut Ordering, of: &[u8]| {
            if *ord == Ordering::Equal {
                *ord = match of.get(*pos as usize) {
                    Some(&x) => d.cmp(&x),
                    None if d != 0 => Ordering::Greater,
                    None => Ordering::Equal,
                };
            }
            if (*pos as usize) < of.len() {
                *pos += 1;
            }
        };
        if int {
            if let Some(bi) = &b.int {
                if (self.int_len as usize) < bi.len() && self.int_ord == Ordering::Equal {
                    self.int_ord = d.cmp(&bi[self.int_len as usize]);
                }
                if (self.int_len as usize) <= bi.len() {
                    self.int_len += 1;
                }
            }
        } else {
            step(&mut self.frac_pos, &mut self.frac_ord, &b.frac);
        }
        // The scientific mantissa: one non-zero integer digit and the fraction digits.
        if sci {
            step(&mut self.mant_pos, &mut self.mant_ord, &b.sig);
        } else {
            self.mant_pos = 0;
            self.mant_ord = Ordering::Equal;
        }
        self
    }

    /// An exponent digit.
    fn exp_digit(mut self, b: &BoundDigits, d: u8) -> Self {
        let eb = &b.exp_digits;
        if (self.exp_len as usize) < eb.len() && self.exp_ord == Ordering::Equal {
            self.exp_ord = d.cmp(&eb[self.exp_len as usize]);
        }
        if (self.exp_len as usize) <= eb.len() {
            self.exp_len += 1;
        }
        self
    }

    /// Whether the integer digits read already put |v| above |b| in the integer and decimal
    /// forms, whatever digits follow (more integer digits and any fraction digits only add
    /// to it): what [`Self::plain`] finds Greater on the integer part alone.
    fn int_above(&self, b: &BoundDigits) -> bool {
        if b.zero {
            // An integer digit is the first of a non-zero integer part (a lone `0` is not
            // one), counted when the bound's integer digits are known.
            return b.int.is_some() && self.int_len > 0;
        }
        let Some(bi) = &b.int else {
            return false;
        };
        match (self.int_len as usize).cmp(&bi.len()) {
            Ordering::Greater => true,
            Ordering::Equal => self.int_ord == Ordering::Greater,
            Ordering::Less => false,
        }
    }

    /// |v| against |b| for a value in integer or decimal form.
    fn plain(&self, b: &BoundDigits, value_zero: bool) -> Ordering {
        if b.zero {
            return if value_zero {
                Ordering::Equal
            } else {
                Ordering::Greater
            };
        }
        let Some(bi) = &b.int else {
            return Ordering::Less;
        };
        let int = match (self.int_len as usize).cmp(&bi.len()) {
            Ordering::Equal => self.int_ord,
            other => other,
        };
        if int != Ordering::Equal {
            return int;
        }
        if self.frac_ord == Ordering::Equal && (self.frac_pos as usize) < b.frac.len() {
            // The bound has non-zero digits left.
            return Ordering::Less;
        }
        self.frac_ord
    }

    /// |v| against |b| for a value in scientific form with exponent sign `eneg`.
    fn scientific(&self, b: &BoundDigits, eneg: bool) -> Ordering {
        if b.zero {
            return Ordering::Greater;
        }
        let eb_len = b.exp_digits.len();
        let abs = match (self.exp_len as usize).cmp(&eb_len) {
            Ordering::Equal => self.exp_ord,
            other => other,
        };
        // The exponent against the bound's, with signs (the value's exponent is not zero).
        let exp = match (eneg, b.exp < 0) {
            (false, false) => abs,
            (true, true) => abs.reverse(),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
        };
        if exp != Ordering::Equal {
            return exp;
        }
        if self.mant_ord == Ordering::Equal && (self.mant_pos as usize) < b.sig.len() {
            return Ordering::Less;
        }
        self.mant_ord
    }
}

/// The lexer of the written number forms (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Written {
    lex: Lex,
    /// Untyped values' numbers: at most [`INT_DIGITS`] integer digits (a longer integer
    /// would be read as a double, not exactly), any number of fraction digits, no count of
    /// significant digits (nothing compares them; where a difference does, general mode
    /// cuts their texts to [`SIGNIFICANT_DIGITS`] with [`crate::json::doubles_distinct_table`]).
    loose: bool,
    /// Integer texts of up to [`LOOSE_INT_DIGITS`] digits, as in untyped values: set where
    /// only bounds within ±2^53 compare the number (a double reader keeps such a text on
    /// the same side of them, and Python's reads it exactly). A negated `const`/`enum` is
    /// not part of the spec: general mode cuts these texts where one holds a number.
    long: bool,
    /// A `-` was read.
    neg: bool,
    /// The integer part is one non-zero digit (a scientific mantissa may follow).
    int1: bool,
    /// The scientific mantissa's digits against [`MAX_MANTISSA`]'s (the largest double's):
    /// the exponent 308 is written only where they are not greater.
    top: Ordering,
    /// How many of them were compared while `top` is equal (0 otherwise, so that states
    /// past the comparison merge).
    top_at: u8,
    /// Mantissa digits from the first non-zero one.
    sig: u8,
    /// The most of them ([`SIGNIFICANT_DIGITS`], or [`PLAIN_DIGITS`] for numbers nothing
    /// but inclusive bounds compares).
    max_sig: u8,
    /// Zeros after the point before the first non-zero digit (integer part `0`).
    zeros: u8,
    /// The integer digits against the first ones of the largest integer of the sign.
    lim: Ordering,
    /// Fraction digits of the scientific mantissa (set at `e`).
    sci_frac: u8,
    /// Exponent sign, digits read and their order against the first ones of the largest
    /// exponent of the sign.
    eneg: bool,
    elen: u8,
    eord: Ordering,
}

/// Most significant digits of a decimal or scientific number compared with bounds or
/// divisors (every such decimal has its own double, in the same order).
pub const SIGNIFICANT_DIGITS: u8 = 15;
/// Most significant digits of a number nothing compares (`type: number` alone): the
/// shortest text of every double fits (`3.141592653589793`, `0.30000000000000004`).
pub const PLAIN_DIGITS: u8 = 17;
/// The largest integers written: `u64::MAX`, and `i64::MIN` below zero.
pub(crate) const LARGEST: [&[u8]; 2] = [b"18446744073709551615", b"9223372036854775808"];
/// The largest exponents written: `308` (a mantissa up to [`MAX_MANTISSA`]) and `-307`;
/// numbers compared with nothing or with inclusive bounds alone go on to
/// [`SUBNORMAL_EXP`].
const LARGEST_EXP: [&[u8]; 2] = [b"308", b"307"];
/// The most negative exponent of a number compared with nothing or with inclusive bounds
/// alone (untyped values, [`PLAIN_DIGITS`]): `-324`, as ryu and Python write the smallest
/// subnormal (`5e-324`). A double reader rounds such a text to a subnormal or to zero,
/// and rounding keeps the order, so an inclusive bound still holds of what it reads; an
/// exclusive one may not (`1e-320` and `1.00001e-320` read as the same double).
const SUBNORMAL_EXP: &[u8] = b"324";
/// The significant digits of the largest double, `1.7976931348623157e308` (its shortest
/// text, as Python's `repr` and ryu write it): with the exponent 308, a mantissa up to
/// these digits reads as a finite double; `1.7976931348623159e308` reads as infinity in
/// Python and is an error to serde_json.
const MAX_MANTISSA: &[u8] = b"17976931348623157";
/// Most integer digits of an untyped value's number, and of a typed integer that only
/// bounds within ±2^53 compare (`Written::long`): 39, every `u128`/`i128` (past
/// `u64`, a reader without big integers reads it as the nearest double; Python's reads it
/// exactly). Each digit is a reader state in every nesting of an untyped value, so the
/// count stops there rather than at the 309 digits of the largest double.
pub const LOOSE_INT_DIGITS: usize = 39;

/// What a byte was to [`Written`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Sign,
    /// A digit of the integer part (not the lone `0`).
    IntDigit(u8),
    /// The lone `0` integer part.
    Zero,
    Dot,
    /// The k-th fraction digit (from 1).
    FracDigit(u8, u8),
    E,
    /// The exponent's sign (`true`: `-`).
    ExpSign(bool),
    /// The padding `0` of a one-digit exponent (`1e-05`); nothing to count.
    ExpPad,
    ExpDigit(u8),
}

/// `ord` after one more digit `d` compared with `limit[at]` (a longer text is past it).
pub(crate) fn against(ord: Ordering, limit: &[u8], at: usize, d: u8) -> Ordering {
    match (ord, limit.get(at)) {
        (Ordering::Equal, Some(&x)) => d.cmp(&(x - b'0')),
        (o, Some(_)) => o,
        (_, None) => Ordering::Greater,
    }
}

impl Written {
    /// Before the first byte of a number of untyped values (see `loose`).
    pub(crate) fn start_loose() -> Self {
        Self {
            loose: true,
            ..Self::start()
        }
    }

    /// Before the first byte.
    pub(crate) fn start() -> Self {
        Self {
            lex: Lex::Start,
            loose: false,
            long: false,
            neg: false,
            int1: false,
            top: Ordering::Equal,
            top_at: 0,
            sig: 0,
            max_sig: SIGNIFICANT_DIGITS,
            zeros: 0,
            lim: Ordering::Equal,
            sci_frac: 0,
            eneg: false,
            elen: 0,
            eord: Ordering::Equal,
        }
    }

    /// Whether the bytes read are a whole number.
    pub(crate) fn complete(&self) -> bool {
        match self.lex {
            // `-0` is read as a double (`-0.0`), not as an integer.
            Lex::Zero => !self.neg,
            Lex::Frac(..) => true,
            Lex::Int(k) => {
                let limit = LARGEST[self.neg as usize];
                self.loose
                    || self.long
                    || (k as usize) < limit.len()
                    || self.lim != Ordering::Greater
            }
            Lex::Exp(k) => {
                let limit = self.largest_exp();
                (k as usize) < limit.len()
                    || self.eord == Ordering::Less
                    || (self.eord == Ordering::Equal
                        && (self.eneg || self.top != Ordering::Greater))
            }
            _ => false,
        }
    }

    /// The digits of the largest exponent written for the exponent's sign read so far.
    fn largest_exp(&self) -> &'static [u8] {
        if self.eneg && (self.loose || self.max_sig == PLAIN_DIGITS) {
            SUBNORMAL_EXP
        } else {
            LARGEST_EXP[self.eneg as usize]
        }
    }

    /// `top` and `top_at` after the `at`-th digit `d` of a scientific mantissa.
    fn compare_top(&mut self, d: u8) {
        if self.top == Ordering::Equal {
            let at = self.top_at as usize;
            self.top = match MAX_MANTISSA.get(at) {
                Some(&x) => d.cmp(&(x - b'0')),
                None if d != 0 => Ordering::Greater,
                None => Ordering::Equal,
            };
            self.top_at = if self.top == Ordering::Equal {
                (at + 1).min(MAX_MANTISSA.len()) as u8
            } else {
                0
            };
        }
    }

    /// At `e`: a mantissa equal to a proper prefix of [`MAX_MANTISSA`] is below it (the
    /// digits left are not all zero), so only the order is kept.
    fn end_top(&mut self) {
        if self.top == Ordering::Equal && (self.top_at as usize) < MAX_MANTISSA.len() {
            self.top = Ordering::Less;
        }
        self.top_at = 0;
    }

    /// The lexer after `byte` (`scientific`: the scientific form may be written), keeping
    /// only what decides the texts that may follow (not the mantissa's fraction digits).
    pub(crate) fn step(self, byte: u8, scientific: bool) -> Option<Self> {
        self.event(byte, scientific).map(|(w, _)| {
            let mut n = Self { sci_frac: 0, ..w };
            if w.loose {
                // Loose numbers count digits only; the sign matters only for `-0`.
                n.lim = Ordering::Equal;
                n.sig = 0;
                n.zeros = 0;
                n.neg = w.neg && matches!(w.lex, Lex::Minus | Lex::Zero);
            }
            if let Lex::Frac(_, last) = w.lex {
                n.lex = Lex::Frac(1, last);
            }
            n
        })
    }

    fn event(self, byte: u8, scientific: bool) -> Option<(Self, Event)> {
        let mut n = self;
        let digit = byte.is_ascii_digit().then(|| byte - b'0');
        let event = match (self.lex, byte, digit) {
            (Lex::Start, b'-', _) => {
                n.lex = Lex::Minus;
                n.neg = true;
                Event::Sign
            }
            (Lex::Start | Lex::Minus, _, Some(0)) => {
                n.lex = Lex::Zero;
                Event::Zero
            }
            (Lex::Start | Lex::Minus, _, Some(d)) => {
                n.lex = Lex::Int(1);
                n.int1 = true;
                n.compare_top(d);
                n.sig = 1;
                n.lim = against(Ordering::Equal, LARGEST[n.neg as usize], 0, d);
                Event::IntDigit(d)
            }
            (Lex::Int(k), _, Some(d))
                if (k as usize)
                    < if self.loose || self.long {
                        LOOSE_INT_DIGITS
                    } else {
                        LARGEST[self.neg as usize].len()
                    } =>
            {
                n.lex = Lex::Int(k + 1);
                n.int1 = false;
                // No scientific mantissa any more: nothing to compare.
                n.top = Ordering::Equal;
                n.top_at = 0;
                n.sig = self.sig.saturating_add(1);
                n.lim = against(self.lim, LARGEST[n.neg as usize], k as usize, d);
                Event::IntDigit(d)
            }
            (Lex::Zero, b'.', _) => {
                n.lex = Lex::Dot;
                Event::Dot
            }
            (Lex::Int(_), b'.', _) if self.loose || self.sig <= self.max_sig => {
                n.lex = Lex::Dot;
                Event::Dot
            }
            (Lex::Dot | Lex::Frac(..), _, Some(d)) => {
                let k = match self.lex {
                    Lex::Frac(k, _) => k,
                    _ => 0,
                };
                // Loose numbers: any number of fraction digits.
                if !self.loose && (self.sig > 0 || d != 0) {
                    n.sig += 1;
                    if n.sig > self.max_sig {
                        return None;
                    }
                } else if !self.loose {
                    n.zeros += 1;
                    if n.zeros > LEADING_ZEROS {
                        return None;
                    }
                }
                if self.int1 {
                    n.compare_top(d);
                }
                n.lex = Lex::Frac(k + 1, d != 0);
                Event::FracDigit(d, k + 1)
            }
            (Lex::Int(1), b'e' | b'E', _) if scientific && self.int1 => {
                n.lex = Lex::E;
                n.end_top();
                Event::E
            }
            (Lex::Frac(k, true), b'e' | b'E', _) if scientific && self.int1 => {
                n.lex = Lex::E;
                n.sci_frac = k;
                n.end_top();
                Event::E
            }
            (Lex::E, b'-', _) => {
                n.lex = Lex::EMinus;
                n.eneg = true;
                Event::ExpSign(true)
            }
            (Lex::E, b'+', _) => {
                n.lex = Lex::EPlus;
                Event::ExpSign(false)
            }
            (Lex::E | Lex::EMinus | Lex::EPlus, _, Some(0)) => {
                n.lex = Lex::ExpPad;
                Event::ExpPad
            }
            (Lex::E | Lex::EMinus | Lex::EPlus | Lex::ExpPad, _, Some(d)) if d != 0 => {
                n.lex = Lex::Exp(1);
                n.elen = 1;
                n.eord = against(Ordering::Equal, n.largest_exp(), 0, d);
                Event::ExpDigit(d)
            }
            (Lex::Exp(k), _, Some(d)) if (k as usize) < EXP_DIGITS => {
                n.lex = Lex::Exp(k + 1);
                n.elen = k + 1;
                n.eord = against(self.eord, n.largest_exp(), k as usize, d);
                Event::ExpDigit(d)
            }
            _ => return None,
        };
        if n.long {
            // Only the digit count limits these integers.
            n.lim = Ordering::Equal;
        }
        Some((n, event))
    }
}

/// The machine's state.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    w: Written,
    neg: bool,
    /// A non-zero mantissa digit was read.
    nonzero: bool,
    /// A non-zero fraction digit was read.
    frac_nonzero: bool,
    /// Exponent sign and value (capped at [`FRAC_DIGITS`] + 1: only compared with the
    /// number of fraction digits).
    eneg: bool,
    eval: u16,
    lo: Cmp,
    hi: Cmp,
    /// Per divisor (of `multiple_of`, then `not_multiple_of`): residue of the scaled digits
    /// and a non-zero digit past the scale.
    residues: Vec<(u64, bool)>,
}

/// An [`Ordering`] in two bits.
fn order_bits(o: Ordering) -> u64 {
    (o as i8 + 1) as u64
}

impl Cmp {
    /// Every field in one word (16 + 2 + 16 + 2 + 16 + 2 + 8 + 2 bits), for hashing.
    fn packed(&self) -> u64 {
        self.int_len as u64
            | order_bits(self.int_ord) << 16
            | (self.frac_pos as u64) << 18
            | order_bits(self.frac_ord) << 34
            | (self.mant_pos as u64) << 36
            | order_bits(self.mant_ord) << 52
            | (self.exp_len as u64) << 54
            | order_bits(self.exp_ord) << 62
    }
}

impl Written {
    /// Every field in one word (the lexer's place in 13 bits, five flags, five counts of
    /// at most 8 bits, two orders), for hashing.
    fn packed(&self) -> u64 {
        let lex: u64 = match self.lex {
            Lex::Start => 0,
            Lex::Minus => 1,
            Lex::Zero => 2,
            Lex::Int(n) => 3 | (n as u64) << 4,
            Lex::Dot => 4,
            Lex::Frac(n, last) => 5 | (n as u64) << 4 | (last as u64) << 12,
            Lex::E => 6,
            Lex::EMinus => 7,
            Lex::EPlus => 8,
            Lex::ExpPad => 9,
            Lex::Exp(n) => 10 | (n as u64) << 4,
        };
        lex | (self.loose as u64) << 13
            | (self.neg as u64) << 14
            | (self.int1 as u64) << 15
            | (order_bits(self.top) | (self.top_at as u64) << 2 | (self.long as u64) << 7)
                .rotate_left(40)
            | (self.eneg as u64) << 17
            | (self.sig as u64) << 18
            | (self.max_sig as u64) << 26
            | (self.zeros as u64) << 34
            | (self.sci_frac as u64) << 42
            | (self.elen as u64) << 50
            | order_bits(self.lim) << 58
            | order_bits(self.eord) << 60
    }
}

impl std::hash::Hash for Written {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.packed());
    }
}

/// A few words per state rather than one write per field: hashing is most of the cost of
/// building a number automaton (thousands of states before minimization). Equal states
/// hash alike (every field goes in; the packing only needs to be a function of them).
impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.w.packed());
        h.write_u64(self.lo.packed());
        h.write_u64(self.hi.packed());
        h.write_u64(
            self.neg as u64
                | (self.nonzero as u64) << 1
                | (self.frac_nonzero as u64) << 2
                | (self.eneg as u64) << 3
                | (self.eval as u64) << 4,
        );
        for &(r, past) in &self.residues {
            h.write_u64(r << 1 | past as u64);
        }
    }
}

impl NumberSpec {
    /// Every number of the written forms (both classes).
    pub fn any() -> Self {
        Self {
            integers: true,
            fractions: true,
            ..Self::default()
        }
    }

    /// Whether the spec admits nothing without building (no class, or crossed bounds).
    pub fn is_empty(&self) -> bool {
        if !self.integers && !self.fractions {
            return true;
        }
        if let (Some((lo, lx)), Some((hi, hx))) = (&self.lo, &self.hi) {
            match lo.cmp_value(hi) {
                Ordering::Greater => return true,
                Ordering::Equal if *lx || *hx => return true,
                _ => {}
            }
        }
        false
    }

    /// [`Self::table`], built once per spec and shared after that (at most
    /// `NUMBER_CACHE` tables are kept).
    ///
    /// Errors: as [`Self::table`], or a cached table past `limits.max_states`.
    pub fn cached_table(&self, limits: &Limits) -> Result<std::sync::Arc<Table>, NumberError> {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex, OnceLock};
        static CACHE: OnceLock<Mutex<HashMap<NumberSpec, Arc<Table>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(t) = cache.lock().ok().and_then(|c| c.get(self).cloned()) {
            limits.check(t.len()).map_err(NumberError::Build)?;
            return Ok(t);
        }
        // Built within the default budgets at least, then held to the caller's state limit,
        // as a cached table is: whether a compile fits must not depend on what an earlier
        // compile left in the cache (a first try under a quarter of the limit failed on a
        // table's transient states, and passed once another compile had cached it).
        let t = Arc::new(self.table(&limits.at_least_default())?);
        if let Ok(mut c) = cache.lock() {
            if c.len() < NUMBER_CACHE {
                c.insert(self.clone(), t.clone());
            }
        }
        limits.check(t.len()).map_err(NumberError::Build)?;
        Ok(t)
    }

    /// The language of the spec: number texts of the written forms whose value meets it
    /// (past ±2^53, texts with a fraction or an exponent within the bounds as the doubles
    /// they read as: [`double_bound`]).
    ///
    /// Errors: [`NumberError::Divisor`] for a `multipleOf` the residue automaton cannot
    /// hold; [`NumberError::Build`] past `limits` (a large divisor gives many residues).
    pub fn table(&self, limits: &Limits) -> Result<Table, NumberError> {
        let spec = NumberSpec {
            lo: double_bound(&self.lo, false),
            hi: double_bound(&self.hi, true),
            ..self.clone()
        };
        let exact = self.table_exact(limits)?;
        if spec == *self {
            return Ok(exact);
        }
        // Integer texts against the exact bounds, texts with a fraction or an exponent
        // against the double ones: the exact language less the texts of the second kind
        // that only the exact bounds admit.
        let doubles = spec.table_exact(limits)?;
        let floats = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(r"(?s)[^.eE]*[.eE].*")
            .map_err(|e| NumberError::Build(BuildError::Regex(e.to_string())))?;
        let floats = Table::from_hir(&floats, limits).map_err(NumberError::Build)?;
        let beyond = exact
            .difference(&doubles, limits)
            .and_then(|t| t.intersect(&floats, limits))
            .map_err(NumberError::Build)?;
        exact
            .difference(&beyond, limits)
            .map(|t| t.trim().minimize())
            .map_err(NumberError::Build)
    }

    /// [`Self::table`] with the bounds as they are.
    fn table_exact(&self, limits: &Limits) -> Result<Table, NumberError> {
        // Bounds and divisors together: the product of their counters (digits compared
        // with a bound, residues) passes the state limit before minimization even where
        // the result is small (`multipleOf: 0.25` within ±2^53: more than 200,000 states).
        // The language is the intersection of the bounds' and the divisors' (acceptance is
        // the conjunction of their checks; the divisors' automaton keeps the forms a
        // divisor allows, the bounds' one the digits bounds allow), each built and
        // minimized alone first.
        let divided = !self.multiple_of.is_empty() || !self.not_multiple_of.is_empty();
        if divided && (self.lo.is_some() || self.hi.is_some()) {
            let bounds = NumberSpec {
                multiple_of: Vec::new(),
                not_multiple_of: Vec::new(),
                ..self.clone()
            };
            let residues = NumberSpec {
                lo: None,
                hi: None,
                ..self.clone()
            };
            let a = bounds.table_product(limits, true)?;
            let b = residues.table_product(limits, true)?;
            return a
                .intersect(&b, limits)
                .map(Table::minimize)
                .map_err(NumberError::Build);
        }
        self.table_product(limits, true)
    }

    /// [`Self::table_exact`] as one automaton over every counter at once. `prune`: states
    /// that a bound already fails for good are not built (see `step`); the language is
    /// the same (tests build it both ways).
    fn table_product(&self, limits: &Limits, prune: bool) -> Result<Table, NumberError> {
        let mut divisors = Vec::new();
        for q in self.multiple_of.iter().chain(&self.not_multiple_of) {
            divisors.push(Divisor::new(q).ok_or_else(|| NumberError::Divisor(q.clone()))?);
        }
        let positives = self.multiple_of.len();
        // Divisors of one: integers are multiples whatever their form, so the scientific
        // form stays for integer values.
        let integral_only = !divisors.is_empty()
            && self.not_multiple_of.is_empty()
            && divisors.iter().all(Divisor::divides_one);
        for d in &divisors {
            // Residues times the scaled digit positions: past this, the automaton is too large
            // to build in reasonable time.
            if d.modulus.saturating_mul(d.scale + 1) > MAX_RESIDUES {
                return Err(NumberError::TooFine);
            }
        }
        let lo = self
            .lo
            .as_ref()
            .map(|(b, x)| (BoundDigits::new(b), b.neg, *x));
        let hi = self
            .hi
            .as_ref()
            .map(|(b, x)| (BoundDigits::new(b), b.neg, *x));
        // Numbers of both classes compared with inclusive bounds or nothing (no divisor) may
        // have the digits of any double's shortest text. Reading a decimal as a double is
        // monotone, so a reader on doubles may only find such a number *equal* to a bound the
        // exact comparison puts it beside: it then accepts what is refused here (a valid
        // `1.0000000000000001` under `maximum: 1`), never the other way. An exclusive bound
        // (`0.99999999999999999` reads as `1.0`), a divisor, or one class alone (that
        // text is the integer `1.0`) would let an invalid value through: 15 digits there.
        // The bound must be a double itself for that (an integer bound past 2^53 stays
        // exact in Python's `jsonschema`: `9.007199254740993e15` reads below
        // `minimum: 9007199254740993`, cold review): bounds within ±2^53 only.
        let limit = Decimal::parse("9007199254740992").unwrap_or_else(Decimal::zero);
        let within = |b: &Option<Bound>| {
            b.as_ref().is_none_or(|(v, _)| {
                let mut abs = v.clone();
                abs.neg = false;
                abs.cmp_value(&limit) != Ordering::Greater
            })
        };
        let inclusive = |b: &Option<Bound>| within(b) && b.as_ref().is_none_or(|(_, x)| !x);
        let plain = self.integers
            && self.fractions
            && inclusive(&self.lo)
            && inclusive(&self.hi)
            && divisors.is_empty();
        // Integer texts past `u64` (up to 39 digits): a double reader rounds such a text to
        // a double that is at least 2^64 in magnitude, on the same side of any bound within
        // ±2^53 (exclusive ones too) as the text; no divisor, whose residues a double
        // reader would not keep.
        let long = self.integers && within(&self.lo) && within(&self.hi) && divisors.is_empty();
        // Scientific forms only without divisors (their residues depend on the exponent), or
        // for integer values when every integer is a multiple.
        let scientific = divisors.is_empty() || integral_only;
        let mut classes = [0u8; 256];
        for d in b'0'..=b'9' {
            classes[d as usize] = d - b'0' + 1;
        }
        classes[b'-' as usize] = 11;
        classes[b'.' as usize] = 12;
        classes[b'e' as usize] = 13;
        classes[b'E' as usize] = 13;
        classes[b'+' as usize] = 14;
        let start = State {
            w: Written {
                max_sig: if plain {
                    PLAIN_DIGITS
                } else {
                    SIGNIFICANT_DIGITS
                },
                long,
                ..Written::start()
            },
            neg: false,
            nonzero: false,
            frac_nonzero: false,
            eneg: false,
            eval: 0,
            lo: Cmp::new(),
            hi: Cmp::new(),
            residues: vec![(0, false); divisors.len()],
        };
        let bound_step =
            |c: Cmp, b: &Option<(BoundDigits, bool, bool)>, d: u8, int: bool, sci: bool| match b {
                Some((bd, _, _)) => c.digit(bd, d, int, sci),
                None => c,
            };
        let exp_step = |c: Cmp, b: &Option<(BoundDigits, bool, bool)>, d: u8| match b {
            Some((bd, _, _)) => c.exp_digit(bd, d),
            None => c,
        };
        // Both classes and no divisor: whether a value is an integer is never asked, so
        // the exponent's value and non-zero fraction digits are not tracked (fewer states
        // before minimization, the same language).
        let class_blind = self.integers && self.fractions && divisors.is_empty();
        // No bound: the sign and whether a non-zero digit came are only compared with
        // bounds, so they are not tracked either.
        let unbounded = lo.is_none() && hi.is_none();
        // How many fraction digits a state must count: a divisor's residue reads them up to
        // its scale and then only asks whether one past it is not zero; a scientific
        // mantissa's count (`sci_frac`) decides integer-ness against the exponent.
        // Counting further only multiplies the states built before minimization (14,400
        // for `multipleOf: 0.5` alone, 306 after).
        let frac_cap = divisors
            .iter()
            .map(|d| d.scale.saturating_add(1))
            .max()
            .unwrap_or(1)
            .min(u8::MAX as u64) as u8;
        // Whether the lower (upper) bound lies above -1e308 (below 1e308).
        let e308 = Decimal::parse("1e308").unwrap_or_else(Decimal::zero);
        let lo_inside = self
            .lo
            .as_ref()
            .is_some_and(|(v, _)| v.cmp_value(&e308.negated()) == Ordering::Greater);
        let hi_inside = self
            .hi
            .as_ref()
            .is_some_and(|(v, _)| v.cmp_value(&e308) == Ordering::Less);
        let step = |s: &State, byte: u8| -> Option<State> {
            let (mut w, event) = s.w.event(byte, scientific)?;
            let inside = if w.neg { lo_inside } else { hi_inside };
            if inside {
                // A bound of the sign already refuses every value from 1e308 on: the
                // mantissa's comparison with the largest double's decides nothing.
                w.top = Ordering::Equal;
                w.top_at = 0;
            }
            if let Lex::Frac(k, last) = w.lex {
                if !(scientific && w.int1) {
                    w.lex = Lex::Frac(k.min(frac_cap), last);
                }
            }
            // Integers alone: the scientific form only without fraction digits (`1e+20`, not
            // `1.5e+20`), which keeps the automaton small.
            if event == Event::E && w.sci_frac > 0 && self.integers && !self.fractions {
                return None;
            }
            // Draft 4 integers alone (by form): a `.` or an `e` leaves a text of another
            // form, refused whatever follows.
            if prune
                && self.draft4
                && self.integers
                && !self.fractions
                && matches!(event, Event::Dot | Event::E)
            {
                return None;
            }
            let mut n = s.clone();
            n.w = w;
            let (d, int, k) = match event {
                Event::Sign => {
                    n.neg = !unbounded;
                    return Some(n);
                }
                Event::ExpSign(neg) => {
                    n.eneg = neg;
                    return Some(n);
                }
                Event::E => {
                    // Past the mantissa its digit counts no longer matter, nor, where
                    // integer-ness is never asked, how many fraction digits it had.
                    n.w.sig = 0;
                    n.w.zeros = 0;
                    n.w.lim = Ordering::Equal;
                    if class_blind {
                        n.w.sci_frac = 0;
                    }
                    if integral_only {
                        // A scientific form here is an integer value or nothing: every
                        // divisor divides it, and whether a fraction digit was not zero is
                        // asked of the exponent instead (`accepting`), so neither is kept.
                        for r in &mut n.residues {
                            *r = (0, false);
                        }
                        n.frac_nonzero = false;
                    }
                    return Some(n);
                }
                Event::Zero | Event::Dot | Event::ExpPad => return Some(n),
                Event::ExpDigit(d) => {
                    if !class_blind {
                        // Only `eval >= sci_frac` of a positive exponent is ever asked (a
                        // longer exponent only adds to it), so the count stops there.
                        n.eval = if n.eneg {
                            0
                        } else {
                            (n.eval * 10 + d as u16).min(n.w.sci_frac as u16)
                        };
                    }
                    n.lo = exp_step(n.lo, &lo, d);
                    n.hi = exp_step(n.hi, &hi, d);
                    return Some(n);
                }
                Event::IntDigit(d) => (d, true, 0),
                Event::FracDigit(d, k) => (d, false, k),
            };
            // A mantissa digit.
            let sci = scientific && w.int1;
            // Integers alone (draft 6 on, by value): a non-zero fraction digit leaves a value
            // that is not an integer whatever follows (no exponent may follow one: integers
            // alone are scientific only without fraction digits, see `Event::E` above).
            // Such states were built only to be trimmed: `{"type": "integer", "maximum":
            // 400}` built 1,050 states for 271 kept, 376 with this prune.
            if prune && !int && d != 0 && self.integers && !self.fractions && !self.draft4 {
                return None;
            }
            n.lo = bound_step(n.lo, &lo, d, int, sci);
            n.hi = bound_step(n.hi, &hi, d, int, sci);
            // Past a bound for good: a value of two or more integer digits (no scientific
            // form, which needs one, can scale it back) whose integer part already puts it
            // above a non-negative upper bound, or below a negative lower bound, fails
            // whatever follows. Such states were built only to be trimmed: 5,254 states
            // before trimming for `{"type": "integer", "maximum": 400}`, 1,224 after.
            if prune && int && !w.int1 {
                let above = |c: &Cmp, b: &Option<(BoundDigits, bool, bool)>, neg: bool| {
                    b.as_ref()
                        .is_some_and(|(bd, bneg, _)| *bneg == neg && c.int_above(bd))
                };
                if (!n.neg && above(&n.hi, &hi, false)) || (n.neg && above(&n.lo, &lo, true)) {
                    return None;
                }
            }
            n.nonzero |= !unbounded && d != 0;
            n.frac_nonzero |= !class_blind && !int && d != 0;
            for (i, q) in divisors.iter().enumerate() {
                let (r, past) = n.residues[i];
                // Fraction digits past the scale must be zero; the others count.
                n.residues[i] = if int || (k as u64) <= q.scale {
                    ((r * 10 + d as u64) % q.modulus, past)
                } else {
                    (r, past || d != 0)
                };
            }
            Some(n)
        };
        let accepting = |s: &State| -> bool {
            if !s.w.complete() {
                return false;
            }
            let sci = matches!(s.w.lex, Lex::Exp(_));
            let frac_len = match s.w.lex {
                Lex::Frac(k, _) => k as u16,
                _ => 0,
            };
            let value_zero = !s.nonzero;
            // Integer-ness: by value (draft 6 on) or by form (draft 4). Draft 4 readers
            // differ on scientific forms of integer values: they are not written there,
            // unless both classes are admitted (`type: number`: `6.17e+16` is a number to
            // every reader).
            let both = self.integers && self.fractions;
            if self.draft4 && !both && sci && !s.eneg && s.eval >= s.w.sci_frac as u16 {
                return false;
            }
            let integer = if self.draft4 {
                matches!(s.w.lex, Lex::Zero | Lex::Int(_))
            } else if sci {
                // The mantissa's fraction digits (the last one non-zero) are shifted into
                // the integer part by a positive exponent at least as large.
                !s.eneg && s.eval >= s.w.sci_frac as u16
            } else {
                !s.frac_nonzero
            };
            if !(if integer {
                self.integers
            } else {
                self.fractions
            }) {
                return false;
            }
            let order = |c: &Cmp, b: &(BoundDigits, bool, bool)| -> Ordering {
                let abs = if sci {
                    c.scientific(&b.0, s.eneg)
                } else {
                    c.plain(&b.0, value_zero)
                };
                let vneg = s.neg && !value_zero;
                let bneg = b.1;
                match (vneg, bneg) {
                    (false, false) => abs,
                    (true, true) => abs.reverse(),
                    (true, false) => {
                        if b.0.zero && value_zero {
                            Ordering::Equal
                        } else {
                            Ordering::Less
                        }
                    }
                    (false, true) => Ordering::Greater,
                }
            };
            if let Some(b) = &lo {
                match order(&s.lo, b) {
                    Ordering::Less => return false,
                    Ordering::Equal if b.2 => return false,
                    _ => {}
                }
            }
            if let Some(b) = &hi {
                match order(&s.hi, b) {
                    Ordering::Greater => return false,
                    Ordering::Equal if b.2 => return false,
                    _ => {}
                }
            }
            if sci && integral_only {
                // Integer values (checked next) are multiples of every divisor.
                return !s.eneg && s.eval >= s.w.sci_frac as u16;
            }
            for (i, q) in divisors.iter().enumerate() {
                let (r, past) = s.residues[i];
                // value * 10^scale = scaled digits * 10^(scale - fraction digits read).
                let read = frac_len.min(q.scale as u16) as u64;
                let mut scaled = r;
                for _ in read..q.scale {
                    scaled = scaled * 10 % q.modulus;
                }
                let multiple = !past && scaled % q.modulus == 0;
                if multiple != (i < positives) {
                    return false;
                }
            }
            true
        };
        let mut keys = Vec::new();
        // Where the sign alone decides a bound (`accepting` reads no comparison there), a
        // value the sign fails is not built on (a negative one with a non-zero digit under
        // a non-negative lower bound, a positive one with a non-zero digit under a negative
        // upper bound), and one it passes is not compared digit by digit (a value without
        // `-` against a negative lower bound, a negative one with a non-zero digit against
        // a non-negative upper bound): those states are one.
        let lo_negative = lo.as_ref().map(|b| b.1);
        let hi_negative = hi.as_ref().map(|b| b.1);
        let pruned = |s: &State, byte: u8| -> Option<State> {
            let mut n = step(s, byte)?;
            if prune {
                // A `-` fails a non-negative lower bound and passes a non-negative upper
                // one; no `-` fails a negative upper bound and passes a negative lower one.
                let (fails, passed) = if n.neg {
                    (lo_negative == Some(false), hi_negative == Some(false))
                } else {
                    (hi_negative == Some(true), lo_negative == Some(true))
                };
                if n.nonzero && fails {
                    return None;
                }
                match (n.neg, passed) {
                    (false, true) => n.lo = Cmp::new(),
                    (true, true) if n.nonzero => n.hi = Cmp::new(),
                    _ => {}
                }
            }
            Some(n)
        };
        Table::determinize_keyed(classes, 15, start, pruned, accepting, limits, &mut keys)
            .map(Table::minimize)
            .map_err(NumberError::Build)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of a number text times 10^SCALE, by integer arithmetic (texts with small
    /// exponents only).
    const SCALE: i32 = 20;

    fn scaled(text: &str) -> i128 {
        let (neg, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (mantissa, exp) = match rest.split_once('e') {
            Some((m, e)) => (m, e.parse::<i32>().unwrap()),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: i128 = format!("{int}{frac}").parse().unwrap();
        let shift = SCALE + exp - frac.len() as i32;
        let v = if shift >= 0 {
            digits * 10i128.pow(shift as u32)
        } else {
            let p = 10i128.pow((-shift) as u32);
            assert_eq!(digits % p, 0, "{text} is finer than the test scale");
            digits / p
        };
        if neg {
            -v
        } else {
            v
        }
    }

    fn dec(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    /// Number texts of every written form with few digits.
    fn texts() -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..=120 {
            out.push(i.to_string());
            for f in ["0", "5", "25", "05", "50", "125", "001"] {
                out.push(format!("{i}.{f}"));
            }
        }
        for m in ["1", "2.5", "9.75", "1.05", "3.125"] {
            for e in [-3i32, -2, -1, 1, 2, 3] {
                out.push(format!("{m}e{e}"));
                // Python's `repr` pads the exponent to two digits.
                out.push(format!("{m}e{}0{}", if e < 0 { "-" } else { "+" }, e.abs()));
                if e > 0 {
                    out.push(format!("{m}e+{e}"));
                    out.push(format!("{m}e0{e}"));
                }
            }
        }
        let negatives: Vec<String> = out.iter().map(|t| format!("-{t}")).collect();
        out.extend(negatives);
        out
    }

    /// Texts that are not written forms, each with the reason.
    const NOT_WRITTEN: &[&str] = &[
        "01",
        "1.",
        ".5",
        "1e+002",
        "1e002",
        "1e-001",
        "1e00",
        "1e-00",
        "1e0",
        "1e+0",
        "10e1",
        "0.5e1",
        "1.50e1",
        "--1",
        "-",
        "1e",
        "1e-",
        "1e+",
        "+1",
        "1e+-2",
        "1e+309",
        "2e+308",
        // Past the largest double (Python reads it as infinity, serde_json refuses it).
        "1.7976931348623159e308",
        "1.8e308",
        // Below the smallest subnormal's exponent.
        "1e-325",
        "123456789012345678.5",
        "0.123456789012345678",
        // 40 digits.
        "1234567890123456789012345678901234567890",
        "1.234567890123456789e5",
    ];

    /// Integer texts past `u64`/`i64` (up to 39 digits, `u128::MAX`), written where
    /// [`long_written`] says.
    const LONG: &[&str] = &[
        "18446744073709551616",
        "-9223372036854775809",
        "340282366920938463463374607431768211455",
        "-99999999999999999999999999999999999999",
    ];

    /// Whether a spec writes the integer `text` of [`LONG`]: an integer class, no divisor,
    /// bounds within ±2^53 that the value meets (compared exactly).
    fn long_written(spec: &NumberSpec, text: &str) -> bool {
        let v = dec(text);
        let limit = dec("9007199254740992");
        let small = |b: &Option<Bound>| {
            b.as_ref().is_none_or(|(x, _)| {
                let mut abs = x.clone();
                abs.neg = false;
                abs.cmp_value(&limit) != Ordering::Greater
            })
        };
        let meets = |b: &Option<Bound>, above: Ordering| {
            b.as_ref().is_none_or(|(x, exclusive)| {
                let o = v.cmp_value(x);
                o == above || (o == Ordering::Equal && !exclusive)
            })
        };
        spec.integers
            && spec.multiple_of.is_empty()
            && spec.not_multiple_of.is_empty()
            && small(&spec.lo)
            && small(&spec.hi)
            && meets(&spec.lo, Ordering::Greater)
            && meets(&spec.hi, Ordering::Less)
    }

    /// Written texts outside the small values of [`texts`].
    const WRITTEN: &[&str] = &[
        "1E2",
        "1.5E-3",
        "1.6e+308",
        "1.69e308",
        "1.7e308",
        // The largest double and the smallest subnormal, as Python's `repr` writes them
        // (`sys.float_info.max`, `5e-324`), and the smallest normal double.
        "1.7976931348623157e+308",
        "5e-324",
        "2.2250738585072014e-308",
        "1e-307",
        "18446744073709551615",
        "-9223372036854775808",
        "12345678901234.5",
        "0.123456789012345",
        "9.99999999999999e-307",
    ];

    fn check(spec: &NumberSpec, expected: impl Fn(&str, i128) -> bool) {
        let t = spec.table(&Limits::default()).unwrap();
        for text in texts() {
            // `-0` is not written (it reads as a double).
            let want = text != "-0" && expected(&text, scaled(&text));
            assert_eq!(t.matches(text.as_bytes()), want, "{text} in {spec:?}");
        }
        for text in NOT_WRITTEN {
            assert!(!t.matches(text.as_bytes()), "{text} in {spec:?}");
        }
        for text in LONG {
            let want = long_written(spec, text);
            assert_eq!(t.matches(text.as_bytes()), want, "{text} in {spec:?}");
        }
    }

    fn is_int(v: i128) -> bool {
        v % 10i128.pow(SCALE as u32) == 0
    }

    /// An integer as integers alone are written: not a scientific form with fraction digits.
    fn int_text(t: &str, v: i128) -> bool {
        is_int(v)
            && !t
                .split('e')
                .nth(1)
                .is_some_and(|_| t.split('e').next().unwrap().contains('.'))
    }

    #[test]
    fn classes_are_integer_values_or_forms() {
        check(&NumberSpec::any(), |_, _| true);
        let any = NumberSpec::any().table(&Limits::default()).unwrap();
        for text in WRITTEN {
            assert!(any.matches(text.as_bytes()), "{text}");
        }
        // Numbers nothing compares have the digits of any double's shortest text; ones
        // compared with an exclusive bound at most 15 significant digits.
        let bounded = NumberSpec {
            lo: Some((dec("-1e300"), true)),
            ..NumberSpec::any()
        }
        .table(&Limits::default())
        .unwrap();
        for text in [
            "3.141592653589793",
            "0.30000000000000004",
            "1.2345678910111214e+52",
            // Subnormals: `1e-320` and `1.00001e-320` read as the same double, which an
            // exclusive bound at either would tell apart wrongly.
            "1e-308",
            "4.9406564584124654e-324",
        ] {
            assert!(
                any.matches(text.as_bytes()) && !bounded.matches(text.as_bytes()),
                "{text}"
            );
        }
        // Up to the largest double with the exponent 308 either way.
        for text in ["1.7e308", "1.79769313486231e308", "1.5e-307"] {
            assert!(bounded.matches(text.as_bytes()), "{text}");
        }
        assert!(!bounded.matches(b"1.79769313486232e308"));
        check(
            &NumberSpec {
                integers: true,
                ..NumberSpec::default()
            },
            int_text,
        );
        check(
            &NumberSpec {
                fractions: true,
                ..NumberSpec::default()
            },
            |_, v| !is_int(v),
        );
        // Draft 4: the integer form only.
        check(
            &NumberSpec {
                integers: true,
                draft4: true,
                ..NumberSpec::default()
            },
            |t, _| !t.contains(['.', 'e']),
        );
        // Draft 4, both classes: every form, scientific integers included.
        check(
            &NumberSpec {
                integers: true,
                fractions: true,
                draft4: true,
                ..NumberSpec::default()
            },
            |_, _| true,
        );
        // Draft 4's other class: decimal forms and scientific forms of fractions.
        check(
            &NumberSpec {
                fractions: true,
                draft4: true,
                ..NumberSpec::default()
            },
            |t, v| t.contains('.') && !t.contains('e') || (t.contains('e') && !is_int(v)),
        );
    }

    #[test]
    fn bounds_against_brute_force() {
        let bounds = [
            "0", "1", "-1", "7", "42", "99.5", "100", "-100", "0.25", "-0.05", "2.5e-3", "1e2",
            "120.125", "-120.125", "3.14159", "1e30", "-1e30", "1e-30",
        ];
        for lo in bounds {
            for lx in [false, true] {
                let b = scaled_bound(lo);
                let spec = NumberSpec {
                    lo: Some((dec(lo), lx)),
                    ..NumberSpec::any()
                };
                check(&spec, |_, v| if lx { v > b } else { v >= b });
                let spec = NumberSpec {
                    hi: Some((dec(lo), lx)),
                    integers: true,
                    ..NumberSpec::default()
                };
                check(&spec, |t, v| {
                    int_text(t, v) && if lx { v < b } else { v <= b }
                });
            }
        }
        let spec = NumberSpec {
            lo: Some((dec("-2.5"), false)),
            hi: Some((dec("17"), true)),
            ..NumberSpec::any()
        };
        check(&spec, |_, v| v >= scaled("-2.5") && v < scaled("17"));
    }

    /// Inclusive bounds keep the 17 digits of a double's shortest text (a reader on doubles
    /// can only find such a number equal to the bound, which it accepts); an exclusive bound
    /// keeps 15, since `0.99999999999999999` reads as `1.0`.
    #[test]
    fn inclusive_bounds_keep_shortest_double_texts() {
        let within = |lx: bool, hx: bool| NumberSpec {
            lo: Some((dec("0"), lx)),
            hi: Some((dec("1"), hx)),
            ..NumberSpec::any()
        };
        let t = within(false, false).table(&Limits::default()).unwrap();
        for yes in [
            "0.30000000000000004",
            "0.9999999999999999",
            "1",
            "0",
            "2.2250738585072014e-8",
        ] {
            assert!(t.matches(yes.as_bytes()), "{yes}");
        }
        // Past the bound as decimals (a double reader finds the first equal to 1: refused
        // though valid to it), or past 17 digits.
        for no in [
            "1.0000000000000001",
            "1.00000000000000001",
            "0.123456789012345678",
        ] {
            assert!(!t.matches(no.as_bytes()), "{no}");
        }
        for (lx, hx) in [(true, false), (false, true), (true, true)] {
            let t = within(lx, hx).table(&Limits::default()).unwrap();
            for no in [
                "0.30000000000000004",
                "0.99999999999999999",
                "0.9999999999999999",
            ] {
                assert!(!t.matches(no.as_bytes()), "{no} with exclusive bounds");
            }
            assert!(t.matches(b"0.999999999999999"));
        }
        // An integer bound past 2^53 keeps 15 (cold review).
        let big = NumberSpec {
            lo: Some((dec("9007199254740993"), false)),
            ..NumberSpec::any()
        };
        let t = big.table(&Limits::default()).unwrap();
        assert!(!t.matches(b"9.007199254740993e15"));
        assert!(!t.matches(b"9007199254740993.0"));
        // One class alone keeps 15 digits too: `1.0000000000000001` is the integer `1.0`.
        let fractions = NumberSpec {
            integers: false,
            ..NumberSpec::any()
        };
        let t = fractions.table(&Limits::default()).unwrap();
        assert!(!t.matches(b"1.0000000000000001"));
        assert!(t.matches(b"1.00000000000001"));
    }

    /// A bound's scaled value, saturating far outside the texts' range.
    fn scaled_bound(text: &str) -> i128 {
        match text {
            "1e30" => i128::MAX,
            "-1e30" => i128::MIN,
            "1e-30" => 1, // between 0 and the smallest test value
            _ => scaled(text),
        }
    }

    #[test]
    fn integers_against_brute_force() {
        // Every integer in a window, many ranges, both bound kinds.
        for (lo, hi) in [
            (-1000, 1000),
            (0, 9),
            (10, 99),
            (-99, -10),
            (7, 7),
            (95, 1004),
        ] {
            let spec = NumberSpec {
                integers: true,
                lo: Some((dec(&lo.to_string()), false)),
                hi: Some((dec(&hi.to_string()), true)),
                ..NumberSpec::default()
            };
            let t = spec.table(&Limits::default()).unwrap();
            for v in -1500i64..=1500 {
                assert_eq!(
                    t.matches(v.to_string().as_bytes()),
                    v >= lo && v < hi,
                    "{v} in [{lo}, {hi})"
                );
            }
        }
        // Bounds past i64, up to the largest integers written.
        let huge = NumberSpec {
            integers: true,
            lo: Some((dec("-1e30"), false)),
            hi: Some((dec("18446744073709551614"), false)),
            ..NumberSpec::default()
        };
        let t = huge.table(&Limits::default()).unwrap();
        assert!(t.matches(b"18446744073709551614") && !t.matches(b"18446744073709551615"));
        assert!(t.matches(b"-9223372036854775808") && !t.matches(b"-9223372036854775809"));
        assert!(t.matches(b"1e19") && !t.matches(b"1e20") && t.matches(b"-1e19"));
        // Integers alone: no scientific form with fraction digits.
        assert!(!t.matches(b"1.8e19"));
        // A bound of a million digits builds as quickly as a short one.
        let million: String = "7".repeat(1_000_000);
        let started = std::time::Instant::now();
        let far = NumberSpec {
            integers: true,
            lo: Some((dec(&format!("-{million}")), false)),
            hi: Some((dec(&million), true)),
            ..NumberSpec::default()
        };
        let t = far.table(&Limits::default()).unwrap();
        assert!(t.matches(b"18446744073709551615") && t.matches(b"-1e+300"));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let beyond = NumberSpec {
            integers: true,
            hi: Some((dec("1e300"), false)),
            ..NumberSpec::default()
        };
        let t = beyond.table(&Limits::default()).unwrap();
        assert!(t.matches(b"18446744073709551615") && t.matches(b"1e299") && !t.matches(b"2e300"));
    }

    #[test]
    fn multiples_against_brute_force() {
        for k in 1..=13u64 {
            let spec = NumberSpec {
                integers: true,
                multiple_of: vec![dec(&k.to_string())],
                ..NumberSpec::default()
            };
            let t = spec.table(&Limits::default()).unwrap();
            for v in -400i64..=400 {
                assert_eq!(
                    t.matches(v.to_string().as_bytes()),
                    v.unsigned_abs() % k == 0,
                    "{v} multiple of {k}"
                );
            }
            // Scientific forms are not written with a multipleOf, except for integer values
            // when every integer is a multiple.
            assert_eq!(t.matches(b"1e2"), k == 1);
        }
        for q in ["0.25", "0.1", "1.5", "0.001", "2e1", "0.05"] {
            let qs = scaled(q);
            let spec = NumberSpec {
                multiple_of: vec![dec(q)],
                ..NumberSpec::any()
            };
            // Integer values keep their scientific form when every integer is a multiple.
            let one = scaled("1") % qs == 0;
            check(&spec, |t, v| {
                v % qs == 0 && (!t.contains('e') || (one && is_int(v)))
            });
            let spec = NumberSpec {
                not_multiple_of: vec![dec(q)],
                ..NumberSpec::any()
            };
            check(&spec, |t, v| !t.contains('e') && v % qs != 0);
        }
        // Divisors of one keep the scientific form for integer values.
        let half = NumberSpec {
            multiple_of: vec![dec("0.5")],
            ..NumberSpec::any()
        };
        let t = half.table(&Limits::default()).unwrap();
        for (text, want) in [
            ("1e+308", true),
            ("2.5e1", true),
            ("1.5e-1", false),
            ("0.5", true),
            ("0.25", false),
            ("1.25e1", false),
        ] {
            assert_eq!(t.matches(text.as_bytes()), want, "{text}");
        }
        assert!(matches!(
            NumberSpec {
                multiple_of: vec![dec("0.123456789")],
                ..NumberSpec::any()
            }
            .table(&Limits::default()),
            Err(NumberError::TooFine)
        ));
        // In a bounded range, the multiples of a fine divisor are few.
        let q = dec("123456789");
        let got = q
            .multiples_between(&(dec("-300000000"), false), &(dec("370370367"), true), 10)
            .unwrap();
        let want: Vec<Decimal> = [-246913578i64, -123456789, 0, 123456789, 246913578]
            .iter()
            .map(|v| dec(&v.to_string()))
            .collect();
        assert_eq!(got, want);
        let fine = dec("0.0001");
        assert_eq!(
            fine.multiples_between(&(dec("0.0075"), false), &(dec("0.0077"), false), 10)
                .unwrap(),
            vec![dec("0.0075"), dec("0.0076"), dec("0.0077")]
        );
        assert!(fine
            .multiples_between(&(dec("0"), false), &(dec("1"), false), 100)
            .is_none());
        let both = NumberSpec {
            integers: true,
            multiple_of: vec![dec("3"), dec("5")],
            lo: Some((dec("0"), true)),
            hi: Some((dec("100"), false)),
            ..NumberSpec::default()
        };
        let t = both.table(&Limits::default()).unwrap();
        for v in -200i64..=200 {
            let want = v > 0 && v <= 100 && v % 15 == 0;
            assert_eq!(t.matches(v.to_string().as_bytes()), want, "{v}");
        }
    }

    /// Pruning the states a bound fails for good (`table_product`'s `prune`) keeps the
    /// language: both ways over bounds of both signs, zero, one-digit and long integer
    /// parts, fractions, exclusive bounds, each class, draft 4, with and without a divisor.
    #[test]
    fn pruned_bounds_keep_the_language() {
        let limits = Limits::default();
        let b = |v: &str, x: bool| Some((dec(v), x));
        let mut compared = 0;
        for (lo, hi) in [
            (None, b("400", false)),
            (None, b("4", true)),
            (None, b("0", false)),
            (None, b("-4", false)),
            (b("0", true), b("400", true)),
            (b("-400", false), None),
            (b("-4", true), None),
            (b("4", false), None),
            (b("-4.5", false), b("4.5", true)),
            (b("0.25", false), b("12345678901", false)),
            (b("-99.99", true), b("-4", false)),
            (b("-400", false), b("-4.5", false)),
        ] {
            for (integers, fractions, draft4) in [
                (true, false, false),
                (false, true, false),
                (true, true, false),
                (true, false, true),
            ] {
                for multiple_of in [vec![], vec![dec("0.5")]] {
                    let spec = NumberSpec {
                        integers,
                        fractions,
                        draft4,
                        lo: lo.clone(),
                        hi: hi.clone(),
                        multiple_of,
                        ..NumberSpec::default()
                    };
                    let pruned = spec.table_product(&limits, true).unwrap();
                    let all = spec.table_product(&limits, false).unwrap();
                    assert!(pruned.same_language(&all), "{spec:?}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 96);
        // The states pruned are most of what is built: `maximum: 400` over integers
        // determinizes within 600 states pruned (about 380), and not without (about 1,900;
        // 3,000 and 5,254 while exponents were counted past the mantissa's fraction
        // digits). Without the prune of non-zero fraction digits, about 1,050.
        let spec = NumberSpec {
            integers: true,
            hi: b("400", false),
            ..NumberSpec::default()
        };
        let tight = Limits {
            max_states: 600,
            ..limits
        };
        assert!(spec.table_product(&tight, true).is_ok());
        assert!(spec.table_product(&tight, false).is_err());
        // With a lower bound of 0 too, negative values are not built on either: within
        // 400 (about 230; 640 without the fraction digits' prune), not without.
        let spec = NumberSpec {
            lo: b("0", false),
            ..spec
        };
        let tight = Limits {
            max_states: 400,
            ..limits
        };
        assert!(spec.table_product(&tight, true).is_ok());
        assert!(spec.table_product(&tight, false).is_err());
        // Draft 4 integers (by form): nothing past a `.` or an `e` is built on, `maximum:
        // 400` within 100 states (about 53).
        let spec = NumberSpec {
            draft4: true,
            lo: None,
            ..spec
        };
        let tight = Limits {
            max_states: 100,
            ..limits
        };
        assert!(spec.table_product(&tight, true).is_ok());
        // A divisor alone: fraction digits counted up to its scale, an exponent's digits up
        // to the mantissa's fraction digits, and nothing of the mantissa's residues kept
        // past `e` (integer values only): `multipleOf: 0.5` within 8,000 states (about
        // 6,400; 12,800 counting every fraction digit, 15,000 keeping residues past `e`).
        let spec = NumberSpec {
            multiple_of: vec![dec("0.5")],
            ..NumberSpec::any()
        };
        let tight = Limits {
            max_states: 8_000,
            ..limits
        };
        assert!(spec.table_product(&tight, true).is_ok());
        // Bounds of both signs within ±1e308: the mantissa is not compared with the largest
        // double's (the bounds refuse every value it would); past `e` its digit counts are
        // not kept: `0..400` within 900 states (about 820; 980 comparing the mantissa,
        // 2,260 keeping the counts, 2,900 both).
        let spec = NumberSpec {
            lo: b("0", false),
            hi: b("400", false),
            ..NumberSpec::any()
        };
        let tight = Limits {
            max_states: 900,
            ..limits
        };
        assert!(spec.table_product(&tight, true).is_ok());
    }

    /// Bounds with divisors are built as the intersection of the bounds' automaton and the
    /// divisors' one: the same language as the product of every counter at once (where
    /// that fits the state limit).
    #[test]
    fn bounds_and_divisors_apart_equal_the_product() {
        let limits = Limits::default();
        let mut compared = 0;
        for (q, lo, hi) in [
            ("0.5", Some(("0", false)), Some(("5", false))),
            ("0.25", Some(("-1", true)), Some(("2.5", false))),
            ("3", Some(("-20", false)), Some(("100", true))),
            ("0.1", None, Some(("7.3", false))),
            ("0.05", Some(("0.05", true)), None),
        ] {
            for integers in [true, false] {
                let spec = NumberSpec {
                    integers,
                    fractions: true,
                    multiple_of: vec![dec(q)],
                    lo: lo.map(|(v, x)| (dec(v), x)),
                    hi: hi.map(|(v, x)| (dec(v), x)),
                    ..NumberSpec::default()
                };
                let not = NumberSpec {
                    multiple_of: Vec::new(),
                    not_multiple_of: vec![dec(q)],
                    ..spec.clone()
                };
                for spec in [spec, not] {
                    let apart = spec.table_exact(&limits).unwrap();
                    // The product may pass the state limit: what the split is for.
                    let Ok(product) = spec.table_product(&limits, true) else {
                        continue;
                    };
                    let product = product.minimize();
                    for (a, b) in [(&apart, &product), (&product, &apart)] {
                        assert!(a.difference(b, &limits).unwrap().is_empty(), "{spec:?}");
                    }
                    compared += 1;
                }
            }
        }
        assert!(compared >= 12, "{compared} compared");
    }

    #[test]
    fn decimals_parse_compare_and_spell() {
        assert_eq!(dec("1.50").cmp_value(&dec("1.5")), Ordering::Equal);
        assert_eq!(dec("1e2").cmp_value(&dec("100.0")), Ordering::Equal);
        assert_eq!(dec("-0").cmp_value(&dec("0.0")), Ordering::Equal);
        assert_eq!(dec("-2").cmp_value(&dec("-10")), Ordering::Greater);
        assert!(!dec("12e-1").is_integer() && dec("1.2e1").is_integer());
        for (value, yes, no) in [
            (
                "1",
                &["1", "1.0", "1.000"][..],
                &["1e0", "10e-1", "1.1", "01"][..],
            ),
            (
                "100",
                &["100", "100.0", "1e2", "1e+02", "1E02"],
                &["1.0e2", "10e1", "1e002"],
            ),
            (
                "0.05",
                &["0.05", "0.050", "5e-2", "5e-02"],
                &["0.5e-1", ".05", "5e-002"],
            ),
            (
                "-1.5",
                &["-1.5", "-1.50", "-1.5e0"][..2],
                &["1.5", "-15e-1"],
            ),
            (
                "0",
                &["0", "0.0", "-0.00"],
                &["00", "0e1", "-0", "0.0000000"],
            ),
            (
                "0.0000012",
                &["0.0000012", "1.2e-6"],
                &["0.00000120000000000001"],
            ),
            ("0.000000012", &["1.2e-8"], &["0.000000012"]),
            ("1e300", &["1e300", "1e0300"], &["1", "1e00300"]),
        ] {
            let re = format!("^(?:{})$", dec(value).spellings());
            let re = regex_automata::meta::Regex::new(&re).unwrap();
            for y in yes {
                assert!(re.is_match(y), "{y} spells {value}");
            }
            for n in no {
                assert!(!re.is_match(n), "{n} does not spell {value}");
            }
        }
    }
}
