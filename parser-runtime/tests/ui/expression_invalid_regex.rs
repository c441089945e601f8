fn main() {
    let _ = parser_runtime::response_template!("templates/invalid_regex.json");
}
