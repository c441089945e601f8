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
    let path = resolve(&input.path.value());
    let template = match template_build::load_file(&path) {
        Ok(t) => t,
        Err(errors) => {
            let mut all: Option<syn::Error> = None;
            // Name the file as the user wrote it (stable across machines), not the resolved path.
            let errors = errors.with_file(&input.path.value());
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
        track: true,
    };
    codegen::generate(&item, &template).into()
}

/// The template path: relative to the directory of the invoking source file, like
/// `include_str!`; when the compiler does not say which file that is, relative to the crate
/// root (`CARGO_MANIFEST_DIR`). Made absolute so the generated `include_bytes!` finds it.
fn resolve(path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let invoking = proc_macro::Span::call_site()
        .local_file()
        .filter(|f| f.is_file());
    let base = match (invoking, &manifest) {
        (Some(file), _) => file.parent().map(Path::to_path_buf).unwrap_or_default(),
        (None, Some(dir)) => dir.clone(),
        (None, None) => PathBuf::new(),
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
