fn main() {
    let _ = parser_runtime::response_template!("templates/../templates/no_such.json");
}
