//! Templates and parsing: `Template`, `parse_batch`, `ResponseParser` and their
//! errors (transformers 5.24 `utils/chat_parsing/response_parser.py` names and dicts).
//!
//! The Python layer (`response_templates/_api.py`) gives these their public signatures: it
//! turns a template dict into a cached `Template`, tool callables into JSON schemas, and the
//! batch rules of a tokenizer's `parse_response` into lists of texts and prefixes.

use std::sync::Arc;

use parser_runtime::structured_outputs::{Contract, ResponseFormat, StrictTools, Violation};
use parser_runtime::{
    CompiledTemplate, Message, OwnedResponseParser, ParseError, ParserOptions, ReasoningCalls,
    ResponseParser,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use serde_json::Value;
use template_build::{TemplateError, TemplateErrorKind, TemplateErrors};

use crate::{convert, errors};

/// A compiled response template (the `response_template` object of a
/// `tokenizer_config.json`): its delimiters compiled to DFAs once, shared by every parse.
///
/// Build one with `Template.from_dict(d)`, `Template.from_json(text)`,
/// `Template.from_file(path)` (a bare template or a `tokenizer_config.json`),
/// `Template.from_pretrained(model_dir)` or `Template.vendored(name)`. Errors: a
/// `ResponseTemplateError` (a `ValueError`) listing every problem of the template, each with
/// its JSON path, field, and for text and files the line and column.
///
/// A template is immutable: `copy.copy` and `copy.deepcopy` return it as it is. It pickles
/// (for multiprocessing: vLLM workers, `ProcessPoolExecutor`) as its JSON text and name,
/// compiled again when unpickled (`Template.from_json(t.to_json(), t.name)`); a vendored
/// template as its name (`Template.vendored(name)`).
#[pyclass(frozen, module = "response_templates", name = "Template")]
pub struct Template {
    compiled: Arc<CompiledTemplate>,
    value: Value,
    name: Option<String>,
    /// Made by `Template.vendored(name)`: pickled as the name.
    vendored: bool,
}

// For other native modules (matcher.rs takes a `Template` too): the tables and the JSON value.
#[allow(dead_code)]
impl Template {
    /// The compiled tables.
    pub fn compiled(&self) -> &Arc<CompiledTemplate> {
        &self.compiled
    }

    /// The template's JSON value (the `response_template` object).
    pub fn value(&self) -> &Value {
        &self.value
    }
}

impl Template {
    /// The template of a compilation's result (its tables and JSON value), or the
    /// `ResponseTemplateError` of its problems.
    fn built(
        py: Python<'_>,
        result: Result<(CompiledTemplate, Value), TemplateErrors>,
        name: Option<String>,
    ) -> PyResult<Self> {
        let (compiled, value) = result.map_err(|e| errors::template_error(py, &e))?;
        Ok(Self {
            compiled: Arc::new(compiled),
            value,
            name,
            vendored: false,
        })
    }
}

/// Compiles JSON text (a bare template or a `tokenizer_config.json`): the tables and the
/// template's JSON value. Errors carry line:column.
fn compile_text(text: &str) -> Result<(CompiledTemplate, Value), TemplateErrors> {
    let compiled = template_build::compile_text(text)?;
    let value = template_build::compile::template_value_from_text(text)?;
    Ok((compiled, value))
}

#[pymethods]
impl Template {
    /// Compiles a template from JSON text: a bare template, or a whole
    /// `tokenizer_config.json` (its `response_template` key is used). `name` is an optional
    /// label (`Template.name`).
    ///
    /// Errors: `ResponseTemplateError` with every problem (JSON path, field, line, column).
    #[staticmethod]
    #[pyo3(signature = (text, name = None))]
    fn from_json(py: Python<'_>, text: String, name: Option<String>) -> PyResult<Self> {
        Self::built(py, py.detach(|| compile_text(&text)), name)
    }

    /// Compiles a template from a JSON value already in Python (a `dict`); the value is
    /// converted as JSON (`str` keys; `int`, `float`, `str`, `bool`, `None`, `list`, `dict`).
    ///
    /// Errors: `TypeError`/`ValueError` for an object JSON cannot hold (naming its JSON
    /// pointer); `ResponseTemplateError` with every problem of the template (JSON path, field),
    /// or for a value nested more than 256 levels deep (kind `TooDeep`).
    #[staticmethod]
    #[pyo3(signature = (value, name = None))]
    fn from_dict(py: Python<'_>, value: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<Self> {
        let value = convert::from_py(value, convert::Arg::Template)?;
        let compiled = py.detach(|| template_build::compile(&value));
        Self::built(py, compiled.map(|c| (c, value)), name)
    }

    /// Loads and compiles a template file: a bare template, or a `tokenizer_config.json` whose
    /// `response_template` key holds it. `name` defaults to the file's stem (for a
    /// `tokenizer_config.json`, its directory's name).
    ///
    /// Errors: `ResponseTemplateError` naming the file, with line and column of each problem
    /// (also for a file that cannot be read or is not JSON).
    #[staticmethod]
    #[pyo3(signature = (path, name = None))]
    fn from_file(py: Python<'_>, path: std::path::PathBuf, name: Option<String>) -> PyResult<Self> {
        let file = path.display().to_string();
        let built = py
            .detach(|| {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    TemplateErrors::from(TemplateError::new(
                        "",
                        TemplateErrorKind::Io,
                        format!("cannot read: {e}"),
                    ))
                })?;
                compile_text(&text)
            })
            .map_err(|e| e.with_file(&file));
        let name = name.or_else(|| {
            let stem = path.file_stem()?.to_str()?;
            if stem == "tokenizer_config" {
                let dir = path.canonicalize().ok()?;
                Some(dir.parent()?.file_name()?.to_str()?.to_owned())
            } else {
                Some(stem.to_owned())
            }
        });
        Self::built(py, built, name)
    }

    /// The template of a local model directory: the `response_template` of its
    /// `tokenizer_config.json`, named after the directory.
    ///
    /// Errors: `ResponseTemplateError` naming the file (missing, not JSON, no
    /// `response_template` key, or a bad template, with line and column).
    #[staticmethod]
    fn from_pretrained(py: Python<'_>, model_dir: std::path::PathBuf) -> PyResult<Self> {
        Self::from_file(py, model_dir.join("tokenizer_config.json"), None)
    }

    /// The vendored template `name` (a file of the project's `templates/`, e.g. `"qwen3"`,
    /// `"smollm3"`, `"gpt-oss"`; `vendored_names()` lists them), compiled into this module at
    /// build time.
    ///
    /// Errors: `ResponseTemplateError` (a `ValueError`) for an unknown name: one problem of
    /// kind `"UnknownVendoredName"`, its reason naming the vendored templates.
    #[staticmethod]
    fn vendored(py: Python<'_>, name: &str) -> PyResult<Self> {
        // Checked before the cache's lock is taken: the error is built in Python, and a thread
        // that holds the lock must not wait for the GIL.
        let Some(text) = templates::source(name) else {
            return Err(errors::unknown_vendored(py, name));
        };
        let mut cache = VENDORED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((compiled, value)) = cache.get(name) {
            return Ok(Self {
                compiled: Arc::clone(compiled),
                value: value.clone(),
                name: Some(name.to_owned()),
                vendored: true,
            });
        }
        let compiled = match templates::by_name(name) {
            Some(Ok(t)) => Arc::new(t.clone()),
            Some(Err(e)) => {
                return Err(PyValueError::new_err(format!(
                    "vendored template {name:?}: {e}"
                )))
            }
            None => {
                return Err(PyValueError::new_err(format!(
                    "vendored template {name:?}: its text is built in but not its tables"
                )))
            }
        };
        let value: Value = serde_json::from_str(text).map_err(|e| {
            PyValueError::new_err(format!("vendored template {name:?}: invalid JSON: {e}"))
        })?;
        cache.insert(name.to_owned(), (Arc::clone(&compiled), value.clone()));
        Ok(Self {
            compiled,
            value,
            name: Some(name.to_owned()),
            vendored: true,
        })
    }

    /// The names of the vendored templates, sorted (`list[str]`).
    #[staticmethod]
    fn vendored_names() -> Vec<&'static str> {
        templates::names().collect()
    }

    /// The template's label: the vendored name, the file's stem, or the `name` given; `None`
    /// when there is none.
    #[getter]
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The field names, in template order (`list[str]`).
    #[getter]
    fn fields(&self) -> Vec<String> {
        self.compiled
            .fields
            .iter()
            .map(|f| f.name.clone())
            .collect()
    }

    /// The template as a new `dict` (the `response_template` object, keys in file order).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.value)
    }

    /// The template as JSON text (compact).
    fn to_json(&self) -> String {
        self.value.to_string()
    }

    /// Pickling: `Template.vendored(name)` for a vendored template, else
    /// `Template.from_json(json, name)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let this = slf.get();
        let class = slf.get_type();
        let (constructor, args) = match (&this.name, this.vendored) {
            (Some(name), true) => (
                class.getattr("vendored")?,
                PyTuple::new(slf.py(), [name.into_pyobject(slf.py())?.into_any()])?,
            ),
            _ => (
                class.getattr("from_json")?,
                (this.to_json(), this.name.as_deref()).into_pyobject(slf.py())?,
            ),
        };
        PyTuple::new(slf.py(), [constructor, args.into_any()])
    }

    /// The template itself (it is immutable).
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The template itself (it is immutable).
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __repr__(&self) -> String {
        let fields = self.fields().join(", ");
        match &self.name {
            Some(name) => format!("<Template {name:?} fields=[{fields}]>"),
            None => format!("<Template fields=[{fields}]>"),
        }
    }
}

