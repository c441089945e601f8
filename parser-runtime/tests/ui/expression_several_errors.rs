static TEMPLATE: &parser_runtime::EmbeddedTemplate =
    parser_runtime::response_template!("templates/several_errors.json");

fn main() {}
