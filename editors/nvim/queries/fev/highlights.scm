; Highlighting for function-event scripts. The single source for every editor:
; editors/nvim copies this file (scripts/sync-queries), never edits it.

(comment) @comment

(definition function: (identifier) @function)

(type) @type.builtin
(unsigned) @type.qualifier
(null) @constant.builtin

(parameter name: (identifier) @variable.parameter)
(named_address name: (identifier) @variable)
(symbol_ref "$" @punctuation.special)
(symbol_ref name: (identifier) @constant)

(address) @number
(number) @number

["(" ")" "[" "]"] @punctuation.bracket
["," "|"] @punctuation.delimiter
["+" "="] @operator