/// The vendored templates made so far (each is cloned out of the `templates` crate once).
static VENDORED: std::sync::Mutex<
    std::collections::BTreeMap<String, (Arc<CompiledTemplate>, Value)>,
> = std::sync::Mutex::new(std::collections::BTreeMap::new());

/// What a parse needs besides template, text and prefix: the tools (JSON), the parser's
/// options and the contract.
struct Setup {
    tools: Vec<Value>,
    options: ParserOptions,
    contract: Option<Arc<Contract>>,
}

impl Setup {
    fn new(
        py: Python<'_>,
        tools: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        reasoning_calls: &str,
        response_format: Option<&Bound<'_, PyAny>>,
        strict_tools: bool,
    ) -> PyResult<Self> {
        let tools = convert::tools(tools)?;
        let reasoning_calls = match reasoning_calls {
            "keep" => ReasoningCalls::Keep,
            "extract" => ReasoningCalls::Extract,
            other => {
                return Err(PyValueError::new_err(format!(
                    "reasoning_calls must be \"keep\" or \"extract\", not {other:?}"
                )))
            }
        };
        if reasoning_calls == ReasoningCalls::Extract && !lenient {
            return Err(PyValueError::new_err(
                "reasoning_calls=\"extract\" is a policy of lenient mode: pass lenient=True too",
            ));
        }
        let options = ParserOptions {
            lenient,
            reasoning_calls,
            ..ParserOptions::default()
        };
        let response_format = match convert::response_format(response_format)? {
            Some(value) => Some(
                ResponseFormat::from_request(&value)
                    .map_err(|e| errors::schema_error(py, "response_format", &e))?,
            ),
            None => None,
        };
        let strict_tools = if strict_tools {
            if tools.is_empty() {
                return Err(PyValueError::new_err(
                    "strict_tools=True checks tool calls against `tools`: pass the tools too",
                ));
            }
            Some(StrictTools::new(&tools).map_err(|e| errors::schema_error(py, "tools", &e))?)
        } else {
            None
        };
        let contract = (response_format.is_some() || strict_tools.is_some()).then(|| {
            Arc::new(Contract {
                response_format,
                strict_tools,
            })
        });
        Ok(Self {
            tools,
            options,
            contract,
        })
    }

