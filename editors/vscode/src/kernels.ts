// Which kernels the language server has loaded, for the status bar item.
//
// `fevlint lsp` reports each kernel load through `window/logMessage` (and `$/progress`):
//   Info     "kernel PATH: NAME loaded (TYPES)"
//   Warning  "fevlint: cannot load kernel PATH: ERROR"
// (server/src/lsp/server.rs, `start_load`). vscode-languageclient writes those messages to
// its output channel, so the channel given to the client is wrapped and those lines read.
// A dedicated notification from the server would be sturdier; until it exists, this is
// what the server exposes.
import * as vscode from 'vscode';

export interface KernelState {
  path: string;
  name?: string;
  types?: string;
  error?: string;
}

const LOADED = /\bkernel (.+): (\S+) loaded \((.*)\)\s*$/;
const FAILED = /\bfevlint: cannot load kernel (.+?): (.*)$/;

export class KernelTracker implements vscode.Disposable {
  readonly kernels = new Map<string, KernelState>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  /** Reads one line the language client wrote to its output channel. */
  observe(line: string): void {
    let m = LOADED.exec(line);
    if (m) {
      this.kernels.set(m[1], { path: m[1], name: m[2], types: m[3] });
      this.changed.fire();
      return;
    }
    m = FAILED.exec(line);
    if (m) {
      this.kernels.set(m[1], { path: m[1], error: m[2] });
      this.changed.fire();
    }
  }

  clear(): void {
    this.kernels.clear();
    this.changed.fire();
  }

  loaded(): KernelState[] {
    return [...this.kernels.values()].filter((k) => k.name);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** An output channel that also shows each line to the kernel tracker. */
export class ObservedChannel implements vscode.OutputChannel {
  private partial = '';
  constructor(private readonly inner: vscode.OutputChannel, private readonly tracker: KernelTracker) {}
  get name(): string { return this.inner.name; }
  append(value: string): void {
    this.inner.append(value);
    const text = this.partial + value;
    const lines = text.split('\n');
    this.partial = lines.pop() || '';
    lines.forEach((l) => this.tracker.observe(l));
  }
  appendLine(value: string): void {
    this.inner.appendLine(value);
    (this.partial + value).split('\n').forEach((l) => this.tracker.observe(l));
    this.partial = '';
  }
  replace(value: string): void { this.inner.replace(value); }
  clear(): void { this.inner.clear(); }
  show(column?: unknown, preserveFocus?: boolean): void {
    if (typeof column === 'boolean') this.inner.show(column);
    else this.inner.show(column as vscode.ViewColumn | undefined, preserveFocus);
  }
  hide(): void { this.inner.hide(); }
  dispose(): void { this.inner.dispose(); }
}

/** The status bar item: the loaded kernels' names, shown while a script is the active editor. */
export class KernelStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly tracker: KernelTracker, private readonly configured: () => string[]) {
    this.item = vscode.window.createStatusBarItem('fevlint.kernels', vscode.StatusBarAlignment.Left, 0);
    this.item.name = 'fevlint kernels';
    this.item.command = 'fevlint.showKernelInfo';
    this.subscriptions.push(
      tracker.onDidChange(() => this.update()),
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('fevlint') && this.update()),
    );
    this.update();
  }

  update(): void {
    const lang = vscode.window.activeTextEditor?.document.languageId;
    if (lang !== 'fev' && lang !== 'dynevents') {
      this.item.hide();
      return;
    }
    const known = [...this.tracker.kernels.values()];
    const loaded = known.filter((k) => k.name);
    const failed = known.filter((k) => k.error);
    const pending = this.configured().filter((p) => !known.some((k) => k.path === p || k.path.endsWith(p)));
    const names = loaded.map((k) => k.name);
    let text: string;
    if (names.length) text = `$(server) ${names.join(', ')}`;
    else if (pending.length) text = '$(loading~spin) fevlint: loading kernels';
    else text = '$(server) fevlint: no kernel';
    if (failed.length) text += ` $(warning) ${failed.length}`;
    this.item.text = text;
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown('**fevlint kernels** (click for `fevlint kernel info`)\n\n');
    for (const k of loaded) tip.appendMarkdown(`- \`${k.name}\`: ${k.types || 'no types'}, \`${k.path}\`\n`);
    for (const k of failed) tip.appendMarkdown(`- cannot load \`${k.path}\`: ${k.error}\n`);
    for (const p of pending) tip.appendMarkdown(`- loading \`${p}\`\n`);
    if (!known.length && !pending.length) {
      tip.appendMarkdown('No kernel: only the parser checks run. Set `fevlint.kernels` or write a `fevlint.toml`.');
    }
    this.item.tooltip = tip;
    this.item.backgroundColor = failed.length ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }
}
