// Runs inside code-server's extension host for scripts/bench-editors.py (inert unless
// FEVLINT_BENCH_DIR is set). Opens each of FEVLINT_BENCH_FILES (JSON list) in turn, waits
// until its kernel diagnostics are in and have been still for two seconds, then makes
// FEVLINT_BENCH_EDITS one-character edits: the cursor goes to the end of a random
// definition's function name (the line revealed in the middle of the editor, then 300 ms
// for the editor to settle, as a person looks before typing), `x` is typed with VS Code's
// `type` command (what a key press runs), then deleted with `deleteLeft`. Each edit is
// timed from the command to the first moment the extension host's diagnostics of the
// line differ from before it (`getDiagnostics`, looked at every millisecond: a collection's
// `set` hands the workbench its markers at once, while `onDidChangeDiagnostics` is fired
// 50 ms after the first change, VS Code's DebounceEmitter in ExtHostDiagnostics); the time
// to that event is kept beside it (`notified`), and the time to the extension host's
// `onDidChangeTextDocument` of the keystroke (`changed`) and from it to the diagnostics
// (`rest`). The next edit comes 300-500 ms after the
// previous keystroke or 100 ms after the event, whichever is later. Writes bench.json (or
// error.json).
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

const dir = process.env.FEVLINT_BENCH_DIR;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;

function write(name, value) {
  const file = path.join(dir, name);
  fs.writeFileSync(file + '.tmp', JSON.stringify(value));
  fs.renameSync(file + '.tmp', file);
}

function lineKey(uri, line) {
  return vscode.languages.getDiagnostics(uri)
    .filter((d) => d.range.start.line === line)
    .map((d) => `${typeof d.code === 'object' && d.code ? d.code.value : d.code}:${d.range.start.character}:${d.message}`)
    .sort().join('|');
}

// FEVLINT_BENCH_PROFILE=1 (to see where the time goes): bench.json's `profile` lists
// events [what, start, end] in ms of CLOCK_MONOTONIC (scripts/bench-editors/lsp-trace.py's
// clock): `edit` (the command sent), `changed` (the extension host saw the document
// change), `squiggle`, and `busy` (the extension host's thread blocked over 15 ms: a
// 1 ms timer that fired late).
const profile = process.env.FEVLINT_BENCH_PROFILE === '1' ? [] : null;
if (profile) {
  let last = now();
  setInterval(() => {
    const t = now();
    if (t - last > 16) profile.push(['busy', last, t]);
    last = t;
  }, 1);
}

let seed = 0x2545F491 % 2147483647;
const rand = (k) => { seed = (seed * 16807) % 2147483647; return seed % k; };

exports.activate = async function activate() {
  if (!dir) return;
  try {
    const files = JSON.parse(process.env.FEVLINT_BENCH_FILES);
    const n = Number(process.env.FEVLINT_BENCH_EDITS);
    let watch = null;
    vscode.languages.onDidChangeDiagnostics((e) => {
      const t = now();
      if (watch && !watch.done && e.uris.some((u) => u.toString() === watch.uri.toString())
          && lineKey(watch.uri, watch.line) !== watch.before) {
        watch.done = t;
      }
    });
    // When the keystroke's change reaches the extension host (the language client sends
    // didChange from this event): the part of each edit that is code-server's own.
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (watch && !watch.changed && e.document.uri.toString() === watch.uri.toString() && e.contentChanges.length) {
        watch.changed = now();
        if (profile) profile.push(['changed', watch.changed, watch.changed]);
      }
    });
    const report = { vscode: vscode.version, scripts: [], profile };
    for (const file of files) {
      const uri = vscode.Uri.file(file);
      const doc = await vscode.workspace.openTextDocument(uri);
      const editor = await vscode.window.showTextDocument(doc, { preview: false });
      let last = ''; let since = now();
      for (const deadline = now() + 300000; ; await sleep(100)) {
        const ds = vscode.languages.getDiagnostics(uri);
        const key = `${ds.length}`;
        if (key !== last) { last = key; since = now(); }
        const kernel = ds.some((d) => /^[KTA]\d/.test(String(typeof d.code === 'object' && d.code ? d.code.value : d.code)));
        if (kernel && now() - since > 2000) break;
        if (now() > deadline) throw new Error(`no kernel diagnostics for ${file}`);
      }
      const defs = [];
      for (let i = 0; i < doc.lineCount; i++) {
        const m = /^([A-Za-z0-9_]+)\(/.exec(doc.lineAt(i).text);
        if (m) defs.push([i, m[1].length]);
      }
      const lines = doc.lineCount - (doc.lineAt(doc.lineCount - 1).text === '' ? 1 : 0);
      const entry = { file, lines, findings: vscode.languages.getDiagnostics(uri).length, edits: [], notified: [], changed: [], rest: [], timeouts: 0 };
      if (profile && file === files[files.length - 1]) {
        write('profiling', {}); // browser.js starts the workbench's CPU profile
        await sleep(1000);
      }
      for (let k = 0; k < n;) {
        const [row, col] = defs[rand(defs.length)];
        const at = new vscode.Position(row, col);
        editor.selection = new vscode.Selection(at, at);
        editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenter);
        await sleep(300);
        for (const typed of [true, false]) {
          k++;
          watch = { uri, line: row, before: lineKey(uri, row) };
          const start = now();
          if (profile) profile.push(['edit', start, start]);
          if (typed) await vscode.commands.executeCommand('type', { text: 'x' });
          else await vscode.commands.executeCommand('deleteLeft');
          for (const deadline = start + 10000; !(watch.seen && watch.done) && now() < deadline;) {
            if (!watch.seen && lineKey(uri, row) !== watch.before) watch.seen = now();
            await sleep(1);
          }
          if (watch.seen) entry.edits.push(watch.seen - start); else entry.timeouts++;
          if (watch.done) entry.notified.push(watch.done - start);
          if (watch.seen && watch.changed) {
            entry.changed.push(watch.changed - start);
            entry.rest.push(watch.seen - watch.changed);
          }
          if (profile && watch.seen) profile.push(['squiggle', watch.seen, watch.seen]);
          const next = Math.max(start + 300 + rand(200), (watch.done || watch.seen || now()) + 100);
          await sleep(Math.max(0, next - now()));
        }
      }
      watch = null;
      report.scripts.push(entry);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
    write('bench.json', report);
  } catch (e) {
    write('error.json', { error: String((e && e.stack) || e) });
  }
};
