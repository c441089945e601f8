//! Token masks: `Matcher` over a vocabulary (constrain's `TokenIndex`), with the conventions
//! of llguidance and xgrammar (an int32 bitmask of shape `[batch, ceil(vocab_size / 32)]`,
//! bit `i` of word `w` = token `32 * w + i`, 1 = allowed).
//!
//! A matcher is a position in a compiled constraint: the template's grammar of whole
//! responses for one request (tools, `tool_choice`, response format), over one vocabulary.
//! Compiled constraints are cached by (template text, tools, tool_choice, response format,
//! vocabulary), and their masks are cached per state inside the shared `TokenIndex`, so that
//! many matchers for the same request are cheap and each state's mask is computed once.
//!
//! Differences from llguidance's `LLMatcher`: a refused token leaves the matcher where it was
//! (`consume_token` returns False; llguidance enters an error state it never leaves), as
//! xgrammar's `accept_token` does; errors of the template or request raise at construction
//! (`ConstraintError`) instead of an error state.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use constrain::dfa::DEAD;
use constrain::index::{Step, TokenIndex};
use constrain::json::SchemaMode;
use constrain::template::{compile, ConstrainError, Options, Request, ToolChoice};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use serde_json::Value;

mod bitmask;
mod check;
mod vocab;

use crate::parse::Template;
use crate::{convert, errors};
use bitmask::Target;
pub use vocab::Vocabulary;

/// Adds the mask classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Vocabulary>()?;
    m.add_class::<Matcher>()?;
    m.add_function(wrap_pyfunction!(fill_next_token_bitmask_batch, m)?)?;
    m.add_function(wrap_pyfunction!(check::_masks_check_response, m)?)?;
    m.add_function(wrap_pyfunction!(_masks_template_source, m)?)?;
    m.add_function(wrap_pyfunction!(_masks_clear_cache, m)?)?;
    Ok(())
}

/// What identifies a compiled constraint over a vocabulary.
#[derive(PartialEq, Eq)]
struct Key {
    template: String,
    tools: String,
    tool_choice: String,
    response_format: String,
    /// General JSON Schema (`schema_mode="general"`) rather than the strict subset.
    general: bool,
    vocab: u64,
}

/// How many compiled constraints (with their cached masks) the cache keeps.
const CACHE_SIZE: usize = 64;

type Cache = Mutex<Vec<(Key, Compiled)>>;

/// A compiled constraint over a vocabulary, and its rows ready to copy into bitmasks.
#[derive(Clone)]
struct Compiled {
    index: Arc<TokenIndex>,
    rows: Arc<Rows>,
}

/// Rows at most the cache of ready rows holds over all constraints (25 KB each for a
/// 200,000-token vocabulary: about 100 MB); past it, rows are built at each fill.
const MAX_READY_ROWS: usize = 4096;

static READY_ROWS: AtomicUsize = AtomicUsize::new(0);

/// Bitmask rows (`ceil(vocab_size / 32)` int32 words as `bytes`) by state, built once per
/// state of a constraint: a fill is then one copy into the caller's array. Key `u32::MAX` is
/// the EOS-only row (after the end).
#[derive(Default)]
struct Rows {
    ready: Mutex<HashMap<u32, Py<PyBytes>>>,
}

impl Rows {
    /// The row of `key`, built by `mask` on first use (and kept while the budget allows).
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: u32,
        words: usize,
        mask: impl FnOnce() -> Arc<[u64]>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if let Some(row) = self
            .ready
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(row.bind(py).clone());
        }
        let row = bitmask::encode(py, words, &mask())?;
        if READY_ROWS.fetch_add(1, Ordering::Relaxed) < MAX_READY_ROWS {
            let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
            if ready.insert(key, row.clone().unbind()).is_some() {
                READY_ROWS.fetch_sub(1, Ordering::Relaxed);
            }
        } else {
            READY_ROWS.fetch_sub(1, Ordering::Relaxed);
        }
        Ok(row)
    }
}

impl Drop for Rows {
    fn drop(&mut self) {
        let n = self.ready.get_mut().map_or(0, |m| m.len());
        READY_ROWS.fetch_sub(n, Ordering::Relaxed);
    }
}

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

