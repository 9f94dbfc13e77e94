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


async def wait_version(client: LanguageClient, version):
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
        if params.uri == URI and params.version == version:
            return params.diagnostics


def summary(diags):
    return [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in diags]


async def test_diagnostics(client: LanguageClient):
    diags = await open_doc(client)
    assert summary(diags) == [("S001", 1, 16, 19), ("S003", 2, 18, 20)]
    s001 = diags[0]
    assert s001.source == "fevlint"
    assert s001.severity == types.DiagnosticSeverity.Error
    assert s001.code_description.href.endswith("/docs/rules/S001.md")
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
    tokens = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=doc))
    legend = client.init_result.capabilities.semantic_tokens_provider.legend.token_types
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
    await wait_version(client, 2)
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
