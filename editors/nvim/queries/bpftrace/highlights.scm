; Highlighting for bpftrace scripts. The single source for every editor:
; editors/nvim copies this file (scripts/sync-queries), never edits it.

(comment) @comment
(preproc) @keyword.directive

["struct" "union" "enum"] @keyword

; Probes: `kprobe:vfs_read`, `tracepoint:sched:sched_switch`, `BEGIN`.
(probe_type) @keyword
(path) @function
(attach_word) @function
(wildcard) @operator
(predicate "/" @punctuation.delimiter)

["if" "else" "while" "unroll"] @keyword
(jump_statement) @keyword

(builtin) @variable.builtin
(stack_mode) @constant.builtin
(function_name) @function.builtin
(map_name) @variable
(variable) @variable
(positional_parameter) @variable.parameter
(field_identifier) @property
(type_identifier) @type
(identifier) @constant

(integer) @number
(string) @string
(escape_sequence) @string.escape

(binary_expression operator: _ @operator)
(unary_expression operator: _ @operator)
(update_expression operator: _ @operator)
(assignment_statement operator: _ @operator)
(conditional_expression ["?" ":"] @operator)
(field_expression operator: _ @punctuation.delimiter)

["(" ")" "[" "]" "{" "}"] @punctuation.bracket
["," ";"] @punctuation.delimiter
