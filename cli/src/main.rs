//! `rtpl`: the command-line tool of response-templates.
//!
//! ```text
//! rtpl parse  (--template T | --model NAME) (--prefix STR | --prefix-file F) [--tools F]
//!             [--response-format F] [--strict-tools] [FILE|-]
//! rtpl stream (--template T | --model NAME) (--prefix STR | --prefix-file F) [--tools F] [--chunk-bytes N] [FILE|-]
//! rtpl constrain (--template T | --model NAME) [--tools F] [--tool-choice auto|required|none|NAME]
//!             [--response-format F] --vocab V [--special TEXT=ID]... [--eos TEXT]...
//!             [--sample N] [--seed S] [--whitespace N] [--token-cap N] [--max-states N]
//!             [--max-automaton-mb N] [--max-work-mi N] [--max-schema-nodes N]
//!             [--compile-budget-ms MS] [--schema-mode strict|general]
//! rtpl check T...
//! rtpl list
//! rtpl run-cases [--merge-chunks] < cases.jsonl
//! ```
//! Exit codes: 0 success, 1 bad data (template, input, schema, parse failure), 2 usage, 3 the
//! message breaks its contract (`--response-format`, `--strict-tools`; a `constrain` sample
//! that breaks it), 4 a `constrain` sample was cut off by `--token-cap` (and none broke the
//! contract).

use std::borrow::Cow;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use parser_runtime::structured_outputs::{self, Contract, ResponseFormat, StrictTools};
use parser_runtime::{
    CompiledTemplate, Event, ParseError, ParserOptions, ReasoningCalls, ResponseParser,
    TransformLimit,
};
use rtpl::cases::{case_error, check_case, run_case_options};
use serde_json::{json, Value};

#[derive(Parser)]
#[command(
    name = "rtpl",
    version,
    about = "Parse raw LLM output into an assistant message with a response template"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse one output; print the message as JSON.
    Parse(ParseArgs),
    /// Feed the output in chunks; print one JSON event per line, then the message.
    Stream {
        #[command(flatten)]
        args: ParseArgs,
        /// Bytes per chunk (1 splits multi-byte characters; they are held until complete).
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
        chunk_bytes: u64,
    },
    /// Sample outputs under token masks (the template plus the request's tools and response
    /// format compiled into a constraint); print one JSON line per sample.
    Constrain(ConstrainArgs),
    /// Validate templates; print one diagnostic per problem.
    Check {
        /// Template files (a template JSON or a tokenizer_config.json).
        #[arg(required = true)]
        templates: Vec<PathBuf>,
    },
    /// List the vendored templates (compiled into rtpl; select one with --model NAME).
    List,
    /// Run conformance cases (JSON Lines on stdin); print results in the oracle's schema.
    RunCases {
        /// Merge adjacent region_chunk events of one field.
        #[arg(long)]
        merge_chunks: bool,
        /// Run every case in lenient mode (README, "Lenient mode"; the differential run's
        /// `--lenient`).
        #[arg(long)]
        lenient: bool,
    },
}

/// `--reasoning-calls` (see `ReasoningCalls`).
#[derive(Clone, Copy, clap::ValueEnum)]
enum ReasoningCallsArg {
    Keep,
    Extract,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["template", "model"])))]
struct ParseArgs {
    /// Template: a response-template JSON file or a tokenizer_config.json (compiled at run
    /// time).
    #[arg(
        long,
        short,
        required_unless_present = "model",
        conflicts_with = "model"
    )]
    template: Option<PathBuf>,
    /// A vendored template by name (compiled into rtpl at build time; see `rtpl list`).
    #[arg(long, short)]
    model: Option<String>,
    /// The prompt the model saw (required; pass --prefix '' to opt out).
    #[arg(long, conflicts_with = "prefix_file")]
    prefix: Option<String>,
    /// Read the prefix from a file.
    #[arg(long)]
    prefix_file: Option<PathBuf>,
    /// Tools (OpenAI tool JSON list) used to type tool-call arguments.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// A response format (the OpenAI `response_format` object: `{"type": "json_object"}` or
    /// `{"type": "json_schema", "json_schema": {"schema": ...}}`) the content must follow.
    #[arg(long)]
    response_format: Option<PathBuf>,
    /// Strict tools: tool calls must name a declared tool, with declared parameters only,
    /// every required one, each of its type (needs --tools).
    #[arg(long, requires = "tools")]
    strict_tools: bool,
    /// The most a field's transform may produce, in bytes per byte of its region's body and
    /// named groups (plus 64 KiB); past it the region fails naming the field. 0: no cap.
    #[arg(long, default_value_t = 16)]
    transform_limit: usize,
    /// The time, in milliseconds, the search for the last start anchor in the prefix may take
    /// (only a backtracking start_anchor_pattern comes near it). 0: no limit.
    #[arg(long, default_value_t = 1000)]
    anchor_budget_ms: u64,
    /// Lenient mode: a region that cannot be parsed is reported (a `region_malformed` event)
    /// and its text kept as content instead of failing the message; a tool call cut off by
    /// the end of the output is reported (`region_truncated`) and left out of `tool_calls`
    /// (README, "Lenient mode"). Off by default: the reference's behaviour.
    #[arg(long)]
    lenient: bool,
    /// With --lenient: a tool call written inside the reasoning is kept as reasoning text
    /// (`keep`, the default) or extracted as a tool call (`extract`).
    #[arg(long, value_enum, default_value_t = ReasoningCallsArg::Keep, requires = "lenient")]
    reasoning_calls: ReasoningCallsArg,
    /// The model output (default: stdin).
    #[arg(default_value = "-")]
    input: String,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["template", "model"])))]