/// Empties the constraint cache (for measurements of compile time).
#[pyfunction]
fn _masks_clear_cache() {
    cache().lock().unwrap_or_else(|p| p.into_inner()).clear();
}

/// The text of a vendored template by name, or None.
#[pyfunction]
fn _masks_template_source(name: &str) -> Option<&'static str> {
    templates::source(name)
}

/// The request of a matcher from its Python arguments, converted to JSON as `parse_response`
/// converts them ([`convert`]), and the cache key's texts of tools, tool choice and response
/// format. `tool_choice` is a `str` (`"auto"`, `"required"`, `"none"`, a tool's name) or a
/// `{"type": "function", "function": {"name": ...}}` object; `None` is `"auto"`.
fn request(
    py: Python<'_>,
    tools: Option<&Bound<'_, PyAny>>,
    tool_choice: Option<&Bound<'_, PyAny>>,
    response_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Request, [String; 3])> {
    let tools = convert::tools(tools)?;
    let choice = match tool_choice {
        Some(c) if !c.is_none() => match c.cast::<PyString>() {
            Ok(name) => Value::String(name.to_cow()?.into_owned()),
            Err(_) => convert::from_py(c, convert::Arg::ToolChoice)?,
        },
        _ => Value::String("auto".to_owned()),
    };
    let response_format = convert::response_format(response_format)?;
    let key = [
        serde_json::to_string(&tools).unwrap_or_default(),
        choice.to_string(),
        response_format
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default(),
    ];
    let tool_choice =
        ToolChoice::from_request(&choice).map_err(|e| errors::constraint_error(py, &e))?;
    let request = Request {
        tools,
        tool_choice,
        response_format,
    };
    Ok((request, key))
}

/// The shared index for a request, compiled (without the GIL) on a cache miss; `template` is
/// the template's JSON value (of a `Template`, so it loads).
fn index_for(
    py: Python<'_>,
    key: Key,
    template: &Value,
    vocab: &Arc<vocab::Shared>,
    request: Request,
) -> PyResult<Compiled> {
    let mut options = Options::default();
    if key.general {
        options.json.mode = SchemaMode::general();
    }
    {
        let mut entries = cache().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = entries.iter().position(|(k, _)| *k == key) {
            let entry = entries.remove(at);
            let compiled = entry.1.clone();
            entries.push(entry);
            return Ok(compiled);
        }
    }
    let vocab_index = vocab.index.clone();
    let compiled = py.detach(
        move || -> Result<Arc<TokenIndex>, Result<String, ConstrainError>> {
            // A `Template` compiled, so its value loads; a failure here would be a bug.
            let model = template_build::model::load(template).map_err(|e| Ok(e.to_string()))?;
            let constraint = compile(&model, &request, &options).map_err(Err)?;
            Ok(Arc::new(TokenIndex::new(Arc::new(constraint), vocab_index)))
        },
    );
    let index = match compiled {
        Ok(index) => index,
        Err(Ok(template_problem)) => {
            let e = ConstrainError {
                at: "template".into(),
                reason: template_problem.replace('\n', "; "),
                budget: None,
            };
            return Err(errors::constraint_error(py, &e));
        }
        Err(Err(e)) => return Err(errors::constraint_error(py, &e)),
    };
    let compiled = Compiled {
        index,
        rows: Arc::default(),
    };
    let mut entries = cache().lock().unwrap_or_else(|p| p.into_inner());
    if entries.len() >= CACHE_SIZE {
        entries.remove(0);
    }
    entries.push((key, compiled.clone()));
    Ok(compiled)
}

/// Where a matcher is: a machine state, or past an EOS that ended the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pos {
    State(u32),
    Ended,
}

