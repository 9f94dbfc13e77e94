-- Headless Neovim 0.11 test of editors/nvim for compiled BPF objects: a `*.bpf.c` under a
-- fevlint.toml that names its object gets fevlint's language server (other C files do
-- not), the object's findings at the C line and column, and a hover there.
--
--   FEVLINT=target/debug/fevlint nvim --headless --clean --cmd 'set rtp^=editors/nvim' \
--     -l tests/editors/nvim_bpf_test.lua WORKSPACE
--
-- WORKSPACE holds drift.bpf.c, drift.bpf.o and the fevlint.toml, made by
-- server/tests/lsp_bpf.rs. Prints one JSON report; exit 0 when every check passed.

local dir = assert(_G.arg[1], 'usage: nvim_bpf_test.lua WORKSPACE')
local report = { nvim = tostring(vim.version()), checks = {}, failures = {} }
local function check(name, ok, detail)
  table.insert(report.checks, name)
  if not ok then
    table.insert(report.failures, name .. ': ' .. vim.inspect(detail))
  end
  return ok
end

-- Another C file of the same workspace does not start the server.
vim.fn.writefile({ 'int main(void) { return 0; }' }, dir .. '/other.c')
vim.cmd.edit(vim.fn.fnameescape(dir .. '/other.c'))
local other = vim.api.nvim_get_current_buf()
vim.wait(500)
check('no server for other C files', #vim.lsp.get_clients({ bufnr = other, name = 'fevlint' }) == 0)

vim.cmd.edit(vim.fn.fnameescape(dir .. '/drift.bpf.c'))
local buf = vim.api.nvim_get_current_buf()
check('filetype c', vim.bo[buf].filetype == 'c', vim.bo[buf].filetype)
local attached = vim.wait(15000, function() return #vim.lsp.get_clients({ bufnr = buf, name = 'fevlint' }) > 0 end, 20)
check('fevlint attached to the .bpf.c', attached)

-- The line and column of the kprobe 6.12 cannot attach to.
local needle = '"kprobe/__alloc_pages"'
local lnum, col
for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
  local at = line:find(needle, 1, true)
  if at then
    lnum, col = i - 1, at - 1
  end
end
local function b611()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == 'B611' and d.message:find('__alloc_pages', 1, true) then
      return d
    end
  end
end
local got = vim.wait(60000, function() return b611() ~= nil end, 50)
local d = b611() or {}
check('B611 from the object', got, vim.diagnostic.get(buf))
check('at the SEC string', d.lnum == lnum and d.col == col, { d = d, lnum = lnum, col = col })
check('naming the kernel', (d.message or ''):find('6.12.117+deb12-amd64', 1, true) ~= nil, d.message)

local params = { textDocument = vim.lsp.util.make_text_document_params(buf), position = { line = lnum, character = col + 3 } }
local answers = vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, 10000) or {}
local text = ''
for _, a in pairs(answers) do
  if a.result and a.result.contents then
    text = text .. (a.result.contents.value or '')
  end
end
check('hover: found on 6.1', text:find('`6.1.0-56-amd64`: `__alloc_pages` found', 1, true) ~= nil, text)
check('hover: missing on 6.12', text:find('`6.12.117+deb12-amd64`: `__alloc_pages` does not exist', 1, true) ~= nil, text)

io.stdout:write(vim.json.encode(report) .. '\n')
for _, f in ipairs(report.failures) do
  io.stderr:write('FAIL ' .. f .. '\n')
end
for _, c in ipairs(vim.lsp.get_clients()) do
  c:stop()
end
vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 20)
vim.cmd(#report.failures == 0 and 'qall!' or 'cquit 1')
