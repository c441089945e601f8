parser_runtime::response_template!(pub Template = "templates/invalid_regex.json");

fn main() {}
