// fevlint for VS Code: the language client for `fevlint lsp`, the kernels status bar
// item, and commands that run the fevlint CLI (kernel info, dry run, emit).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { DiagnosticBlocks } from './blocks';
import { DocumentStatus, KernelStatus, StatusTracker } from './kernels';
import * as settings from './settings';

let client: LanguageClient | undefined;
let tracker: StatusTracker;
let status: KernelStatus;
/** Settings problems already shown (each once while it lasts). */
const shownProblems = new Set<string>();
let channel: vscode.OutputChannel;
const OUTPUT_SCHEME = 'fevlint-output';
const outputs = new Map<string, string>();
const outputChanged = new vscode.EventEmitter<vscode.Uri>();

/** What the extension offers other extensions (and its end-to-end test). */
export interface Api {
  /** The server's last `fevlint/status` for a document. */
  status(uri: string): DocumentStatus | undefined;
  /** The status bar item's text for the active editor. */
  statusText(): string;
  /** The documents the language client sends to the server. */
  documentSelector(): Filter[];
}

/** A document filter both the language client and `vscode.languages.match` take. */
export interface Filter { scheme: string; language: string; pattern?: string }

/** The folders whose `*.bpf.c` are sent to the server (see [`objectFolders`]). */
let cFolders: string[] = [];

export async function activate(context: vscode.ExtensionContext): Promise<Api> {
  tracker = new StatusTracker();
  channel = vscode.window.createOutputChannel('fevlint');
  status = new KernelStatus(tracker);
  context.subscriptions.push(tracker, channel, status, outputChanged);

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(OUTPUT_SCHEME, {
      onDidChange: outputChanged.event,
      provideTextDocumentContent: (uri) => outputs.get(uri.toString()) ?? '',
    }),
    vscode.commands.registerCommand('fevlint.restartServer', restartServer),
    vscode.commands.registerCommand('fevlint.showKernelInfo', showKernelInfo),
    vscode.commands.registerCommand('fevlint.dryRun', dryRun),
    vscode.commands.registerCommand('fevlint.emit', emit),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('fevlint.path')) {
        await restartServer();
      } else if (['fevlint.kernels', 'fevlint.ignore', 'fevlint.arch', 'fevlint.core'].some((k) => e.affectsConfiguration(k))) {
        await client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { fevlint: settings.serverLayer() } });
      }
    }),
  );
  // A fevlint.toml that starts or stops naming objects changes which C files are sent.
  const tomls = vscode.workspace.createFileSystemWatcher('**/fevlint.toml');
  const reconsider = async () => {
    const now = await objectFolders();
    if (JSON.stringify(now) !== JSON.stringify(cFolders)) await restartServer();
  };
  context.subscriptions.push(tomls, tomls.onDidCreate(reconsider), tomls.onDidChange(reconsider), tomls.onDidDelete(reconsider));
  await startServer();
  return { status: (uri) => tracker.get(uri), statusText: () => status.text, documentSelector: () => documentSelector(cFolders) };
}

/** The folders of the fevlint.toml files (in the workspace, or the nearest above a
 * workspace folder, as the server finds them) that name compiled objects (`objects = `). */
async function objectFolders(): Promise<string[]> {
  const files = new Set<string>();
  for (const f of await vscode.workspace.findFiles('**/fevlint.toml', '**/node_modules/**', 200)) files.add(f.fsPath);
  for (const w of vscode.workspace.workspaceFolders ?? []) {
    for (let d = w.uri.fsPath; ; d = path.dirname(d)) {
      const f = path.join(d, 'fevlint.toml');
      if (fs.existsSync(f)) { files.add(f); break; }
      if (path.dirname(d) === d) break;
    }
  }
  const out: string[] = [];
  for (const f of files) {
    try {
      if (/^\s*objects\s*=/m.test(fs.readFileSync(f, 'utf8'))) out.push(path.dirname(f));
    } catch { /* unreadable: the server says so */ }
  }
  return out.sort();
}

/** The languages the server checks: `*.fev`, the mainline `*.dynevents`, bpftrace `*.bt`;
 * and the `*.bpf.c` under a fevlint.toml that names compiled objects, for the findings
 * and hovers of those objects there (the server never parses C; no other C file is sent,
 * and C alone never activates the extension). */
