#!/usr/bin/env node
// Checks syntaxes/fev.tmLanguage.json against tree-sitter's highlighting of real scripts.
//
//   node test/tmgrammar-check.js CAPTURES.json
//
// CAPTURES.json (written by grammar/tests/textmate.rs, which runs highlights.scm on the
// tree-sitter parse): [{"file", "text", "captures": [{"start", "end", "name"}]}], with
// byte offsets. Each file is tokenized line by line with vscode-textmate (VS Code's own
// tokenizer, Oniguruma regular expressions); at every non-blank character the innermost
// scope must be the TextMate scope of the tree-sitter capture covering it, or no scope
// when no capture covers it. Prints the mismatches and a `N passed, N failed` line
// (one per file); exit 1 on any mismatch.
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');
const { SCOPES } = require('../scripts/gen-tmgrammar.js');

async function main() {
  const [capturesFile] = process.argv.slice(2);
  const files = JSON.parse(fs.readFileSync(capturesFile, 'utf8'));
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.fev') return null;
      const p = path.join(__dirname, '..', 'syntaxes', 'fev.tmLanguage.json');
      return vsctm.parseRawGrammar(fs.readFileSync(p, 'utf8'), p);
    },
  });
  const grammar = await registry.loadGrammar('source.fev');
  let passed = 0;
  let failed = 0;
  let chars = 0;
  for (const f of files) {
    const bytes = Buffer.from(f.text, 'utf8');
    const index = (b) => bytes.subarray(0, b).toString('utf8').length; // byte -> UTF-16 index
    const want = new Array(f.text.length).fill(null);
    const problems = [];
    for (const c of f.captures) {
      const scope = SCOPES[c.name] ? `${SCOPES[c.name]}.fev` : `(no scope for @${c.name})`;
      for (let i = index(c.start); i < index(c.end); i++) {
        if (want[i] !== null && want[i] !== scope) problems.push(`overlapping captures at ${i}: ${want[i]} / ${scope}`);
        want[i] = scope;
      }
    }
    const have = new Array(f.text.length).fill(null);
    let ruleStack = vsctm.INITIAL;
    let offset = 0;
    const lines = f.text.split('\n');
    for (const line of lines) {
      const r = grammar.tokenizeLine(line, ruleStack);
      for (const t of r.tokens) {
        const inner = t.scopes[t.scopes.length - 1];
        for (let i = t.startIndex; i < Math.min(t.endIndex, line.length); i++) {
          have[offset + i] = inner === 'source.fev' ? null : inner;
        }
      }
      ruleStack = r.ruleStack;
      offset += line.length + 1;
    }
    let lineNo = 1;
    let col = 1;
    for (let i = 0; i < f.text.length; i++) {
      const ch = f.text[i];
      if (!/\s/.test(ch)) {
        chars++;
        if (want[i] !== have[i] && problems.length < 20) {
          const text = lines[lineNo - 1];
          problems.push(`${f.file}:${lineNo}:${col}: \`${ch}\` tree-sitter ${want[i] || '(none)'}, TextMate ${have[i] || '(none)'}\n    ${text}`);
        }
      }
      if (ch === '\n') { lineNo++; col = 1; } else col++;
    }
    if (problems.length) {
      failed++;
      for (const p of problems) console.log(p);
    } else {
      passed++;
    }
  }
  console.log(`checked ${chars} characters in ${files.length} files`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed || !files.length ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(2); });