    /// Parses one whole output: the message and the contract's violations.
    fn run(
        &self,
        template: &CompiledTemplate,
        text: &str,
        prefix: &str,
    ) -> Result<(Message, Vec<Violation>), ParseError> {
        let mut parser = ResponseParser::with_options(template, prefix, &self.tools, self.options)?;
        // The whole output is in memory already: holding it back costs nothing more.
        parser.set_hold_limit(usize::MAX);
        if let Some(contract) = &self.contract {
            parser.set_contract(Arc::clone(contract));
        }
        parser.feed(text)?;
        let (message, _) = parser.finalize()?;
        Ok((message, parser.violations().to_vec()))
    }
}

/// The Python result of one parse: the message dict, or the error (`ContractViolation` when
/// the message breaks its contract).
fn message_result<'py>(
    py: Python<'py>,
    result: &Result<(Message, Vec<Violation>), ParseError>,
) -> PyResult<Bound<'py, PyAny>> {
    match result {
        Ok((message, violations)) if violations.is_empty() => {
            Ok(convert::map_to_py(py, message)?.into_any())
        }
        Ok((message, violations)) => Err(errors::contract_violation(py, message, violations)),
        Err(e) => Err(errors::parse_error(py, e)),
    }
}

/// Parses whole outputs with `template`, in parallel (threads: the smaller of the batch size
/// and the available parallelism; one text is parsed on the calling thread) with the GIL
/// released; `prefixes` has one prefix for all texts or one per text. Returns the list of
/// message dicts; raises the error of the first output (in batch order) that fails. The
/// public `parse_response` calls this, for one text too.
///
/// Errors: `ResponseParseError` (field, byte offset, kind), `ContractViolation` with a
/// contract, `SchemaError` for a response format or strict tools outside the supported schema
/// subset, `ValueError` for bad options or when `prefixes` has neither 1 nor `len(texts)`
/// items.
#[pyfunction]
#[pyo3(signature = (template, texts, prefixes, tools = None, lenient = false, reasoning_calls = "keep", response_format = None, strict_tools = false))]
#[allow(clippy::too_many_arguments)]
pub fn parse_batch<'py>(
    py: Python<'py>,
    template: &Bound<'py, Template>,
    texts: Vec<String>,
    prefixes: Vec<String>,
    tools: Option<&Bound<'py, PyAny>>,
    lenient: bool,
    reasoning_calls: &str,
    response_format: Option<&Bound<'py, PyAny>>,
    strict_tools: bool,
) -> PyResult<Bound<'py, PyList>> {
    if prefixes.len() != 1 && prefixes.len() != texts.len() {
        return Err(PyValueError::new_err(format!(
            "{} outputs but {} prefixes: pass one prefix for all outputs, or one per output",
            texts.len(),
            prefixes.len()
        )));
    }
    let setup = Setup::new(
        py,
        tools,
        lenient,
        reasoning_calls,
        response_format,
        strict_tools,
    )?;
    let compiled = Arc::clone(&template.get().compiled);
    let results = py.detach(|| run_parallel(&setup, &compiled, &texts, &prefixes));
    let list = PyList::empty(py);
    for result in &results {
        match result {
            Some(result) => list.append(message_result(py, result)?)?,
            None => {
                return Err(PyRuntimeError::new_err(
                    "a parsing thread stopped unexpectedly (this is a bug; please report it)",
                ))
            }
        }
    }
    Ok(list)
}

