// Diagnostics by block: fevlint's LSP extension for open documents (the server's side is
// in server/crates/lsp). The client declares `capabilities.experimental.
// fevlintDiagnosticBlocks`; the server then neither offers pull diagnostics nor publishes an
// open document's findings, but sends `fevlint/diagnosticBlocks`: block k holds the
// findings that start on lines [k * blockLines, (k + 1) * blockLines), and a notification
// lists only the blocks that changed. Each block is a DiagnosticCollection of its own, so
// an edit hands VS Code (its extension host, the workbench's markers) one block's findings
// instead of the document's thousands; and no collection holds more than a block, so VS
// Code's cap of 1,000 diagnostics per document and collection does not hide findings of a
// long script from the Problems panel.
import * as vscode from 'vscode';
import type { Diagnostic } from 'vscode-languageclient';
import type { BaseLanguageClient, ClientCapabilities, FeatureState, StaticFeature } from 'vscode-languageclient/node';

export const METHOD = 'fevlint/diagnosticBlocks';

/** The notification's parameters, as the server sends them. */
export interface DiagnosticBlocksParams {
  uri: string;
  version: number | null;
  blockLines: number;
  /** Blocks at or past this index are dropped; 0 clears the document. */
  blockCount: number;
  /** Each listed block's diagnostics replace that block's; unlisted blocks stay. */
  blocks: { index: number; diagnostics: Diagnostic[] }[];
}

export class DiagnosticBlocks implements StaticFeature {
  /** Block index -> its collection (created when a block first has findings). */
  private readonly collections = new Map<number, vscode.DiagnosticCollection>();
  /** Per document: how many blocks it has (what `blockCount` last said). */
  private readonly counts = new Map<string, number>();
  private readonly listeners: vscode.Disposable[] = [];

  constructor(private readonly client: BaseLanguageClient) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), fevlintDiagnosticBlocks: true };
  }

  initialize(): void {
    this.listeners.push(
      this.client.onNotification(METHOD, (p: DiagnosticBlocksParams) => this.apply(p)),
      // A closed document's findings come by publishDiagnostics again (the server
      // re-pushes them): its blocks go.
      vscode.workspace.onDidCloseTextDocument((doc) => this.drop(doc.uri.toString(), 0)),
    );
  }

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {
    for (const l of this.listeners.splice(0)) l.dispose();
    for (const c of this.collections.values()) c.dispose();
    this.collections.clear();
    this.counts.clear();
  }

  private apply(p: DiagnosticBlocksParams): void {
    const uri = this.client.protocol2CodeConverter.asUri(p.uri);
    const key = uri.toString();
    // A notification that crossed the document's close: the push entry stands for it now.
    if (!vscode.workspace.textDocuments.some((d) => d.uri.toString() === key)) return;
    for (const block of p.blocks) {
      if (block.index >= p.blockCount) continue;
      const diagnostics = block.diagnostics.map((d) => this.client.protocol2CodeConverter.asDiagnostic(d));
      const collection = this.collections.get(block.index);
      if (diagnostics.length) (collection ?? this.collection(block.index)).set(uri, diagnostics);
      else if (collection?.has(uri)) collection.delete(uri);
    }
    this.drop(key, p.blockCount, uri);
    if (p.blockCount) this.counts.set(key, p.blockCount);
  }

  /** Removes the document's blocks from `from` on. */
  private drop(key: string, from: number, uri = vscode.Uri.parse(key)): void {
    const had = this.counts.get(key);
    if (had === undefined) return;
    for (const [k, c] of this.collections) {
      if (k >= from && k < had && c.has(uri)) c.delete(uri);
    }
    if (from === 0) this.counts.delete(key);
  }

  private collection(index: number): vscode.DiagnosticCollection {
    // Problems and hovers show each diagnostic's source ("fevlint"); the collection's name
    // is the markers' owner, one per block.
    const c = vscode.languages.createDiagnosticCollection(`fevlint.block${index}`);
    this.collections.set(index, c);
    return c;
  }
}
