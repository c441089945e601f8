parser_runtime::response_template!(pub SmolLm3 = "../../../../templates/smollm3.json");

fn main() {
    let message = SmolLm3::parse_response(
        "<think>\nThe user greets me.\n</think>\nHello!",
        "<|im_start|>assistant\n",
    )
    .unwrap();
    assert_eq!(message["content"], "Hello!");
    assert_eq!(message["thinking"], "The user greets me.");
    assert_eq!(SmolLm3::from_name("tool_calls"), Some(SmolLm3::ToolCalls));
}