/// The number of threads a batch may use: `std::thread::available_parallelism`, read once (on
/// Linux it reads the cgroup's CPU quota from files, tens of microseconds a call).
fn parallelism() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

type Outcome = Result<(Message, Vec<Violation>), ParseError>;

/// Parses `texts` on up to `available_parallelism` threads, each taking a contiguous run of
/// the batch; the results are in batch order (`None` for a run whose thread failed).
fn run_parallel(
    setup: &Setup,
    template: &CompiledTemplate,
    texts: &[String],
    prefixes: &[String],
) -> Vec<Option<Outcome>> {
    let prefix = |i: usize| -> &str {
        if prefixes.len() == 1 {
            &prefixes[0]
        } else {
            &prefixes[i]
        }
    };
    let one = |i: usize| Some(setup.run(template, &texts[i], prefix(i)));
    let threads = if texts.len() <= 1 {
        1
    } else {
        parallelism().min(texts.len())
    };
    if threads <= 1 {
        return (0..texts.len()).map(one).collect();
    }
    let per_thread = texts.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for start in (0..texts.len()).step_by(per_thread) {
            let end = (start + per_thread).min(texts.len());
            let work = move || (start..end).map(one).collect::<Vec<_>>();
            // A thread the system refuses runs its share here instead.
            match std::thread::Builder::new().spawn_scoped(scope, work) {
                Ok(handle) => handles.push((start, end, Ok(handle))),
                Err(_) => handles.push((start, end, Err(work()))),
            }
        }
        let mut out = Vec::with_capacity(texts.len());
        for (start, end, handle) in handles {
            match handle {
                Ok(handle) => match handle.join() {
                    Ok(results) => out.extend(results),
                    Err(_) => out.extend((start..end).map(|_| None)),
                },
                Err(results) => out.extend(results),
            }
        }
        out
    })
}

