//! JSON values to and from Python objects, and events to the event dicts of transformers.
//!
//! `serde_json::Value` -> Python: objects become `dict`s in the value's key order (the
//! workspace's serde_json keeps insertion order), arrays `list`s, integers `int` (i64 or u64),
//! other numbers `float`, strings `str`, `null` `None`.
//!
//! Python -> `serde_json::Value` (templates, tools, response formats, tool choices: the same
//! conversion for parsing and for token masks): `dict` with `str` keys, `list`/`tuple`, `str`,
//! `bool`, `int` (within i64/u64; a larger one becomes the `float` that holds it exactly when
//! there is one, as `json.loads` of its digits would give serde_json), finite `float`, `None`.
//! Anything else is a `TypeError` naming the place (a JSON pointer) and the Python type; a
//! non-finite float or an integer no JSON number holds is a `ValueError`. Nesting deeper than
//! [`MAX_DEPTH`] is the typed error of the argument ([`crate::errors::too_deep`]).

use parser_runtime::Event;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors;

/// Nesting deeper than this (levels of containers, the top level being level 1) is refused,
/// so that a self-referencing or absurdly deep structure cannot exhaust the stack of this conversion or of the template
/// and schema compilers after it.
pub const MAX_DEPTH: usize = 256;

/// Which argument a Python value is converted for: nesting past [`MAX_DEPTH`] is its typed
/// error (see [`crate::errors::too_deep`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A response template (`ResponseTemplateError`).
    Template,
    /// A request's tools (`SchemaError`).
    Tools,
    /// A request's `response_format` (`SchemaError`).
    ResponseFormat,
    /// A request's `tool_choice` object (`ConstraintError`).
    ToolChoice,
}

/// One step into a JSON value: an object's key or an array's index.
pub enum Step {
    Key(String),
    Index(usize),
}

/// The JSON pointer of a place (`""` for the top level).
pub fn pointer(at: &[Step]) -> String {
    let mut out = String::new();
    for step in at {
        out.push('/');
        match step {
            Step::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

/// The Python object of a JSON value (see the module documentation).
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => number_to_py(py, n)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => map_to_py(py, map)?.into_any(),
    })
}

/// The `dict` of a JSON object, keys in the object's order.
pub fn map_to_py<'py>(py: Python<'py>, map: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, item) in map {
        dict.set_item(key, to_py(py, item)?)?;
    }
    Ok(dict)
}

fn number_to_py<'py>(py: Python<'py>, n: &Number) -> PyResult<Bound<'py, PyAny>> {
    if let Some(i) = n.as_i64() {
        Ok(i.into_pyobject(py)?.into_any())
    } else if let Some(u) = n.as_u64() {
        Ok(u.into_pyobject(py)?.into_any())
    } else {
        // Neither integer type: serde_json holds it as an f64.
        Ok(PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any())
    }
}

/// The JSON value of a Python object given as `arg` (see the module documentation). Errors:
/// `TypeError` for an object JSON has no place for, `ValueError` for a non-finite float or an
/// integer no JSON number holds exactly, each naming the JSON pointer; nesting deeper than
/// [`MAX_DEPTH`] levels is the typed error of `arg`.
pub fn from_py(obj: &Bound<'_, PyAny>, arg: Arg) -> PyResult<Value> {
    let mut at = Vec::new();
    from_py_at(obj, &mut at, arg)
}

/// A request's tools (`None` or Python `None`: no tools) as JSON. Errors: those of
/// [`from_py`], and `TypeError` for a value that is not a list.
pub fn tools(tools: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Value>> {
    match tools {
        Some(t) if !t.is_none() => match from_py(t, Arg::Tools)? {
            Value::Array(list) => Ok(list),
            _ => Err(PyTypeError::new_err(
                "tools must be a list of tool dicts (OpenAI tool JSON) or functions",
            )),
        },
        _ => Ok(Vec::new()),
    }
}

/// A request's `response_format` as JSON (`None` or Python `None`: none). Errors: those of
/// [`from_py`].
pub fn response_format(format: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value>> {
    match format {
        Some(f) if !f.is_none() => from_py(f, Arg::ResponseFormat).map(Some),
        _ => Ok(None),
    }
}

fn place(at: &[Step]) -> String {
    if at.is_empty() {
        "the top level".to_owned()
    } else {
        format!("JSON pointer {:?}", pointer(at))
    }
}

fn from_py_at(obj: &Bound<'_, PyAny>, at: &mut Vec<Step>, arg: Arg) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    // bool before int: Python's bool is a subclass of int.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        // Beyond 64 bits: the float that holds it exactly, if any.
        let f: f64 = obj.extract()?;
        let back = PyFloat::new(obj.py(), f).call_method0(intern!(obj.py(), "__int__"))?;
        if f.is_finite() && back.eq(obj)? {
            if let Some(n) = Number::from_f64(f) {
                return Ok(Value::Number(n));
            }
        }
        return Err(PyValueError::new_err(format!(
            "the integer at {} does not fit a JSON number (64-bit integer or exact float)",
            place(at)
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return Number::from_f64(v).map(Value::Number).ok_or_else(|| {
            PyValueError::new_err(format!(
                "the float at {} is {v}, which JSON cannot hold",
                place(at)
            ))
        });
    }
    let container = obj.cast::<PyDict>().is_ok()
        || obj.cast::<PyList>().is_ok()
        || obj.cast::<PyTuple>().is_ok();
    // The top level is level 1: a container `MAX_DEPTH` steps in is one level too many.
    if container && at.len() >= MAX_DEPTH {
        return Err(errors::too_deep(obj.py(), arg, at));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let key = key.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "a dict key at {} is {}, not str",
                    place(at),
                    type_name(&key)
                ))
            })?;
            at.push(Step::Key(key.to_cow()?.into_owned()));
            let value = from_py_at(&item, at, arg)?;
            if let Some(Step::Key(key)) = at.pop() {
                map.insert(key, value);
            }
        }
        return Ok(Value::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            at.push(Step::Index(i));
            items.push(from_py_at(&item?, at, arg)?);
            at.pop();
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{} at {} is not a JSON value (dict, list, tuple, str, int, float, bool or None)",
        type_name(obj),
        place(at)
    )))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an object".to_owned())
}

