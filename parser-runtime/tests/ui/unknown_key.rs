parser_runtime::response_template!(pub Template = "templates/unknown_key.json");

fn main() {}
