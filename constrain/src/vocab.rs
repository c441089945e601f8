//! Tokenizer vocabularies: each token id's bytes, which ids are special, which end a
//! generation (EOS).
//!
//! Loaders: tiktoken `.tiktoken` files (`base64(token bytes) rank` per line), the
//! vocabularies tiktoken-rs ships (`o200k_base`, `cl100k_base`, `o200k_harmony`), and Hugging
//! Face `tokenizer.json` (BPE or Unigram vocabularies with byte-level or SentencePiece (`▁`,
//! `<0xNN>`) token text, plus `added_tokens`; WordPiece `##` pieces are not read).

use std::collections::HashMap;

use base64::Engine;
use serde_json::Value;

/// A vocabulary could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {reason}")]
pub struct VocabError {
    /// The file or built-in vocabulary.
    pub source_name: String,
    /// What is wrong (with the line or JSON path when known).
    pub reason: String,
}

fn verr(source_name: &str, reason: impl Into<String>) -> VocabError {
    VocabError {
        source_name: source_name.to_string(),
        reason: reason.into(),
    }
}

/// Token bytes by id, special flags, EOS ids.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// Bytes of each token id (empty for an id the vocabulary does not use).
    tokens: Vec<Vec<u8>>,
    /// Whether each id is a special (control) token.
    special: Vec<bool>,
    /// Ids that end a generation.
    eos: Vec<u32>,
}

/// The largest token id a loader accepts (ids index a table: a bigger one is an error, not
/// an allocation).
pub const MAX_TOKEN_ID: u64 = 1 << 24;

/// Names that end a generation when a tokenizer file does not say (EOS of common models).
pub const DEFAULT_EOS: &[&str] = &[
    "<|endoftext|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "</s>",
    "<eos>",
    "<|return|>",
    "<|call|>",
    "<turn|>",
];

impl Vocabulary {
    /// A vocabulary from its parts: `tokens[id]` is the token's bytes, `special` lists special
    /// ids, `eos` the ids that end a generation (each must be special).
    ///
    /// Errors: an id in `special` or `eos` outside `tokens`, or an EOS id that is not special.
    pub fn new(tokens: Vec<Vec<u8>>, special: &[u32], eos: &[u32]) -> Result<Self, VocabError> {
        let n = tokens.len();
        let mut flags = vec![false; n];
        for &id in special {
            *flags
                .get_mut(id as usize)
                .ok_or_else(|| verr("vocabulary", format!("special id {id} >= {n}")))? = true;
        }
        for &id in eos {
            if !flags.get(id as usize).copied().unwrap_or(false) {
                return Err(verr(
                    "vocabulary",
                    format!("EOS id {id} is not a special token"),
                ));
            }
        }
        Ok(Self {
            tokens,
            special: flags,
            eos: eos.to_vec(),
        })
    }

    /// Number of ids (the size of a mask).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether there is no token.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The bytes of `id` (empty when unused or out of range).
    pub fn token(&self, id: u32) -> &[u8] {
        self.tokens.get(id as usize).map_or(&[][..], Vec::as_slice)
    }

    /// Whether `id` is special.
    pub fn is_special(&self, id: u32) -> bool {
        self.special.get(id as usize).copied().unwrap_or(false)
    }

    /// The ids that end a generation.
    pub fn eos(&self) -> &[u32] {
        &self.eos
    }

    /// The id of a special token by its text.
    pub fn special_id(&self, text: &str) -> Option<u32> {
        (0..self.tokens.len() as u32)
            .find(|&id| self.is_special(id) && self.token(id) == text.as_bytes())
    }

