//! Vocabularies for every engine, by tiktoken name (`o200k_base`, `cl100k_base`,
//! `o200k_harmony`: the names `constrain::vocab::Vocabulary::builtin` knows).

use std::sync::Arc;

use llguidance::ParserFactory;

/// tiktoken-rs' encoder for `name`, for tokenizing texts as a model would write them.
///
/// Panics on an unknown name.
pub fn bpe(name: &str) -> tiktoken_rs::CoreBPE {
    match name {
        "o200k_base" => tiktoken_rs::o200k_base(),
        "cl100k_base" => tiktoken_rs::cl100k_base(),
        "o200k_harmony" => tiktoken_rs::o200k_harmony(),
        other => panic!("unknown vocabulary {other} (o200k_base, cl100k_base, o200k_harmony)"),
    }
    .expect("tiktoken vocabulary")
}

/// Our vocabulary `name` and its (first) EOS id.
pub fn ours(name: &str) -> (constrain::vocab::Vocabulary, u32) {
    let vocab = constrain::vocab::Vocabulary::builtin(name).expect("built-in vocabulary");
    let eos = vocab.eos()[0];
    (vocab, eos)
}

/// The tokenizer environment llguidance asks for: the token bytes in a `TokTrie` (special
/// tokens marked with 0xFF, as toktrie expects) and tiktoken-rs for tokenizing text.
struct Tiktoken {
    trie: toktrie::TokTrie,
    bpe: tiktoken_rs::CoreBPE,
}

impl toktrie::TokenizerEnv for Tiktoken {
    fn tok_trie(&self) -> &toktrie::TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<u32> {
        match std::str::from_utf8(s) {
            Ok(text) => self.bpe.encode_ordinary(text),
            Err(_) => self.trie.greedy_tokenize(s),
        }
    }
}

/// The vocabulary `name` as token byte strings (specials prefixed by 0xFF, toktrie's marker)
/// and its EOS.
pub fn token_words(name: &str) -> (Vec<Vec<u8>>, u32) {
    let (vocab, eos) = ours(name);
    let words = (0..vocab.len() as u32)
        .map(|id| {
            let bytes = vocab.token(id);
            if vocab.is_special(id) && !bytes.is_empty() {
                let mut w = vec![toktrie::TokTrie::SPECIAL_TOKEN_MARKER];
                w.extend_from_slice(bytes);
                w
            } else {
                bytes.to_vec()
            }
        })
        .collect();
    (words, eos)
}

/// An llguidance parser factory over the vocabulary `name` (quiet: no logging), and EOS.
pub fn llguidance_factory(name: &str) -> (ParserFactory, u32) {
    let (words, eos) = token_words(name);
    let info = toktrie::TokRxInfo::new(words.len() as u32, eos);
    let env: toktrie::TokEnv = Arc::new(Tiktoken {
        trie: toktrie::TokTrie::from(&info, &words),
        bpe: bpe(name),
    });
    let mut factory = ParserFactory::new_simple(&env).expect("parser factory");
    factory.quiet();
    (factory, eos)
}
