fn main() {
    let _ = parser_runtime::response_template!("templates/no_such_template.json")
        .parse_response("Hello!", "");
}
