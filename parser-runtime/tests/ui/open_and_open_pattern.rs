parser_runtime::response_template!(pub Template = "templates/open_and_open_pattern.json");

fn main() {}
