-- Headless Neovim 0.11 test of editors/nvim, used exactly as a user would: the plugin
-- on the runtimepath, `vim.lsp.enable('fevlint')`, `$FEVLINT` naming the binary.
--
--   FEVLINT=target/debug/fevlint nvim --headless --clean --cmd 'set rtp^=editors/nvim' \
--     -l tests/editors/nvim_test.lua tests/editors/problems.fev
--
-- Prints one JSON report; exit 0 when every check passed, 1 otherwise (the failures
-- are in the report and on stderr). Run by server/tests/lsp_editors.rs.

local file = assert(_G.arg[1], 'usage: nvim_test.lua FILE.fev')
local timeout = 15000
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

-- Copy the fixture: the test edits the buffer.
local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
local path = dir .. '/problems.fev'
vim.fn.writefile(vim.fn.readfile(file), path)

vim.cmd.edit(vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
check('filetype from ftdetect', vim.bo[buf].filetype == 'fev', vim.bo[buf].filetype)
check('commentstring from ftplugin', vim.bo[buf].commentstring == '# %s', vim.bo[buf].commentstring)

-- Tree-sitter: parser/fev.so and queries/fev/highlights.scm from the runtimepath.
check('tree-sitter highlighter active', vim.treesitter.highlighter.active[buf] ~= nil)
-- Headless there is no redraw to drive the highlighter's parse: do what it would do.
vim.treesitter.get_parser(buf):parse()
check('no syntax errors in the tree for line 0', not vim.treesitter.get_parser(buf):parse()[1]:root():child(0):has_error())
local function captures(row, col)
  return vim.tbl_map(function(c) return c.capture end, vim.treesitter.get_captures_at_pos(buf, row, col))
end
check('comment capture', vim.tbl_contains(captures(0, 0), 'comment'), captures(0, 0))
check('function capture', vim.tbl_contains(captures(1, 0), 'function'), captures(1, 0))
check('type capture', vim.tbl_contains(captures(1, 7), 'type.builtin'), captures(1, 7))
check('parameter capture', vim.tbl_contains(captures(1, 11), 'variable.parameter'), captures(1, 11))
check('number capture', vim.tbl_contains(captures(2, 21), 'number'), captures(2, 21))

local attached = vim.wait(timeout, function() return #vim.lsp.get_clients({ bufnr = buf, name = 'fevlint' }) > 0 end, 20)
if not check('fevlint client attached', attached) then return finish() end
local client = vim.lsp.get_clients({ bufnr = buf, name = 'fevlint' })[1]

local function diags()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(out, { code = d.code, lnum = d.lnum, col = d.col, end_col = d.end_col, source = d.source,
      message = d.message, related = d.user_data and d.user_data.lsp and d.user_data.lsp.relatedInformation })
  end
  table.sort(out, function(a, b) return a.lnum < b.lnum end)
  return out
end
local function codes()
  return table.concat(vim.tbl_map(function(d) return d.code .. '@' .. d.lnum .. ':' .. d.col end, diags()), ' ')
end

vim.wait(timeout, function() return #diags() == 2 end, 20)
report.diagnostics = diags()
check('exactly S001 at x86 and S003 at +8', codes() == 'S001@1:16 S003@2:18', codes())
local s001 = report.diagnostics[1] or {}
local notes = s001.message or ''
for _, r in ipairs(s001.related or {}) do notes = notes .. '\n' .. r.message end
check('S001 note quotes the kernel', notes:find("kernel: Unexpected token 'x86' for COMMA state", 1, true) ~= nil, s001)
check('S001 source', s001.source == 'fevlint', s001.source)
check('S001 ends after x86', s001.end_col == 19, s001.end_col)

-- Hover on the field `read` of `__vfs_read(symbol read+40[0]+16)`.
local function request(method, params)
  local res = vim.lsp.buf_request_sync(buf, method, params, timeout) or {}
  local r = res[client.id] or {}
  return r.result, r.err
end
local uri = vim.uri_from_bufnr(buf)
local hover = request('textDocument/hover', { textDocument = { uri = uri }, position = { line = 3, character = 19 } })
local hv = hover and hover.contents and hover.contents.value or ''
report.hover = hv
check('hover names the register', hv:find('`rdi`', 1, true) ~= nil, hv)
check('hover says what is read', hv:find('*(u64 *)(param0 + 40) + 16', 1, true) ~= nil, hv)

-- Type a half line through the buffer (incremental sync), complete in it.
vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'vfs_read(int fd, x' })
vim.wait(timeout, function() return #diags() == 3 end, 20)
check('half-typed line is an error', codes() == 'S001@1:16 S003@2:18 S001@4:17', codes())
local items = request('textDocument/completion', { textDocument = { uri = uri }, position = { line = 4, character = 18 } })
items = items and (items.items or items) or {}
local labels = vim.tbl_map(function(i) return i.label end, items)
report.completion = labels
check('completion offers x64, NULL, unsigned', vim.tbl_contains(labels, 'x64') and vim.tbl_contains(labels, 'NULL')
  and vim.tbl_contains(labels, 'unsigned'), labels)
local x64
for _, it in ipairs(items) do if it.label == 'x64' then x64 = it end end
check('completion replaces the typed `x`', x64 and x64.textEdit and x64.textEdit.range.start.character == 17, x64)
vim.api.nvim_buf_set_lines(buf, 4, 5, false, {})
vim.wait(timeout, function() return #diags() == 2 end, 20)
check('deleting the line clears its error', codes() == 'S001@1:16 S003@2:18', codes())

-- The S003 quick fix, applied the way vim.lsp.buf.code_action() applies it.
local actions = request('textDocument/codeAction', {
  textDocument = { uri = uri },
  range = { start = { line = 2, character = 18 }, ['end'] = { line = 2, character = 20 } },
  context = { diagnostics = {} },
}) or {}
local titles, remove = {}, nil
for _, a in ipairs(actions) do
  table.insert(titles, a.title)
  if a.title:find('^Remove') then remove = a end
end
report.code_actions = titles
check('S003 remove action offered', remove ~= nil and remove.isPreferred == true, titles)
check('suppress action offered', vim.tbl_contains(titles, 'Suppress S003 on this line'), titles)
if remove then
  vim.lsp.util.apply_workspace_edit(remove.edit, client.offset_encoding)
  vim.wait(timeout, function() return #diags() == 1 end, 20)
  check('fixed line', vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1] == 'do_IRQ(int counter=0xffffffff82354c18)',
    vim.api.nvim_buf_get_lines(buf, 2, 3, false))
  check('S003 gone after the fix', codes() == 'S001@1:16', codes())
end

-- Document symbols: one per definition, fields as children.
local symbols = request('textDocument/documentSymbol', { textDocument = { uri = uri } }) or {}
report.symbols = vim.tbl_map(function(s) return s.name end, symbols)
check('symbols', table.concat(report.symbols, ' ') == 'ip_rcv do_IRQ __vfs_read', report.symbols)

-- Kernel-aware features: a second buffer in a folder whose fevlint.toml names the
-- 6.12.117 fixture kernel.
local kdir = vim.fn.tempname()
vim.fn.mkdir(kdir, 'p')
local root = vim.fn.getcwd()
vim.fn.writefile({ 'kernels = ["' .. root .. '/fixtures/kernels/6.12.117+deb12-amd64"]' }, kdir .. '/fevlint.toml')
vim.fn.writefile(vim.fn.readfile(root .. '/tests/editors/kernel/kernel.fev'), kdir .. '/kernel.fev')
vim.cmd.edit(vim.fn.fnameescape(kdir .. '/kernel.fev'))
local kbuf = vim.api.nvim_get_current_buf()
vim.wait(timeout, function() return #vim.lsp.get_clients({ bufnr = kbuf, name = 'fevlint' }) > 0 end, 20)
local function kcodes()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(kbuf)) do table.insert(out, d.code .. '@' .. d.lnum .. ':' .. d.col) end
  table.sort(out)
  return table.concat(out, ' ')
end
vim.wait(30000, function() return kcodes() == 'K201@1:0 T406@2:22' end, 50)
check('kernel diagnostics K201 and T406', kcodes() == 'K201@1:0 T406@2:22', kcodes())
local kclient = vim.lsp.get_clients({ bufnr = kbuf, name = 'fevlint' })[1]
local kres = kclient and vim.lsp.buf_request_sync(kbuf, 'textDocument/hover',
  { textDocument = { uri = vim.uri_from_bufnr(kbuf) }, position = { line = 2, character = 3 } }, timeout) or {}
local khover = ((kres[kclient and kclient.id or 0] or {}).result or {}).contents
local khv = khover and khover.value or ''
report.kernel_hover = khv
check('kernel hover lists the registers', khv:find('slot 0 `rdi`: `struct file *` file', 1, true) ~= nil
  and khv:find('slot 3 `rcx`', 1, true) ~= nil, khv)

-- The mainline dialect: a *.dynevents file gets its filetype, the client attaches, the
-- server's diagnostics appear.
local mpath = dir .. '/problems.dynevents'
vim.fn.writefile(vim.fn.readfile(vim.fn.fnamemodify(file, ':r') .. '.dynevents'), mpath)
vim.cmd.edit(vim.fn.fnameescape(mpath))
local mbuf = vim.api.nvim_get_current_buf()
check('filetype dynevents from ftdetect', vim.bo[mbuf].filetype == 'dynevents', vim.bo[mbuf].filetype)
check('commentstring from ftplugin/dynevents', vim.bo[mbuf].commentstring == '# %s', vim.bo[mbuf].commentstring)
local mattached = vim.wait(timeout, function() return #vim.lsp.get_clients({ bufnr = mbuf, name = 'fevlint' }) > 0 end, 20)
check('fevlint client attached to the .dynevents buffer', mattached)
local function mcodes()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(mbuf)) do table.insert(out, d.code .. '@' .. d.lnum .. ':' .. d.col) end
  return table.concat(out, ' ')
end
vim.wait(timeout, function() return mcodes() ~= '' end, 20)
check('.dynevents diagnostics', mcodes() == 'S001@1:24', mcodes())

finish()
