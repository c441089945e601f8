//! `Vocabulary`: a tokenizer's token bytes, special tokens and EOS ids, prepared once for masks
//! (`constrain::index::VocabIndex`) and cached per source, so that every matcher over the same
//! tokenizer shares one trie.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use constrain::index::VocabIndex;
use constrain::vocab::{VocabError, Vocabulary as RawVocabulary};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors;

/// The built-in vocabularies (tiktoken-rs ships their files).
pub const BUILTIN: [&str; 3] = ["o200k_base", "cl100k_base", "o200k_harmony"];

/// How many prepared vocabularies the cache keeps (each is about 30 MB for 200,000 tokens).
const CACHE_SIZE: usize = 8;

/// A prepared vocabulary and what identifies it.
pub struct Shared {
    /// Unique per prepared vocabulary (part of the constraint cache's key).
    pub id: u64,
    /// The source it was read from (a built-in name, a file name).
    pub name: String,
    /// The trie and tiers for masks.
    pub index: Arc<VocabIndex>,
    /// tiktoken-rs's encoder for a built-in vocabulary, built on first `encode`.
    bpe: OnceLock<Option<tiktoken_rs::CoreBPE>>,
}

impl Shared {
    /// The vocabulary.
    pub fn vocab(&self) -> &RawVocabulary {
        self.index.vocab()
    }
}

type Cache = Mutex<Vec<(String, Arc<Shared>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

fn vocab_error(py: Python<'_>, e: VocabError) -> PyErr {
    errors::vocabulary_error(py, e.to_string())
}

/// The cached vocabulary under `key`, or the one `load` reads (run without the GIL), cached.
fn cached(
    py: Python<'_>,
    key: String,
    name: &str,
    load: impl FnOnce() -> Result<RawVocabulary, VocabError> + Send,
) -> PyResult<Arc<Shared>> {
    let lookup = |key: &str| {
        let mut entries = cache().lock().unwrap_or_else(|p| p.into_inner());
        let at = entries.iter().position(|(k, _)| k == key)?;
        // Most recently used last.
        let entry = entries.remove(at);
        let shared = entry.1.clone();
        entries.push(entry);
        Some(shared)
    };
    if let Some(shared) = lookup(&key) {
        return Ok(shared);
    }
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let name = name.to_string();
    let shared = py.detach(move || -> Result<Arc<Shared>, VocabError> {
        let vocab = load()?;
        Ok(Arc::new(Shared {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name,
            index: Arc::new(VocabIndex::new(vocab)),
            bpe: OnceLock::new(),
        }))
    });
    let shared = shared.map_err(|e| vocab_error(py, e))?;
    let mut entries = cache().lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, existing)) = entries.iter().find(|(k, _)| *k == key) {
        // Another thread prepared it meanwhile: share theirs.
        return Ok(existing.clone());
    }
    if entries.len() >= CACHE_SIZE {
        entries.remove(0);
    }
    entries.push((key, shared.clone()));
    Ok(shared)
}

fn text_key(kind: &str, text: &str, extra: &str) -> String {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    extra.hash(&mut h);
    format!("{kind}\0{:016x}\0{}\0{extra}", h.finish(), text.len())
}

/// A tokenizer's vocabulary prepared for token masks: the bytes of every token id, which ids
/// are special, which end a generation (EOS). Build one with `Vocabulary.builtin(name)`,
/// `Vocabulary.from_tokenizer_json(text)` or `Vocabulary.from_tiktoken(text, specials, eos)`;
/// the same source gives the same (cached) object's data, so matchers over it share masks.
#[pyclass(module = "response_templates._native", frozen, name = "Vocabulary")]
pub struct Vocabulary {
    pub shared: Arc<Shared>,
}

#[pymethods]
impl Vocabulary {
    /// A vocabulary tiktoken-rs ships: `"o200k_base"`, `"cl100k_base"` (EOS `<|endoftext|>`)
    /// or `"o200k_harmony"` (gpt-oss; EOS `<|return|>`, `<|call|>`, `<|endoftext|>`). About a
    /// second the first time, cached afterwards.
    ///
    /// Raises VocabularyError (a ValueError) for another name.
    #[staticmethod]
    fn builtin(py: Python<'_>, name: &str) -> PyResult<Self> {
        if !BUILTIN.contains(&name) {
            return Err(errors::vocabulary_error(
                py,
                format!(
                    "{name}: unknown built-in vocabulary (o200k_base, cl100k_base, o200k_harmony)"
                ),
            ));
        }
        let owned = name.to_string();
        let shared = cached(py, format!("builtin\0{name}"), name, move || {
            RawVocabulary::builtin(&owned)
        })?;
        Ok(Self { shared })
    }

    /// A Hugging Face `tokenizer.json` (its text): `model.vocab` (BPE or Unigram, byte-level
    /// or SentencePiece token text) and `added_tokens`. `eos`: the texts of the special tokens
    /// that end a generation (default: the usual ones present, such as `<|im_end|>`,
    /// `<|endoftext|>`, `</s>`). `source` names the file in errors.
    ///
    /// Raises VocabularyError: not JSON, no `model.vocab`, no EOS among the special tokens.
    #[staticmethod]
    #[pyo3(signature = (text, *, eos=None, source="tokenizer.json"))]
    fn from_tokenizer_json(
        py: Python<'_>,
        text: String,
        eos: Option<Vec<String>>,
        source: &str,
    ) -> PyResult<Self> {
        let extra = eos.as_ref().map(|e| e.join("\u{1}")).unwrap_or_default();
        let key = text_key("hf", &text, &extra);
        let name = source.to_string();
        let shared = cached(py, key, source, move || {
            let names: Option<Vec<&str>> =
                eos.as_ref().map(|e| e.iter().map(String::as_str).collect());
            RawVocabulary::from_hf_tokenizer(&name, &text, names.as_deref())
        })?;
        Ok(Self { shared })
    }

