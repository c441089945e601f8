fn main() {
    let _ = parser_runtime::response_template!(42);
}
