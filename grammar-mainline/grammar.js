/**
 * Tree-sitter grammar for the kernel's own probe-event dialect: the lines written to
 * /sys/kernel/tracing/kprobe_events and dynamic_events (`*.dynevents` files):
 * `p:`/`r:` kprobes, `f:` fprobes, `t:` tprobes, `-:` removals.
 *
 * For editors (highlighting, structure, positions in half-typed lines). Deliberately
 * lenient: what the kernel accepts is decided by fevlint-mainline, a transcription of
 * trace_probe.c; every line a real kernel accepted parses here without ERROR
 * (tests/accepted.rs).
 */

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/;
const imm = token.immediate;

/** The fetch-argument forms; `first` tokens are immediate inside parentheses. */
function fetchRules(suffix, first) {
  const t = (x) => (first ? imm(x) : x);
  const r = (name) => (suffix ? `${name}${suffix}` : name);
  return {
    [r('register')]: $ => seq(t('%'), field('name', alias(imm(IDENT), $.identifier))),
    [r('variable')]: $ => seq(
      t('$'),
      field('name', alias(imm(/[A-Za-z_][A-Za-z0-9_+]*\*?/), $.identifier)),
      repeat($._member),
    ),
    [r('memory')]: $ => seq(t('@'), field('address', alias(imm(/[A-Za-z0-9_.+\-]+/), $.location))),
    [r('dereference')]: $ => seq(
      field('sign', t(/[+-]/)),
      optional(field('user', imm('u'))),
      field('offset', alias(imm(/[0-9][0-9A-Za-z]*/), $.number)),
      imm('('),
      field('inner', $._inner_fetch),
      imm(')'),
    ),
    [r('immediate')]: $ => seq(t('\\'), field('value', alias(imm(/[0-9+\-][0-9A-Za-z]*/), $.number))),
    // The kernel only needs the last byte to be '"' (`\"a"b"` is `a"b`); the content
    // token keeps the closing quote, since tree-sitter's lexer cannot look ahead for it.
    [r('immediate_string')]: $ => seq(t('\\"'), optional(field('text', alias(imm(/[^\s#:]+/), $.string_content)))),
    [r('btf_name')]: $ => seq(
      field('name', first ? alias(imm(IDENT), $.identifier) : $.identifier),
      repeat($._member),
    ),
  };
}

module.exports = grammar({
  name: 'dynevents',

  extras: $ => [/[ \t\r\f\v]/, $.comment],

  rules: {
    source_file: $ => repeat(choice($.definition, $.removal, '\n')),

    comment: _ => token(seq('#', /[^\n]*/)),

    definition: $ => seq(
      field('kind', $.probe_kind),
      optional(field('maxactive', alias(imm(prec(1, /[0-9]+/)), $.number))),
      optional(seq(imm(prec(1, ':')), optional(field('event', $.event_id)))),
      field('place', $.place),
      repeat(field('argument', $.argument)),
    ),

    probe_kind: _ => choice('p', 'r', 'f', 't'),

    removal: $ => seq(
      '-:',
      optional(field('event', $.event_id)),
      repeat(field('argument', $.argument)),
    ),

    event_id: _ => imm(prec(1, /[^\s#]+/)),

    place: _ => /[^\s#]+/,

    argument: $ => seq(
      optional(seq(field('name', alias($.identifier, $.argument_name)), imm('='))),
      field('value', $._fetch),
      optional(seq(imm(':'), field('type', $.type))),
    ),

    identifier: _ => IDENT,

    _fetch: $ => choice(
      $.register, $.variable, $.memory, $.dereference,
      $.immediate, $.immediate_string, $.btf_name,
    ),

    _inner_fetch: $ => choice(
      alias($.register_i, $.register),
      alias($.variable_i, $.variable),
      alias($.memory_i, $.memory),
      alias($.dereference_i, $.dereference),
      alias($.immediate_i, $.immediate),
      alias($.immediate_string_i, $.immediate_string),
      alias($.btf_name_i, $.btf_name),
    ),

    ...fetchRules('', false),
    ...fetchRules('_i', true),

    _member: $ => seq(
      field('operator', choice(imm('->'), imm('.'))),
      field('member', alias(imm(IDENT), $.field_identifier)),
    ),

    type: $ => seq(
      field('name', alias(imm(/[A-Za-z%][A-Za-z0-9_@\/%]*/), $.type_identifier)),
      optional(seq(imm('['), field('count', alias(imm(/[0-9A-Za-z]+/), $.number)), imm(']'))),
    ),
  },
});
