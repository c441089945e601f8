parser_runtime::response_template!(pub Template = "templates/invalid_json.json");

fn main() {}
