// Runs inside the real VS Code extension host (code-server). Inert unless FEVLINT_E2E_DIR
// is set in code-server's environment. Steps, each ending with a JSON file in that folder,
// some waiting for the browser side (code_server_e2e.js) to look at the screen first:
//   1. open FEVLINT_E2E_FILE, wait until the kernel diagnostics are in   -> diagnostics.json
//   2. (after `go-hover`) hover through the API, and show the hover on screen  -> hover.json
//   3. (after `go-fix`) apply the quick fix offered for the diagnostic at FEVLINT_E2E_FIX,
//      wait for the diagnostics to change                              -> fixed.json
//   4. (after `go-commands`) run the extension's commands: kernel info, emit, dry run        -> commands.json
//   5. change `fevlint.ignore`, restart the server                     -> settings.json
//   6. (after `go-dynevents`) open a *.bt script (FEVLINT_E2E_BT)     -> bpftrace.json,
//      then a *.dynevents file beside the script                      -> dynevents.json
//   7. (after `go-status`) write a malformed fevlint.toml next to them: the server's
//      `fevlint/status` of each document, and the status bar text       -> status.json
//   8. (after `go-many`) open a script with over 1,000 findings beside them: its count,
//      and the errors and warnings of every document the extension holds -> many.json
// With FEVLINT_E2E_MODE=bpf, instead (a workspace whose fevlint.toml names a compiled
// BPF object; FEVLINT_E2E_FILE is its .bpf.c, FEVLINT_E2E_HOVER `line:col;line:col;...`):
//   1. open the .bpf.c, wait for the object's findings                  -> diagnostics.json
//   2. (after `go-hover`) hover at each position through the API, the first on screen,
//      and which documents the extension's selector sends to the server  -> hover.json
// Any exception ends in error.json.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = process.env.FEVLINT_E2E_DIR;

function write(name, value) {
  const file = path.join(dir, name);
  fs.writeFileSync(file + '.tmp', JSON.stringify(value, null, 1));
  fs.renameSync(file + '.tmp', file);
}

async function waitFor(name, ms) {
  const file = path.join(dir, name);
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    if (fs.existsSync(file)) return;
  }
  throw new Error(`the browser side never wrote ${name}`);
}

function summary(uri) {
  return vscode.languages.getDiagnostics(uri).map((d) => ({
    line: d.range.start.line, character: d.range.start.character,
    endLine: d.range.end.line, endCharacter: d.range.end.character,
    severity: vscode.DiagnosticSeverity[d.severity], message: d.message, source: d.source,
    code: typeof d.code === 'object' && d.code ? d.code.value : d.code,
  }));
}

/** Waits until the diagnostics satisfy `ok` and then stay the same for `quietMs`. */
async function settle(uri, ok, ms, quietMs = 1500) {
  let last = '';
  let since = Date.now();
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    const now = JSON.stringify(summary(uri));
    if (now !== last) { last = now; since = Date.now(); }
    if (ok(summary(uri)) && Date.now() - since >= quietMs) return summary(uri);
  }
  return summary(uri);
}

const hoverText = (hovers) => (hovers || []).flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value)));

/** The BPF scenario: findings and hovers of a compiled object in its .bpf.c. */
async function bpf() {
  const uri = vscode.Uri.file(process.env.FEVLINT_E2E_FILE);
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc);
  const diagnostics = await settle(uri, (ds) => ds.some((d) => /^B6/.test(String(d.code))), 180000);
  const ext = vscode.extensions.getExtension('fevlint.fevlint');
  write('diagnostics.json', {
    vscode: vscode.version, languageId: doc.languageId, extensionActive: !!(ext && ext.isActive), diagnostics,
  });
  await waitFor('go-hover', 60000);
  const hovers = [];
  for (const at of process.env.FEVLINT_E2E_HOVER.split(';')) {
    const [l, c] = at.split(':').map(Number);
    const found = (await vscode.commands.executeCommand('vscode.executeHoverProvider', uri, new vscode.Position(l, c))) || [];
    hovers.push({
      position: [l, c], hover: hoverText(found),
      ranges: found.filter((h) => h.range).map((h) => [h.range.start.line, h.range.start.character, h.range.end.line, h.range.end.character]),
    });
  }
  // Which C documents the language client sends to the server.
  const selector = ext.exports.documentSelector();
  const sent = {};
  for (const rel of (process.env.FEVLINT_E2E_C_FILES || '').split(';').filter(Boolean)) {
    const other = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(vscode.workspace.workspaceFolders[0].uri.fsPath, rel)));
    sent[rel] = { languageId: other.languageId, score: vscode.languages.match(selector, other) };
  }
  const [l, c] = process.env.FEVLINT_E2E_HOVER.split(';')[0].split(':').map(Number);
  await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
  const pos = new vscode.Position(l, c);
  editor.selection = new vscode.Selection(pos, pos);
  editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenter);
  await sleep(300);
  await vscode.commands.executeCommand('editor.action.showHover');
  write('hover.json', { hovers, selector, sent });
}

