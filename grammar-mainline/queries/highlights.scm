; Kernel probe-event definitions (kprobe_events / dynamic_events).

(comment) @comment
(probe_kind) @keyword
"-:" @keyword
(event_id) @label
(place) @function
(definition maxactive: (number) @number)
(argument_name) @variable.parameter
(register name: (identifier) @variable.builtin)
(variable name: (identifier) @variable.builtin)
(btf_name name: (identifier) @variable)
(field_identifier) @property
(memory address: (location) @constant)
(number) @number
(string_content) @string
(type_identifier) @type
["%" "$" "@" "\\" "\\\""] @punctuation.special
["(" ")" "[" "]"] @punctuation.bracket
["=" ":" "->" "."] @punctuation.delimiter
