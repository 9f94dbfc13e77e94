-- Headless Neovim 0.11: diagnostics by block (`fevlint/diagnosticBlocks`, declared by
-- editors/nvim/lsp/fevlint.lua and kept by editors/nvim/lua/fevlint/blocks.lua) after
-- random edits are what `fevlint check` finds in the buffer's text.
--
--   FEVLINT=target/debug/fevlint nvim --headless --clean --cmd 'set rtp^=editors/nvim' \
--     -l tests/editors/nvim_blocks_test.lua
--
-- A generated 1,800-line script (several blocks of 500 lines) in a folder whose
-- fevlint.toml names the 6.12.117 fixture kernel: syntax, name and kernel findings. Then
-- 40 random edits through the buffer (a character typed or deleted, lines inserted,
-- deleted or pasted), a block emptied, the last blocks deleted; after each, `vim.diagnostic.get(buf)` must become exactly what
-- `fevlint check --format json` reports for the buffer's text (code, range, severity,
-- message). Also: nothing in the client's publishDiagnostics namespace, the findings in
-- several block namespaces, a quick fix applied through vim.lsp.buf.code_action, and the
-- blocks cleared when the client stops. Prints one JSON report; exit 0 when every check
-- passed. Run by server/tests/lsp_editors.rs.

local timeout = 30000
local report = { nvim = tostring(vim.version()), checks = {}, failures = {} }

local function check(name, ok, detail)
  table.insert(report.checks, name)
  if not ok then
    table.insert(report.failures, name .. ': ' .. vim.inspect(detail))
  end
  return ok
end

local function finish()
  io.stdout:write(vim.json.encode(report) .. '\n')
  io.stdout:flush()
  for _, f in ipairs(report.failures) do
    io.stderr:write('FAIL ' .. f .. '\n')
  end
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop()
  end
  vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 20)
  vim.cmd(#report.failures == 0 and 'qall!' or 'cquit 1')
end

local root = vim.fn.getcwd()
local fevlint = assert(vim.env.FEVLINT, '$FEVLINT names the fevlint binary')
local toml = { 'kernels = ["' .. root .. '/fixtures/kernels/6.12.117+deb12-amd64"]' }
local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
vim.fn.writefile(toml, dir .. '/fevlint.toml')
-- Where the buffer's text is written for `fevlint check` (the same settings; not the
-- edited file, so that the server sees no change on disk).
local cdir = vim.fn.tempname()
vim.fn.mkdir(cdir, 'p')
vim.fn.writefile(toml, cdir .. '/fevlint.toml')

local seed = 12345
local function rand(n) -- deterministic (Park-Miller)
  seed = (seed * 16807) % 2147483647
  return seed % n
end

