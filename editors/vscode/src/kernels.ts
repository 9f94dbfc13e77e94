// The status bar item, driven by the server's state: the `fevlint/status` notification
// (one per open document: its fevlint.toml, each configured kernel loading, loaded or
// failed, the settings problems, whether it is checked at all; server/crates/lsp/src/
// server.rs, `Status`) and the language client's own state (a server that cannot start
// or stopped). Each document shows its own status.
import * as vscode from 'vscode';

export interface KernelState {
  path: string;
  state: 'loading' | 'loaded' | 'failed';
  name?: string;
  types?: string;
  error?: string;
}

export interface Problem {
  /** The fevlint.toml at fault; null for the editor's settings. */
  file: string | null;
  message: string;
}

export interface DocumentStatus {
  uri: string;
  dialect: string;
  checked: boolean;
  refused?: string;
  config: string | null;
  kernels: KernelState[];
  problems: Problem[];
}

export class StatusTracker implements vscode.Disposable {
  private readonly byUri = new Map<string, DocumentStatus>();
  /** Why the language server is not running, while it is not. */
  serverError: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  set(status: DocumentStatus): void {
    this.byUri.set(status.uri, status);
    this.changed.fire();
  }

  get(uri: vscode.Uri | string | undefined): DocumentStatus | undefined {
    return uri === undefined ? undefined : this.byUri.get(uri.toString());
  }

  setServerError(error: string | undefined): void {
    this.serverError = error;
    this.changed.fire();
  }

  clear(): void {
    this.byUri.clear();
    this.changed.fire();
  }

  /** The kernels loaded for a document. */
  loaded(uri: vscode.Uri | undefined): KernelState[] {
    return (this.get(uri)?.kernels || []).filter((k) => k.state === 'loaded');
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The status bar item of the active script: its kernels, its settings problems, or why nothing is checked. */
export class KernelStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly tracker: StatusTracker) {
    this.item = vscode.window.createStatusBarItem('fevlint.kernels', vscode.StatusBarAlignment.Left, 0);
    this.item.name = 'fevlint kernels';
    this.subscriptions.push(
      tracker.onDidChange(() => this.update()),
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
    );
    this.update();
  }

  get text(): string {
    return this.item.text;
  }

  update(): void {
    const doc = vscode.window.activeTextEditor?.document;
    if (!doc || (doc.languageId !== 'fev' && doc.languageId !== 'dynevents')) {
      this.item.hide();
      return;
    }
    const tip = new vscode.MarkdownString();
    let warn = false;
    this.item.command = 'fevlint.showKernelInfo';
    const status = this.tracker.get(doc.uri);
    if (this.tracker.serverError !== undefined) {
      this.item.text = '$(error) fevlint: not running';
      tip.appendMarkdown(`**fevlint** is not running: ${this.tracker.serverError}\n\nSet \`fevlint.path\` to the fevlint executable.`);
      this.item.command = { title: 'Open settings', command: 'workbench.action.openSettings', arguments: ['fevlint.path'] };
      warn = true;
    } else if (!status) {
      this.item.text = '$(loading~spin) fevlint';
      tip.appendMarkdown('**fevlint**: waiting for the language server');
    } else if (!status.checked) {
      this.item.text = '$(warning) fevlint: not checked';
      tip.appendMarkdown(status.refused || 'not checked');
      warn = true;
    } else {
      const loaded = status.kernels.filter((k) => k.state === 'loaded');
      const loading = status.kernels.filter((k) => k.state === 'loading');
      const failed = status.kernels.filter((k) => k.state === 'failed');
      let text: string;
      if (loaded.length) text = `$(server) ${loaded.map((k) => k.name).join(', ')}`;
      else if (loading.length) text = '$(loading~spin) fevlint: loading kernels';
      else text = '$(server) fevlint: no kernel';
      if (loaded.length && loading.length) text += ' $(loading~spin)';
      if (failed.length) text += ` $(warning) ${failed.length}`;
      if (status.problems.length) text += ' $(warning) settings';
      this.item.text = text;
      tip.appendMarkdown('**fevlint kernels** (click for `fevlint kernel info`)\n\n');
      for (const k of loaded) tip.appendMarkdown(`- \`${k.name}\`: ${k.types || 'no types'}, \`${k.path}\`\n`);
      for (const k of failed) tip.appendMarkdown(`- cannot load \`${k.path}\`: ${k.error}\n`);
      for (const k of loading) tip.appendMarkdown(`- loading \`${k.path}\`\n`);
      for (const p of status.problems) tip.appendMarkdown(`- ${p.file ? `\`${p.file}\`` : 'settings'}: ${p.message} (not used)\n`);
      if (!status.kernels.length) {
        tip.appendMarkdown('\nNo kernel: only the parser checks run. Set `fevlint.kernels` or write a `fevlint.toml`.');
      }
      if (status.config) tip.appendMarkdown(`\n\nSettings from \`${status.config}\``);
      warn = failed.length > 0 || status.problems.length > 0;
    }
    this.item.tooltip = tip;
    this.item.backgroundColor = warn ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }
}
