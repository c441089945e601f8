// The guard that generated code emits: a format version other than the runtime's one
// (`parser_runtime::__private::FORMAT_VERSION`, 8 since watch lists say which regions hold JSON) fails const evaluation.
const _: () = parser_runtime::__private::require_format(1);

fn main() {}