/// transformers' streaming `ResponseParser` on the compiled engine:
/// `ResponseParser(response_template, prefix=None, *, tools=None, lenient=False,
/// reasoning_calls="keep", response_format=None, strict_tools=False)`.
///
/// `response_template` is a `Template` or a template dict (compiled once and cached by its
/// JSON text); `prefix` is the chat prompt the model saw (required: pass `""` to opt out);
/// `tools` the request's tools (OpenAI tool dicts or Python functions), used to type tool-call
/// arguments. Extras (default off): `lenient` (a region that cannot be parsed becomes a
/// `region_malformed` event and its text goes to the content), `reasoning_calls`
/// (`"extract"`: lenient mode takes complete tool calls out of the reasoning),
/// `response_format` (an OpenAI `response_format` object) and `strict_tools` (calls checked
/// against `tools`): the contract, checked as regions close and at `finalize`.
///
/// `initial_events` (list of event dicts) holds the events of the prefix's replay;
/// `feed(text)` returns the events `text` causes; `finalize()` returns `(message, events)`.
/// Events are transformers' dicts (`region_open`, `region_chunk`, `region_close`).
///
/// Errors: `ValueError` when `prefix` is `None`; `ResponseTemplateError` for a bad template;
/// `ResponseParseError` (`.field`, `.offset` in bytes of the output, `.kind`) from `feed` or
/// `finalize`; `RuntimeError` for `feed`/`finalize` after `finalize`; `ContractViolation`
/// from `finalize` when the message breaks its contract.
///
/// A parser cannot be pickled or copied (`TypeError`): it is a parse in progress; make one per
/// output (its `Template` pickles).
#[pyclass(module = "response_templates", name = "ResponseParser")]
pub struct StreamParser {
    parser: OwnedResponseParser,
    initial_events: Py<PyList>,
    checked: bool,
    converter: convert::EventConverter,
    /// The events of one `feed`, converted and recycled before it returns (kept for its
    /// capacity, and its chunk texts' allocations go back to the parser).
    scratch: Vec<parser_runtime::Event>,
}

