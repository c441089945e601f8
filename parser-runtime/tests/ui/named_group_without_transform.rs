parser_runtime::response_template!(pub Template = "templates/named_group_without_transform.json");

fn main() {}
