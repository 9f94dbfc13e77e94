"""fevlint lsp under pytest-lsp 1.0.1, as VS Code and as Neovim (the capabilities
pytest-lsp recorded from those editors are sent at initialize).

    FEVLINT=target/debug/fevlint $VENV/bin/pytest -q tests/editors/test_pytest_lsp.py

Run by server/tests/lsp_editors.rs.
"""
import asyncio
import os
import pathlib

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

HERE = pathlib.Path(__file__).parent
SERVER = [os.environ.get("FEVLINT", "fevlint"), "lsp", "--stdio"]
TEXT = (HERE / "problems.fev").read_text()
URI = (HERE / "problems.fev").resolve().as_uri()


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=SERVER),
)
async def client(request, lsp_client: LanguageClient):
    lsp_client.editor = request.param
    # What the real editors answer to the server's requests (pytest-lsp leaves them out).
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams):
        lsp_client.registrations.extend(params.registrations)

    @lsp_client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_hint_refresh(params):
        return None

    # Every publish, kept in arrival order: `wait_for_notification` resolves only for the
    # first notification after the wait began, and a burst of publishes read in one chunk
    # (the workspace's scripts, then the open document's) left the one awaited unseen.
    lsp_client.published, lsp_client.seen = [], 0
    del lsp_client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    @lsp_client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish_diagnostics(params: types.PublishDiagnosticsParams):
        lsp_client.diagnostics[params.uri] = params.diagnostics
        lsp_client.published.append(params)

    lsp_client.init_result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=HERE.resolve().as_uri(),
        )
    )
    yield
    await lsp_client.shutdown_async(None)
    lsp_client.exit(None)
    proc = lsp_client._server
    try:
        code = await asyncio.wait_for(proc.wait(), 5)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail("server still running 5 s after the exit notification")
    assert code == 0, "exit after shutdown must exit 0"


async def open_doc(client: LanguageClient, version=1):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="fev", version=version, text=TEXT)
        )
    )
    return await wait_version(client, version)


async def next_publish(client: LanguageClient, wanted, timeout=10):
    """The first publish not looked at yet for which `wanted(params)` holds (those before
    it are passed over), waiting at most `timeout` seconds for it."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        while client.seen < len(client.published):
            params = client.published[client.seen]
            client.seen += 1
            if wanted(params):
                return params
        if asyncio.get_running_loop().time() > deadline:
            raise asyncio.TimeoutError(f"no such publish in {timeout} s; got {client.published!r}")
        await asyncio.sleep(0.01)


async def wait_version(client: LanguageClient, version):
    params = await next_publish(client, lambda p: p.uri == URI and p.version == version)
    return params.diagnostics


def summary(diags):
    return [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in diags]


async def test_diagnostics(client: LanguageClient):
    diags = await open_doc(client)
    assert summary(diags) == [("S001", 1, 16, 19), ("S003", 2, 18, 20)]
    s001 = diags[0]
    assert s001.source == "fevlint"
    assert s001.severity == types.DiagnosticSeverity.Error
    # The rule's link goes to a client that shows it (VS Code), not to one that does not
    # declare it (Neovim).
    if client_capabilities(client.editor).text_document.publish_diagnostics.code_description_support:
        assert s001.code_description.href.endswith("/docs/rules/S001.md")
    else:
        assert s001.code_description is None
    note = "kernel: Unexpected token 'x86' for COMMA state"
    supports_related = bool(
        client_capabilities(client.editor).text_document.publish_diagnostics.related_information
    )
    if supports_related:
        assert [r.message for r in s001.related_information][0] == note
        assert s001.message == "unexpected `x86` here"
    else:
        assert s001.related_information is None
        assert s001.message.splitlines()[:2] == ["unexpected `x86` here", note]


async def test_dynevents_diagnostics(client: LanguageClient):
    """A *.dynevents file (VS Code's and Neovim's `dynevents` language) is checked in
    the kernel's own dialect."""
    uri = (HERE / "problems.dynevents").resolve().as_uri()
    text = (HERE / "problems.dynevents").read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="dynevents", version=1, text=text)
        )
    )
    params = await next_publish(client, lambda p: p.uri == uri and p.version == 1)
    assert summary(params.diagnostics) == [("S001", 1, 24, 27)]
    assert params.diagnostics[0].message.startswith("the kernel rejects this line")


