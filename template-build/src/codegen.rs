//! Code generation: a [`CompiledTemplate`] as Rust items, shared by the `response_template!`
//! macro and build scripts ([`crate::Builder`]), so both emit the same code.
//!
//! The generated item is an enum with one variant per field plus associated functions; its
//! tables are a `static` [`StaticTemplate`](parser_runtime_core::statics::StaticTemplate)
//! (DFAs as serialized bytes, 4-byte aligned, one copy per byte order selected by
//! `cfg(target_endian)`), wrapped in a `LazyTemplate` built on first use. Every path goes
//! through `::parser_runtime::__private`; a constant checks the table format version.
//! The output is deterministic: the same template gives the same tokens.

use std::cell::Cell;
use std::path::Path;

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;
use serde_json::Value;

use parser_runtime_core::router::DelimiterKind;
use parser_runtime_core::statics::FORMAT_VERSION;
use parser_runtime_core::tables::{
    ByteSet, CompiledTemplate, Delimiter, Dfa, Owned, Role, ToolFamily, Watch,
};

/// What to generate around the tables.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// An item (the field enum with its functions) or an expression.
    pub form: Form,
    /// The template file; when `track` is set, the generated code `include_bytes!` it so that
    /// editing the file rebuilds the crate (must then be absolute or relative to the invoking
    /// file).
    pub source_file: &'a Path,
    /// The file as the user named it (shown in docs and `StaticTemplate::source_file`; keeps
    /// the build machine's absolute paths out of the binary).
    pub display_file: &'a str,
    /// Emit the `include_bytes!` dependency on `source_file`.
    pub track: bool,
    /// The target's byte order when the generator knows it (a build script reads
    /// `CARGO_CFG_TARGET_ENDIAN`): DFAs are embedded once, in that order. `None` (the macro,
    /// which cannot see the target) embeds both orders, selected by `cfg(target_endian)`.
    pub endian: Option<Endian>,
}

/// The shape of the generated code. Both forms embed the same statics (`StaticTemplate`,
/// `RouteCell`, `EmbeddedTemplate`); the item form adds the field enum around them.
#[derive(Debug, Clone)]
pub enum Form {
    /// `vis enum Ident { ... }` with one variant per field and associated functions that
    /// delegate to its `EmbeddedTemplate` (`response_template!(pub Name = "path")`, build
    /// scripts).
    Item {
        /// Visibility tokens (`pub`, `pub(crate)`, or empty).
        vis: TokenStream,
        /// The item's name.
        ident: Ident,
    },
    /// A block expression of type `&'static EmbeddedTemplate`
    /// (`response_template!("path")`).
    Expression {
        /// The template's name (`EmbeddedTemplate::name`).
        name: String,
    },
}

impl Form {
    /// The template's name: the item name (without `r#`), or the expression's name.
    pub fn name(&self) -> String {
        match self {
            Form::Item { ident, .. } => ident.to_string().trim_start_matches("r#").to_string(),
            Form::Expression { name } => name.clone(),
        }
    }
}

/// The name of a template file for the expression form: the file stem, or for a
/// `tokenizer_config.json` the name of the directory holding it (the model's name).
pub fn template_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|s| s.to_str());
    match (stem, parent) {
        ("tokenizer_config", Some(dir)) => dir.to_string(),
        (stem, _) => stem.to_string(),
    }
}

/// A byte order of embedded DFAs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
}

impl Endian {
    /// The target's byte order as a build script sees it (`CARGO_CFG_TARGET_ENDIAN`), if set.
    pub fn of_build_target() -> Option<Self> {
        match std::env::var("CARGO_CFG_TARGET_ENDIAN").ok()?.as_str() {
            "little" => Some(Self::Little),
            "big" => Some(Self::Big),
            _ => None,
        }
    }
}

/// Generates the code for `template`: the item or the expression of `item.form`.
pub fn generate(item: &Item<'_>, template: &CompiledTemplate) -> TokenStream {
    let name = item.form.name();
    let guard = guard(item);
    let statics = statics(item, &name, template);
    match &item.form {
        Form::Expression { .. } => quote! {
            {
                #guard
                #statics
                &TEMPLATE
            }
        },
        Form::Item { vis, ident } => {
            let body = enum_item(vis, ident, &name, item.display_file, template);
            quote! {
                #guard
                #body

                #[allow(dead_code)]
                impl #ident {
                    /// The template: const tables, no-heap routes and (with `alloc`) runtime
                    /// tables, each made ready on first use.
                    pub const fn embedded() -> &'static ::parser_runtime::EmbeddedTemplate {
                        #statics
                        &TEMPLATE
                    }
                }
            }
        }
    }
}