/// A position in a compiled constraint over a vocabulary, for one generation.
///
/// `Matcher(template, vocabulary, tools=None, tool_choice="auto", response_format=None,
/// schema_mode="strict")`:
/// `template` is a `Template` (the Python class `response_templates.Matcher` makes one of a
/// dict, JSON text, a path or a vendored name, so that a template that does not load raises
/// what `Template` raises for it), `vocabulary` a `Vocabulary`, `tools` the OpenAI tool list,
/// `tool_choice` `"auto"`, `"required"`, `"none"`, a tool's name or `{"type": "function",
/// "function": {"name": ...}}`, and `response_format` the OpenAI `response_format` object;
/// the Python values are converted to JSON as `parse_response` converts them. `schema_mode`
/// is `"strict"` (the structured-outputs subset, the contract `parse_response` checks) or
/// `"general"` (general JSON Schema: `constrain::general`; objects open unless
/// `additionalProperties: false`). Passing another
/// matcher as the only argument copies it (same constraint, same position).
///
/// Raises ConstraintError (a ValueError, with `at`, `reason`, `budget`) for a template or
/// request that cannot be constrained; TypeError/ValueError naming the JSON pointer for a
/// Python value JSON cannot hold, SchemaError for tools or a response format nested more
/// than 256 levels deep.
#[pyclass(module = "response_templates._native", subclass, name = "Matcher")]
pub struct Matcher {
    index: Arc<TokenIndex>,
    rows: Arc<Rows>,
    vocab: Arc<vocab::Shared>,
    /// `history[0]` is the start; one entry per consumed token after it.
    history: Vec<Pos>,
    /// The last bitmask filled and its checked byte view (a fill into the same array skips
    /// the checks; holds a reference to the array until another one is filled).
    last_target: Option<(Py<PyAny>, Py<PyAny>, usize, usize)>,
}

