parser_runtime::response_template!(pub Template = "templates/nope.json");

fn main() {}