local pieces = {
  'vfs_read(x64 a0)',
  'vfs_raed(x64 file)',
  'vfs_read(symbol llseek+16[0]+16)',
  'ip_rcv(x64 skb, x86 dev)',
  'do_IRQ(int counter+8=0xffffffff82354c18)',
  'tcp_sendmsg(x64 sk, x64 msg, u64 size)',
  'ksys_write(u32 fd, x64 buf, u64 count)',
  '# a comment',
  '',
  'schedule(',
}
local function piece(i)
  local p = pieces[rand(#pieces) + 1]
  if rand(3) == 0 then
    p = p:gsub('^([%w_]+)', '%1_' .. i) -- unknown functions (K201), not duplicates
  end
  return p
end
local text = {}
for i = 1, 1800 do
  text[i] = piece(i)
end
local path = dir .. '/blocks.fev'
vim.fn.writefile(text, path)

vim.g.fevlint_treesitter_max_lines = 1000
vim.cmd.edit(vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
check('tree-sitter highlighting starts (ftplugin)', vim.treesitter.highlighter.active[buf] ~= nil)
local attached = vim.wait(timeout, function() return #vim.lsp.get_clients({ bufnr = buf, name = 'fevlint' }) > 0 end, 20)
if not check('fevlint client attached', attached) then return finish() end
local client = vim.lsp.get_clients({ bufnr = buf, name = 'fevlint' })[1]
-- Over `fevlint_treesitter_max_lines` lines, the server's semantic tokens highlight alone.
local stopped = vim.wait(timeout, function() return vim.treesitter.highlighter.active[buf] == nil end, 20)
check('tree-sitter highlighting stops on a large script once fevlint attaches', stopped)

local severities = { error = 1, warning = 2, info = 3 }

-- What `fevlint check` reports for the buffer's text now, as sorted keys.
local function expected()
  local file = cdir .. '/blocks.fev'
  vim.fn.writefile(vim.api.nvim_buf_get_lines(buf, 0, -1, false), file)
  local out = vim.system({ fevlint, 'check', '--format', 'json', file }, { text = true }):wait()
  local ok, v = pcall(vim.json.decode, out.stdout)
  if not ok then
    return nil, out.stderr
  end
  local keys = {}
  for _, d in ipairs(v.diagnostics) do
    keys[#keys + 1] = ('%s %d:%d-%d:%d %d %s'):format(d.code, d.line - 1, d.column - 1, d.end_line - 1,
      d.end_column - 1, severities[d.severity] or 0, d.message)
  end
  table.sort(keys)
  return keys
end

-- What Neovim shows now, as the same keys (the message's first line: Neovim's notes
-- follow it).
local function shown()
  local keys = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    keys[#keys + 1] = ('%s %d:%d-%d:%d %d %s'):format(d.code, d.lnum, d.col, d.end_lnum, d.end_col, d.severity,
      (d.message:gsub('\n.*', '')))
  end
  table.sort(keys)
  return keys
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i] ~= b[i] then return false end
  end
  return true
end

local function difference(want, got)
  local w, g = {}, {}
  for _, k in ipairs(want) do w[k] = (w[k] or 0) + 1 end
  for _, k in ipairs(got) do g[k] = (g[k] or 0) + 1 end
  local missing, extra = {}, {}
  for k, n in pairs(w) do if (g[k] or 0) < n then missing[#missing + 1] = k end end
  for k, n in pairs(g) do if (w[k] or 0) < n then extra[#extra + 1] = k end end
  return { missing = vim.list_slice(missing, 1, 5), extra = vim.list_slice(extra, 1, 5) }
end

-- Waits until Neovim shows what `fevlint check` finds; true when it does.
local function agrees(what)
  local want, err = expected()
  if not check(what .. ': fevlint check ran', want ~= nil, err) then return false end
  local ok = vim.wait(timeout, function() return same(shown(), want) end, 20)
  return check(what .. ': Neovim shows what fevlint check finds', ok, difference(want, shown()))
end

-- The kernel's findings first (the kernel loads after the open).
local kernel = vim.wait(120000, function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if tostring(d.code):match('^K') then return true end
  end
  return false
end, 50)
if not check('kernel findings arrived', kernel) then return finish() end
if not agrees('opened') then return finish() end
report.findings = #vim.diagnostic.get(buf)

for k = 1, 40 do
  local n = vim.api.nvim_buf_line_count(buf)
  local row = rand(n)
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  local what = rand(6)
  if what == 0 then
    local col = rand(#line + 1)
    vim.api.nvim_buf_set_text(buf, row, col, row, col, { 'x' })
  elseif what == 1 and #line > 0 then
    local col = rand(#line)
    vim.api.nvim_buf_set_text(buf, row, col, row, col + 1, { '' })
  elseif what == 2 then
    vim.api.nvim_buf_set_lines(buf, row, row, false, { piece(10000 + k) })
  elseif what == 3 and n > 1 then
    vim.api.nvim_buf_set_lines(buf, row, row + 1, false, {})
  elseif what == 4 then
    vim.api.nvim_buf_set_lines(buf, row, row, false, { piece(20000 + k), piece(30000 + k), piece(40000 + k) })
  else
    vim.api.nvim_buf_set_lines(buf, row, row + 1, false, { piece(50000 + k) })
  end
  if not agrees('edit ' .. k) then return finish() end
end

-- A block left without findings (its lines made comments), then the document cut to fewer
-- blocks (its end deleted): those blocks go.
local comments = {}
for i = 1, 500 do comments[i] = '# c' end
vim.api.nvim_buf_set_lines(buf, 0, 500, false, comments)
if not agrees('a block emptied') then return finish() end
vim.api.nvim_buf_set_lines(buf, 1200, -1, false, {})
if not agrees('the last blocks deleted') then return finish() end
vim.api.nvim_buf_set_lines(buf, 0, 500, false, vim.list_slice(text, 1, 500))

-- Every finding is in a block namespace: none in the client's publish namespace, and the
-- blocks of several namespaces hold them.
local push = vim.lsp.diagnostic.get_namespace(client.id, false)
check('nothing published the standard way', #vim.diagnostic.get(buf, { namespace = push }) == 0)
local used = 0
for _, ns in ipairs(require('fevlint.blocks').namespaces(client.id)) do
  if #vim.diagnostic.get(buf, { namespace = ns }) > 0 then used = used + 1 end
end
report.blocks = used
check('the findings are in several blocks', used >= 2, used)
local d = vim.diagnostic.get(buf)[1]
check('the LSP diagnostic is kept in user_data', d and d.user_data and d.user_data.lsp and d.user_data.lsp.code == d.code, d)

-- A quick fix through vim.lsp.buf.code_action, on an S003 line at the end.
vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'do_IRQ(int counter+8=0xffffffff82354c18)' })
local last = vim.api.nvim_buf_line_count(buf) - 1
vim.wait(timeout, function()
  return #vim.tbl_filter(function(x) return x.code == 'S003' end, vim.diagnostic.get(buf, { lnum = last })) > 0
end, 20)
vim.api.nvim_win_set_cursor(0, { last + 1, 19 })
vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.title:find('^Remove') ~= nil end })
local fixed = vim.wait(timeout, function()
  return vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1] == 'do_IRQ(int counter=0xffffffff82354c18)'
end, 20)
check('the S003 fix applied through vim.lsp.buf.code_action', fixed, vim.api.nvim_buf_get_lines(buf, last, last + 1, false))
agrees('after the fix')

-- The client stops: its blocks go with it.
client:stop()
local cleared = vim.wait(timeout, function() return #vim.diagnostic.get(buf) == 0 end, 20)
check('the blocks are cleared when the client stops', cleared, #vim.diagnostic.get(buf))

finish()
