parser_runtime::response_template!(pub Template = "templates/several_errors.json");

fn main() {}