#[pymethods]
impl Matcher {
    #[new]
    #[pyo3(signature = (template, vocabulary=None, tools=None, tool_choice=None, response_format=None, schema_mode=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        template: &Bound<'_, PyAny>,
        vocabulary: Option<PyRef<'_, Vocabulary>>,
        tools: Option<&Bound<'_, PyAny>>,
        tool_choice: Option<&Bound<'_, PyAny>>,
        response_format: Option<&Bound<'_, PyAny>>,
        schema_mode: Option<&str>,
    ) -> PyResult<Self> {
        if let Ok(other) = template.cast::<Matcher>() {
            let other = other.borrow();
            return Ok(Self {
                index: other.index.clone(),
                rows: other.rows.clone(),
                vocab: other.vocab.clone(),
                history: other.history.clone(),
                last_target: None,
            });
        }
        let template = template.cast::<Template>().map_err(|_| {
            PyTypeError::new_err(format!(
                "template: expected a response_templates.Template, got {}",
                template
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        let value = template.get().value();
        let vocabulary = vocabulary
            .ok_or_else(|| PyTypeError::new_err("Matcher: the vocabulary is required"))?;
        let vocab = vocabulary.shared.clone();
        let (req, [tools, tool_choice, response_format]) =
            request(py, tools, tool_choice, response_format)?;
        let general = match schema_mode {
            None | Some("strict") => false,
            Some("general") => true,
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "schema_mode: expected \"strict\" or \"general\", got {other:?}"
                )))
            }
        };
        let key = Key {
            template: value.to_string(),
            tools,
            tool_choice,
            response_format,
            general,
            vocab: vocab.id,
        };
        let Compiled { index, rows } = index_for(py, key, value, &vocab, req)?;
        let start = index.start();
        Ok(Self {
            index,
            rows,
            vocab,
            history: vec![Pos::State(start)],
            last_target: None,
        })
    }

    /// Number of token ids of the vocabulary (the mask covers `0..vocab_size`).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab.vocab().len()
    }

    /// The ids that end a generation.
    #[getter]
    fn eos_token_ids(&self) -> Vec<u32> {
        self.vocab.vocab().eos().to_vec()
    }

    /// The vocabulary.
    #[getter]
    fn vocabulary(&self) -> Vocabulary {
        Vocabulary {
            shared: self.vocab.clone(),
        }
    }

    /// How many tokens were consumed (and can be rolled back).
    #[getter]
    fn num_tokens(&self) -> usize {
        self.history.len() - 1
    }

    /// Consumes token `id`: True if the constraint allows it here (the matcher moves on),
    /// False if not (the matcher stays where it was). EOS is allowed where the response is
    /// complete and ends it (`is_stopped()`); after that only EOS is allowed. An id at or
    /// past `vocab_size`, however large, is never allowed (False), as in llguidance and
    /// xgrammar.
    ///
    /// Raises ValueError for a negative id, TypeError for an id that is not an integer.
    fn consume_token(&mut self, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = token_id(id)?;
        Ok(match self.step(id) {
            Some(pos) => {
                self.history.push(pos);
                true
            }
            None => false,
        })
    }

    /// Consumes tokens in order: True if all were allowed. On the first refused token it
    /// returns False, with the tokens before it consumed (`num_tokens` tells how many; roll
    /// them back with `rollback`). Ids at or past `vocab_size` are refused as in
    /// `consume_token`.
    ///
    /// Raises ValueError for a negative id, TypeError for one that is not an integer (before
    /// any token is consumed).
    fn consume_tokens(&mut self, ids: Vec<Bound<'_, PyAny>>) -> PyResult<bool> {
        for id in token_ids(&ids)? {
            match self.step(id) {
                Some(pos) => self.history.push(pos),
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// How many of `ids`, from the first, the matcher would accept in a row (it does not
    /// move). Ids at or past `vocab_size` are refused as in `consume_token`.
    ///
    /// Raises ValueError for a negative id, TypeError for one that is not an integer.
    fn validate_tokens(&self, ids: Vec<Bound<'_, PyAny>>) -> PyResult<usize> {
        let mut pos = self.pos();
        let ids = token_ids(&ids)?;
        let total = ids.len();
        for (n, id) in ids.into_iter().enumerate() {
            match self.step_from(pos, id) {
                Some(next) => pos = next,
                None => return Ok(n),
            }
        }
        Ok(total)
    }

    /// Writes the mask of the next token into row `index` of `bitmask`: an int32 array of
    /// shape `[batch, ceil(vocab_size / 32)]` (or `[ceil(vocab_size / 32)]`), C-contiguous
    /// and writable (numpy, or any object with the buffer protocol), bit `i` of word `w` is
    /// token `32 * w + i`, 1 = allowed. Wider rows are allowed (their extra words are written
    /// 0). Masks are computed once per state of the shared constraint (without the GIL) and
    /// cached; after EOS only EOS is allowed.
    ///
    /// Raises TypeError for an object that is not an int32 buffer (or an index that is not an
    /// integer), ValueError for a read-only or non-contiguous buffer or a wrong shape,
    /// IndexError for an index outside the rows (a negative one counts from the end, as
    /// numpy's).
    #[pyo3(signature = (bitmask, index=None))]
    fn fill_next_token_bitmask(
        &mut self,
        py: Python<'_>,
        bitmask: &Bound<'_, PyAny>,
        index: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let target = match &self.last_target {
            Some(kept) if kept.0.bind(py).is(bitmask) => Target::bind(py, kept),
            _ => {
                let target = Target::new(bitmask, self.vocab.vocab().len())?;
                self.last_target = Some(target.clone().unbind());
                target
            }
        };
        let row = match index {
            Some(index) => target.row_of(index)?,
            None => target.row(0)?,
        };
        let bytes = self.row_bytes(py, self.pos(), target.words)?;
        target.put(row, &bytes)
    }

    /// The allowed token ids of the next token, ascending (a list; for tests and debugging:
    /// `fill_next_token_bitmask` is the fast way).
    fn allowed_token_ids(&self, py: Python<'_>) -> Vec<u32> {
        match self.pos() {
            Pos::State(s) => {
                let index = self.index.clone();
                py.detach(move || index.allowed(s).iter().collect())
            }
            Pos::Ended => self.vocab.vocab().eos().to_vec(),
        }
    }

    /// Undoes the last `n` consumed tokens (0 does nothing).
    ///
    /// Raises ValueError for a negative `n` or more tokens than were consumed (however many),
    /// TypeError for an `n` that is not an integer.
    fn rollback(&mut self, n: &Bound<'_, PyAny>) -> PyResult<()> {
        let have = self.history.len() - 1;
        match usize::try_from(saturating_int(n)?) {
            Ok(k) if k <= have => {
                self.history.truncate(self.history.len() - k);
                Ok(())
            }
            _ => Err(PyValueError::new_err(format!(
                "rollback({n}): {have} tokens can be rolled back"
            ))),
        }
    }

    /// Back to the start (as rolling back every token).
    fn reset(&mut self) {
        self.history.truncate(1);
    }

    /// Whether the output so far is a whole valid response, or EOS ended it. EOS is allowed
    /// here, and also where its text is the delimiter that completes the response (o200k's
    /// `<|endoftext|>` closing Qwen3's content): there the output is not yet accepting.
    fn is_accepting(&self) -> bool {
        match self.pos() {
            Pos::State(s) => self.index.is_accepting(s),
            Pos::Ended => true,
        }
    }

    /// Whether the generation is over: EOS was consumed, or the response is complete and no
    /// token but EOS can follow.
    fn is_stopped(&self) -> bool {
        match self.pos() {
            Pos::Ended => true,
            Pos::State(s) => {
                let table = &self.index.machine().table;
                table.is_accepting(s) && (0..=255u8).all(|b| table.next(s, b) == DEAD)
            }
        }
    }

    /// A copy at the same position (sharing the compiled constraint and its masks).
    fn copy(&self) -> Self {
        Self {
            index: self.index.clone(),
            rows: self.rows.clone(),
            vocab: self.vocab.clone(),
            history: self.history.clone(),
            last_target: None,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Matcher(vocabulary={:?}, states={}, tokens={}, accepting={}, stopped={})",
            self.vocab.name,
            self.index.machine().table.len(),
            self.history.len() - 1,
            self.is_accepting(),
            self.is_stopped()
        )
    }
}

/// An integer argument (an `int`, or an object with `__index__` such as numpy's integers) as
/// an `i64`, saturated: an int past `i64` is `i64::MIN` or `i64::MAX` by its sign, so that an
/// id, a count or an index of any size is an ordinary value out of range, never an
/// OverflowError.
///
/// Errors: TypeError for an object that is not an integer.
pub fn saturating_int(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    match obj.extract::<i64>() {
        Ok(value) => Ok(value),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            Ok(if obj.lt(0)? { i64::MIN } else { i64::MAX })
        }
        Err(e) => Err(e),
    }
}

/// A token id as a `u32`; an id past `u32` is past every vocabulary: `u32::MAX`, never allowed.
///
/// Errors: ValueError for a negative id, TypeError for one that is not an integer.
fn token_id(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let id = saturating_int(obj)?;
    if id < 0 {
        return Err(PyValueError::new_err(format!("token id {obj} is negative")));
    }
    Ok(u32::try_from(id).unwrap_or(u32::MAX))
}

/// [`token_id`] of each of `ids`.
fn token_ids(ids: &[Bound<'_, PyAny>]) -> PyResult<Vec<u32>> {
    ids.iter().map(token_id).collect()
}

impl Matcher {
    fn pos(&self) -> Pos {
        self.history
            .last()
            .copied()
            .unwrap_or(Pos::State(self.index.start()))
    }

    fn step(&self, id: u32) -> Option<Pos> {
        self.step_from(self.pos(), id)
    }

    fn step_from(&self, pos: Pos, id: u32) -> Option<Pos> {
        match pos {
            Pos::Ended => self.vocab.vocab().eos().contains(&id).then_some(Pos::Ended),
            Pos::State(s) => match self.index.advance(s, id)? {
                Step::Next(n) => Some(Pos::State(n)),
                Step::End => Some(Pos::Ended),
            },
        }
    }

    /// The bitmask row of `pos` with `words` words: the ready row of the constraint when the
    /// width is the vocabulary's, else built now.
    fn row_bytes<'py>(
        &self,
        py: Python<'py>,
        pos: Pos,
        words: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mask = || -> Arc<[u64]> {
            match pos {
                Pos::State(s) => {
                    let mask = if self.index.is_cached(s) {
                        self.index.allowed(s)
                    } else {
                        let index = self.index.clone();
                        py.detach(move || index.allowed(s))
                    };
                    mask.words().into()
                }
                Pos::Ended => self.eos_words().into(),
            }
        };
        if words != self.vocab.vocab().len().div_ceil(32) {
            return bitmask::encode(py, words, &mask());
        }
        let key = match pos {
            Pos::State(s) => s,
            Pos::Ended => u32::MAX,
        };
        self.rows.get(py, key, words, mask)
    }

    /// The mask of EOS alone.
    fn eos_words(&self) -> Vec<u64> {
        let vocab = self.vocab.vocab();
        let mut words = vec![0u64; vocab.len().div_ceil(64)];
        for &id in vocab.eos() {
            words[id as usize / 64] |= 1 << (id % 64);
        }
        words
    }
}

/// Fills one row per matcher: `matchers[k]` into row `indices[k]` (default `k`) of `bitmask`
/// (int32, shape `[batch, ceil(vocab_size / 32)]`, as `Matcher.fill_next_token_bitmask`).
/// The masks not cached yet are computed without the GIL, in parallel threads when there are
/// several; the rows are then copied in.
///
/// Raises TypeError for a non-Matcher item or a bad bitmask, ValueError for a bad shape, a
/// length mismatch of `indices`, or matchers over vocabularies of different sizes, IndexError
/// for an index outside the rows.
#[pyfunction]
#[pyo3(signature = (matchers, bitmask, indices=None))]
fn fill_next_token_bitmask_batch(
    py: Python<'_>,
    matchers: &Bound<'_, PyAny>,
    bitmask: &Bound<'_, PyAny>,
    indices: Option<Vec<Bound<'_, PyAny>>>,
) -> PyResult<()> {
    let mut work: Vec<(PyRef<'_, Matcher>, Pos)> = Vec::new();
    let mut vocab_size = None;
    let list = PyList::new(py, matchers.try_iter()?.collect::<PyResult<Vec<_>>>()?)?;
    for (k, item) in list.iter().enumerate() {
        let m = item
            .cast::<Matcher>()
            .map_err(|_| PyTypeError::new_err(format!("matchers[{k}]: expected a Matcher")))?
            .borrow();
        let size = m.vocab.vocab().len();
        if *vocab_size.get_or_insert(size) != size {
            return Err(PyValueError::new_err(
                "matchers: all matchers of one bitmask must share a vocabulary size",
            ));
        }
        let pos = m.pos();
        work.push((m, pos));
    }
    let Some(vocab_size) = vocab_size else {
        return Ok(());
    };
    let target = Target::new(bitmask, vocab_size)?;
    let rows = match &indices {
        None => (0..work.len() as i64)
            .map(|k| target.row(k))
            .collect::<PyResult<Vec<_>>>()?,
        Some(ix) if ix.len() == work.len() => ix
            .iter()
            .map(|k| target.row_of(k))
            .collect::<PyResult<Vec<_>>>()?,
        Some(ix) => {
            return Err(PyValueError::new_err(format!(
                "indices: {} for {} matchers",
                ix.len(),
                work.len()
            )))
        }
    };
    let jobs: Vec<(Arc<TokenIndex>, u32)> = work
        .iter()
        .filter_map(|(m, pos)| match pos {
            Pos::State(s) if !m.index.is_cached(*s) => Some((m.index.clone(), *s)),
            _ => None,
        })
        .collect();
    if !jobs.is_empty() {
        py.detach(move || compute_all(&jobs));
    }
    for ((m, pos), row) in work.iter().zip(rows) {
        let bytes = m.row_bytes(py, *pos, target.words)?;
        target.put(row, &bytes)?;
    }
    Ok(())
}

/// Computes (and caches) the masks of `jobs`, on up to the machine's cores.
fn compute_all(jobs: &[(Arc<TokenIndex>, u32)]) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(jobs.len());
    if threads <= 1 {
        for (index, s) in jobs {
            index.allowed(*s);
        }
        return;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((index, s)) = jobs.get(k) else { break };
                index.allowed(*s);
            });
        }
    });
}