function documentSelector(folders: string[]): Filter[] {
  const glob = (f: string) => f.replace(/[[\]{}*?]/g, (c) => `[${c}]`);
  return [
    ...['fev', 'dynevents', 'bpftrace'].flatMap((language) => [
      { scheme: 'file', language },
      { scheme: 'untitled', language },
    ]),
    ...folders.map((f) => ({ scheme: 'file', language: 'c', pattern: `${glob(f)}/**/*.bpf.c` })),
  ];
}

/** Problems in the editor's own settings (a fevlint.toml's are shown by the server, with
 * an action that opens it): a warning with an action that opens the settings. */
function showSettingsProblems(s: DocumentStatus): void {
  const current = new Set(s.problems.filter((p) => !p.file).map((p) => p.message));
  for (const message of current) {
    if (shownProblems.has(message)) continue;
    shownProblems.add(message);
    void vscode.window
      .showWarningMessage(`fevlint: settings: ${message}; these settings are not used`, 'Open settings')
      .then((chosen) => chosen && vscode.commands.executeCommand('workbench.action.openSettings', 'fevlint'));
  }
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  await c?.stop();
}

async function startServer(): Promise<void> {
  const command = settings.fevlintPath();
  cFolders = await objectFolders();
  // vscode-languageclient appends `--stdio`; `fevlint lsp` accepts it.
  const serverOptions: ServerOptions = {
    run: { command, args: ['lsp'], transport: TransportKind.stdio },
    debug: { command, args: ['lsp'], transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(cFolders),
    initializationOptions: { fevlint: settings.serverLayer() },
    outputChannel: channel,
  };
  const c = new LanguageClient('fevlint', 'fevlint', serverOptions, clientOptions);
  client = c;
  // Open documents' findings by block (`fevlint/diagnosticBlocks`), not pulled whole.
  c.registerFeature(new DiagnosticBlocks(c));
  c.onNotification('fevlint/status', (s: DocumentStatus) => {
    tracker.set(s);
    showSettingsProblems(s);
  });
  c.onDidChangeState((e) => {
    if (client !== c) return;
    if (e.newState === State.Running) tracker.setServerError(undefined);
    else if (e.newState === State.Stopped) tracker.setServerError(`\`${command} lsp\` stopped`);
  });
  try {
    await c.start();
    tracker.setServerError(undefined);
  } catch (e) {
    const why = `cannot start \`${command} lsp\` (${e instanceof Error ? e.message : String(e)})`;
    if (client === c) tracker.setServerError(why);
    void vscode.window.showErrorMessage(`fevlint: ${why}. Set "fevlint.path" to the fevlint executable.`, 'Open settings')
      .then((chosen) => chosen && vscode.commands.executeCommand('workbench.action.openSettings', 'fevlint.path'));
  }
}

async function restartServer(): Promise<void> {
  const old = client;
  client = undefined;
  tracker.clear();
  shownProblems.clear();
  if (old) {
    try { await old.stop(2000); } catch { /* already stopped */ }
  }
  await startServer();
}

interface CliResult { code: number | null; stdout: string; stderr: string; error?: string }

/** Runs the fevlint CLI (never through a shell). */
function runCli(args: string[], cwd?: string): Promise<CliResult> {
  const command = settings.fevlintPath();
  channel.appendLine(`$ ${[command, ...args].map((a) => (/[\s'"$]/.test(a) ? `'${a.replace(/'/g, "'\\''")}'` : a)).join(' ')}`);
  return new Promise((resolve) => {
    execFile(command, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? Number((err as NodeJS.ErrnoException).code) : null) : 0;
      const spawnError = err && typeof (err as NodeJS.ErrnoException).code === 'string' ? `${err.message}` : undefined;
      resolve({ code: spawnError ? null : code, stdout, stderr, error: spawnError });
    });
  });
}

/** Shows a command's output in a read-only editor. */
async function showOutput(title: string, text: string, language = 'plaintext'): Promise<vscode.TextEditor> {
  const uri = vscode.Uri.from({ scheme: OUTPUT_SCHEME, path: `/${title.replace(/[/\\]/g, '_')}` });
  outputs.set(uri.toString(), text);
  outputChanged.fire(uri);
  let doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== language) doc = await vscode.languages.setTextDocumentLanguage(doc, language);
  return vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
}

