//! The no-heap router (fixed-capacity hold buffer and walk slots, as on a device without a
//! heap) against the message-building parser, on a vendored template and an output built from
//! the fuzz input: the same regions (fields, routed text, open/close order) whenever the
//! parser succeeds, under any chunking; a capacity error only as the typed
//! `HoldOverflow`/`TooManyWalks`; never a panic. For the templates also embedded by
//! `response_template!` here, the embedded tables route exactly like the run-time tables.
//! Input layout: `response_templates_fuzz` (`src/lib.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use parser_runtime::router::{RegionEvent, RouteError, Router, Routes};
use parser_runtime::tables::{Owned, Routed};
use parser_runtime::FieldId;
use response_templates_fuzz::{parser_steps, push_text, str_pieces, Case, Step};

parser_runtime::response_template!(SmolLm3 = "../../templates/smollm3.json");
parser_runtime::response_template!(Qwen3Coder = "../../templates/qwen3-coder.json");
parser_runtime::response_template!(GptOss = "../../templates/gpt-oss.json");

/// Hold buffer capacity of the fixed router, in bytes.
const HOLD: usize = 4096;

/// The router's steps over `routes`, field ids named by `name`.
fn router_steps<R: Routes, F: FieldId>(
    routes: R,
    name: impl Fn(F) -> String,
    pieces: &[&str],
) -> Result<Vec<Step>, RouteError> {
    let mut router: Router<R, F, HOLD> = Router::new(routes)?;
    let mut steps = Vec::new();
    let mut on_event = |e: RegionEvent<'_, F>| match e {
        RegionEvent::Open { field, .. } => steps.push(Step::Open(name(field))),
        RegionEvent::Chunk { field, text } => push_text(&mut steps, &name(field), text),
        RegionEvent::Close { field, .. } => steps.push(Step::Close(name(field))),
    };
    for piece in pieces {
        router.feed(piece, &mut on_event)?;
    }
    router.finish(&mut on_event)?;
    Ok(steps)
}

fuzz_target!(|data: &[u8]| {
    let Some(case) = Case::decode(data) else {
        return;
    };
    let template = case.vendored.template;
    let pieces = str_pieces(&case.output, &case.sizes);
    let routes: Routed<'_, Owned> = template.routes();
    let got = router_steps(routes, |f: usize| template.fields[f].name.clone(), &pieces);
    // The embedded (no-heap) tables of the same template route identically.
    let embedded = match case.vendored.name {
        "smollm3" => Some(router_steps(
            SmolLm3::routes().unwrap(),
            |f: SmolLm3| f.to_string(),
            &pieces,
        )),
        "qwen3-coder" => Some(router_steps(
            Qwen3Coder::routes().unwrap(),
            |f: Qwen3Coder| f.to_string(),
            &pieces,
        )),
        "gpt-oss" => Some(router_steps(
            GptOss::routes().unwrap(),
            |f: GptOss| f.to_string(),
            &pieces,
        )),
        _ => None,
    };
    if let Some(embedded) = embedded {
        assert_eq!(embedded, got, "embedded tables != run-time tables");
    }
    let want = parser_steps(template, &pieces);
    match (got, want) {
        (Ok(got), Some(want)) => assert_eq!(got, want, "router != parser on {:?}", case.output),
        // The fixed capacity is a typed error; the parser's hold buffer grows.
        (Err(RouteError::HoldOverflow { limit, .. }), _) => assert_eq!(limit, HOLD),
        (Err(RouteError::TooManyWalks { .. } | RouteError::TooManyDelimiters { .. }), _) => {}
        (Err(e), Some(_)) => panic!("router failed where the parser did not: {e}"),
        (_, None) => {}
    }
});