async def test_hover(client: LanguageClient):
    await open_doc(client)
    field = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(3, 19))
    )
    assert "`rdi`" in field.contents.value
    assert "*(u64 *)(param0 + 40) + 16" in field.contents.value
    ty = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(3, 12))
    )
    assert ty.contents.value.startswith("`symbol`: 8 bytes on x86_64, unsigned")
    comment = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(0, 3))
    )
    assert comment is None


async def test_completion_in_half_typed_line(client: LanguageClient):
    await open_doc(client)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(4, 0), types.Position(4, 0)), text="vfs_read(int fd, x"
                )
            ],
        )
    )
    diags = await wait_version(client, 2)
    assert summary(diags)[-1] == ("S001", 4, 17, 18)
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(4, 18))
    )
    items = result if isinstance(result, list) else result.items
    labels = [i.label for i in items]
    assert {"x64", "NULL", "unsigned", "string"} <= set(labels)
    x64 = next(i for i in items if i.label == "x64")
    assert x64.text_edit.range == types.Range(types.Position(4, 17), types.Position(4, 18))
    # After the type, a name is expected: no type completions.
    none = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(4, 13))
    )
    assert none is None


async def test_code_action_removes_the_diagnostic(client: LanguageClient):
    diags = await open_doc(client)
    s003 = diags[1]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=s003.range,
            context=types.CodeActionContext(diagnostics=[s003]),
        )
    )
    remove = next(a for a in actions if a.title.startswith("Remove"))
    assert remove.is_preferred
    suppress = next(a for a in actions if a.title == "Suppress S003 on this line")
    assert suppress.edit.changes[URI][0].new_text == "# fevlint: ignore[S003]\n"
    edits = remove.edit.changes[URI]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits],
        )
    )
    after = await wait_version(client, 2)
    assert summary(after) == [("S001", 1, 16, 19)]


async def test_symbols_folds_tokens_formatting(client: LanguageClient):
    await open_doc(client)
    doc = types.TextDocumentIdentifier(uri=URI)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc))
    assert [s.name for s in symbols] == ["ip_rcv", "do_IRQ", "__vfs_read"]
    assert [(c.name, c.detail) for c in symbols[2].children] == [("read", "symbol")]
    provider = client.init_result.capabilities.semantic_tokens_provider
    if provider.full:
        tokens = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=doc))
    else:
        # VS Code asks by range only (it declares range requests): the whole document.
        assert client.editor == "visual-studio-code" and provider.range
        whole = types.Range(types.Position(0, 0), types.Position(100, 0))
        tokens = await client.text_document_semantic_tokens_range_async(
            types.SemanticTokensRangeParams(text_document=doc, range=whole)
        )
    legend = provider.legend.token_types
    first = [legend[tokens.data[i + 3]] for i in range(0, 15, 5)]
    assert first == ["comment", "function", "type"]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(4, 0), types.Position(4, 0)),
                    text="  f( int  a , x8 [ 6 ] b+0x10 ) # keep me\n",
                )
            ],
        )
    )
    # The findings did not change (no publish): the edit is applied before the next request.
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(text_document=doc, options=types.FormattingOptions(tab_size=4, insert_spaces=True))
    )
    # Accepted lines become the kernel's echo; comments and the rejected line stay.
    assert [(e.range.start.line, e.range.start.character, e.range.end.character, e.new_text) for e in edits] == [
        (4, 0, 31, "f(int a, x8[6] b+16)")
    ]


async def test_unopened_documents_answer_empty(client: LanguageClient):
    other = types.TextDocumentIdentifier(uri=(HERE / "nope.fev").resolve().as_uri())
    assert await client.text_document_hover_async(types.HoverParams(text_document=other, position=types.Position(0, 0))) is None
    assert await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=other)) is None


# --- Kernel-aware features: tests/editors/kernel/fevlint.toml names the 6.12.117 fixture.

KERNEL_FEV = HERE / "kernel" / "kernel.fev"
KERNEL_URI = KERNEL_FEV.resolve().as_uri()
KERNEL_TEXT = KERNEL_FEV.read_text()


async def open_kernel_doc(client: LanguageClient):
    """Opens kernel.fev and returns its diagnostics once the kernel's findings arrived."""
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=KERNEL_URI, language_id="fev", version=1, text=KERNEL_TEXT)
        )
    )
    return await wait_kernel(client, 1)