struct ConstrainArgs {
    /// Template: a response-template JSON file or a tokenizer_config.json.
    #[arg(long, short, conflicts_with = "model")]
    template: Option<PathBuf>,
    /// A vendored template by name (see `rtpl list`).
    #[arg(long, short)]
    model: Option<String>,
    /// Tools (OpenAI tool JSON list): calls are constrained to them (strict tools).
    #[arg(long)]
    tools: Option<PathBuf>,
    /// `auto`, `required`, `none`, or a function name (only that tool, at least one call).
    #[arg(long, default_value = "auto")]
    tool_choice: String,
    /// A response format file (the OpenAI `response_format` object).
    #[arg(long)]
    response_format: Option<PathBuf>,
    /// Vocabulary: `o200k_base`, `cl100k_base`, `o200k_harmony`, a `.tiktoken` file (give its
    /// special tokens with --special and --eos), or a Hugging Face tokenizer.json.
    #[arg(long)]
    vocab: String,
    /// A special token of a `.tiktoken` file, `TEXT=ID` (repeatable).
    #[arg(long)]
    special: Vec<String>,
    /// A token text that ends generation (repeatable; default: the vocabulary's own).
    #[arg(long)]
    eos: Vec<String>,
    /// How many outputs to sample.
    #[arg(long, default_value_t = 1)]
    sample: usize,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Most JSON whitespace bytes between JSON tokens (0: compact).
    #[arg(long, default_value_t = 0)]
    whitespace: usize,
    /// Compile budget: most states of one table or of the whole machine (a state read in
    /// place from a shared value counts a sixteenth; raise it for very large tool sets or
    /// schemas).
    #[arg(long, default_value_t = 200_000)]
    max_states: usize,
    /// Compile budget: most MiB regex-automata may use for one NFA or DFA under construction.
    #[arg(long, default_value_t = 256)]
    max_automaton_mb: usize,
    /// Compile budget: most entries read while determinizing one pattern, in Mi (2^20).
    #[arg(long, default_value_t = 16)]
    max_work_mi: usize,
    /// Compile budget: most regex nodes of one schema's language, before any automaton.
    #[arg(long, default_value_t = constrain::json::MAX_HIR_NODES)]
    max_schema_nodes: usize,
    /// Compile budget: the longest compiling may take, in milliseconds (0: no bound).
    #[arg(long, default_value_t = 10_000)]
    compile_budget_ms: u64,
    /// Most tokens of one sample; a sample that reaches it before it can end is reported as
    /// `"cut_off": true` (exit 4 when no sample broke the contract).
    #[arg(long, default_value_t = 4496, value_parser = clap::value_parser!(u64).range(1..))]
    token_cap: u64,
    /// How tool and response-format schemas are read. `strict` (the default, the contract
    /// mode): the structured-outputs subset, and every sample is checked against the contract
    /// (`--response-format`, strict tools). `general`: general JSON Schema (drafts 2020-12
    /// to 4; objects open unless `additionalProperties: false`, unknown keywords ignored,
    /// `uniqueItems` not enforced and overlapping `oneOf` branches that cannot be negated
    /// read as `anyOf`); every
    /// sample is checked with a JSON Schema validator (formats not asserted), and an
    /// instance it refuses is a violation.
    #[arg(long, default_value = "strict", value_parser = ["strict", "general"])]
    schema_mode: String,
}

