// The guard that generated code emits: a format version other than the runtime's one
// (`parser_runtime::__private::FORMAT_VERSION`, 6 since capture patterns may name copies of a group) fails const evaluation.
const _: () = parser_runtime::__private::require_format(1);

fn main() {}