async def wait_kernel(client: LanguageClient, version, code="K201"):
    wanted = lambda p: p.uri == KERNEL_URI and p.version == version and any(d.code == code for d in p.diagnostics)
    return (await next_publish(client, wanted, 20)).diagnostics


def position(line, character):
    return dict(text_document=types.TextDocumentIdentifier(uri=KERNEL_URI), position=types.Position(line, character))


async def test_kernel_diagnostics_and_progress(client: LanguageClient):
    diags = await open_kernel_doc(client)
    assert summary(diags) == [("K201", 1, 0, 8), ("T406", 2, 22, 28)]
    if client_capabilities(client.editor).text_document.publish_diagnostics.code_description_support:
        assert diags[0].code_description.href.endswith("/docs/rules/K201.md")
    else:
        assert diags[0].code_description is None
    assert "6.12.117+deb12-amd64" in diags[0].message
    supports_progress = bool(client_capabilities(client.editor).window.work_done_progress)
    kinds = [type(v).__name__ for reports in client.progress_reports.values() for v in reports]
    assert kinds == (["WorkDoneProgressBegin", "WorkDoneProgressEnd"] if supports_progress else [])
    # Where the client watches files for the server, fevlint.toml and the kernel are watched.
    caps = client_capabilities(client.editor).workspace.did_change_watched_files
    globs = [w["globPattern"] for r in client.registrations for w in r.register_options["watchers"]]
    if caps and caps.dynamic_registration:
        # fevlint.toml, the workspace's scripts of every dialect, then the kernel.
        assert globs[:6] == ["**/fevlint.toml", "**/*.fev", "**/*.dynevents", "**/*.bt", "**/kprobe_events",
                             "**/dynamic_events"], globs
        assert globs[6].endswith("6.12.117+deb12-amd64/**"), globs
    else:
        assert globs == []


async def test_kernel_hover(client: LanguageClient):
    await open_kernel_doc(client)
    function = await client.text_document_hover_async(types.HoverParams(**position(2, 3)))
    text = function.contents.value
    assert "ssize_t vfs_read(struct file * file, char * buf, size_t count, loff_t * pos);" in text
    assert [line.split(":")[0] for line in text.splitlines() if line.startswith("- slot")] == [
        "- slot 0 `rdi`", "- slot 1 `rsi`", "- slot 2 `rdx`", "- slot 3 `rcx`"
    ]
    assert "read by `symbol llseek`" in text
    field = await client.text_document_hover_async(types.HoverParams(**position(2, 17)))
    assert "records the address `&file->f_op->llseek`" in field.contents.value


async def test_kernel_completion(client: LanguageClient):
    await open_kernel_doc(client)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=KERNEL_URI, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(3, 0), types.Position(3, 0)), text="vfs_rea\nvfs_read(x64 file+"
                )
            ],
        )
    )
    functions = await client.text_document_completion_async(types.CompletionParams(**position(3, 7)))
    assert functions.is_incomplete
    first = sorted(functions.items, key=lambda i: i.sort_text)[0]
    assert (first.label, first.detail.startswith("ssize_t vfs_read(")) == ("vfs_read", True)
    members = await client.text_document_completion_async(types.CompletionParams(**position(4, 18)))
    f_op = next(i for i in members.items if i.label == "f_op (16, const struct file_operations *)")
    assert f_op.text_edit.new_text == "16"
    assert f_op.text_edit.range == types.Range(types.Position(4, 18), types.Position(4, 18))


async def test_kernel_inlay_hints(client: LanguageClient):
    await open_kernel_doc(client)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=KERNEL_URI),
            range=types.Range(types.Position(0, 0), types.Position(3, 0)),
        )
    )
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [(2, 28, "→ f_op")]


async def test_kernel_t406_fix_removes_the_warning(client: LanguageClient):
    diags = await open_kernel_doc(client)
    t406 = next(d for d in diags if d.code == "T406")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=KERNEL_URI),
            range=t406.range,
            context=types.CodeActionContext(diagnostics=[t406]),
        )
    )
    add = next(a for a in actions if a.title.startswith("Add `[0]`"))
    assert add.is_preferred
    edits = add.edit.changes[KERNEL_URI]
    assert [(e.range.start.line, e.range.start.character, e.new_text) for e in edits] == [(2, 31, "[0]")]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=KERNEL_URI, version=2),
            content_changes=[types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits],
        )
    )
    after = await wait_kernel(client, 2)
    assert summary(after) == [("K201", 1, 0, 8)]
