/**
 * @file bpftrace scripts (`*.bt`), as bpftrace 0.17 reads them.
 * @license GPL-2.0-only
 *
 * Follows bpftrace v0.17.0's own grammar: `src/lexer.l` for the tokens and
 * `src/parser.yy` for the structure (the rule each node comes from is named
 * beside it). Where the two tools differ:
 *
 * - bpftrace's lexer knows a keyword everywhere; tree-sitter only where the
 *   keyword can stand (`$x.count` is a field either way; `count = 1` is an
 *   error in both). Likewise `c ? a :b` (flex lexes `:b` as a path) and
 *   `(FOO) + 1` (bison has shifted into a cast) parse here, not in bpftrace.
 * - The predicate's closing `/` (lexer.l's ENDPRED: a `/` followed by
 *   whitespace and `{` or `/`) comes from `src/scanner.c`, as in bpftrace.
 * - A struct definition's body is C, kept as text (bpftrace hands it to clang).
 * - Macros of `#define` are not expanded: a macro name is an identifier.
 */

/* eslint-disable no-undef */

// lexer.l: {builtin}, {call}, {call_and_builtin}.
const BUILTINS = [
  'args', 'cgroup', 'comm', 'cpid', 'numaid', 'cpu', 'ctx', 'curtask', 'elapsed',
  'func', 'gid', 'nsecs', 'pid', 'probe', 'rand', 'retval', 'tid', 'uid', 'username',
];
const CALLS = [
  'avg', 'buf', 'cat', 'cgroupid', 'clear', 'count', 'delete', 'exit', 'hist', 'join',
  'kaddr', 'kptr', 'ksym', 'lhist', 'macaddr', 'max', 'min', 'ntop', 'override', 'print',
  'printf', 'cgroup_path', 'reg', 'signal', 'sizeof', 'stats', 'str', 'strerror',
  'strftime', 'strncmp', 'strcontains', 'sum', 'system', 'time', 'uaddr', 'uptr', 'usym',
  'zero', 'path', 'unwatch', 'bswap', 'skboutput', 'pton', 'debugf',
];
const CALL_BUILTINS = ['kstack', 'ustack'];

// parser.yy's %left/%right lines, lowest first.
const PREC = {
  conditional: 1,
  lor: 2,
  land: 3,
  bor: 4,
  bxor: 5,
  band: 6,
  equality: 7,
  relational: 8,
  shift: 9,
  additive: 10,
  multiplicative: 11,
  unary: 12,
  postfix: 13,
};

const commaSep1 = rule => seq(rule, repeat(seq(',', rule)));