/// A failure: message for stderr and exit code.
struct Failure(String, u8);

impl Failure {
    fn data(msg: impl Into<String>) -> Self {
        Self(msg.into(), 1)
    }
    fn usage(msg: impl Into<String>) -> Self {
        Self(msg.into(), 2)
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One line naming the cause (clap's first line), then exit 2.
            // The lines before the first blank one (clap lists missing arguments there).
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let first = first.join(" ");
            let first = first.trim_start_matches("error: ");
            let first = if first.is_empty() {
                "invalid arguments"
            } else {
                first
            };
            eprintln!("rtpl: {first} (see rtpl --help)");
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let result = match cli.command {
        Command::Parse(args) => cmd_parse(&args),
        Command::Stream { args, chunk_bytes } => cmd_stream(&args, chunk_bytes as usize),
        Command::Constrain(args) => cmd_constrain(&args),
        Command::Check { templates } => cmd_check(&templates),
        Command::List => cmd_list(),
        Command::RunCases {
            merge_chunks,
            lenient,
        } => cmd_run_cases(merge_chunks, lenient),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(msg, code)) => {
            if !msg.is_empty() {
                eprintln!("rtpl: {msg}");
            }
            ExitCode::from(code)
        }
    }
}

fn read_input(input: &str) -> Result<Vec<u8>, Failure> {
    if input == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Failure::data(format!("cannot read stdin: {e}")))?;
        Ok(buf)
    } else {
        std::fs::read(input).map_err(|e| Failure::data(format!("{input}: cannot read: {e}")))
    }
}

fn read_text(path: &Path, what: &str) -> Result<String, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::data(format!("{}: cannot read {what}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::data(format!(
            "{}: {what} is not UTF-8 (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

struct Loaded {
    template: Cow<'static, CompiledTemplate>,
    prefix: String,
    tools: Vec<Value>,
    /// The contract, when `--response-format` or `--strict-tools` is given.
    contract: Option<std::sync::Arc<Contract>>,
}

fn load(args: &ParseArgs) -> Result<Loaded, Failure> {
    let template = match (&args.template, &args.model) {
        (Some(path), _) => {
            Cow::Owned(template_build::load_file(path).map_err(|e| Failure::data(one_line(&e)))?)
        }
        (None, Some(name)) => match templates::by_name(name) {
            Some(Ok(t)) => Cow::Borrowed(t),
            Some(Err(e)) => return Err(Failure::data(e.to_string())),
            None => {
                return Err(Failure::usage(format!(
                    "no vendored template named {name:?}; available: {}",
                    templates::names().collect::<Vec<_>>().join(", ")
                )))
            }
        },
        (None, None) => return Err(Failure::usage("pass --template FILE or --model NAME")),
    };
    let prefix = match (&args.prefix, &args.prefix_file) {
        (Some(p), _) => p.clone(),
        (None, Some(f)) => read_text(f, "prefix")?,
        (None, None) => {
            return Err(Failure::usage(
                "a prefix is required (the prompt the model saw): pass --prefix STR or --prefix-file F, or --prefix '' to opt out",
            ))
        }
    };
    let tools = match &args.tools {
        None => Vec::new(),
        Some(f) => {
            let text = read_text(f, "tools")?;
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Array(list)) => list,
                Ok(_) => {
                    return Err(Failure::data(format!(
                        "{}: tools must be a JSON list",
                        f.display()
                    )))
                }
                Err(e) => return Err(Failure::data(format!("{}: invalid JSON: {e}", f.display()))),
            }
        }
    };
    let contract = contract(args, &tools)?;
    Ok(Loaded {
        template,
        prefix,
        tools,
        contract,
    })
}

/// The contract of `--response-format` and `--strict-tools`. Errors: an unreadable file, or a
/// schema outside the supported subset (every problem, with its JSON pointer).
fn contract(
    args: &ParseArgs,
    tools: &[Value],
) -> Result<Option<std::sync::Arc<Contract>>, Failure> {
    if args.response_format.is_none() && !args.strict_tools {
        return Ok(None);
    }
    let schema_failure = |file: &Path, e: structured_outputs::SchemaErrors| {
        Failure::data(format!("{}: {e}", file.display()))
    };
    let response_format = match &args.response_format {
        None => None,
        Some(f) => {
            let text = read_text(f, "response format")?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| Failure::data(format!("{}: invalid JSON: {e}", f.display())))?;
            Some(ResponseFormat::from_request(&value).map_err(|e| schema_failure(f, e))?)
        }
    };
    let strict_tools = match (&args.tools, args.strict_tools) {
        (Some(f), true) => Some(StrictTools::new(tools).map_err(|e| schema_failure(f, e))?),
        _ => None,
    };
    Ok(Some(std::sync::Arc::new(Contract {
        response_format,
        strict_tools,
    })))
}