exports.activate = async function activate() {
  if (!dir) return;
  if (process.env.FEVLINT_E2E_MODE === 'bpf') {
    try { await bpf(); } catch (e) { write('error.json', { error: String((e && e.stack) || e) }); }
    return;
  }
  try {
    const uri = vscode.Uri.file(process.env.FEVLINT_E2E_FILE);
    const [hl, hc] = process.env.FEVLINT_E2E_HOVER.split(':').map(Number);
    const [fl, fc] = process.env.FEVLINT_E2E_FIX.split(':').map(Number);
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    // 1. Diagnostics: syntax ones come at once, kernel ones once the kernel is loaded.
    const diagnostics = await settle(uri, (ds) => ds.some((d) => /^[KT]\d/.test(String(d.code))), 90000);
    const ext = vscode.extensions.getExtension('fevlint.fevlint');
    write('diagnostics.json', {
      vscode: vscode.version, appName: vscode.env.appName, languageId: doc.languageId,
      extensionActive: !!(ext && ext.isActive), diagnostics,
    });
    // 2. Hover: through the API, then on screen at the same place.
    await waitFor('go-hover', 60000);
    const pos = new vscode.Position(hl, hc);
    const hover = hoverText(await vscode.commands.executeCommand('vscode.executeHoverProvider', uri, pos));
    editor.selection = new vscode.Selection(pos, pos);
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenter);
    await sleep(300);
    await vscode.commands.executeCommand('editor.action.showHover');
    write('hover.json', { position: [hl, hc], hover });
    // 3. The quick fix for the diagnostic at FIX, applied as the light bulb would.
    await waitFor('go-fix', 60000);
    const before = summary(uri);
    const target = before.find((d) => d.line === fl && d.character === fc);
    const range = target ? new vscode.Range(target.line, target.character, target.endLine, target.endCharacter) : new vscode.Range(fl, fc, fl, fc);
    const actions = (await vscode.commands.executeCommand('vscode.executeCodeActionProvider', uri, range, vscode.CodeActionKind.QuickFix.value)) || [];
    const quick = actions.filter((a) => a.kind && vscode.CodeActionKind.QuickFix.contains(a.kind));
    const chosen = quick.find((a) => a.isPreferred) || quick[0];
    const lineBefore = doc.lineAt(fl).text;
    let applied = false;
    if (chosen) {
      if (chosen.edit) applied = await vscode.workspace.applyEdit(chosen.edit);
      if (chosen.command) { await vscode.commands.executeCommand(chosen.command.command, ...(chosen.command.arguments || [])); applied = true; }
    }
    const fixedCode = target && target.code;
    const after = await settle(uri, (ds) => !ds.some((d) => d.line === fl && d.code === fixedCode), 30000);
    write('fixed.json', {
      target, titles: actions.map((a) => a.title), chosen: chosen && chosen.title, applied,
      lineBefore, lineAfter: doc.lineAt(fl).text, before: before.length, diagnostics: after,
      dirty: doc.isDirty,
    });
    // 4. Commands that run the CLI (once the browser has looked at the fixed file).
    await waitFor('go-commands', 60000);
    const kernel = vscode.workspace.getConfiguration('fevlint').get('kernels')[0];
    const kernelInfo = await vscode.commands.executeCommand('fevlint.showKernelInfo', kernel);
    await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
    const emit = await vscode.commands.executeCommand('fevlint.emit');
    await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
    const dryRun = await vscode.commands.executeCommand('fevlint.dryRun');
    await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
    write('commands.json', { kernelInfo, emit, dryRun });
    await waitFor('go-settings', 60000);
    // 5. Settings reach the server (workspace/didChangeConfiguration): ignoring N101
    //    drops those diagnostics; restarting the server brings the same ones back.
    const config = vscode.workspace.getConfiguration('fevlint');
    const withN101 = summary(uri).filter((d) => d.code === 'N101').length;
    await config.update('ignore', ['N101'], vscode.ConfigurationTarget.Global);
    const ignored = await settle(uri, (ds) => ds.length > 0 && !ds.some((d) => d.code === 'N101'), 30000, 1000);
    const beforeRestart = JSON.stringify(ignored.map((d) => [d.code, d.line, d.character]));
    await vscode.commands.executeCommand('fevlint.restartServer');
    await sleep(500);
    const restarted = await settle(uri, (ds) => JSON.stringify(ds.map((d) => [d.code, d.line, d.character])) === beforeRestart, 60000, 1000);
    write('settings.json', {
      withN101, afterIgnore: ignored.filter((d) => d.code === 'N101').length, afterIgnoreTotal: ignored.length,
      restartedSame: JSON.stringify(restarted.map((d) => [d.code, d.line, d.character])) === beforeRestart,
      restartedTotal: restarted.length,
    });
    // 6. The mainline dialect: the extension sends *.dynevents files to the server.
    await waitFor('go-dynevents', 60000);
    const api = ext.exports;
    //    First a bpftrace script (tests/editors/kernel/kernel.bt): a kprobe on a function
    //    the kernel lacks, K210 (the kernel is loaded already: about a second).
    const bt = vscode.Uri.file(path.join(path.dirname(uri.fsPath), 'kernel.bt'));
    fs.writeFileSync(bt.fsPath, process.env.FEVLINT_E2E_BT);
    const btdoc = await vscode.workspace.openTextDocument(bt);
    await vscode.window.showTextDocument(btdoc, vscode.ViewColumn.One);
    const btdiags = await settle(bt, (ds) => ds.some((d) => d.code === 'K210'), 60000, 1000);
    write('bpftrace.json', { languageId: btdoc.languageId, diagnostics: btdiags });
    const mainline = vscode.Uri.file(path.join(path.dirname(uri.fsPath), 'problems.dynevents'));
    fs.writeFileSync(mainline.fsPath, '# A line the kernel rejects.\np:ip_rcv ip_rcv skb=%di:x86\n');
    const mdoc = await vscode.workspace.openTextDocument(mainline);
    await vscode.window.showTextDocument(mdoc, vscode.ViewColumn.One);
    const mdiags = await settle(mainline, (ds) => ds.some((d) => d.code === 'S001'), 60000, 1000);
    write('dynevents.json', { languageId: mdoc.languageId, diagnostics: mdiags, status: api.status(mainline.toString()) });
    // 7. A malformed fevlint.toml: its problem reaches each document's status (the
    //    kernels still come from `fevlint.kernels`), and the status bar says so.
    await waitFor('go-status', 60000);
    const statusBefore = { script: api.status(uri.toString()), mainline: api.status(mainline.toString()), text: api.statusText() };
    fs.writeFileSync(path.join(path.dirname(uri.fsPath), 'fevlint.toml'), 'kernels = [\n');
    for (const deadline = Date.now() + 30000; Date.now() < deadline; await sleep(100)) {
      const s = api.status(mainline.toString());
      if (s && s.problems.length) break;
    }
    await sleep(500);
    const statusAfter = { script: api.status(uri.toString()), mainline: api.status(mainline.toString()), text: api.statusText() };
    write('status.json', { before: statusBefore, after: statusAfter });
    // 8. (after `go-many`) A script with more findings than VS Code forwards to the
    //    workbench from one collection for one document (1,000): every finding the
    //    extension holds is a marker of the workbench (the Problems count, read on screen).
    await waitFor('go-many', 60000);
    const many = vscode.Uri.file(path.join(path.dirname(uri.fsPath), 'many.fev'));
    // 1,500 lines the kernel's parser rejects (S001 each; N101 is ignored since step 5).
    fs.writeFileSync(many.fsPath, 'vfs_read(x64 a0\n'.repeat(1500));
    const manyDoc = await vscode.workspace.openTextDocument(many);
    await vscode.window.showTextDocument(manyDoc, vscode.ViewColumn.One);
    const manyDiags = await settle(many, (ds) => ds.length > 1000, 60000, 1500);
    const all = vscode.languages.getDiagnostics().flatMap(([, ds]) => ds);
    const count = (ds, sev) => ds.filter((d) => d.severity === sev).length;
    write('many.json', {
      findings: manyDiags.length,
      errors: count(all, vscode.DiagnosticSeverity.Error), warnings: count(all, vscode.DiagnosticSeverity.Warning),
    });
  } catch (e) {
    write('error.json', { error: String((e && e.stack) || e) });
  }
};
