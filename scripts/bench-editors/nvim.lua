-- Edit -> squiggle in headless Neovim 0.11 with its default settings and editors/nvim on
-- the runtimepath (as a user installs the plugin), driven by scripts/bench-editors.py.
--
--   FEVLINT=BIN nvim --headless --clean --cmd 'set rtp^=editors/nvim' \
--     -l scripts/bench-editors/nvim.lua OUT.json N SCRIPT...
--
-- Each SCRIPT (in a folder whose fevlint.toml names the kernel) is opened in turn and
-- left until its kernel diagnostics are in and have been still for two seconds. Then N
-- one-character edits at random definition lines: an `x` typed at the end of the
-- function's name (`vfs_read(` -> `vfs_readx(`: the findings of that line change), then
-- deleted again, each through the buffer as insert mode changes it. Each edit is timed
-- with vim.uv.hrtime from just before the change to the DiagnosticChanged autocmd after
-- which `vim.diagnostic.get` shows that line's findings changed. The next edit comes
-- 300-500 ms after the previous one's keystroke or 100 ms after its squiggle, whichever
-- is later (a person typing a character, then pausing): whatever the editor asks the
-- server for after an edit (semantic tokens 200 ms later) competes with the next one.
-- Writes {nvim, scripts: [{file, lines, findings, edits: [ms, ...], timeouts, cpu_per_edit}]}
-- (cpu_per_edit: Neovim's CPU time in ms per edit over the edits and pauses, getrusage).

local out, n = _G.arg[1], tonumber(_G.arg[2])
local files = vim.list_slice(_G.arg, 3)
local uv = vim.uv or vim.loop
local report = { nvim = tostring(vim.version()), scripts = {} }

local function fail(msg)
  io.stderr:write('bench nvim: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

-- What DiagnosticChanged last showed for the watched line, and when.
local watch = nil

-- The findings of line `lnum` among `diags`, as one string.
local function line_key(diags, lnum)
  local parts = {}
  for _, d in ipairs(diags) do
    if d.lnum == lnum then
      parts[#parts + 1] = tostring(d.code) .. ':' .. d.col .. ':' .. d.message
    end
  end
  table.sort(parts)
  return table.concat(parts, '|')
end

vim.api.nvim_create_autocmd('DiagnosticChanged', {
  callback = function(args)
    local now = uv.hrtime()
    if watch and not watch.done and args.buf == watch.buf then
      if line_key(vim.diagnostic.get(args.buf, { lnum = watch.lnum }), watch.lnum) ~= watch.before then
        watch.done = now
      end
    end
  end,
})

-- FEVLINT_BENCH_NO_TOKENS=1 (to see where the time goes): no semantic tokens requests.
if os.getenv('FEVLINT_BENCH_NO_TOKENS') == '1' then
  vim.api.nvim_create_autocmd('LspAttach', {
    callback = function(args)
      local c = vim.lsp.get_client_by_id(args.data.client_id)
      if c then vim.lsp.semantic_tokens.stop(args.buf, c.id) end
    end,
  })
end

-- FEVLINT_BENCH_PROFILE=1 (to see where the time goes): what Neovim's own handling of each
-- large message costs, as events {what, start, end} (vim.uv.hrtime, ns) in the report's
-- `profile`: `decode` (vim.json.decode of a body over 64 KB), `handler` (the
-- publishDiagnostics handler: conversion and vim.diagnostic.set), `set`
-- (vim.diagnostic.set alone), `edit` and `squiggle` (the bench's own). The same clock as
-- scripts/bench-editors/lsp-trace.py's (CLOCK_MONOTONIC).
local profile = nil
if os.getenv('FEVLINT_BENCH_PROFILE') == '1' then
  profile = {}
  local function timed(what, f, big)
    return function(...)
      local t0 = uv.hrtime()
      local r = { f(...) }
      if not big or big(...) then profile[#profile + 1] = { what, t0, uv.hrtime() } end
      return unpack(r)
    end
  end
  vim.json.decode = timed('decode', vim.json.decode, function(body) return #body > 65536 end)
  vim.diagnostic.set = timed('set', vim.diagnostic.set)
  local publish = 'textDocument/publishDiagnostics'
  vim.lsp.handlers[publish] = timed('handler', vim.lsp.handlers[publish])
end

-- FEVLINT_BENCH_NO_TS=1 (to see where the time goes): no tree-sitter highlighting.
if os.getenv('FEVLINT_BENCH_NO_TS') == '1' then
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'fev',
    callback = function(args) vim.schedule(function() pcall(vim.treesitter.stop, args.buf) end) end,
  })
end

local rng_state = 0x2545F491 % 2147483647
local function rand(k) -- deterministic (Park-Miller), the same edits in every run
  rng_state = (rng_state * 16807) % 2147483647
  return rng_state % k
end

for _, file in ipairs(files) do
  vim.cmd.edit(vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  if not vim.wait(30000, function() return #vim.lsp.get_clients({ bufnr = buf, name = 'fevlint' }) > 0 end, 20) then
    return fail('the fevlint client never attached to ' .. file)
  end
  -- Wait for the kernel's findings, then for two quiet seconds.
  local changed = uv.hrtime()
  local au = vim.api.nvim_create_autocmd('DiagnosticChanged', { callback = function() changed = uv.hrtime() end })
  local ok = vim.wait(300000, function()
    local kernel = false
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if tostring(d.code):match('^[KTA]') then kernel = true break end
    end
    return kernel and uv.hrtime() - changed > 2e9
  end, 50)
  vim.api.nvim_del_autocmd(au)
  if not ok then return fail('no kernel diagnostics for ' .. file) end

  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local defs = {}
  for i, l in ipairs(lines) do
    local name = l:match('^([%w_]+)%(')
    if name then defs[#defs + 1] = { i - 1, #name } end
  end
  local entry = { file = file, lines = #lines, findings = #vim.diagnostic.get(buf), edits = {}, timeouts = 0 }
  local k = 0
  -- Neovim's own CPU time over the edits (user + system, from getrusage: what the load
  -- of other processes does not inflate), per edit.
  local function cpu()
    local r = uv.getrusage()
    return (r.utime.sec + r.stime.sec) * 1e3 + (r.utime.usec + r.stime.usec) / 1e3
  end
  local cpu_start = cpu()
  while k < n do
    local def = defs[rand(#defs) + 1]
    for _, typed in ipairs({ true, false }) do
      k = k + 1
      local row, col = def[1], def[2]
      watch = { buf = buf, lnum = row, before = line_key(vim.diagnostic.get(buf, { lnum = row }), row) }
      local start = uv.hrtime()
      watch.start = start
      if profile then profile[#profile + 1] = { 'edit', start, start } end
      if typed then
        vim.api.nvim_buf_set_text(buf, row, col, row, col, { 'x' })
      else
        vim.api.nvim_buf_set_text(buf, row, col, row, col + 1, { '' })
      end
      if vim.wait(10000, function() return watch.done ~= nil end, 1) then
        if profile then profile[#profile + 1] = { 'squiggle', watch.done, watch.done } end
        entry.edits[#entry.edits + 1] = (watch.done - start) / 1e6
      else
        entry.timeouts = entry.timeouts + 1
      end
      local pause = (300 + rand(200)) * 1e6
      local after_squiggle = (watch.done or uv.hrtime()) + 100e6
      local next_at = math.max(start + pause, after_squiggle)
      vim.wait(math.max(0, (next_at - uv.hrtime()) / 1e6), function() return false end, 5)
    end
  end
  watch = nil
  entry.cpu_per_edit = (cpu() - cpu_start) / n
  report.scripts[#report.scripts + 1] = entry
  vim.cmd('silent! bwipeout!')
end

report.profile = profile
local f = assert(io.open(out, 'w'))
f:write(vim.json.encode(report))
f:close()
for _, c in ipairs(vim.lsp.get_clients()) do c:stop() end
vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 20)
vim.cmd('qall!')