/// The dict of one event, as transformers builds it: `{"type": "region_open", "field": F}`,
/// `{"type": "region_chunk", "field": F, "text": T, "dirty": D}`,
/// `{"type": "region_close", "field": F, "value": V}` (plus `"violations"` when a contract
/// found some), and in lenient mode `region_malformed` (`field`, `error`, `text`) and
/// `region_truncated` (`field`, `text`).
pub fn event_to_py<'py>(py: Python<'py>, event: &Event) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let kind = intern!(py, "type");
    let field = intern!(py, "field");
    let text = intern!(py, "text");
    match event {
        Event::RegionOpen { field: f } => {
            dict.set_item(kind, intern!(py, "region_open"))?;
            dict.set_item(field, &**f)?;
        }
        Event::RegionChunk {
            field: f,
            text: t,
            dirty,
        } => {
            dict.set_item(kind, intern!(py, "region_chunk"))?;
            dict.set_item(field, &**f)?;
            dict.set_item(text, t)?;
            dict.set_item(intern!(py, "dirty"), *dirty)?;
        }
        Event::RegionClose {
            field: f,
            value,
            violations,
        } => {
            dict.set_item(kind, intern!(py, "region_close"))?;
            dict.set_item(field, &**f)?;
            dict.set_item(intern!(py, "value"), to_py(py, value)?)?;
            if !violations.is_empty() {
                dict.set_item(intern!(py, "violations"), violations_to_py(py, violations)?)?;
            }
        }
        Event::RegionMalformed {
            field: f,
            error,
            text: t,
        } => {
            dict.set_item(kind, intern!(py, "region_malformed"))?;
            dict.set_item(field, &**f)?;
            dict.set_item(intern!(py, "error"), error)?;
            dict.set_item(text, t)?;
        }
        Event::RegionTruncated { field: f, text: t } => {
            dict.set_item(kind, intern!(py, "region_truncated"))?;
            dict.set_item(field, &**f)?;
            dict.set_item(text, t)?;
        }
    }
    Ok(dict)
}

/// Contract violations as a list of dicts `{"kind", "pointer", "expected", "found"}` (the
/// serde form of `structured_outputs::Violation`; `kind` in snake_case).
pub fn violations_to_py<'py>(
    py: Python<'py>,
    violations: &[parser_runtime::structured_outputs::Violation],
) -> PyResult<Bound<'py, PyList>> {
    let value = serde_json::to_value(violations)
        .map_err(|e| PyValueError::new_err(format!("cannot convert violations: {e}")))?;
    Ok(to_py(py, &value)?.cast_into::<PyList>()?)
}

/// Event dicts for one streaming parser, built cheaply: each field's name is one Python string
/// made once, a `region_chunk` dict is a copy of a prototype made once per field (`PyDict_Copy`
/// of a four-key dict copies its table in one piece, far cheaper than four insertions) given
/// its text, and the list a feed handed out last is reused by the next feed when nothing else
/// refers to it any more (a feed of a few characters usually gives one chunk event, so
/// building these objects is most of what `feed` costs besides the call itself).
///
/// Reuse follows CPython's own rule for `zip`'s and `enumerate`'s result tuples: an object
/// whose only reference is ours cannot be seen by anyone, so changing it and handing it out
/// again is the same, to every observer, as handing out a new one. Dicts are never reused:
/// checking that a dict handed out came back unchanged (keys in order, the same values) cost
/// more than copying a prototype.
#[derive(Default)]
pub struct EventConverter {
    /// The field names seen so far with their Python strings and `region_chunk` prototypes.
    fields: Vec<ConvertedField>,
    /// The list the last [`Self::feed_events`] returned.
    spare_list: Option<Py<PyList>>,
    /// The index in `fields` of the last event's field.
    last_field: usize,
}

