//! The `response_template!` macro: compiles a response template at build time through
//! `template-build` and emits the code of [`template_build::codegen`]. Use it as
//! `parser_runtime::response_template!`; the documentation is there.

use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token, Visibility};

use template_build::codegen::{self, Item};

/// `vis Name = "path"`.
struct Input {
    vis: Visibility,
    ident: Ident,
    path: LitStr,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let vis = input.parse()?;
        let ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let path = input.parse()?;
        input.parse::<Option<Token![;]>>()?;
        Ok(Self { vis, ident, path })
    }
}

/// Compiles a response template at build time. See `parser_runtime::response_template!`.
#[proc_macro]
pub fn response_template(input: TokenStream) -> TokenStream {
    let input = match syn::parse::<Input>(input) {
        Ok(input) => input,
        Err(e) => {
            let mut e = e;
            e.combine(syn::Error::new(
                e.span(),
                "expected `response_template!(pub Name = \"path/to/template.json\")`",
            ));
            return e.to_compile_error().into();
        }
    };
    let written = input.path.value();
    let path = resolve(&written, input.path.span().unwrap());
    let fail = |message: String| -> TokenStream {
        syn::Error::new(input.path.span(), message)
            .to_compile_error()
            .into()
    };
    if !path.is_file() {
        let why = match std::fs::metadata(&path) {
            Ok(_) => "not a file".to_string(),
            Err(e) => e.to_string(),
        };
        return fail(format!(
            "response template: {written:?}: cannot read {}: {why} (the path is relative to \
             the file that contains the string)",
            path.display()
        ));
    }
    let template = match template_build::load_file(&path) {
        Ok(t) => t,
        Err(errors) => {
            let mut all: Option<syn::Error> = None;
            // Name the file as the user wrote it (stable across machines), not the resolved path.
            let errors = errors.with_file(&written);
            for error in errors.iter() {
                let e = syn::Error::new(input.path.span(), format!("response template: {error}"));
                match &mut all {
                    Some(all) => all.combine(e),
                    None => all = Some(e),
                }
            }
            return all.map(|e| e.to_compile_error()).unwrap_or_default().into();
        }
    };
    let item = Item {
        vis: quote::ToTokens::to_token_stream(&input.vis),
        ident: input.ident,
        source_file: &path,
        display_file: &written,
        track: true,
        endian: None,
    };
    codegen::generate(&item, &template).into()
}

/// The template path: relative to the directory of the source file that contains the string
/// literal (like `include_str!`; inside a `macro_rules!` that is where the literal was
/// written); when the compiler does not say which file that is, relative to the crate root
/// (`CARGO_MANIFEST_DIR`). Made absolute so the generated `include_bytes!` finds it.
fn resolve(path: &str, literal: proc_macro::Span) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let invoking = literal
        .local_file()
        .or_else(|| proc_macro::Span::call_site().local_file())
        .filter(|f| f.is_file());
    let base = match invoking {
        Some(file) => file.parent().map(Path::to_path_buf).unwrap_or_default(),
        None => std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_default(),
    };
    let joined = base.join(path);
    let joined = if joined.is_absolute() {
        joined
    } else {
        std::env::current_dir()
            .map(|d| d.join(&joined))
            .unwrap_or(joined)
    };
    // Normalize `..` so that messages and `include_bytes!` show a clean path.
    joined.canonicalize().unwrap_or(joined)
}
