//! A no-std, no-heap user of the router (see Cargo.toml): routes an output and returns how
//! many bytes went into the `content` field.
#![no_std]
#![no_main]

use parser_runtime::RegionEvent;

parser_runtime::response_template!(SmolLm3 = "../../templates/smollm3.json");

/// Routes `output` in 4-byte pieces; returns the content bytes, or `usize::MAX` on an error.
fn content_bytes(output: &str) -> usize {
    let Ok(mut router) = SmolLm3::router::<512>() else {
        return usize::MAX;
    };
    let mut content = 0;
    let mut on_event = |event: RegionEvent<'_, SmolLm3>| {
        if let RegionEvent::Chunk {
            field: SmolLm3::Content,
            text,
        } = event
        {
            content += text.len();
        }
    };
    let mut rest = output;
    while !rest.is_empty() {
        let mut n = rest.len().min(4);
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        if router.feed(&rest[..n], &mut on_event).is_err() {
            return usize::MAX;
        }
        rest = &rest[n..];
    }
    if router.finish(&mut on_event).is_err() {
        return usize::MAX;
    }
    content
}

/// The expression form `response_template!("path")` (a `&'static EmbeddedTemplate`): routes
/// `output` in one piece; returns the bytes of the `content` field (the events' field id is
/// its index), or `usize::MAX` on an error.
fn content_bytes_expression(output: &str) -> usize {
    let template = parser_runtime::response_template!("../../templates/smollm3.json");
    let Some(content_field) = template.field_index("content") else {
        return usize::MAX;
    };
    let Ok(mut router) = template.router::<512>() else {
        return usize::MAX;
    };
    let mut content = 0;
    let mut on_event = |event: RegionEvent<'_, usize>| {
        if let RegionEvent::Chunk { field, text } = event {
            if field == content_field {
                content += text.len();
            }
        }
    };
    if router.feed(output, &mut on_event).is_err() || router.finish(&mut on_event).is_err() {
        return usize::MAX;
    }
    content
}

/// C entry point.
#[no_mangle]
pub extern "C" fn route_demo() -> usize {
    content_bytes("<think>\nhm\n</think>\nHello!")
}

/// C entry point of the expression form.
#[no_mangle]
pub extern "C" fn route_demo_expression() -> usize {
    content_bytes_expression("<think>\nhm\n</think>\nHello!")
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
