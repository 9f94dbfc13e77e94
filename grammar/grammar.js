/**
 * @file Function-event scripts (`*.fev`): one `function_events` definition per line.
 * @license GPL-2.0-only
 *
 * Faithful to the tokenizer of the 2018 reference parser
 * (kernel/trace/trace_event_ftrace.c): a token is a maximal run of [A-Za-z0-9_]
 * or one other character; whitespace separates tokens and may appear anywhere.
 * So numbers are lexed as whole alphanumeric runs (`9f`, `08`, `0xZZ` are one
 * token each) and their value is checked by fevlint's state machine, not here.
 * Keywords are contextual: `int int` is a field named `int`.
 */

/* eslint-disable no-undef */

const ATOMS = [
  'long', 'int', 'short', 'char', 'size_t',
  'u64', 's64', 'x64', 'u32', 's32', 'x32',
  'u16', 's16', 'x16', 'u8', 's8', 'x8',
  'symbol',
];

module.exports = grammar({
  name: 'fev',

  // Newlines end a definition, so they are not extras.
  extras: $ => [/[ \t\f\v\r]/, $.comment],

  word: $ => $.identifier,

  rules: {
    source_file: $ => seq(
      optional($.definition),
      repeat(seq($._newline, optional($.definition))),
    ),

    _newline: _ => /\n/,

    definition: $ => seq(
      field('function', $.identifier),
      '(',
      optional(seq($.argument, repeat(seq(',', $.argument)))),
      // The kernel rejects a missing `)` ("Unexpected ending"); fevlint's state
      // machine reports it. The grammar lets it go so that a half-typed line
      // still forms a definition node for completion and hover.
      optional(')'),
    ),

    // A comma-separated group: `NULL`, or fields joined by `|` that read the
    // same parameter. After `NULL` the kernel takes only `,` or `)`: so `x | NULL`
    // is accepted, `NULL | x` and `x | NULL | y` are not.
    argument: $ => choice(
      $.null,
      seq($.field, repeat(seq('|', $.field)), optional(seq('|', $.null))),
    ),

    null: _ => 'NULL',

    field: $ => seq(
      optional(field('unsigned', $.unsigned)),
      choice(
        // `string[...]` is rejected ("Array of strings is not supported").
        field('type', alias('string', $.type)),
        seq(field('type', $.type), optional(field('array', $.array_size))),
      ),
      field('target', choice($.parameter, $.named_address, $.address, $.symbol_ref)),
    ),

    unsigned: _ => 'unsigned',

    type: _ => choice(...ATOMS),

    array_size: $ => seq('[', field('count', $.number), ']'),

    // Reads the slot's function parameter, then follows the redirects.
    parameter: $ => seq(
      field('name', $.identifier),
      repeat(field('redirect', choice($.offset, $.index))),
    ),

    // `name=0x...` or `name=$sym`. Redirects before `=` are accepted and ignored
    // at run time, but the kernel only takes `=` in its VAR state, i.e. right
    // after the name or after a `+N`: `a[0]+8=0x1` is accepted, `a[0]=0x1` is not.
    named_address: $ => seq(
      field('name', $.identifier),
      optional(seq(
        repeat(field('redirect', choice($.offset, $.index))),
        field('redirect', $.offset),
      )),
      '=',
      field('value', choice($.address, $.symbol_ref)),
    ),

    offset: $ => seq('+', field('value', $.number)),

    index: $ => seq('[', field('value', $.number), ']'),

    symbol_ref: $ => seq('$', field('name', $.identifier)),

    // The kernel takes any token starting with a lowercase `0x` here and reads it
    // with kstrtoul; validity is checked outside the grammar.
    address: _ => token(prec(1, /0x[A-Za-z0-9_]*/)),

    number: _ => /[0-9][A-Za-z0-9_]*/,

    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,

    comment: _ => token(seq('#', /[^\n]*/)),
  },
});
