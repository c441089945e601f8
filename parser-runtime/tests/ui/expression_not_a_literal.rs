fn main() {
    let _ = parser_runtime::response_template!(concat!("templates/", "invalid_regex.json"));
    let _ = parser_runtime::response_template!(b"templates/invalid_regex.json");
    let _ = parser_runtime::response_template!("templates/invalid_regex.json"suffix);
    let _ = parser_runtime::response_template!("");
}
