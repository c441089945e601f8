//! The `response_template!` macro: compiles a response template at build time through
//! `template-build` and emits the code of [`template_build::codegen`]. Use it as
//! `parser_runtime::response_template!`; the documentation is there.

use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token, Visibility};

use template_build::codegen::{self, Form, Item};

/// `"path"` (expression form) or `vis Name = "path"` (item form).
struct Input {
    /// `(vis, Name)` for the item form.
    item: Option<(Visibility, Ident)>,
    path: LitStr,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(syn::Lit) || (input.peek(Ident) && input.peek2(Token![!])) {
            let path = path_literal(input)?;
            return Ok(Self { item: None, path });
        }
        let vis = input.parse()?;
        let ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let path = path_literal(input)?;
        input.parse::<Option<Token![;]>>()?;
        Ok(Self {
            item: Some((vis, ident)),
            path,
        })
    }
}

/// The template path: a plain string literal (`"..."` or `r"..."`), not empty, without a
/// suffix. Anything else in its place (a byte string, a number, a macro call such as
/// `concat!`, which a procedural macro cannot expand) is an error saying so.
fn path_literal(input: ParseStream<'_>) -> syn::Result<LitStr> {
    if input.peek(Ident) && input.peek2(Token![!]) {
        let name: Ident = input.parse()?;
        return Err(syn::Error::new(
            name.span(),
            format!(
                "the template path must be a string literal; `{name}!` is not expanded here \
                 (write the path out)"
            ),
        ));
    }
    let lit: syn::Lit = input.parse()?;
    let syn::Lit::Str(path) = lit else {
        return Err(syn::Error::new(
            lit.span(),
            "the template path must be a string literal (`\"path/to/template.json\"`)",
        ));
    };
    if !path.suffix().is_empty() {
        return Err(syn::Error::new(
            path.span(),
            format!("the template path takes no suffix (`{}`)", path.suffix()),
        ));
    }
    if path.value().is_empty() {
        return Err(syn::Error::new(path.span(), "the template path is empty"));
    }
    Ok(path)
}

/// Compiles a response template at build time. See `parser_runtime::response_template!`.
#[proc_macro]
pub fn response_template(input: TokenStream) -> TokenStream {
    let input = match syn::parse::<Input>(input) {
        Ok(input) => input,
        Err(e) => {
            // One error: in expression position only one macro call can stand.
            let message = format!(
                "{e}; the macro takes `response_template!(\"path/to/template.json\")` (an \
                 expression) or `response_template!(pub Name = \"path/to/template.json\")` (an \
                 item)"
            );
            return syn::Error::new(e.span(), message).to_compile_error().into();
        }
    };
    let expression = input.item.is_none();
    let written = input.path.value();
    let path = resolve(&written, input.path.span().unwrap());
    let span = input.path.span();
    if !path.is_file() {
        let why = match std::fs::metadata(&path) {
            Ok(_) => "not a file".to_string(),
            Err(e) => e.to_string(),
        };
        let message = format!(
            "response template: {written:?}: cannot read {}: {why} (the path is relative to \
             the file that contains the string)",
            path.display()
        );
        return compile_errors(span, vec![message], expression);
    }
    let template = match template_build::load_file(&path) {
        Ok(t) => t,
        Err(errors) => {
            // Name the file as the user wrote it (stable across machines), not the resolved path.
            let errors = errors.with_file(&written);
            let messages = errors
                .iter()
                .map(|error| format!("response template: {error}"))
                .collect();
            return compile_errors(span, messages, expression);
        }
    };
    let form = match input.item {
        Some((vis, ident)) => Form::Item {
            vis: quote::ToTokens::to_token_stream(&vis),
            ident,
        },
        None => Form::Expression {
            name: codegen::template_name(Path::new(&written)),
        },
    };
    let item = Item {
        form,
        source_file: &path,
        display_file: &written,
        track: true,
        endian: None,
    };
    codegen::generate(&item, &template).into()
}

/// Every message as a `compile_error!` at `span`. Items: one invocation after another. An
/// expression: a block whose statements are the invocations and whose value is the last one,
/// so the expression has no type of its own to complain about.
fn compile_errors(span: Span, messages: Vec<String>, expression: bool) -> TokenStream {
    let calls = messages
        .iter()
        .map(|m| quote::quote_spanned!(span=> ::core::compile_error!(#m)));
    let tokens = if expression {
        quote::quote_spanned!(span=> { #( #calls );* })
    } else {
        quote::quote_spanned!(span=> #( #calls; )*)
    };
    tokens.into()
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
    // Normalize `..` so that messages and `include_bytes!` show a clean path (lexically when
    // the file does not exist, so the error names the path the user meant).
    joined.canonicalize().unwrap_or_else(|_| lexical(&joined))
}

/// `path` with `.` dropped and each `..` removing the component before it.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c);
                }
            }
            other => out.push(other),
        }
    }
    out
}