/// All problems of a template on one line:
/// `FILE: N problems: path (line L, column C): reason; ...`.
fn one_line(errors: &template_build::TemplateErrors) -> String {
    let file = errors
        .0
        .first()
        .and_then(|e| e.file.clone())
        .unwrap_or_default();
    let parts: Vec<String> = errors
        .0
        .iter()
        .map(|e| {
            let at = e
                .line_col
                .map(|(line, col)| format!("line {line}, column {col}"));
            match (e.path.is_empty(), at) {
                (true, None) => e.reason.clone(),
                (true, Some(at)) => format!("{at}: {}", e.reason),
                (false, None) => format!("{}: {}", e.path, e.reason),
                (false, Some(at)) => format!("{} ({at}): {}", e.path, e.reason),
            }
        })
        .collect();
    let count = if parts.len() == 1 {
        String::new()
    } else {
        format!("{} problems: ", parts.len())
    };
    format!("{file}: {count}{}", parts.join("; "))
}

fn parse_error(e: ParseError) -> Failure {
    Failure::data(format!("parse error: {e}"))
}

/// A parse error of the output read from `input` (a path, or `-` for stdin), naming it.
fn output_error(input: &str) -> impl Fn(ParseError) -> Failure + '_ {
    move |e| {
        let name = if input == "-" { "stdin" } else { input };
        Failure::data(format!("{name}: parse error: {e}"))
    }
}

/// Standard output that a closed pipe (`rtpl ... | head`) silences instead of failing: later
/// writes are dropped and the command finishes, so its exit code (3 for a broken contract, 4
/// for a cut-off sample, 1 for a template with problems) is the one it has with the whole
/// output read. Any other write error is a failure (exit 1).
struct Output {
    out: std::io::StdoutLock<'static>,
    closed: bool,
}

impl Output {
    fn new() -> Self {
        Self {
            out: std::io::stdout().lock(),
            closed: false,
        }
    }

    /// Runs one write unless the pipe is closed.
    fn write(
        &mut self,
        f: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>,
    ) -> Result<(), Failure> {
        if self.closed {
            return Ok(());
        }
        match f(&mut self.out) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(Failure::data(format!("cannot write the output: {e}"))),
        }
    }

    /// One line of text.
    fn line(&mut self, text: impl std::fmt::Display) -> Result<(), Failure> {
        self.write(|o| writeln!(o, "{text}"))
    }

    /// One value as compact JSON on one line.
    fn json_line(&mut self, value: &Value) -> Result<(), Failure> {
        self.write(|o| {
            serde_json::to_writer(&mut *o, value)?;
            writeln!(o)
        })
    }
}

fn print_json(value: &Value) -> Result<(), Failure> {
    Output::new().write(|o| {
        serde_json::to_writer_pretty(&mut *o, value)?;
        writeln!(o)
    })
}

/// `--transform-limit` (bytes per input byte, 0 for no cap) and `--anchor-budget-ms` (0 for
/// no limit).
fn parser_options(args: &ParseArgs) -> ParserOptions {
    ParserOptions {
        transform_limit: match args.transform_limit {
            0 => TransformLimit::UNLIMITED,
            n => TransformLimit {
                per_input_byte: n,
                ..TransformLimit::DEFAULT
            },
        },
        start_anchor_budget: (args.anchor_budget_ms > 0)
            .then(|| std::time::Duration::from_millis(args.anchor_budget_ms)),
        lenient: args.lenient,
        reasoning_calls: match args.reasoning_calls {
            ReasoningCallsArg::Keep => ReasoningCalls::Keep,
            ReasoningCallsArg::Extract => ReasoningCalls::Extract,
        },
    }
}

/// A parser for `args` (its options) over what `load` read.
fn new_parser<'t>(loaded: &'t Loaded, args: &ParseArgs) -> Result<ResponseParser<'t>, Failure> {
    ResponseParser::with_options(
        &loaded.template,
        &loaded.prefix,
        &loaded.tools,
        parser_options(args),
    )
    .map_err(parse_error)
}

