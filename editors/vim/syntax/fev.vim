" Syntax for kernel function-event scripts (*.fev), after the tree-sitter grammar's
" grammar/queries/highlights.scm: function, types, `unsigned`, `NULL`, field names,
" `$symbol`, numbers and addresses, `+` `=`, comments.
if exists('b:current_syntax')
  finish
endif

syn match fevComment "#.*$" contains=@Spell
syn match fevFunction "^\s*\zs\h\w*\ze\s*("
syn region fevArgs matchgroup=fevParen start="(" end=")\|$" contains=fevComment,fevNull,fevFieldStart,fevDelimiter,fevNumber,fevAddress,fevOperator,fevSymbolRef,fevBracket keepend oneline
" A type keyword counts only where a field starts (keywords are contextual: in
" `int int` the second `int` is the field's name).
syn match fevFieldStart "\%([(,|]\s*\)\@<=\%(unsigned\s\+\)\=\<\%(long\|int\|short\|char\|size_t\|u64\|s64\|x64\|u32\|s32\|x32\|u16\|s16\|x16\|u8\|s8\|x8\|symbol\|string\)\>" contained contains=fevType,fevUnsigned nextgroup=fevArray,fevName skipwhite
syn keyword fevType long int short char size_t u64 s64 x64 u32 s32 x32 u16 s16 x16 u8 s8 x8 symbol string contained
syn keyword fevUnsigned unsigned contained
syn match fevArray "\[\s*\w\+\s*\]" contained contains=fevNumber,fevBracket nextgroup=fevName skipwhite
syn match fevName "\h\w*" contained
syn match fevNull "\%([(,|]\s*\)\@<=\<NULL\>" contained
syn match fevSymbolRef "\$\s*\h\w*" contained
syn match fevNumber "\<\d\w*" contained
" After fevNumber: the later match wins at the same position.
syn match fevAddress "\<0x\w*" contained
syn match fevOperator "[+=]" contained
syn match fevDelimiter "[,|]" contained
syn match fevBracket "[][]" contained

hi def link fevComment Comment
hi def link fevFunction Function
hi def link fevType Type
hi def link fevUnsigned StorageClass
hi def link fevNull Constant
hi def link fevName Identifier
hi def link fevSymbolRef Constant
hi def link fevAddress Number
hi def link fevNumber Number
hi def link fevOperator Operator
hi def link fevDelimiter Delimiter
hi def link fevBracket Delimiter
hi def link fevParen Delimiter

let b:current_syntax = 'fev'