    /// The bytes of a token sequence, special tokens as their text, EOS ids left out.
    pub fn decode(&self, ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            if !self.eos.contains(&id) {
                out.extend_from_slice(self.token(id));
            }
        }
        out
    }

    /// Reads a `.tiktoken` file's text (`base64 rank` per line) plus its special tokens
    /// (`(text, id)`); `eos` names which specials end a generation.
    ///
    /// Errors: a line that is not `base64 rank` (with its line number), a repeated rank, an
    /// EOS name that is not among the specials.
    pub fn from_tiktoken(
        source_name: &str,
        text: &str,
        specials: &[(String, u32)],
        eos: &[&str],
    ) -> Result<Self, VocabError> {
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |what: &str| verr(source_name, format!("line {}: {what}", i + 1));
            let mut parts = line.split(' ');
            let (Some(b64), Some(rank), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(at("expected `base64 rank`"));
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| at(&format!("base64: {e}")))?;
            let rank: usize = rank.parse().map_err(|_| at("the rank is not a number"))?;
            if rank as u64 > MAX_TOKEN_ID {
                return Err(at(&format!(
                    "rank {rank} is over the limit of {MAX_TOKEN_ID}"
                )));
            }
            if rank >= tokens.len() {
                tokens.resize(rank + 1, Vec::new());
            }
            if !tokens[rank].is_empty() {
                return Err(at(&format!("rank {rank} appears twice")));
            }
            tokens[rank] = bytes;
        }
        Self::with_specials(source_name, tokens, specials, eos)
    }

    fn with_specials(
        source_name: &str,
        mut tokens: Vec<Vec<u8>>,
        specials: &[(String, u32)],
        eos: &[&str],
    ) -> Result<Self, VocabError> {
        let mut special_ids = Vec::new();
        for (text, id) in specials {
            if u64::from(*id) > MAX_TOKEN_ID {
                return Err(verr(
                    source_name,
                    format!("special id {id} is over the limit of {MAX_TOKEN_ID}"),
                ));
            }
            let id_usize = *id as usize;
            if id_usize >= tokens.len() {
                tokens.resize(id_usize + 1, Vec::new());
            }
            let old = &tokens[id_usize];
            if !old.is_empty() && old != text.as_bytes() {
                return Err(verr(
                    source_name,
                    format!(
                        "special token {text:?} would replace token {id} ({:?})",
                        String::from_utf8_lossy(old)
                    ),
                ));
            }
            tokens[id_usize] = text.as_bytes().to_vec();
            special_ids.push(*id);
        }
        let mut eos_ids = Vec::new();
        for name in eos {
            match specials.iter().find(|(t, _)| t == name) {
                Some((_, id)) => eos_ids.push(*id),
                None => {
                    return Err(verr(
                        source_name,
                        format!("EOS {name:?} is not a special token of the vocabulary"),
                    ))
                }
            }
        }
        Self::new(tokens, &special_ids, &eos_ids).map_err(|e| verr(source_name, e.reason))
    }

    /// A vocabulary tiktoken-rs ships: `o200k_base`, `cl100k_base` (EOS `<|endoftext|>`) or
    /// `o200k_harmony` (gpt-oss; EOS `<|return|>`, `<|call|>`, `<|endoftext|>`).
    ///
    /// Errors: an unknown name.
    pub fn builtin(name: &str) -> Result<Self, VocabError> {
        let (bpe, eos): (tiktoken_rs::CoreBPE, &[&str]) = match name {
            "o200k_base" => (
                tiktoken_rs::o200k_base().map_err(|e| verr(name, e.to_string()))?,
                &["<|endoftext|>"],
            ),
            "cl100k_base" => (
                tiktoken_rs::cl100k_base().map_err(|e| verr(name, e.to_string()))?,
                &["<|endoftext|>"],
            ),
            "o200k_harmony" => (
                tiktoken_rs::o200k_harmony().map_err(|e| verr(name, e.to_string()))?,
                &["<|return|>", "<|call|>", "<|endoftext|>"],
            ),
            other => {
                return Err(verr(
                    other,
                    "unknown built-in vocabulary (o200k_base, cl100k_base, o200k_harmony)",
                ))
            }
        };
        let mut specials: Vec<(String, u32)> = Vec::new();
        for text in bpe.special_tokens() {
            let ids = bpe.encode_with_special_tokens(text);
            if let [id] = ids.as_slice() {
                specials.push((text.to_string(), *id));
            }
        }
        specials.sort_by_key(|(_, id)| *id);
        let max_special = specials.iter().map(|(_, id)| *id).max().unwrap_or(0);
        let mut tokens = Vec::new();
        for id in 0..=max_special {
            if specials.iter().any(|(_, s)| *s == id) {
                tokens.push(Vec::new());
                continue;
            }
            tokens.push(bpe.decode_bytes(&[id]).unwrap_or_default());
        }
        Self::with_specials(name, tokens, &specials, eos)
    }

    /// Reads a Hugging Face `tokenizer.json`: `model.vocab` (an object `token -> id`, or
    /// Unigram's `[[token, score], ...]`) and `added_tokens` (`id`, `content`, `special`).
    /// Token text is read as byte-level BPE (GPT-2's byte-to-character map) when the
    /// pre-tokenizer or decoder is `ByteLevel`, as SentencePiece (`▁` is a space, `<0xNN>` a
    /// byte) when the decoder has `ByteFallback`, `Metaspace` or replaces `▁`, and as UTF-8
    /// otherwise. EOS: the special tokens named in `eos` (default [`DEFAULT_EOS`]) that exist.
    ///
    /// Errors: text that is not JSON, no `model.vocab`, an id that is not a number.
    pub fn from_hf_tokenizer(
        source_name: &str,
        text: &str,
        eos: Option<&[&str]>,
    ) -> Result<Self, VocabError> {
        let json: Value =
            serde_json::from_str(text).map_err(|e| verr(source_name, format!("not JSON: {e}")))?;
        let mentions = |key: &str, what: &str| {
            json.get(key)
                .is_some_and(|v| v.to_string().contains(&format!("\"{what}\"")))
        };
        let byte_level = mentions("pre_tokenizer", "ByteLevel") || mentions("decoder", "ByteLevel");
        let sentencepiece = mentions("decoder", "ByteFallback")
            || mentions("decoder", "Metaspace")
            || json
                .get("decoder")
                .is_some_and(|d| d.to_string().contains('▁'));
        let byte_map = gpt2_unicode_to_byte();
        let decode = |token: &str| -> Vec<u8> {
            if byte_level {
                let mut out = Vec::new();
                for c in token.chars() {
                    match byte_map.get(&c) {
                        Some(&b) => out.push(b),
                        None => out.extend_from_slice(c.to_string().as_bytes()),
                    }
                }
                out
            } else if sentencepiece {
                if let Some(hex) = token.strip_prefix("<0x").and_then(|t| t.strip_suffix('>')) {
                    if let Ok(b) = u8::from_str_radix(hex, 16) {
                        return vec![b];
                    }
                }
                token.replace('▁', " ").into_bytes()
            } else {
                token.as_bytes().to_vec()
            }
        };
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        let mut put = |id: u64, bytes: Vec<u8>| -> Result<(), VocabError> {
            if id > MAX_TOKEN_ID {
                return Err(verr(
                    source_name,
                    format!("token id {id} is over the limit of {MAX_TOKEN_ID}"),
                ));
            }
            let id = id as usize;
            if id >= tokens.len() {
                tokens.resize(id + 1, Vec::new());
            }
            tokens[id] = bytes;
            Ok(())
        };
        match json.pointer("/model/vocab") {
            Some(Value::Object(vocab)) => {
                for (token, id) in vocab {
                    let id = id.as_u64().ok_or_else(|| {
                        verr(
                            source_name,
                            format!("model.vocab.{token}: the id is not a number"),
                        )
                    })?;
                    put(id, decode(token))?;
                }
            }
            Some(Value::Array(pieces)) => {
                for (id, piece) in pieces.iter().enumerate() {
                    let token = piece.get(0).and_then(Value::as_str).unwrap_or("");
                    put(id as u64, decode(token))?;
                }
            }
            _ => return Err(verr(source_name, "no model.vocab")),
        }
        let mut specials = Vec::new();
        if let Some(Value::Array(added)) = json.get("added_tokens") {
            for (i, t) in added.iter().enumerate() {
                let id = t.get("id").and_then(Value::as_u64).ok_or_else(|| {
                    verr(source_name, format!("added_tokens[{i}].id is not a number"))
                })?;
                let content = t.get("content").and_then(Value::as_str).unwrap_or("");
                let special = t.get("special").and_then(Value::as_bool).unwrap_or(false);
                // Added tokens are matched as whole strings, not byte-level text.
                put(id, content.as_bytes().to_vec())?;
                if special {
                    specials.push((content.to_string(), id as u32));
                }
            }
        }
        let names: Vec<&str> = match eos {
            Some(names) => names.to_vec(),
            None => DEFAULT_EOS
                .iter()
                .copied()
                .filter(|n| specials.iter().any(|(t, _)| t == n))
                .collect(),
        };
        if names.is_empty() {
            return Err(verr(
                source_name,
                "no end-of-generation token found among the special tokens (give its text, \
                 e.g. `--eos '<seed:eos>'`)",
            ));
        }
        // Special ids replace whatever `model.vocab` had there.
        for (_, id) in &specials {
            tokens[*id as usize].clear();
        }
        Self::with_specials(source_name, tokens, &specials, &names)
    }
}

