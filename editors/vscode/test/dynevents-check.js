#!/usr/bin/env node
// Checks the hand-written syntaxes/dynevents.tmLanguage.json with vscode-textmate on
// lines of the mainline dialect (shared spec: kprobe_events / dynamic_events): each
// listed token gets the listed scope. Prints `N passed, N failed`; exit 1 on a failure.
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const CASES = [
  ['p:kprobes/myprobe do_sys_open dfd=%ax filename=+0(%si):string # comment', [
    ['p', 'keyword.control.probe-type'], ['kprobes', 'entity.name.namespace'], ['myprobe', 'entity.name.function.event'],
    ['do_sys_open', 'entity.name.function'], ['dfd', 'variable.parameter'], ['%ax', 'variable.language.register'],
    ['+0', 'constant.numeric'], ['%si', 'variable.language.register'], ['string', 'storage.type.builtin'],
    ['# comment', 'comment.line.number-sign']]],
  ['f:fprobes/vfs_read vfs_read%return read=file->f_op->read:x64 $arg1', [
    ['f', 'keyword.control.probe-type'], ['vfs_read', 'entity.name.function.event'], ['%return', 'keyword.other.return'],
    ['->', 'keyword.operator'], ['x64', 'storage.type.builtin'], ['$arg1', 'variable.language']]],
  ['r4 do_exit+0x10 $retval:s32', [
    ['r4', 'keyword.control.probe-type'], ['do_exit', 'entity.name.function'], ['+0x10', 'constant.numeric'],
    ['$retval', 'variable.language'], ['s32', 'storage.type.builtin']]],
  ['-:myprobe', [['-', 'keyword.control.probe-type'], ['myprobe', 'entity.name.function.event']]],
  ['t:tprobes/sched sched_switch prev=prev->pid:u32 @jiffies', [
    ['t', 'keyword.control.probe-type'], ['sched_switch', 'entity.name.function'], ['u32', 'storage.type.builtin'],
    ['@jiffies', 'variable.other.constant']]],
];

(async () => {
  await oniguruma.loadWASM(fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer);
  const file = path.join(__dirname, '..', 'syntaxes', 'dynevents.tmLanguage.json');
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file),
  });
  const grammar = await registry.loadGrammar('source.dynevents');
  let passed = 0;
  let failed = 0;
  for (const [line, expected] of CASES) {
    const tokens = grammar.tokenizeLine(line, vsctm.INITIAL).tokens.map((t) => ({
      text: line.slice(t.startIndex, t.endIndex), scope: t.scopes[t.scopes.length - 1],
    }));
    for (const [text, scope] of expected) {
      const t = tokens.find((x) => x.text === text && x.scope === `${scope}.dynevents`);
      if (t) passed++;
      else {
        failed++;
        console.log(`${line}\n  \`${text}\` should be ${scope}; tokens: ${JSON.stringify(tokens)}`);
      }
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