/// The format-version check and the dependency on the template file.
fn guard(item: &Item<'_>) -> TokenStream {
    let version = Literal::u32_suffixed(FORMAT_VERSION);
    let tracked = item.source_file.display().to_string();
    let track_tokens = if item.track {
        quote! { const _: &[u8] = include_bytes!(#tracked); }
    } else {
        TokenStream::new()
    };
    quote! {
        const _: () = {
            ::parser_runtime::__private::require_format(#version);
            #track_tokens
        };
    }
}

/// `static TABLES` (the const tables), `static ROUTES` (their no-heap routes) and
/// `static TEMPLATE` (the `EmbeddedTemplate` over both), in the current scope.
fn statics(item: &Item<'_>, name: &str, template: &CompiledTemplate) -> TokenStream {
    let tables = tables(template, item.endian);
    let digest = Literal::u64_suffixed(digest(template));
    let dfa_count = Literal::usize_unsuffixed(dfa_count(template));
    let file = item.display_file;
    quote! {
        static TABLES: ::parser_runtime::__private::StaticTemplate =
            ::parser_runtime::__private::StaticTemplate {
                name: #name,
                source_file: #file,
                digest: #digest,
                template: #tables,
            };
        static ROUTES: ::parser_runtime::__private::RouteCell<#dfa_count> =
            ::parser_runtime::__private::RouteCell::new(&TABLES);
        static TEMPLATE: ::parser_runtime::EmbeddedTemplate =
            ::parser_runtime::EmbeddedTemplate::new(&TABLES, &ROUTES);
    }
}

/// The field enum and its functions, which delegate to `Self::embedded()`.
fn enum_item(
    vis: &TokenStream,
    ident: &Ident,
    name: &str,
    file: &str,
    template: &CompiledTemplate,
) -> TokenStream {
    let variants = variant_names(template);
    let field_names: Vec<&str> = template.fields.iter().map(|f| f.name.as_str()).collect();
    let variant_docs: Vec<String> = field_names
        .iter()
        .map(|n| format!("The field `{n}`."))
        .collect();
    let enum_doc = format!(
        "Fields of the response template `{file}`, compiled at build time by template-build \
         (one variant per field, in template order); the associated functions parse with it."
    );
    quote! {
        #[doc = #enum_doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(dead_code)]
        #vis enum #ident {
            #( #[doc = #variant_docs] #variants, )*
        }

        #[allow(dead_code)]
        impl #ident {
            /// The item name.
            pub const NAME: &'static str = #name;
            /// The fields, in template order.
            pub const FIELDS: &'static [Self] = &[ #( Self::#variants ),* ];

            /// The field name (the message key it fills).
            pub const fn as_str(self) -> &'static str {
                match self { #( Self::#variants => #field_names, )* }
            }

            /// The field named `name`, if the template has one.
            pub fn from_name(name: &str) -> ::core::option::Option<Self> {
                match name {
                    #( #field_names => ::core::option::Option::Some(Self::#variants), )*
                    _ => ::core::option::Option::None,
                }
            }

            /// The embedded tables (const data).
            pub const fn tables() -> &'static ::parser_runtime::__private::StaticTemplate {
                Self::embedded().tables()
            }

            /// The tables of the no-heap router: DFAs deserialized in place on first use,
            /// once per process (no heap; later calls copy two pointers).
            ///
            /// Errors: `TableError` when the embedded tables cannot be loaded (only with
            /// mismatched crate versions).
            pub fn routes() -> ::core::result::Result<
                ::parser_runtime::__private::StaticRoutes<'static>,
                ::parser_runtime::__private::TableError,
            > {
                Self::embedded().routes()
            }

            /// A no-heap streaming router (see `parser_runtime::router::Router`) with a hold
            /// buffer of `HOLD` bytes; its events carry this enum as the field id.
            ///
            /// Errors: as [`Self::routes`], or `TableReason::Route` when the router cannot
            /// take the template.
            pub fn router<const HOLD: usize>() -> ::core::result::Result<
                ::parser_runtime::__private::Router<
                    ::parser_runtime::__private::StaticRoutes<'static>,
                    Self,
                    HOLD,
                >,
                ::parser_runtime::__private::TableError,
            > {
                Self::embedded().typed_router()
            }
        }

        impl ::parser_runtime::__private::FieldId for #ident {
            fn from_index(index: usize) -> Self {
                Self::FIELDS[index]
            }
        }

        ::parser_runtime::__if_alloc! {
        #[allow(dead_code)]
        impl #ident {
            /// The static tables and their lazily built runtime form.
            pub fn lazy() -> &'static ::parser_runtime::__private::LazyTemplate {
                Self::embedded().lazy()
            }

            /// The compiled template, built from the static tables on first use (DFAs
            /// deserialized in place).
            ///
            /// Errors: `TableError` when the embedded tables cannot be loaded (only with
            /// mismatched crate versions).
            pub fn template() -> ::core::result::Result<
                &'static ::parser_runtime::__private::CompiledTemplate,
                ::parser_runtime::__private::TableError,
            > {
                Self::embedded().template()
            }

            /// Parses one complete output (see `parser_runtime::parse_response`).
            pub fn parse_response(
                output: &str,
                prefix: &str,
            ) -> ::core::result::Result<
                ::parser_runtime::__private::Message,
                ::parser_runtime::__private::ParseError,
            > {
                Self::embedded().parse_response(output, prefix)
            }

            /// Parses one complete output, typing tool-call arguments by `tools` (OpenAI tool
            /// definitions).
            pub fn parse_response_with_tools(
                output: &str,
                prefix: &str,
                tools: &[::parser_runtime::__private::Value],
            ) -> ::core::result::Result<
                ::parser_runtime::__private::Message,
                ::parser_runtime::__private::ParseError,
            > {
                Self::embedded().parse_response_with_tools(output, prefix, tools)
            }

            /// A streaming parser (see `parser_runtime::ResponseParser::new`).
            pub fn parser(
                prefix: &str,
            ) -> ::core::result::Result<
                ::parser_runtime::__private::ResponseParser<'static>,
                ::parser_runtime::__private::ParseError,
            > {
                Self::embedded().parser(prefix)
            }

            /// A streaming parser typing tool-call arguments by `tools`.
            pub fn parser_with_tools(
                prefix: &str,
                tools: &[::parser_runtime::__private::Value],
            ) -> ::core::result::Result<
                ::parser_runtime::__private::ResponseParser<'static>,
                ::parser_runtime::__private::ParseError,
            > {
                Self::embedded().parser_with_tools(prefix, tools)
            }
        }
        }

        impl ::core::fmt::Display for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    }
}