function describe(r: CliResult, args: string[]): string {
  const head = `# fevlint ${args.join(' ')}\n# exit status: ${r.code === null ? `not run (${r.error})` : r.code}\n\n`;
  let body = r.stdout;
  if (r.stderr.trim()) body += (body && !body.endsWith('\n') ? '\n' : '') + r.stderr;
  if (r.code === 2 && /unrecognized subcommand|invalid value|unexpected argument/.test(r.stderr)) {
    body += '\n# This fevlint does not have this command or option yet: update fevlint (or "fevlint.path").\n';
  }
  return head + body;
}

/** Kernels to run a command against: the configured ones, else those the server loaded (from a fevlint.toml). */
function knownKernels(uri?: vscode.Uri): string[] {
  const configured = settings.configuredKernels(uri);
  if (configured.length) return configured;
  return tracker.loaded(uri).map((k) => k.path);
}

async function pickKernel(uri: vscode.Uri | undefined, purpose: string): Promise<string | undefined> {
  const kernels = knownKernels(uri);
  if (kernels.length === 1) return kernels[0];
  if (kernels.length > 1) {
    return vscode.window.showQuickPick(kernels, { placeHolder: `Kernel to ${purpose}` });
  }
  const picked = await vscode.window.showOpenDialog({
    title: `fevlint: kernel to ${purpose} (a fixture folder, BTF, vmlinux or vmlinuz)`,
    canSelectFiles: true, canSelectFolders: true, canSelectMany: false,
  });
  return picked?.[0]?.fsPath;
}

async function showKernelInfo(kernel?: string): Promise<string | undefined> {
  const uri = vscode.window.activeTextEditor?.document.uri;
  const k = typeof kernel === 'string' ? kernel : await pickKernel(uri, 'describe');
  if (!k) return undefined;
  const args = ['kernel', 'info', k];
  const r = await runCli(args, settings.baseFolder(uri));
  const text = describe(r, args);
  await showOutput(`kernel info ${path.basename(k)}.txt`, text);
  return text;
}

/** The active script, written to a temporary file when it has unsaved changes (the user's file is never saved for them). */
function scriptOnDisk(doc: vscode.TextDocument): { file: string; cleanup: () => void } {
  if (doc.uri.scheme === 'file' && !doc.isDirty) return { file: doc.uri.fsPath, cleanup: () => undefined };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fevlint-'));
  const file = path.join(dir, path.basename(doc.uri.path) || 'untitled.fev');
  fs.writeFileSync(file, doc.getText());
  return { file, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

function activeScript(): vscode.TextDocument | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  if (!doc || doc.languageId !== 'fev') {
    void vscode.window.showWarningMessage('fevlint: open a function-event script (*.fev) first.');
    return undefined;
  }
  return doc;
}

async function dryRun(): Promise<string | undefined> {
  const doc = activeScript();
  if (!doc) return undefined;
  const kernel = await pickKernel(doc.uri, 'evaluate on');
  if (!kernel) return undefined;
  let corePath = settings.core(doc.uri);
  if (!corePath) {
    const picked = await vscode.window.showOpenDialog({ title: 'fevlint: core dump (vmcore, kdump, QEMU dump) for the dry run', canSelectMany: false });
    corePath = picked?.[0]?.fsPath;
    if (!corePath) return undefined;
  }
  const script = scriptOnDisk(doc);
  try {
    const args = ['dry-run', '--kernel', kernel, '--core', corePath, script.file];
    const text = describe(await runCli(args, settings.baseFolder(doc.uri)), args);
    await showOutput(`dry run ${path.basename(doc.uri.path)}.txt`, text);
    return text;
  } finally {
    script.cleanup();
  }
}

async function emit(): Promise<string | undefined> {
  const doc = activeScript();
  if (!doc) return undefined;
  const kernel = await pickKernel(doc.uri, 'emit for');
  if (!kernel) return undefined;
  const script = scriptOnDisk(doc);
  try {
    const args = ['emit', '--kernel', kernel, '--flavor', settings.emitFlavor(doc.uri), script.file];
    const r = await runCli(args, settings.baseFolder(doc.uri));
    // Success is a dynamic_events file (notes on stderr go to the output channel);
    // anything else is shown with its status.
    if (r.code === 0 && r.stderr.trim()) channel.appendLine(r.stderr.trimEnd());
    const text = r.code === 0 ? r.stdout : describe(r, args);
    await showOutput(`${path.basename(doc.uri.path, '.fev')}.dynevents`, text, r.code === 0 ? 'dynevents' : 'plaintext');
    return text;
  } finally {
    script.cleanup();
  }
}
