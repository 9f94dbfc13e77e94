// The extension's settings, and the part of them the language server takes.
import * as path from 'path';
import * as vscode from 'vscode';

/** What `fevlint lsp` accepts in `initializationOptions` and `workspace/didChangeConfiguration`
 * (server/src/lsp/config.rs: `Layer`, unknown keys are refused). Only keys the user set are
 * sent, so that a `fevlint.toml` is not overridden by defaults. */
export interface ServerLayer {
  arch?: string;
  kernels?: string[];
  ignore?: string[];
  /** A core dump: the server shows each field's dry-run value as an inlay hint. */
  core?: string;
}

function isSet<T>(config: vscode.WorkspaceConfiguration, key: string): boolean {
  const i = config.inspect<T>(key);
  return !!i && (i.globalValue !== undefined || i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined);
}

/** The folder relative kernel paths are taken from: the document's workspace folder, else the first one. */
export function baseFolder(uri?: vscode.Uri): string | undefined {
  const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) || vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.fsPath;
}

export function resolvePath(p: string, base: string | undefined): string {
  let out = p.trim();
  if (base) out = out.replace(/\$\{workspaceFolder\}/g, base);
  const home = process.env.HOME;
  if (home && (out === '~' || out.startsWith('~/'))) out = path.join(home, out.slice(1));
  return path.isAbsolute(out) || !base ? out : path.join(base, out);
}

export function serverLayer(uri?: vscode.Uri): ServerLayer {
  const config = vscode.workspace.getConfiguration('fevlint', uri);
  const base = baseFolder(uri);
  const layer: ServerLayer = {};
  if (isSet(config, 'arch')) layer.arch = config.get<string>('arch');
  if (isSet(config, 'kernels')) layer.kernels = (config.get<string[]>('kernels') || []).map((k) => resolvePath(k, base));
  if (isSet(config, 'ignore')) layer.ignore = config.get<string[]>('ignore') || [];
  if (isSet(config, 'core')) {
    const c = config.get<string>('core') || '';
    layer.core = c ? resolvePath(c, base) : '';
  }
  return layer;
}

export function fevlintPath(): string {
  const p = vscode.workspace.getConfiguration('fevlint').get<string>('path') || 'fevlint';
  return p.includes('/') ? resolvePath(p, baseFolder()) : p;
}

export function configuredKernels(uri?: vscode.Uri): string[] {
  const config = vscode.workspace.getConfiguration('fevlint', uri);
  return (config.get<string[]>('kernels') || []).map((k) => resolvePath(k, baseFolder(uri)));
}

export function core(uri?: vscode.Uri): string | undefined {
  const c = vscode.workspace.getConfiguration('fevlint', uri).get<string>('core');
  return c ? resolvePath(c, baseFolder(uri)) : undefined;
}

export function emitFlavor(uri?: vscode.Uri): string {
  return vscode.workspace.getConfiguration('fevlint', uri).get<string>('emit.flavor') || 'auto';
}