/// Number of DFAs of `t`: main parts and look-aheads of every branch of every delimiter.
pub fn dfa_count(t: &CompiledTemplate) -> usize {
    t.fields
        .iter()
        .flat_map(|f| f.open.iter().chain(f.close.iter()))
        .flat_map(|d| d.branches.iter())
        .map(|b| 1 + usize::from(b.lookahead.is_some()))
        .sum()
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A digest of everything the generated tables hold (FNV-1a over a length-prefixed
/// serialization: DFA bytes, edge facts, patterns, content parsers, defaults, transforms),
/// independent of how the tokens are printed; the item name and file are not part of it.
pub fn digest(t: &CompiledTemplate) -> u64 {
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    fn dfa(out: &mut Vec<u8>, d: &Dfa) {
        put(out, &d.to_bytes(false));
        out.push(u8::from(d.context()));
        for (id, flags) in d.edges() {
            out.extend_from_slice(&id.to_le_bytes());
            out.push(*flags);
        }
    }
    fn delimiter(out: &mut Vec<u8>, d: Option<&Delimiter<Owned>>) {
        let Some(d) = d else {
            put(out, b"none");
            return;
        };
        put(out, d.source.as_bytes());
        out.extend([u8::from(d.literal), u8::from(d.can_be_empty)]);
        out.extend((0..=255u8).map(|b| u8::from(d.first_bytes.contains(b))));
        for g in &d.group_names {
            put(out, g.as_bytes());
        }
        for b in &d.branches {
            dfa(out, &b.dfa);
            if let Some(la) = &b.lookahead {
                out.push(u8::from(la.negated));
                dfa(out, &la.dfa);
            }
            put(
                out,
                b.captures
                    .as_ref()
                    .map_or("", |c| c.pattern.as_str())
                    .as_bytes(),
            );
            match &b.prefilter {
                Some(p) => {
                    out.push(1);
                    out.extend(p.lead.0);
                    out.extend(p.first.0);
                }
                None => out.push(0),
            }
        }
    }
    let mut out = Vec::new();
    put(
        &mut out,
        serde_json::to_string(&t.defaults)
            .unwrap_or_default()
            .as_bytes(),
    );
    put(&mut out, t.start_anchor.source.as_bytes());
    put(&mut out, t.start_anchor.regex.as_str().as_bytes());
    put(
        &mut out,
        format!("{:?} {:?} {:?}", t.implicit, t.name_rank, t.watch).as_bytes(),
    );
    for f in &t.fields {
        put(&mut out, f.name.as_bytes());
        put(&mut out, format!("{:?}", f.role).as_bytes());
        delimiter(&mut out, f.open.as_ref());
        delimiter(&mut out, f.close.as_ref());
        put(&mut out, format!("{:?}", f.content).as_bytes());
        put(
            &mut out,
            format!(
                "{} {:?} {} {}",
                f.repeats, f.join, f.optional, f.transform_each
            )
            .as_bytes(),
        );
        put(
            &mut out,
            serde_json::to_string(&f.transform)
                .unwrap_or_default()
                .as_bytes(),
        );
    }
    fnv1a(&out)
}

/// Names the generated item defines besides the variants; a variant must not shadow them.
const RESERVED: &[&str] = &["Self", "NAME", "FIELDS"];

/// `UpperCamelCase` variant names for the fields: ASCII letters and digits kept, everything
/// else separates words; a name that would be empty, start with a digit or clash with an item
/// of the generated type (`Self`, `NAME`, `FIELDS`) gets a `Field` prefix; a name already
/// taken gets the smallest number suffix (2, 3, ...) that makes it unique.
pub fn variant_names(template: &CompiledTemplate) -> Vec<Ident> {
    let mut taken: Vec<String> = Vec::new();
    for field in &template.fields {
        let mut name = String::new();
        for word in field.name.split(|c: char| !c.is_ascii_alphanumeric()) {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                name.push(first.to_ascii_uppercase());
                name.extend(chars);
            }
        }
        if name.is_empty()
            || name.starts_with(|c: char| c.is_ascii_digit())
            || RESERVED.contains(&name.as_str())
        {
            name.insert_str(0, "Field");
        }
        if taken.contains(&name) {
            let base = name.clone();
            let mut n = 2;
            while taken.contains(&name) {
                name = format!("{base}{n}");
                n += 1;
            }
        }
        taken.push(name);
    }
    taken
        .iter()
        .map(|n| Ident::new(n, Span::call_site()))
        .collect()
}

/// The `Template<Static>` expression of `t`.
fn tables(t: &CompiledTemplate, endian: Option<Endian>) -> TokenStream {
    let counter = Cell::new(0usize);
    let defaults = object(&t.defaults);
    let anchor_source = &t.start_anchor.source;
    let anchor_pattern = t.start_anchor.regex.as_str();
    let implicit = option(t.implicit.map(|i| {
        let i = Literal::usize_suffixed(i);
        quote!(#i)
    }));
    let rank = t.name_rank.iter().map(|&r| Literal::u32_suffixed(r));
    let watch = t.watch.iter().map(watch);
    let fields = t.fields.iter().map(|f| {
        let name = &f.name;
        let open = option(f.open.as_ref().map(|d| delimiter(d, &counter, endian)));
        let close = option(f.close.as_ref().map(|d| delimiter(d, &counter, endian)));
        let content = f.content.to_tokens();
        let repeats = f.repeats;
        let join = option(f.join.as_ref().map(|j| quote!(#j)));
        let optional = f.optional;
        let transform = option(f.transform.as_ref().map(value));
        let transform_each = f.transform_each;
        let role = role(f.role);
        quote! {
            ::parser_runtime::__private::Field {
                name: #name,
                role: #role,
                open: #open,
                close: #close,
                content: #content,
                repeats: #repeats,
                join: #join,
                optional: #optional,
                transform: #transform,
                transform_each: #transform_each,
            }
        }
    });
    quote! {
        ::parser_runtime::__private::Template::<::parser_runtime::__private::Static> {
            defaults: #defaults,
            start_anchor: ::parser_runtime::__private::StartAnchor {
                source: #anchor_source,
                regex: #anchor_pattern,
            },
            fields: &[ #( #fields ),* ],
            implicit: #implicit,
            name_rank: &[ #( #rank ),* ],
            watch: &[ #( #watch ),* ],
        }
    }
}

fn role(role: Role) -> TokenStream {
    let family = |f: Option<ToolFamily>| {
        option(f.map(|f| match f {
            ToolFamily::JsonCall => quote!(::parser_runtime::__private::ToolFamily::JsonCall),
            ToolFamily::NamedJson => quote!(::parser_runtime::__private::ToolFamily::NamedJson),
            ToolFamily::XmlParameters => {
                quote!(::parser_runtime::__private::ToolFamily::XmlParameters)
            }
            ToolFamily::JsonCallList => {
                quote!(::parser_runtime::__private::ToolFamily::JsonCallList)
            }
            ToolFamily::JsonList => quote!(::parser_runtime::__private::ToolFamily::JsonList),
            ToolFamily::PythonCallList => {
                quote!(::parser_runtime::__private::ToolFamily::PythonCallList)
            }
            ToolFamily::PythonKeywords => {
                quote!(::parser_runtime::__private::ToolFamily::PythonKeywords)
            }
        }))
    };
    match role {
        Role::ToolCalls { family: f } => {
            let f = family(f);
            quote!(::parser_runtime::__private::Role::ToolCalls { family: #f })
        }
        Role::Reasoning => quote!(::parser_runtime::__private::Role::Reasoning),
        Role::Content => quote!(::parser_runtime::__private::Role::Content),
        Role::Other => quote!(::parser_runtime::__private::Role::Other),
    }
}

fn watch(w: &Watch<Owned>) -> TokenStream {
    let delimiters = w.delimiters.iter().map(|d| {
        let field = Literal::usize_suffixed(d.field);
        let kind = match d.kind {
            DelimiterKind::Open => quote!(::parser_runtime::__private::DelimiterKind::Open),
            DelimiterKind::Close => quote!(::parser_runtime::__private::DelimiterKind::Close),
        };
        quote!(::parser_runtime::__private::Watched { field: #field, kind: #kind })
    });
    let first = byte_set(&w.first);
    let json_strings = w.json_strings;
    let jump = option(w.jump.map(|j| {
        let (lead, first) = (byte_set(&j.lead), byte_set(&j.first));
        let needles = j.needles.iter().map(|&b| Literal::u8_suffixed(b));
        let count = Literal::u8_suffixed(j.needle_count);
        quote! {
            ::parser_runtime::__private::JumpPlan {
                lead: #lead,
                first: #first,
                needles: [ #( #needles ),* ],
                needle_count: #count,
            }
        }
    }));
    quote! {
        ::parser_runtime::__private::Watch {
            delimiters: &[ #( #delimiters ),* ],
            first: #first,
            jump: #jump,
            json_strings: #json_strings,
        }
    }
}

fn option(v: Option<TokenStream>) -> TokenStream {
    match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn byte_set(set: &ByteSet) -> TokenStream {
    let bits = set.0.iter().map(|&b| Literal::u8_suffixed(b));
    quote!(::parser_runtime::__private::ByteSet([ #( #bits ),* ]))
}

fn delimiter(d: &Delimiter<Owned>, counter: &Cell<usize>, endian: Option<Endian>) -> TokenStream {
    let source = &d.source;
    let literal = d.literal;
    let branches = d.branches.iter().map(|b| {
        let dfa = dfa_tokens(&b.dfa, counter, endian);
        let lookahead = option(b.lookahead.as_ref().map(|la| {
            let negated = la.negated;
            let body = dfa_tokens(&la.dfa, counter, endian);
            quote! {
                ::parser_runtime::__private::Lookahead { negated: #negated, dfa: #body }
            }
        }));
        let prefilter = option(b.prefilter.as_ref().map(|p| {
            let (lead, first) = (byte_set(&p.lead), byte_set(&p.first));
            quote! {
                ::parser_runtime::__private::Prefilter { lead: #lead, first: #first }
            }
        }));
        let captures = option(b.captures.as_ref().map(|c| {
            let p = &c.pattern;
            quote!(#p)
        }));
        quote! {
            ::parser_runtime::__private::Branch {
                dfa: #dfa,
                lookahead: #lookahead,
                captures: #captures,
                prefilter: #prefilter,
            }
        }
    });
    let groups = &d.group_names;
    let first_bytes = byte_set(&d.first_bytes);
    let can_be_empty = d.can_be_empty;
    quote! {
        ::parser_runtime::__private::Delimiter {
            source: #source,
            literal: #literal,
            branches: &[ #( #branches ),* ],
            group_names: &[ #( #groups ),* ],
            first_bytes: #first_bytes,
            can_be_empty: #can_be_empty,
        }
    }
}

/// A `DfaBytes`: the serialized DFA in the target's byte order, or in both orders selected by
/// `cfg(target_endian)` when the order is not known.
fn dfa_tokens(t: &Dfa, counter: &Cell<usize>, endian: Option<Endian>) -> TokenStream {
    let index = Literal::usize_suffixed(counter.get());
    counter.set(counter.get() + 1);
    let embed = |big: bool, cfg: TokenStream| {
        let bytes = t.to_bytes(big);
        let n = Literal::usize_unsuffixed(bytes.len());
        let bytes = Literal::byte_string(&bytes);
        quote! {
            #cfg
            static BYTES: ::parser_runtime::__private::Aligned<[u8; #n]> =
                ::parser_runtime::__private::Aligned(*#bytes);
        }
    };
    let statics = match endian {
        Some(Endian::Little) => embed(false, TokenStream::new()),
        Some(Endian::Big) => embed(true, TokenStream::new()),
        None => {
            let little = embed(false, quote!(#[cfg(target_endian = "little")]));
            let big = embed(true, quote!(#[cfg(target_endian = "big")]));
            quote!(#little #big)
        }
    };
    let edge = t.edges().iter().map(|&(id, flags)| {
        let id = Literal::u32_suffixed(id);
        let flags = Literal::u8_suffixed(flags);
        quote!((#id, #flags))
    });
    let context = t.context();
    quote! {
        ::parser_runtime::__private::DfaBytes {
            index: #index,
            bytes: {
                #statics
                &BYTES.0
            },
            edge: &[ #( #edge ),* ],
            context: #context,
        }
    }
}

fn object(map: &serde_json::Map<String, Value>) -> TokenStream {
    let entries = map.iter().map(|(k, v)| {
        let v = value(v);
        quote!((#k, #v))
    });
    quote!(&[ #( #entries ),* ])
}

/// A `StaticValue` expression. Floats are written as their bits (exact).
fn value(v: &Value) -> TokenStream {
    match v {
        Value::Null => quote!(::parser_runtime::__private::StaticValue::Null),
        Value::Bool(b) => quote!(::parser_runtime::__private::StaticValue::Bool(#b)),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                let u = Literal::u64_suffixed(u);
                quote!(::parser_runtime::__private::StaticValue::U64(#u))
            } else if let Some(i) = n.as_i64() {
                let i = Literal::i64_suffixed(i);
                quote!(::parser_runtime::__private::StaticValue::I64(#i))
            } else {
                let bits = Literal::u64_suffixed(n.as_f64().unwrap_or(0.0).to_bits());
                quote!(::parser_runtime::__private::StaticValue::F64(f64::from_bits(#bits)))
            }
        }
        Value::String(s) => quote!(::parser_runtime::__private::StaticValue::Str(#s)),
        Value::Array(items) => {
            let items = items.iter().map(value);
            quote!(::parser_runtime::__private::StaticValue::Array(&[ #( #items ),* ]))
        }
        Value::Object(map) => {
            let map = object(map);
            quote!(::parser_runtime::__private::StaticValue::Object(#map))
        }
    }
}

/// An identifier for a template file stem (`smollm3` -> `Smollm3`, `qwen3-coder` ->
/// `Qwen3Coder`, `glm-4.5` -> `Glm4_5`): words split at non-alphanumerics, digits after digits
/// joined with `_`; `Template` prefixed to a name that would be empty, start with a digit or
/// be `Self`.
pub fn item_name(stem: &str) -> String {
    let mut out = String::new();
    for word in stem.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        let Some(first) = chars.next() else { continue };
        if out.ends_with(|c: char| c.is_ascii_digit()) && first.is_ascii_digit() {
            out.push('_');
        }
        out.push(first.to_ascii_uppercase());
        out.extend(chars);
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) || out == "Self" {
        out.insert_str(0, "Template");
    }
    out
}
