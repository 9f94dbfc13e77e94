#!/usr/bin/env node
// Checks the hand-written syntaxes/bpftrace.tmLanguage.json with vscode-textmate: each
// listed token of the cases below gets the listed scope, and over every script given on
// the command line (the bpftrace tools Debian ships, fixtures/bpftrace/debian-0.17-tools)
// every comment is scoped a comment, every probe's kind a probe type and every map
// outside strings and comments a map. Prints `N passed, N failed`; exit 1 on a failure.
//   node test/bpftrace-check.js [SCRIPT.bt ...]
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const CASES = [
  ['kprobe:vfs_read /pid == $1/ { @bytes[comm] = sum(arg2); }', [
    ['kprobe', 'keyword.control.probe-type'], ['vfs_read', 'entity.name.function'], ['pid', 'variable.language'],
    ['$1', 'variable.language.positional'], ['@bytes', 'variable.other.map'], ['comm', 'variable.language'],
    ['sum', 'support.function'], ['arg2', 'variable.language']]],
  ['tracepoint:syscalls:sys_enter_openat { printf("%-6d %s\\n", pid, str(args->filename)); }', [
    ['tracepoint', 'keyword.control.probe-type'], ['syscalls:sys_enter_openat', 'entity.name.function'],
    ['%-6d', 'constant.other.placeholder'], ['\\n', 'constant.character.escape'], ['printf', 'support.function'],
    ['str', 'support.function'], ['args', 'variable.language'], ['filename', 'variable.other.member']]],
  ['uretprobe:/bin/bash:readline { $s = ((struct sock *)arg0)->__sk_common.skc_daddr; } // done', [
    ['uretprobe', 'keyword.control.probe-type'], ['/bin/bash:readline', 'entity.name.function'], ['$s', 'variable.other'],
    ['struct', 'storage.type'], ['sock', 'entity.name.type'], ['skc_daddr', 'variable.other.member'],
    ['// done', 'comment.line.double-slash']]],
  ['#include <linux/sched.h>', [['#include', 'keyword.control.directive'], ['<linux/sched.h>', 'string.quoted.other.include']]],
  ['BEGIN { @x = 0x10; if ($x > 5) { exit(); } }', [
    ['BEGIN', 'keyword.control.probe-type'], ['0x10', 'constant.numeric'], ['if', 'keyword.control'], ['5', 'constant.numeric'],
    ['exit', 'support.function']]],
];

const KIND = /^\s*(kprobe|kretprobe|uprobe|uretprobe|usdt|tracepoint|rawtracepoint|kfunc|kretfunc|fentry|fexit|profile|interval|software|hardware|watchpoint|asyncwatchpoint|BEGIN|END)\b/;

(async () => {
  await oniguruma.loadWASM(fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer);
  const file = path.join(__dirname, '..', 'syntaxes', 'bpftrace.tmLanguage.json');
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file),
  });
  const grammar = await registry.loadGrammar('source.bpftrace');
  let passed = 0;
  let failed = 0;
  const expect = (ok, what) => {
    if (ok) passed++;
    else {
      failed++;
      console.log(what);
    }
  };
  const tokenize = (line, state) => {
    const r = grammar.tokenizeLine(line, state);
    const tokens = r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
    return { tokens, state: r.ruleStack };
  };
  for (const [line, expected] of CASES) {
    const { tokens } = tokenize(line, vsctm.INITIAL);
    for (const [text, scope] of expected) {
      const t = tokens.find((x) => x.text.trim() === text && x.scopes[x.scopes.length - 1] === `${scope}.bpftrace`);
      expect(t, `${line}\n  \`${text}\` should be ${scope}; tokens: ${JSON.stringify(tokens.map((x) => [x.text, x.scopes.at(-1)]))}`);
    }
  }
  for (const script of process.argv.slice(2)) {
    let state = vsctm.INITIAL;
    let inBlock = false;
    fs.readFileSync(script, 'utf8').split('\n').forEach((line, i) => {
      const where = `${path.basename(script)}:${i + 1}: ${line}`;
      const r = tokenize(line, state);
      state = r.state;
      const scopeOf = (t) => t.scopes[t.scopes.length - 1];
      const inComment = (t) => t.scopes.some((s) => s.startsWith('comment.'));
      const inString = (t) => t.scopes.some((s) => s.startsWith('string.'));
      const trimmed = line.trim();
      const startsBlock = trimmed.startsWith('/*');
      if (inBlock || startsBlock || trimmed.startsWith('//')) {
        const first = r.tokens.find((t) => t.text.trim() !== '');
        if (first) expect(inComment(first), `${where}\n  should start in a comment: ${scopeOf(first)}`);
      }
      if (startsBlock && !trimmed.includes('*/')) inBlock = true;
      else if (inBlock && trimmed.includes('*/')) inBlock = false;
      if (!inBlock && !startsBlock && KIND.test(line)) {
        const kind = line.match(KIND)[1];
        const t = r.tokens.find((x) => x.text.trim() === kind);
        expect(t && scopeOf(t) === 'keyword.control.probe-type.bpftrace', `${where}\n  \`${kind}\` should be a probe type`);
      }
      for (const t of r.tokens) {
        if (/^@\w*$/.test(t.text) && !inComment(t) && !inString(t)) {
          expect(scopeOf(t) === 'variable.other.map.bpftrace', `${where}\n  \`${t.text}\` should be a map: ${scopeOf(t)}`);
        }
      }
    });
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