/// GPT-2's byte-level map, reversed: the printable character each byte is written as ->
/// the byte.
fn gpt2_unicode_to_byte() -> HashMap<char, u8> {
    let mut printable: Vec<u32> = (u32::from(b'!')..=u32::from(b'~')).collect();
    printable.extend(0xa1..=0xac);
    printable.extend(0xae..=0xff);
    let mut map = HashMap::new();
    let mut extra = 0;
    for b in 0..=255u32 {
        let c = if printable.contains(&b) {
            b
        } else {
            extra += 1;
            255 + extra
        };
        if let Some(c) = char::from_u32(c) {
            map.insert(c, b as u8);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiktoken_text_and_errors() {
        let text = "YQ== 0\nYmM= 1\n";
        let v =
            Vocabulary::from_tiktoken("t", text, &[("<|end|>".into(), 2)], &["<|end|>"]).unwrap();
        assert_eq!(
            (v.token(0), v.token(1), v.token(2)),
            (&b"a"[..], &b"bc"[..], &b"<|end|>"[..])
        );
        assert!(v.is_special(2) && !v.is_special(0));
        assert_eq!(v.eos(), [2]);
        assert_eq!(v.decode(&[1, 0, 2]), b"bca");
        let e = Vocabulary::from_tiktoken("t", "YQ== x\n", &[], &[]).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = Vocabulary::from_tiktoken("t", text, &[], &["<|end|>"]).unwrap_err();
        assert!(e.reason.contains("not a special token"), "{e}");
    }

    #[test]
    fn hf_byte_level_and_sentencepiece() {
        let byte_level = r#"{"pre_tokenizer": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": {"Ġhello": 0, "Ċ": 1, "a": 2}},
            "added_tokens": [{"id": 3, "content": "<|im_end|>", "special": true},
                             {"id": 4, "content": "<tool_call>", "special": false}]}"#;
        let v = Vocabulary::from_hf_tokenizer("q", byte_level, None).unwrap();
        assert_eq!(v.token(0), b" hello");
        assert_eq!(v.token(1), b"\n");
        assert_eq!(v.token(4), b"<tool_call>");
        assert_eq!(v.eos(), [3]);
        let sp = r#"{"decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}]},
            "model": {"type": "BPE", "vocab": {"▁hi": 0, "<0x0A>": 1}},
            "added_tokens": [{"id": 2, "content": "</s>", "special": true}]}"#;
        let v = Vocabulary::from_hf_tokenizer("s", sp, None).unwrap();
        assert_eq!((v.token(0), v.token(1)), (&b" hi"[..], &b"\n"[..]));
        assert!(Vocabulary::from_hf_tokenizer("x", "{}", None).is_err());
        // No EOS among the specials, a huge id, a special over an ordinary token: errors.
        let no_eos = r#"{"model": {"vocab": {"a": 0}}, "added_tokens": [{"id": 1, "content": "<x>", "special": true}]}"#;
        assert!(Vocabulary::from_hf_tokenizer("n", no_eos, None)
            .unwrap_err()
            .reason
            .contains("--eos"));
        assert!(Vocabulary::from_hf_tokenizer("n", no_eos, Some(&["<x>"])).is_ok());
        let huge = r#"{"model": {"vocab": {"a": 4000000000}}}"#;
        assert!(Vocabulary::from_hf_tokenizer("h", huge, None)
            .unwrap_err()
            .reason
            .contains("limit"));
        let e =
            Vocabulary::from_tiktoken("t", "YQ== 0\n", &[("<e>".into(), 0)], &["<e>"]).unwrap_err();
        assert!(e.reason.contains("would replace token 0"), "{e}");
    }

    #[test]
    fn builtin_vocabularies() {
        let v = Vocabulary::builtin("o200k_harmony").unwrap();
        assert_eq!(v.special_id("<|call|>"), Some(200012));
        assert_eq!(v.token(200012), b"<|call|>");
        assert!(v.eos().contains(&200002));
        assert!(!v.token(1000).is_empty());
        assert!(Vocabulary::builtin("gpt9").is_err());
    }
}
