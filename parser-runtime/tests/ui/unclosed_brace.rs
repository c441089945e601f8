parser_runtime::response_template!(pub Template = "templates/unclosed_brace.json");

fn main() {}
