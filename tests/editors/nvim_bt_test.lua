-- Headless Neovim 0.11 test of editors/nvim for bpftrace scripts: a `*.bt` file gets the
-- `bpftrace` filetype, tree-sitter highlighting (parser/bpftrace.so from grammar-bpftrace/,
-- queries/bpftrace/) and fevlint's language server, whose diagnostics arrive (bpftrace's
-- own syntax error, S010, needs no kernel).
--
--   FEVLINT=target/debug/fevlint nvim --headless --clean --cmd 'set rtp^=editors/nvim' \
--     -l tests/editors/nvim_bt_test.lua
--
-- Prints one JSON report; exit 0 when every check passed. Run by server/tests/lsp_editors.rs.

local report = { nvim = tostring(vim.version()), checks = {}, failures = {} }
local function check(name, ok, detail)
  table.insert(report.checks, name)
  if not ok then
    table.insert(report.failures, name .. ': ' .. vim.inspect(detail))
  end
  return ok
end

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
local path = dir .. '/old.bt'
vim.fn.writefile({ 'kprobe:vfs_read { @x = ; }' }, path)
vim.cmd.edit(vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
check('filetype from ftdetect', vim.bo[buf].filetype == 'bpftrace', vim.bo[buf].filetype)
-- Tree-sitter: parser/bpftrace.so and queries/bpftrace/highlights.scm from the runtimepath.
local hl_path = dir .. '/highlight.bt'
vim.fn.writefile({ 'kprobe:vfs_read /pid == 1/ { @reads[comm] = count(); $f = (struct file *)arg0; }' }, hl_path)
vim.cmd.edit(vim.fn.fnameescape(hl_path))
local hl = vim.api.nvim_get_current_buf()
check('tree-sitter highlighter active', vim.treesitter.highlighter.active[hl] ~= nil)
-- Headless there is no redraw to drive the highlighter's parse: do what it would do.
check('no syntax errors in the tree', not vim.treesitter.get_parser(hl):parse()[1]:root():has_error())
for _, want in ipairs({
  { 0, 'keyword' }, { 8, 'function' }, { 17, 'variable.builtin' }, { 24, 'number' },
  { 29, 'variable' }, { 36, 'variable.builtin' }, { 44, 'function.builtin' },
  { 59, 'keyword' }, { 66, 'type' }, { 73, 'variable.builtin' },
}) do
  local got = vim.tbl_map(function(c) return c.capture end, vim.treesitter.get_captures_at_pos(hl, 0, want[1]))
  check('capture at column ' .. want[1], vim.tbl_contains(got, want[2]), { want = want[2], got = got })
end
vim.cmd.buffer(buf)

local attached = vim.wait(15000, function() return #vim.lsp.get_clients({ bufnr = buf, name = 'fevlint' }) > 0 end, 20)
check('fevlint attached', attached)
local got = vim.wait(15000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
local d = vim.diagnostic.get(buf)[1] or {}
check('S010 from the server', got and d.code == 'S010', d)
check('at the `;`', d.lnum == 0 and d.col == 23, d)

io.stdout:write(vim.json.encode(report) .. '\n')
for _, f in ipairs(report.failures) do
  io.stderr:write('FAIL ' .. f .. '\n')
end
for _, c in ipairs(vim.lsp.get_clients()) do
  c:stop()
end
vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 20)
vim.cmd(#report.failures == 0 and 'qall!' or 'cquit 1')
