-- fevlint's diagnostics by block (`fevlint/diagnosticBlocks`, a fevlint extension of LSP
-- that lsp/fevlint.lua declares): the server sends an open document's diagnostics in
-- blocks of `blockLines` lines and, after an edit, only the blocks that changed. Each
-- block goes into a diagnostic namespace of its own, so an edit makes Neovim decode,
-- convert and show one block's findings, not the whole document's (thousands on a large
-- generated script: 80 ms and more of Neovim's time per edit with a plain publish).
--
-- Each diagnostic is converted exactly as Neovim's own publishDiagnostics handler does
-- (runtime/lua/vim/lsp/diagnostic.lua, 0.11): severity, code, source, message, tags,
-- UTF-16 (or the negotiated encoding) to byte columns, the LSP diagnostic kept in
-- `user_data.lsp`. `vim.diagnostic.get(bufnr)` returns what a publish would have set.

local M = {}

local api = vim.api

-- Namespace ids by client and block index.
local namespaces = {}

-- Per client, per buffer: the block indexes holding diagnostics.
local held = {}

local function namespace(client_id, k)
  local by_client = namespaces[client_id]
  if not by_client then
    by_client = {}
    namespaces[client_id] = by_client
  end
  local ns = by_client[k]
  if not ns then
    ns = api.nvim_create_namespace(('fevlint.blocks.%d.%d'):format(client_id, k))
    by_client[k] = ns
  end
  return ns
end

--- Every namespace fevlint's blocks use for `client_id` (all clients when nil).
function M.namespaces(client_id)
  local out = {}
  for id, by_client in pairs(namespaces) do
    if client_id == nil or id == client_id then
      for _, ns in pairs(by_client) do
        out[#out + 1] = ns
      end
    end
  end
  return out
end

local Unnecessary = vim.lsp.protocol.DiagnosticTag.Unnecessary
local Deprecated = vim.lsp.protocol.DiagnosticTag.Deprecated

local function tags(d)
  local out
  for _, tag in ipairs(d.tags or {}) do
    if tag == Unnecessary then
      out = out or {}
      out.unnecessary = true
    elseif tag == Deprecated then
      out = out or {}
      out.deprecated = true
    end
  end
  return out
end

-- The block's LSP diagnostics as vim.diagnostic's, reading only the lines they are on.
local function convert(diagnostics, bufnr, encoding)
  local loaded = api.nvim_buf_is_loaded(bufnr)
  local lines = {}
  local function line(l)
    local s = lines[l]
    if s == nil then
      s = loaded and api.nvim_buf_get_lines(bufnr, l, l + 1, false)[1] or ''
      lines[l] = s
    end
    return s
  end
  local out = {}
  for i, d in ipairs(diagnostics) do
    local start, _end = d.range.start, d.range['end']
    local message = d.message
    if type(message) ~= 'string' then
      message = message.value
    end
    out[i] = {
      lnum = start.line,
      col = vim.str_byteindex(line(start.line), encoding, start.character, false),
      end_lnum = _end.line,
      end_col = vim.str_byteindex(line(_end.line), encoding, _end.character, false),
      severity = d.severity,
      message = message,
      source = d.source,
      code = d.code,
      _tags = tags(d),
      user_data = { lsp = d },
    }
  end
  return out
end

local function clear(client_id, bufnr)
  local by_buf = held[client_id]
  local blocks = by_buf and by_buf[bufnr]
  if not blocks then
    return
  end
  by_buf[bufnr] = nil
  if api.nvim_buf_is_valid(bufnr) then
    for k in pairs(blocks) do
      vim.diagnostic.reset(namespace(client_id, k), bufnr)
    end
  end
end

--- The handler of `fevlint/diagnosticBlocks`.
function M.handler(_, params, ctx)
  local client_id = ctx.client_id
  local fname = vim.uri_to_fname(params.uri)
  local any = false
  for _, b in ipairs(params.blocks) do
    if #b.diagnostics > 0 then
      any = true
      break
    end
  end
  if not any and vim.fn.bufexists(fname) == 0 then
    return
  end
  local bufnr = vim.fn.bufadd(fname)
  if params.blockCount == 0 then
    return clear(client_id, bufnr)
  end
  local client = vim.lsp.get_client_by_id(client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  held[client_id] = held[client_id] or {}
  local blocks = held[client_id][bufnr] or {}
  held[client_id][bufnr] = blocks
  for _, b in ipairs(params.blocks) do
    local k = b.index
    if #b.diagnostics > 0 then
      blocks[k] = true
      vim.diagnostic.set(namespace(client_id, k), bufnr, convert(b.diagnostics, bufnr, encoding))
    elseif blocks[k] then
      blocks[k] = nil
      vim.diagnostic.reset(namespace(client_id, k), bufnr)
    end
  end
  for k in pairs(blocks) do
    if k >= params.blockCount then
      blocks[k] = nil
      vim.diagnostic.reset(namespace(client_id, k), bufnr)
    end
  end
end

-- A client that stops or leaves a buffer takes its blocks with it, as Neovim's own
-- handler's namespace is reset then.
api.nvim_create_autocmd('LspDetach', {
  group = api.nvim_create_augroup('fevlint.blocks', { clear = true }),
  callback = function(args)
    clear(args.data.client_id, args.buf)
  end,
})

return M