fn cmd_parse(args: &ParseArgs) -> Result<(), Failure> {
    let loaded = load(args)?;
    let input = read_input(&args.input)?;
    let mut parser = new_parser(&loaded, args)?;
    // The whole output is in memory already: no cap on held text.
    parser.set_hold_limit(usize::MAX);
    if let Some(contract) = &loaded.contract {
        parser.set_contract(contract.clone());
    }
    parser
        .feed_bytes(&input)
        .map_err(output_error(&args.input))?;
    let (message, _) = parser.finalize().map_err(output_error(&args.input))?;
    if loaded.contract.is_none() {
        return print_json(&Value::Object(message));
    }
    let violations = parser.violations();
    print_json(&serde_json::json!({"message": message, "violations": violations}))?;
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Failure(String::new(), 3))
    }
}

fn cmd_stream(args: &ParseArgs, chunk: usize) -> Result<(), Failure> {
    let loaded = load(args)?;
    let input = read_input(&args.input)?;
    let mut out = Output::new();
    let mut emit = |events: &[Event]| -> Result<(), Failure> {
        for e in events {
            let line = serde_json::to_string(e).map_err(|e| Failure::data(e.to_string()))?;
            out.line(line)?;
        }
        Ok(())
    };
    let mut parser = new_parser(&loaded, args)?;
    emit(parser.initial_events())?;
    if let Some(contract) = &loaded.contract {
        parser.set_contract(contract.clone());
    }
    for piece in input.chunks(chunk) {
        let events = parser
            .feed_bytes(piece)
            .map_err(output_error(&args.input))?;
        emit(&events)?;
    }
    let (message, events) = parser.finalize().map_err(output_error(&args.input))?;
    emit(&events)?;
    if loaded.contract.is_none() {
        let line = json!({"type": "message", "message": Value::Object(message)});
        return out.line(line);
    }
    let violations = parser.violations();
    let line =
        json!({"type": "message", "message": Value::Object(message), "violations": violations});
    out.line(line)?;
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Failure(String::new(), 3))
    }
}

fn cmd_list() -> Result<(), Failure> {
    let width = templates::names().map(str::len).max().unwrap_or(0);
    let mut out = Output::new();
    for (name, lazy) in templates::TEMPLATES {
        let tables = lazy().tables();
        let fields: Vec<&str> = tables.template.fields.iter().map(|f| f.name).collect();
        let families = templates::families(name).unwrap_or("-");
        out.line(format_args!(
            "{name:width$}  {families}  [fields: {}]",
            fields.join(", ")
        ))?;
    }
    Ok(())
}

fn cmd_check(paths: &[PathBuf]) -> Result<(), Failure> {
    let mut bad = 0;
    let mut out = Output::new();
    for path in paths {
        match template_build::load_file(path) {
            Ok(_) => out.line(format_args!("{}: ok", path.display()))?,
            Err(errors) => {
                bad += 1;
                for e in &errors.0 {
                    out.line(e)?;
                }
            }
        }
    }
    if bad > 0 {
        Err(Failure::data(format!(
            "{bad} of {} templates have problems",
            paths.len()
        )))
    } else {
        Ok(())
    }
}

