#!/usr/bin/env node
// Generates syntaxes/fev.tmLanguage.json from the tree-sitter grammar's single source of
// highlighting, grammar/queries/highlights.scm, and from grammar/src/grammar.json (the
// type keywords, `NULL`, `unsigned`).
//
//   node scripts/gen-tmgrammar.js           # write syntaxes/fev.tmLanguage.json
//   node scripts/gen-tmgrammar.js --check   # exit 1 when the committed file is stale
//
// TextMate grammars are regular expressions over lines, tree-sitter queries match
// syntax-tree nodes: neither translates into the other mechanically. So this script
// holds one regular-expression *place* per query pattern (below, PLACES), and takes
// the *scope* of each place from the capture name that highlights.scm gives that
// pattern. It fails when highlights.scm has a pattern no place covers (add one), or a
// capture name without a TextMate scope (add it to SCOPES). A pattern that leaves
// highlights.scm leaves the generated grammar too. grammar/tests/textmate.rs then
// tokenizes real scripts with vscode-textmate and checks that every node the query
// captures gets exactly the scope of its capture, and nothing else gets one.
'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const QUERY = path.join(ROOT, 'grammar/queries/highlights.scm');
const GRAMMAR = path.join(ROOT, 'grammar/src/grammar.json');
const OUT = path.resolve(__dirname, '..', 'syntaxes/fev.tmLanguage.json');

// Tree-sitter capture names (as nvim-treesitter/Helix use them) -> TextMate scopes.
const SCOPES = {
  'comment': 'comment.line.number-sign',
  'function': 'entity.name.function',
  'type.builtin': 'storage.type.builtin',
  'type.qualifier': 'storage.modifier',
  'constant.builtin': 'constant.language',
  'constant': 'variable.other.constant',
  'variable.parameter': 'variable.parameter',
  'variable': 'variable.other',
  'punctuation.special': 'punctuation.definition.variable',
  'punctuation.bracket': 'punctuation.section.brackets',
  'punctuation.delimiter': 'punctuation.separator',
  'operator': 'keyword.operator',
  'number': 'constant.numeric',
};

// ---- highlights.scm -> [{key, captures}] ------------------------------------------
// A pattern's key is its text with whitespace collapsed and every capture written `@`;
// a bracketed list of strings (`["," "|"] @x`) becomes one key per string (`"," @`).
function parseQuery(text) {
  const src = text.replace(/;[^\n]*/g, '');
  const patterns = [];
  let i = 0;
  const skipWs = () => { while (i < src.length && /\s/.test(src[i])) i++; };
  const readForm = () => {
    const start = i;
    let depth = 0;
    do {
      const c = src[i];
      if (c === '"') {
        i++;
        while (i < src.length && src[i] !== '"') i += src[i] === '\\' ? 2 : 1;
        i++;
      } else {
        if (c === '(' || c === '[') depth++;
        else if (c === ')' || c === ']') depth--;
        i++;
        if (depth === 0 && c !== '(' && c !== '[' && c !== ')' && c !== ']') {
          // a bare atom at top level
          while (i < src.length && !/[\s()[\]]/.test(src[i])) i++;
        }
      }
      if (i > src.length) throw new Error(`highlights.scm: unterminated form at ${start}`);
    } while (depth > 0);
    return src.slice(start, i);
  };
  skipWs();
  while (i < src.length) {
    const form = readForm();
    skipWs();
    const outer = [];
    while (src[i] === '@') {
      const m = /^@[\w.]+/.exec(src.slice(i));
      outer.push(m[0].slice(1));
      i += m[0].length;
      skipWs();
    }
    const inner = [];
    const body = form.replace(/@([\w.]+)/g, (_, name) => { inner.push(name); return '@'; });
    const norm = (s) => s.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
    if (/^\[\s*("(?:[^"\\]|\\.)*"\s*)+\]$/.test(body)) {
      for (const m of body.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
        patterns.push({ key: `"${m[1]}" @`, captures: outer });
      }
    } else {
      patterns.push({ key: norm(body) + (outer.length ? ' @' : ''), captures: inner.concat(outer) });
    }
  }
  return patterns;
}

// ---- grammar.json -> keyword lists ----------------------------------------------------
function keywords(grammar) {
  const strings = (rule) => {
    if (rule.type === 'STRING') return [rule.value];
    if (rule.type === 'CHOICE' || rule.type === 'SEQ') return rule.members.flatMap(strings);
    if (rule.type === 'ALIAS' || rule.type === 'FIELD' || rule.type.startsWith('PREC') || rule.type === 'TOKEN') return strings(rule.content);
    return [];
  };
  // `string` is aliased to (type) inside `field`.
  const aliased = [];
  (function walk(rule) {
    if (!rule || typeof rule !== 'object') return;
    if (rule.type === 'ALIAS' && rule.named && rule.value === 'type') aliased.push(...strings(rule.content));
    for (const v of Object.values(rule)) {
      if (Array.isArray(v)) v.forEach(walk); else if (typeof v === 'object') walk(v);
    }
  })(grammar.rules.field);
  return {
    types: [...new Set(strings(grammar.rules.type).concat(aliased))],
    null: strings(grammar.rules.null),
    unsigned: strings(grammar.rules.unsigned),
  };
}

