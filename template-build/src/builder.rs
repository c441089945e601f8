//! Compiling templates from a build script: [`Builder`] writes `$OUT_DIR/templates.rs` with
//! one item per template, the same code `response_template!` emits (see [`crate::codegen`]).

use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::codegen::{self, Endian, Form, Item};
use crate::error::{TemplateError, TemplateErrorKind, TemplateErrors};

/// Compiles response templates in a build script.
///
/// ```no_run
/// // In build.rs, inside `fn main()`:
/// template_build::Builder::new().dir("templates").run();
/// // In src/lib.rs: include!(concat!(env!("OUT_DIR"), "/templates.rs"));
/// ```
///
/// Every `*.json` file of each directory (sorted by file stem, not recursive) and every file added
/// with [`Builder::file`] becomes a `pub` item named after its file stem
/// ([`codegen::item_name`]: `qwen3-coder.json` -> `Qwen3Coder`), plus a `TEMPLATES` index of
/// `(stem, lazy tables)` pairs. Paths are relative to the package root (where build scripts
/// run).
#[derive(Debug, Clone, Default)]
pub struct Builder {
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
    out_name: Option<String>,
    untracked: bool,
}

/// Why [`Builder::compile`] failed.
#[derive(Debug)]
pub enum BuildError {
    /// Problems of templates: every problem of every bad file (file, line:column, JSON path,
    /// reason).
    Templates(TemplateErrors),
    /// A directory could not be listed or the output could not be written.
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `OUT_DIR` is not set.
    Config(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Templates(errors) => write!(f, "{errors}"),
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Config(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for BuildError {}

impl Builder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds every `*.json` file of `dir` (not recursive).
    #[must_use]
    pub fn dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds one template file (a bare template or a `tokenizer_config.json`).
    #[must_use]
    pub fn file(mut self, file: impl AsRef<Path>) -> Self {
        self.files.push(file.as_ref().to_path_buf());
        self
    }

    /// The output file name in `OUT_DIR` (default `templates.rs`).
    #[must_use]
    pub fn out_name(mut self, name: impl Into<String>) -> Self {
        self.out_name = Some(name.into());
        self
    }

    /// Whether [`Builder::compile`] prints `cargo:rerun-if-changed` lines (default true). Turn
    /// it off for templates the build script itself writes into `OUT_DIR`.
    #[must_use]
    pub fn rerun_if_changed(mut self, on: bool) -> Self {
        self.untracked = !on;
        self
    }

    /// The template files, sorted within each directory, printing the
    /// `cargo:rerun-if-changed` lines for directories and files when `emit` is set.
    fn files(&self, emit: bool) -> Result<Vec<PathBuf>, BuildError> {
        let mut out = Vec::new();
        for dir in &self.dirs {
            let entries = std::fs::read_dir(dir).map_err(|source| BuildError::Io {
                path: dir.clone(),
                source,
            })?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                .collect();
            files.sort_by(|a, b| a.file_stem().cmp(&b.file_stem()));
            if emit {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
            out.extend(files);
        }
        out.extend(self.files.iter().cloned());
        if emit {
            for f in &out {
                println!("cargo:rerun-if-changed={}", f.display());
            }
        }
        Ok(out)
    }

    /// Compiles every template to Rust source without writing it: the text of `templates.rs`.
    ///
    /// Errors: [`BuildError::Templates`] with every problem of every bad file.
    pub fn generate(&self) -> Result<String, BuildError> {
        self.generate_inner(false)
    }

    fn generate_inner(&self, emit: bool) -> Result<String, BuildError> {
        let files = self.files(emit)?;
        let mut errors = Vec::<TemplateError>::new();
        let mut items = Vec::new();
        let mut index = Vec::new();
        let mut names: Vec<(String, PathBuf)> = Vec::new();
        for file in &files {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = codegen::item_name(&stem);
            let display = file.display().to_string();
            if let Some((_, other)) = names.iter().find(|(n, _)| *n == name) {
                let mut e = TemplateError::new(
                    "",
                    TemplateErrorKind::DuplicateItemName,
                    format!(
                        "the file name makes the item {name}, like {}; rename one of them",
                        other.display()
                    ),
                );
                e.file = Some(display);
                errors.push(e);
                continue;
            }
            names.push((name.clone(), file.clone()));
            match crate::load_file(file) {
                Ok(template) => {
                    let ident = Ident::new(&name, Span::call_site());
                    let item = Item {
                        form: Form::Item {
                            vis: quote!(pub),
                            ident: ident.clone(),
                        },
                        source_file: file,
                        display_file: &display,
                        track: false,
                        endian: Endian::of_build_target(),
                    };
                    items.push(codegen::generate(&item, &template).to_string());
                    index.push(quote!((#stem, #ident::lazy)));
                }
                Err(e) => errors.extend(e.0),
            }
        }
        if !errors.is_empty() {
            return Err(BuildError::Templates(TemplateErrors(errors)));
        }
        let tokens: TokenStream = quote! {
            /// Every template compiled by the build script: `(file stem, lazy tables)`, in
            /// file order.
            pub static TEMPLATES: &[(&str, ::parser_runtime::__private::LazyFn)] =
                &[ #( #index ),* ];
        };
        // One item per line, so that a compiler message points at the right template.
        Ok(format!(
            "// Generated by template-build {}. Do not edit.\n{}\n{tokens}\n",
            env!("CARGO_PKG_VERSION"),
            items.join("\n")
        ))
    }

    /// Compiles every template and writes `$OUT_DIR/<out_name>`; prints
    /// `cargo:rerun-if-changed` for each directory and file. Returns the written path.
    ///
    /// Errors: [`BuildError`]; nothing is written when any template is bad.
    pub fn compile(&self) -> Result<PathBuf, BuildError> {
        let source = self.generate_inner(!self.untracked)?;
        let out_dir = std::env::var_os("OUT_DIR").ok_or_else(|| {
            BuildError::Config("OUT_DIR is not set (not in a build script?)".into())
        })?;
        let path = Path::new(&out_dir).join(self.out_name.as_deref().unwrap_or("templates.rs"));
        // Rewrite only on change, so that an unchanged template does not rebuild dependents.
        if std::fs::read_to_string(&path).ok().as_deref() != Some(source.as_str()) {
            std::fs::write(&path, source).map_err(|source| BuildError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Ok(path)
    }

    /// [`Builder::compile`] for build scripts: on error prints every problem (one per line)
    /// to stderr and exits with status 1, failing the build.
    pub fn run(&self) {
        if let Err(e) = self.compile() {
            eprintln!("error: response templates failed to compile:");
            for line in e.to_string().lines() {
                eprintln!("  {line}");
            }
            std::process::exit(1);
        }
    }
}