struct ConvertedField {
    name: std::sync::Arc<str>,
    py_name: Py<PyString>,
    /// `{"type": "region_chunk", "field": name, "text": "", "dirty": D}` for `D` false and
    /// true (made when first needed), never handed out: each chunk dict is a copy.
    chunk: [Option<Py<PyDict>>; 2],
}

/// Whether `object` has no reference but the one its caller borrows from (see
/// [`EventConverter`]). Wheels are built for the limited API of GIL builds, where the count is
/// exact.
fn only_ours(object: &Bound<'_, PyAny>) -> bool {
    #[allow(deprecated)] // deprecated for free-threaded builds, which abi3 wheels do not load
    let count = object.get_refcnt();
    count == 1
}

impl EventConverter {
    fn field(&mut self, py: Python<'_>, name: &std::sync::Arc<str>) -> usize {
        // Consecutive events are mostly of one field: the last one is looked at first.
        if self
            .fields
            .get(self.last_field)
            .is_some_and(|f| std::sync::Arc::ptr_eq(&f.name, name))
        {
            return self.last_field;
        }
        let i = self.find_field(py, name);
        self.last_field = i;
        i
    }

    fn find_field(&mut self, py: Python<'_>, name: &std::sync::Arc<str>) -> usize {
        if let Some(i) = self
            .fields
            .iter()
            .position(|f| std::sync::Arc::ptr_eq(&f.name, name) || *f.name == **name)
        {
            return i;
        }
        self.fields.push(ConvertedField {
            name: std::sync::Arc::clone(name),
            py_name: PyString::new(py, name).unbind(),
            chunk: [None, None],
        });
        self.fields.len() - 1
    }

    /// The list of event dicts of one `feed`: as [`Self::events`], in the list the previous
    /// call returned when nothing else refers to it any more and it has as many items. `fed`
    /// is the text fed, as Rust and Python strings (a plain `str`, not a subclass): a chunk of
    /// exactly that text (the usual event of a token-sized feed) carries that `str` object.
    pub fn feed_events<'py>(
        &mut self,
        py: Python<'py>,
        events: &[Event],
        fed: Option<(&str, &Bound<'py, PyString>)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let spare = self
            .spare_list
            .as_ref()
            .map(|spare| spare.bind(py))
            .filter(|spare| only_ours(spare.as_any()) && spare.len() == events.len())
            .cloned();
        let Some(list) = spare else {
            let list = PyList::empty(py);
            for event in events {
                list.append(self.event_dict(py, event, fed)?)?;
            }
            self.spare_list = Some(list.clone().unbind());
            return Ok(list);
        };
        // Each item replaced lets go of the dict the caller dropped with the list.
        for (i, event) in events.iter().enumerate() {
            list.set_item(i, self.event_dict(py, event, fed)?)?;
        }
        Ok(list)
    }

    /// The list of event dicts (the same dicts as [`event_to_py`] gives), a new list.
    pub fn events<'py>(
        &mut self,
        py: Python<'py>,
        events: &[Event],
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for event in events {
            list.append(self.event_dict(py, event, None)?)?;
        }
        Ok(list)
    }

    /// The dict of one event (a `region_chunk` is a copy of its field's prototype), and a
    /// chunk of exactly the text `fed` carries its `str`.
    fn event_dict<'py>(
        &mut self,
        py: Python<'py>,
        event: &Event,
        fed: Option<(&str, &Bound<'py, PyString>)>,
    ) -> PyResult<Bound<'py, PyDict>> {
        Ok(match event {
            Event::RegionChunk { field, text, dirty } => {
                let i = self.field(py, field);
                let converted = &mut self.fields[i];
                let slot = &mut converted.chunk[usize::from(*dirty)];
                let dict = match slot {
                    Some(prototype) => prototype.bind(py).copy()?,
                    None => {
                        let prototype = PyDict::new(py);
                        prototype.set_item(intern!(py, "type"), intern!(py, "region_chunk"))?;
                        prototype.set_item(intern!(py, "field"), converted.py_name.bind(py))?;
                        prototype.set_item(intern!(py, "text"), intern!(py, ""))?;
                        prototype.set_item(intern!(py, "dirty"), *dirty)?;
                        let dict = prototype.copy()?;
                        *slot = Some(prototype.unbind());
                        dict
                    }
                };
                dict.set_item(intern!(py, "text"), text_object(py, text, fed))?;
                dict
            }
            Event::RegionOpen { field } => {
                let i = self.field(py, field);
                let dict = PyDict::new(py);
                dict.set_item(intern!(py, "type"), intern!(py, "region_open"))?;
                dict.set_item(intern!(py, "field"), self.fields[i].py_name.bind(py))?;
                dict
            }
            other => event_to_py(py, other)?,
        })
    }
}

/// The Python string of a chunk's `text`: the `str` fed when the chunk is exactly the text fed
/// (the usual event of a token-sized feed), else a new `str`.
fn text_object<'py>(
    py: Python<'py>,
    text: &str,
    fed: Option<(&str, &Bound<'py, PyString>)>,
) -> Bound<'py, PyString> {
    match fed {
        Some((fed, py_fed)) if fed == text => py_fed.clone(),
        _ => PyString::new(py, text),
    }
}