// ---- places: where each query pattern lands in the TextMate grammar ------------------
// The grammar's shape follows grammar.js: a definition per line, `function(` opens it,
// an argument is NULL or `|`-joined fields, a field is [unsigned] type [array] target.
const PLACES = {
  comment: '(comment) @',
  fn: '(definition function: (identifier) @)',
  type: '(type) @',
  unsigned: '(unsigned) @',
  null: '(null) @',
  param: '(parameter name: (identifier) @)',
  named: '(named_address name: (identifier) @)',
  dollar: '(symbol_ref "$" @)',
  symbol: '(symbol_ref name: (identifier) @)',
  address: '(address) @',
  number: '(number) @',
  lparen: '"(" @', rparen: '")" @', lbracket: '"[" @', rbracket: '"]" @',
  comma: '"," @', pipe: '"|" @', plus: '"+" @', equals: '"=" @',
};

function generate(queryText, grammar) {
  const patterns = parseQuery(queryText);
  const byKey = new Map();
  for (const p of patterns) {
    if (p.captures.length !== 1) throw new Error(`highlights.scm: \`${p.key}\` has ${p.captures.length} captures; the generator handles one`);
    byKey.set(p.key, p.captures[0]);
  }
  const known = new Set(Object.values(PLACES));
  const uncovered = [...byKey.keys()].filter((k) => !known.has(k));
  if (uncovered.length) {
    throw new Error(`highlights.scm patterns with no TextMate place (add them to PLACES in ${path.relative(ROOT, __filename)}): ${uncovered.join(', ')}`);
  }
  const scope = (place) => {
    const capture = byKey.get(PLACES[place]);
    if (capture === undefined) return undefined; // not highlighted any more
    const s = SCOPES[capture];
    if (!s) throw new Error(`no TextMate scope for the capture @${capture} (add it to SCOPES)`);
    return `${s}.fev`;
  };
  const named = (place) => { const s = scope(place); return s ? { name: s } : {}; };
  const kw = keywords(grammar);
  const alt = (words) => words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const ws = '[ \\t\\f\\v\\r]';
  const id = '[A-Za-z_][A-Za-z0-9_]*';
  const tok = '[A-Za-z0-9_]';
  const redirect = `(?:\\+${ws}*${tok}+|\\[${ws}*${tok}*${ws}*\\])`;
  const caps = (...places) => Object.fromEntries(places.map((p, n) => [String(n + 1), named(p)]));
  return {
    $schema: 'https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json',
    name: 'fev',
    scopeName: 'source.fev',
    comment: 'GENERATED by editors/vscode/scripts/gen-tmgrammar.js from grammar/queries/highlights.scm and grammar/src/grammar.json: do not edit.',
    patterns: [{ include: '#comment' }, { include: '#definition' }],
    repository: {
      comment: { match: '#.*$', ...named('comment') },
      definition: {
        begin: `^${ws}*(${id})${ws}*(\\()`,
        beginCaptures: caps('fn', 'lparen'),
        end: '(\\))|$',
        endCaptures: caps('rparen'),
        patterns: [{ include: '#comment' }, { include: '#separator' }, { include: '#null' }, { include: '#field' }],
      },
      separator: { patterns: [{ match: ',', ...named('comma') }, { match: '\\|', ...named('pipe') }] },
      null: { match: `\\b(?:${alt(kw.null)})\\b`, ...named('null') },
      field: {
        begin: `(?:\\b(${alt(kw.unsigned)})\\b${ws}*)?\\b(${alt(kw.types)})\\b`,
        beginCaptures: caps('unsigned', 'type'),
        end: '(?=[,|)#])|$',
        patterns: [
          { include: '#symbol-ref' },
          { match: `\\b(${id})(?=(?:${ws}*${redirect})*${ws}*=)`, captures: caps('named') },
          { match: `\\b${id}`, ...named('param') },
          { match: `\\b0x${tok}*`, ...named('address') },
          { match: `\\b[0-9]${tok}*`, ...named('number') },
          { match: '\\[', ...named('lbracket') },
          { match: '\\]', ...named('rbracket') },
          { match: '\\+', ...named('plus') },
          { match: '=', ...named('equals') },
        ],
      },
      'symbol-ref': {
        match: `(\\$)${ws}*(${id})`,
        captures: caps('dollar', 'symbol'),
      },
    },
  };
}

function main() {
  const check = process.argv.includes('--check');
  const grammar = generate(fs.readFileSync(QUERY, 'utf8'), JSON.parse(fs.readFileSync(GRAMMAR, 'utf8')));
  const text = JSON.stringify(grammar, null, 2) + '\n';
  if (check) {
    const have = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
    if (have !== text) {
      console.error(`stale: ${path.relative(ROOT, OUT)} (run node editors/vscode/scripts/gen-tmgrammar.js)`);
      process.exit(1);
    }
    console.log(`fresh: ${path.relative(ROOT, OUT)}`);
  } else {
    fs.writeFileSync(OUT + '.tmp', text);
    fs.renameSync(OUT + '.tmp', OUT);
    console.log(`wrote ${path.relative(ROOT, OUT)}`);
  }
}

module.exports = { parseQuery, generate, SCOPES };
if (require.main === module) {
  try { main(); } catch (e) { console.error(`gen-tmgrammar: ${e.message}`); process.exit(1); }
}