module.exports = grammar({
  name: 'bpftrace',

  extras: $ => [/\s/, $.comment],

  externals: $ => [$._predicate_end],

  word: $ => $.identifier,

  conflicts: $ => [
    // `(x)`: a parenthesised identifier or the start of a cast (parser.yy's
    // `LPAREN IDENT RPAREN cast_expr`); `(x * …`: a product or a pointer cast.
    [$._primary_expression, $.type],
  ],

  rules: {
    // program: c_definitions probes END
    source_file: $ => seq(
      repeat(choice($.preproc, $.struct_definition)),
      repeat($.probe),
    ),

    // lexer.l: `^"#!".*$` (the executable line), `"//".*$`, `/* … */`.
    comment: _ => token(choice(
      seq('#!', /.*/),
      seq('//', /.*/),
      seq('/*', /[^*]*\*+([^/*][^*]*\*+)*/, '/'),
    )),

    // lexer.l's CPREPROC: `"#"[^!].*` (`#include`, `#define`), before the probes.
    preproc: _ => token(seq('#', /[^!\n]/, /.*/)),

    // lexer.l's STRUCT and BRACE states: `struct`/`union`/`enum`, a name, a body of C
    // with balanced braces, then `}` or `};` (the STRUCT_DEFN token).
    struct_definition: $ => seq(
      choice('struct', 'union', 'enum'),
      optional(field('name', alias($.identifier, $.type_identifier))),
      field('body', $.c_body),
      optional(';'),
    ),

    c_body: $ => seq('{', repeat(choice($.c_text, $.c_body)), '}'),

    c_text: _ => /[^{}]+/,

    // probe: attach_points pred block
    probe: $ => seq(
      commaSep1($.attach_point),
      optional($.predicate),
      field('body', $.block),
    ),

    // attach_point_def: ident, STRING, PATH, INT, `:`, `.`, `+`, `*`, `[`, `]`, param,
    // concatenated. Its first identifier is the probe's type (`kprobe`, `BEGIN`).
    attach_point: $ => prec.right(choice(
      seq(field('type', alias($.identifier, $.probe_type)), repeat($._attach_piece)),
      seq($._attach_piece_other, repeat($._attach_piece)),
    )),

    _attach_piece: $ => choice(alias($.identifier, $.attach_word), $._attach_piece_other),

    _attach_piece_other: $ => choice(
      $.path,
      $.string,
      $.integer,
      $.positional_parameter,
      $.wildcard,
      ':', '.', '+', '[', ']',
    ),

    // lexer.l: path  :(\\.|[_\-\./a-zA-Z0-9#\*])+
    path: _ => token(seq(':', repeat1(choice(/\\./, /[_\-./a-zA-Z0-9#*]/)))),

    wildcard: _ => '*',

    // pred: DIV expr ENDPRED
    predicate: $ => seq('/', field('condition', $._expression), alias($._predicate_end, '/')),

    // block: "{" stmt_list "}"; an expression statement is followed by `;` unless it
    // is the last, a block statement (if, while, unroll) is not.
    block: $ => seq(
      '{',
      repeat(choice(seq($._expr_statement, ';'), $._block_statement)),
      optional($._expr_statement),
      '}',
    ),

    _block_statement: $ => choice($.if_statement, $.while_statement, $.unroll_statement),

    _expr_statement: $ => choice($.assignment_statement, $.jump_statement, $._expression),

    // jump_stmt
    jump_statement: _ => choice('break', 'continue', 'return'),

    // loop_stmt
    unroll_statement: $ => seq(
      'unroll', '(',
      field('count', choice(seq(optional('-'), $.integer), $.positional_parameter)),
      ')', field('body', $.block),
    ),

    while_statement: $ => seq(
      'while', '(', field('condition', $._expression), ')', field('body', $.block),
    ),

    // if_stmt, block_or_if
    if_statement: $ => seq(
      'if', '(', field('condition', $._expression), ')',
      field('consequence', $.block),
      optional(field('alternative', $.else_clause)),
    ),

    else_clause: $ => seq('else', choice($.block, $.if_statement)),

    // assign_stmt: map or var, then `=` or a compound_op, then expr.
    assignment_statement: $ => seq(
      field('left', choice($.map, $.variable)),
      field('operator', choice('=', '<<=', '>>=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=')),
      field('right', $._expression),
    ),

    _expression: $ => choice(
      $.conditional_expression,
      $.binary_expression,
      $.unary_expression,
      $.cast_expression,
      $.update_expression,
      $.field_expression,
      $.subscript_expression,
      $.call_expression,
      $._primary_expression,
    ),

    // conditional_expr: logical_or_expr QUES expr COLON conditional_expr
    conditional_expression: $ => prec.right(PREC.conditional, seq(
      field('condition', $._expression), '?',
      field('consequence', $._expression), ':',
      field('alternative', $._expression),
    )),

    binary_expression: $ => {
      const table = [
        ['||', PREC.lor],
        ['&&', PREC.land],
        ['|', PREC.bor],
        ['^', PREC.bxor],
        ['&', PREC.band],
        ['==', PREC.equality], ['!=', PREC.equality],
        ['<', PREC.relational], ['>', PREC.relational],
        ['<=', PREC.relational], ['>=', PREC.relational],
        ['<<', PREC.shift], ['>>', PREC.shift],
        ['+', PREC.additive], ['-', PREC.additive],
        ['*', PREC.multiplicative], ['/', PREC.multiplicative], ['%', PREC.multiplicative],
      ];
      return choice(...table.map(([op, p]) => prec.left(p, seq(
        field('left', $._expression),
        field('operator', op),
        field('right', $._expression),
      ))));
    },

    // unary_expr: unary_op cast_expr
    unary_expression: $ => prec(PREC.unary, seq(
      field('operator', choice('*', '~', '!', '-')),
      field('argument', $._expression),
    )),

    // cast_expr: LPAREN IDENT [MUL [MUL]] RPAREN cast_expr
    cast_expression: $ => prec(PREC.unary, seq(
      '(', field('type', $.type), ')', field('value', $._expression),
    )),

    type: $ => seq(
      choice(alias($.identifier, $.type_identifier), $.struct_type),
      optional(seq('*', optional('*'))),
    ),

    // lexer.l's STRUCT state ended by `*` or `)`: one IDENT `struct name`.
    struct_type: $ => seq(
      choice('struct', 'union', 'enum'),
      field('name', alias($.identifier, $.type_identifier)),
    ),

    // INCREMENT/DECREMENT on map_or_var, before or after.
    update_expression: $ => prec(PREC.postfix, choice(
      seq(field('operator', choice('++', '--')), field('argument', choice($.map, $.variable))),
      seq(field('argument', choice($.map, $.variable)), field('operator', choice('++', '--'))),
    )),

    // postfix_expr DOT ident | PTR ident; tuple_access_expr: postfix_expr DOT INT
    field_expression: $ => prec(PREC.postfix, seq(
      field('argument', $._expression),
      field('operator', choice('.', '->')),
      field('field', choice(alias($.identifier, $.field_identifier), $.integer)),
    )),

    subscript_expression: $ => prec(PREC.postfix, seq(
      field('argument', $._expression), '[', field('index', $._expression), ']',
    )),

    // call: CALL or CALL_BUILTIN, then `(` vargs `)`
    call_expression: $ => prec(PREC.postfix, seq(
      field('function', alias(choice(...CALLS, ...CALL_BUILTINS), $.function_name)),
      field('arguments', $.argument_list),
    )),

    argument_list: $ => seq('(', optional(commaSep1($._expression)), ')'),

    _primary_expression: $ => choice(
      $.identifier,
      $.integer,
      $.string,
      $.stack_mode,
      $.builtin,
      $.positional_parameter,
      $.map,
      $.variable,
      $.parenthesized_expression,
      $.tuple_expression,
      $.struct_type,
    ),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    tuple_expression: $ => seq('(', $._expression, ',', commaSep1($._expression), ')'),

    // map: MAP | MAP "[" vargs "]"
    map: $ => prec.right(seq(
      field('name', $.map_name),
      optional(seq('[', field('key', commaSep1($._expression)), ']')),
    )),

    // lexer.l: map  @{ident}|@
    map_name: _ => /@([_a-zA-Z][_a-zA-Z0-9]*)?/,

    // lexer.l: var  ${ident}
    variable: _ => /\$[_a-zA-Z][_a-zA-Z0-9]*/,

    // lexer.l: PARAM "$"[0-9]+ and PARAMCOUNT "$"#
    positional_parameter: _ => choice(/\$[0-9]+/, '$#'),

    builtin: _ => choice(...BUILTINS, ...CALL_BUILTINS, /arg[0-9]/, /sarg[0-9]/),

    stack_mode: _ => choice('bpftrace', 'perf'),

    // lexer.l: {int}|{hex}|{exponent}, with underscores and C's suffixes.
    integer: _ => token(choice(
      /[0-9]([0-9_]*[0-9])?([uU]|[uU]?[lL]?[lL])?/,
      /0[xX][0-9a-fA-F]+/,
      /[0-9]([0-9_]*[0-9])?([uU]|[uU]?[lL]?[lL])?[eE][0-9]([0-9_]*[0-9])?([uU]|[uU]?[lL]?[lL])?/,
    )),

    // lexer.l's STR state: `\n \t \r \" \\`, octal and hex escapes; no newline.
    string: $ => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence)),
      token.immediate('"'),
    ),

    string_content: _ => token.immediate(prec(1, /[^\\"\n]+/)),

    escape_sequence: _ => token.immediate(/\\([ntr"\\]|[0-7]{1,3}|[xX][0-9a-fA-F]{1,2})/),

    identifier: _ => /[_a-zA-Z][_a-zA-Z0-9]*/,
  },
});