/// Runs the cases of stdin, one result line per case line. A line that is not UTF-8, not
/// JSON, or not a case of the schema ([`check_case`]) gives a `CaseError` result naming the
/// line (1-based) and the key, and the run goes on with the next line. `lenient`: lenient mode.
fn cmd_run_cases(merge: bool, lenient: bool) -> Result<(), Failure> {
    let options = ParserOptions {
        lenient,
        ..ParserOptions::default()
    };
    let mut stdin = std::io::stdin().lock();
    let mut out = Output::new();
    let mut bytes = Vec::new();
    let mut number = 0usize;
    loop {
        bytes.clear();
        let read = stdin
            .read_until(b'\n', &mut bytes)
            .map_err(|e| Failure::data(format!("cannot read stdin: {e}")))?;
        if read == 0 {
            break;
        }
        number += 1;
        let error = |what: String| json!({"id": null, "ok": false, "error": format!("CaseError: line {number}: {what}")});
        let result = match std::str::from_utf8(&bytes) {
            Err(e) => error(format!(
                "not UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            )),
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => match serde_json::from_str::<Value>(line) {
                Err(e) => error(format!("invalid case JSON: {e}")),
                Ok(case) => match check_case(&case) {
                    Err(e) => case_error(&case, &format!("line {number}: {e}")),
                    Ok(()) => run_case_options(&case, merge, options),
                },
            },
        };
        out.write(|o| {
            serde_json::to_writer(&mut *o, &result)?;
            writeln!(o)?;
            o.flush()
        })?;
        if out.closed {
            // Nobody reads the results any more, and they decide no exit code.
            break;
        }
    }
    Ok(())
}

fn read_json(path: &Path, what: &str) -> Result<Value, Failure> {
    let text = read_text(path, what)?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::data(format!("{}: invalid JSON: {e}", path.display())))
}

fn load_vocab(args: &ConstrainArgs) -> Result<constrain::vocab::Vocabulary, Failure> {
    use constrain::vocab::Vocabulary;
    let eos: Vec<&str> = args.eos.iter().map(String::as_str).collect();
    let path = Path::new(&args.vocab);
    let tiktoken_file = path.extension().is_some_and(|x| x == "tiktoken");
    if !args.special.is_empty() && !tiktoken_file {
        return Err(Failure::usage(
            "--special is for .tiktoken files (built-in vocabularies and tokenizer.json list \
             their own special tokens)",
        ));
    }
    const BUILTIN: [&str; 3] = ["o200k_base", "cl100k_base", "o200k_harmony"];
    if !BUILTIN.contains(&args.vocab.as_str()) && !path.exists() {
        return Err(Failure::data(format!(
            "--vocab {:?}: not a built-in vocabulary ({}) and no such file",
            args.vocab,
            BUILTIN.join(", ")
        )));
    }
    let vocab = if BUILTIN.contains(&args.vocab.as_str()) {
        Vocabulary::builtin(&args.vocab)
    } else if tiktoken_file {
        let mut specials = Vec::new();
        for s in &args.special {
            let (text, id) = s
                .rsplit_once('=')
                .and_then(|(t, id)| id.parse::<u32>().ok().map(|id| (t.to_string(), id)))
                .ok_or_else(|| Failure::usage(format!("--special {s:?}: expected TEXT=ID")))?;
            specials.push((text, id));
        }
        if eos.is_empty() {
            return Err(Failure::usage(
                "a .tiktoken file has no special tokens: give --special TEXT=ID and --eos TEXT \
                 (o200k_base: --special '<|endoftext|>=199999' --eos '<|endoftext|>')",
            ));
        }
        Vocabulary::from_tiktoken(
            &args.vocab,
            &read_text(path, "vocabulary")?,
            &specials,
            &eos,
        )
    } else {
        let names = (!eos.is_empty()).then_some(eos.as_slice());
        Vocabulary::from_hf_tokenizer(&args.vocab, &read_text(path, "vocabulary")?, names)
    };
    vocab.map_err(|e| Failure::data(e.to_string()))
}

/// How `rtpl constrain` checks its samples.
enum Check {
    /// Strict mode: the contract (response format, strict tools), while parsing.
    Contract(std::sync::Arc<Contract>),
    /// General mode: a JSON Schema validator on the parsed content and call arguments.
    General(GeneralCheck),
}

/// General mode's check of a parsed sample: the content (a `json_schema` response format)
/// and each tool call's arguments, validated as JSON Schema (the draft its `$schema` names,
/// else 2020-12; formats as annotations; no remote documents).
struct GeneralCheck {
    content: Option<jsonschema::Validator>,
    tools: Vec<(String, jsonschema::Validator)>,
}

impl GeneralCheck {
    /// `files`: the tools file and the response-format file, named in errors.
    fn new(
        tools: &[Value],
        response_format: Option<&Value>,
        files: [&str; 2],
    ) -> Result<Self, Failure> {
        let build = |file: &str, at: &str, schema: &Value| {
            jsonschema::options()
                .should_validate_formats(false)
                .build(schema)
                .map_err(|e| {
                    // The place in the schema the meta-schema refuses (`/properties/a/minContains`).
                    let place = e.instance_path().as_str();
                    Failure::data(format!(
                        "{file}: {at}{place}: the validator refuses it: {e}"
                    ))
                })
        };
        let content = match response_format.and_then(|f| f.pointer("/json_schema/schema")) {
            Some(schema) => Some(build(
                files[1],
                "response_format/json_schema/schema",
                schema,
            )?),
            None => None,
        };
        let mut validators = Vec::new();
        for (i, tool) in tools.iter().enumerate() {
            let function = tool.get("function").unwrap_or(tool);
            let (Some(name), Some(parameters)) = (
                function.get("name").and_then(Value::as_str),
                function.get("parameters"),
            ) else {
                continue;
            };
            let at = format!("tools/{i}/function/parameters");
            validators.push((name.to_string(), build(files[0], &at, parameters)?));
        }
        Ok(Self {
            content,
            tools: validators,
        })
    }

    /// The violations of `message`: `{"at", "instance_path", "reason"}` each.
    fn violations(&self, message: &serde_json::Map<String, Value>) -> Vec<Value> {
        let mut out = Vec::new();
        fn check(
            out: &mut Vec<Value>,
            at: String,
            validator: &jsonschema::Validator,
            value: &Value,
        ) {
            for e in validator.iter_errors(value) {
                out.push(
                    json!({"at": at, "instance_path": e.instance_path().as_str(),
                    "reason": e.to_string()}),
                );
            }
        }
        if let Some(validator) = &self.content {
            match message.get("content").and_then(Value::as_str) {
                Some(text) => match serde_json::from_str::<Value>(text) {
                    Ok(value) => check(&mut out, "content".into(), validator, &value),
                    Err(e) => {
                        out.push(json!({"at": "content", "reason": format!("not JSON: {e}")}))
                    }
                },
                None => out.push(json!({"at": "content", "reason": "no content"})),
            }
        }
        let calls = message.get("tool_calls").and_then(Value::as_array);
        for (i, call) in calls.into_iter().flatten().enumerate() {
            let at = format!("tool_calls/{i}/function/arguments");
            let name = call.pointer("/function/name").and_then(Value::as_str);
            let Some((_, validator)) = self.tools.iter().find(|(n, _)| Some(n.as_str()) == name)
            else {
                out.push(json!({"at": format!("tool_calls/{i}/function/name"),
                    "reason": "not a declared tool"}));
                continue;
            };
            let arguments = match call.pointer("/function/arguments") {
                Some(Value::String(text)) => serde_json::from_str(text).ok(),
                other => other.cloned(),
            };
            match arguments {
                Some(value) => check(&mut out, at, validator, &value),
                None => out.push(json!({"at": at, "reason": "no JSON arguments"})),
            }
        }
        out
    }
}

fn cmd_constrain(args: &ConstrainArgs) -> Result<(), Failure> {
    use constrain::template::{compile, Options, Request, ToolChoice};
    use std::sync::Arc;
    // The template twice: its model for the constraint, its tables for parsing the samples.
    let (text, name) = match (&args.template, &args.model) {
        (Some(path), _) => (read_text(path, "template")?, path.display().to_string()),
        (None, Some(name)) => match templates::source(name) {
            Some(text) => (text.to_string(), name.clone()),
            None => {
                return Err(Failure::usage(format!(
                    "no vendored template named {name:?}; available: {}",
                    templates::names().collect::<Vec<_>>().join(", ")
                )))
            }
        },
        (None, None) => return Err(Failure::usage("pass --template FILE or --model NAME")),
    };
    let located = |e: template_build::TemplateErrors| Failure::data(one_line(&e.with_file(&name)));
    let value = template_build::compile::template_value_from_text(&text).map_err(located)?;
    let model = template_build::model::load(&value).map_err(located)?;
    let compiled = template_build::compile(&value).map_err(located)?;
    let tools = match &args.tools {
        None => Vec::new(),
        Some(f) => match read_json(f, "tools")? {
            Value::Array(list) => list,
            _ => {
                return Err(Failure::data(format!(
                    "{}: tools must be a JSON list",
                    f.display()
                )))
            }
        },
    };
    let response_format = match &args.response_format {
        None => None,
        Some(f) => Some(read_json(f, "response format")?),
    };
    let tool_choice = ToolChoice::from_request(&Value::String(args.tool_choice.clone()))
        .map_err(|e| Failure::usage(e.to_string()))?;
    let request = Request {
        tools: tools.clone(),
        tool_choice,
        response_format: response_format.clone(),
    };
    let general = args.schema_mode == "general";
    let mut options = Options::default();
    if general {
        options.json.mode = constrain::json::SchemaMode::general();
    }
    options.json.whitespace = args.whitespace;
    options.json.max_nodes = args.max_schema_nodes;
    options.limits.max_states = args.max_states;
    options.limits.max_automaton_bytes = args.max_automaton_mb.saturating_mul(1 << 20);
    options.limits.max_work = args.max_work_mi.saturating_mul(1 << 20);
    options.time_budget = (args.compile_budget_ms > 0)
        .then(|| std::time::Duration::from_millis(args.compile_budget_ms));
    // The error names the file its path points into: the tools file for `tools/...`, the
    // response-format file for `response_format...`, else the template.
    let constraint = compile(&model, &request, &options).map_err(|e| {
        let file = match (&args.tools, &args.response_format) {
            (Some(f), _) if e.at.starts_with("tools") => f.display().to_string(),
            (_, Some(f)) if e.at.starts_with("response_format") => f.display().to_string(),
            _ => name.clone(),
        };
        // The library names the option that sets a budget (`Limits::max_states`); here,
        // the flag that sets it too. Only where the reason names that option: general
        // mode's fixed limits (nesting depth, alternatives, `JsonOptions::max_count`) are
        // size budgets no flag moves.
        let raise = e
            .budget
            .filter(|b| e.reason.contains(b.name()))
            .map(|b| format!("; raise it with {}", budget_flag(b)))
            .unwrap_or_default();
        Failure::data(format!("{file}: {e}{raise}"))
    })?;
    let vocab = load_vocab(args)?;
    let check = if general {
        let file = |f: &Option<std::path::PathBuf>| {
            f.as_ref()
                .map_or_else(|| name.clone(), |f| f.display().to_string())
        };
        let (tools_file, response_file) = (file(&args.tools), file(&args.response_format));
        Check::General(GeneralCheck::new(
            &tools,
            response_format.as_ref(),
            [&tools_file, &response_file],
        )?)
    } else {
        Check::Contract(Arc::new(Contract {
            response_format: match &response_format {
                None => None,
                Some(v) => Some(
                    ResponseFormat::from_request(v).map_err(|e| Failure::data(e.to_string()))?,
                ),
            },
            strict_tools: if tools.is_empty() {
                None
            } else {
                Some(StrictTools::new(&tools).map_err(|e| Failure::data(e.to_string()))?)
            },
        }))
    };
    let index = constrain::index::TokenIndex::new(
        Arc::new(constraint),
        Arc::new(constrain::index::VocabIndex::new(vocab)),
    );
    let sample_options = constrain::sample::SampleOptions {
        token_cap: usize::try_from(args.token_cap).unwrap_or(usize::MAX),
        ..Default::default()
    };
    let sampler = constrain::sample::Sampler::new(&index, sample_options);
    let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(args.seed);
    let mut broken = false;
    let mut cut_off = false;
    let mut out = Output::new();
    for _ in 0..args.sample {
        let sample = sampler.sample(&mut rng);
        let text = String::from_utf8_lossy(&sample.text).into_owned();
        let mut line = json!({"text": text, "tokens": sample.tokens.len()});
        if sample.cut_off {
            // A prefix of a valid output: nothing to check against the contract.
            line["cut_off"] = json!(true);
            cut_off = true;
            out.json_line(&line)?;
            continue;
        }
        if !sample.complete {
            line["incomplete"] = json!(true);
            broken = true;
        }
        let checked = match &check {
            Check::Contract(contract) => parser_runtime::parse_response_checked(
                &compiled,
                &text,
                "",
                &tools,
                contract.clone(),
            )
            .map(|(m, v)| (m, serde_json::to_value(&v).unwrap_or(Value::Null))),
            Check::General(g) => {
                parser_runtime::parse_response(&compiled, &text, "", &tools).map(|m| {
                    let v = g.violations(&m);
                    (m, Value::Array(v))
                })
            }
        };
        match checked {
            Ok((message, violations)) => {
                broken |= violations.as_array().is_none_or(|v| !v.is_empty());
                line["message"] = Value::Object(message);
                line["violations"] = violations;
            }
            Err(e) => {
                broken = true;
                line["error"] = json!(e.to_string());
            }
        }
        out.json_line(&line)?;
        if out.closed && broken {
            // Nobody reads the samples any more and the exit code is decided.
            break;
        }
    }
    if broken {
        return Err(Failure(
            "a sample broke the contract (see its line)".into(),
            3,
        ));
    }
    if cut_off {
        return Err(Failure(
            format!(
                "a sample was cut off at the token cap of {} tokens before it could end (not a \
                 contract violation; raise --token-cap)",
                args.token_cap
            ),
            4,
        ));
    }
    Ok(())
}

/// The `rtpl constrain` flag that sets a compile budget (`ConstrainError::budget`).
fn budget_flag(budget: constrain::dfa::Budget) -> &'static str {
    use constrain::dfa::Budget;
    match budget {
        Budget::States => "--max-states",
        Budget::AutomatonBytes => "--max-automaton-mb",
        Budget::Work => "--max-work-mi",
        Budget::SchemaNodes => "--max-schema-nodes",
        Budget::Time => "--compile-budget-ms",
        _ => "the compile budget flags",
    }
}