#[pymethods]
impl StreamParser {
    #[new]
    #[pyo3(signature = (response_template, prefix = None, *, tools = None, lenient = false, reasoning_calls = "keep", response_format = None, strict_tools = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        response_template: &Bound<'_, PyAny>,
        prefix: Option<String>,
        tools: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        reasoning_calls: &str,
        response_format: Option<&Bound<'_, PyAny>>,
        strict_tools: bool,
    ) -> PyResult<Self> {
        // The Python layer turns a dict into a (cached) Template and functions into schemas.
        let resolved = py
            .import("response_templates._api")?
            .getattr("_resolve")?
            .call1((response_template, tools))?;
        let resolved = resolved.cast::<PyTuple>()?;
        let template = resolved.get_item(0)?;
        let template = template.cast::<Template>()?;
        let tools = resolved.get_item(1)?;
        let Some(prefix) = prefix else {
            return Err(errors::parse_error(py, &ParseError::MissingPrefix));
        };
        let setup = Setup::new(
            py,
            Some(&tools),
            lenient,
            reasoning_calls,
            response_format,
            strict_tools,
        )?;
        let compiled = Arc::clone(&template.get().compiled);
        let mut parser =
            OwnedResponseParser::with_options(compiled, &prefix, &setup.tools, setup.options)
                .map_err(|e| errors::parse_error(py, &e))?;
        let checked = setup.contract.is_some();
        if let Some(contract) = setup.contract {
            parser.set_contract(contract);
        }
        let mut converter = convert::EventConverter::default();
        let initial_events = converter.events(py, parser.initial_events())?.unbind();
        Ok(Self {
            parser,
            initial_events,
            checked,
            converter,
            scratch: Vec::new(),
        })
    }

    /// The events of the prefix's replay (regions the chat template opened), as a list of
    /// event dicts (the same list object on every access, as in transformers).
    #[getter]
    fn initial_events(&self, py: Python<'_>) -> Py<PyList> {
        self.initial_events.clone_ref(py)
    }

    /// Feeds the next piece of output (`str`); returns the events it causes (list of dicts).
    ///
    /// Errors: `ResponseParseError` when a region that closes cannot be parsed (or held text
    /// passes the hold limit); `RuntimeError` after `finalize`.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        // The UTF-8 bytes Python encodes, borrowed (no second copy); they are valid UTF-8, as
        // Python's encoder refuses lone surrogates (a UnicodeEncodeError).
        let bytes = text.encode_utf8()?;
        let utf8 = std::str::from_utf8(bytes.as_bytes())
            .map_err(|e| PyValueError::new_err(format!("feed: text is not UTF-8: {e}")))?;
        let fed = self.parser.feed_into(utf8, &mut self.scratch);
        let events = fed.map_err(|e| errors::parse_error(py, &e)).and_then(|()| {
            let plain = text.is_exact_instance_of::<PyString>();
            let fed = plain.then_some((utf8, text));
            self.converter.feed_events(py, &self.scratch, fed)
        });
        self.parser.recycle(&mut self.scratch);
        events
    }

    /// Ends the output: returns `(message, final_events)` (a dict and a list of event dicts).
    ///
    /// Errors: `ResponseParseError` (a region that cannot be parsed, required fields missing:
    /// `.kind == "missing_required"`, `.fields`); `ContractViolation` (with `.message`) when a
    /// contract is set and the message breaks it; `RuntimeError` after `finalize`.
    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (message, events) = self
            .parser
            .finalize()
            .map_err(|e| errors::parse_error(py, &e))?;
        if self.checked && !self.parser.violations().is_empty() {
            return Err(errors::contract_violation(
                py,
                &message,
                self.parser.violations(),
            ));
        }
        let message = convert::map_to_py(py, &message)?;
        let events = self.converter.events(py, &events)?;
        PyTuple::new(py, [message.into_any(), events.into_any()])
    }

    /// Refused: a parser is a parse in progress, tied to its process.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a ResponseParser cannot be pickled or copied: it holds a parse in progress; make \
             one per output in the process that parses it (its Template pickles, and a \
             template dict is compiled once per process)",
        ))
    }

    /// The contract violations found so far (list of dicts: `kind`, `pointer`, `expected`,
    /// `found`): the tool calls closed so far, and after `finalize` the response format's.
    /// Empty without a contract.
    fn violations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        convert::violations_to_py(py, self.parser.violations())
    }
}

/// Adds the parsing classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Template>()?;
    m.add_class::<StreamParser>()?;
    m.add_function(wrap_pyfunction!(parse_batch, m)?)?;
    Ok(())
}