    /// A `.tiktoken` file (its text: `base64(token bytes) rank` per line) plus its special
    /// tokens (`{text: id}`: a .tiktoken file does not list them) and the texts of those that
    /// end a generation (`eos`, at least one).
    ///
    /// Raises VocabularyError: a bad line (with its number), a repeated rank, an EOS that is
    /// not among the specials, no EOS.
    #[staticmethod]
    #[pyo3(signature = (text, special_tokens, eos, *, source=".tiktoken"))]
    fn from_tiktoken(
        py: Python<'_>,
        text: String,
        special_tokens: &Bound<'_, PyDict>,
        eos: Vec<String>,
        source: &str,
    ) -> PyResult<Self> {
        let mut specials: Vec<(String, u32)> = Vec::new();
        for (k, v) in special_tokens.iter() {
            let text: String = k
                .extract()
                .map_err(|_| PyTypeError::new_err("special_tokens: keys must be str"))?;
            let id: u32 = v.extract().map_err(|_| {
                PyValueError::new_err(format!(
                    "special_tokens[{text:?}]: the id must be an int in 0..2**32"
                ))
            })?;
            specials.push((text, id));
        }
        if eos.is_empty() {
            return Err(errors::vocabulary_error(
                py,
                format!("{source}: a .tiktoken vocabulary needs at least one EOS text (eos=[...])"),
            ));
        }
        specials.sort();
        let extra = format!("{specials:?}\u{1}{}", eos.join("\u{1}"));
        let key = text_key("tiktoken", &text, &extra);
        let name = source.to_string();
        let shared = cached(py, key, source, move || {
            let eos: Vec<&str> = eos.iter().map(String::as_str).collect();
            RawVocabulary::from_tiktoken(&name, &text, &specials, &eos)
        })?;
        Ok(Self { shared })
    }

    /// Number of token ids (the mask covers ids `0..vocab_size`).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.shared.vocab().len()
    }

    /// The ids that end a generation.
    #[getter]
    fn eos_token_ids(&self) -> Vec<u32> {
        self.shared.vocab().eos().to_vec()
    }

    /// The source (built-in name or file name).
    #[getter]
    fn name(&self) -> &str {
        &self.shared.name
    }

    /// The bytes of token `id` (empty for an unused id).
    ///
    /// Raises ValueError for an id outside `0..vocab_size`.
    fn token_bytes<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let id = self.check_id(id)?;
        Ok(PyBytes::new(py, self.shared.vocab().token(id)))
    }

    /// Whether token `id` is special (a control token such as EOS).
    ///
    /// Raises ValueError for an id outside `0..vocab_size`.
    fn is_special(&self, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = self.check_id(id)?;
        Ok(self.shared.vocab().is_special(id))
    }

    /// The id of a special token by its text, or None.
    fn special_id(&self, text: &str) -> Option<u32> {
        self.shared.vocab().special_id(text)
    }

    /// The bytes of a token sequence: special tokens as their text, EOS ids left out.
    ///
    /// Raises ValueError for an id outside `0..vocab_size`.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids
            .iter()
            .map(|id| self.check_id(id))
            .collect::<PyResult<Vec<u32>>>()?;
        Ok(PyBytes::new(py, &self.shared.vocab().decode(&ids)))
    }

    /// Token ids of `text` with the built-in vocabulary's own BPE (tiktoken's): ordinary text
    /// only, or with `allow_special=True` special tokens' texts as their single ids.
    ///
    /// Raises ValueError for a vocabulary that is not built in (use its tokenizer).
    #[pyo3(signature = (text, *, allow_special=false))]
    fn encode(&self, py: Python<'_>, text: &str, allow_special: bool) -> PyResult<Vec<u32>> {
        let name = self.shared.name.clone();
        let bpe = self.shared.bpe.get_or_init(|| {
            py.detach(|| match name.as_str() {
                "o200k_base" => tiktoken_rs::o200k_base().ok(),
                "cl100k_base" => tiktoken_rs::cl100k_base().ok(),
                "o200k_harmony" => tiktoken_rs::o200k_harmony().ok(),
                _ => None,
            })
        });
        let Some(bpe) = bpe else {
            return Err(PyValueError::new_err(format!(
                "{}: encode is available for the built-in vocabularies only (use the \
                 tokenizer the vocabulary came from)",
                self.shared.name
            )));
        };
        Ok(if allow_special {
            bpe.encode_with_special_tokens(text)
        } else {
            bpe.encode_ordinary(text)
        })
    }

    fn __len__(&self) -> usize {
        self.shared.vocab().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Vocabulary({:?}, vocab_size={}, eos_token_ids={:?})",
            self.shared.name,
            self.shared.vocab().len(),
            self.shared.vocab().eos()
        )
    }
}

impl Vocabulary {
    fn check_id(&self, id: &Bound<'_, PyAny>) -> PyResult<u32> {
        let n = self.shared.vocab().len();
        u32::try_from(super::saturating_int(id)?)
            .ok()
            .filter(|&i| (i as usize) < n)
            .ok_or_else(|| {
                PyValueError::new_err(format!("token id {id} is outside the vocabulary (0..{n})"))
            })
    }
}
