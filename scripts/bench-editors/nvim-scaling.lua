-- Neovim's part of scripts/bench-editors/nvim-scaling.py: replays a publish (arg 1) into
-- the script's buffer (arg 2) with 500 to 18,140 findings; one JSON line each (CPU ms).
local uv = vim.uv
local body = io.open(_G.arg[1]):read('*a')
vim.cmd.edit(vim.fn.fnameescape(_G.arg[2]))
local buf = vim.api.nvim_get_current_buf()
local function cpu() local r = uv.getrusage(); return (r.utime.sec + r.stime.sec) * 1e9 + (r.utime.usec + r.stime.usec) * 1e3 end
local function ms(t0) return (cpu() - t0) / 1e6 end
local msg = vim.json.decode(body, { luanil = { object = true } })
local all = msg.params.diagnostics
-- time the parts of vim.diagnostic.set
local D = vim.diagnostic
local parts = {}
local function wrap(tbl, key, name)
  local f = tbl[key]
  tbl[key] = function(...) local t0 = cpu(); local r = { f(...) }; parts[name] = (parts[name] or 0) + ms(t0); return unpack(r) end
end
wrap(D.handlers.signs, 'show', 'signs')
wrap(D.handlers.underline, 'show', 'underline')
wrap(D.handlers.signs, 'hide', 'hide_signs')
wrap(D.handlers.underline, 'hide', 'hide_underline')
wrap(D, 'show', 'show')
local out = {}
for _, n in ipairs({ 500, 1000, 2000, 4535, 9070, 18140 }) do
  local diags = {}
  for i = 1, n do
    local d = vim.deepcopy(all[(i - 1) % #all + 1])
    if i > #all then d.range.start.character = d.range.start.character + 1 end
    diags[i] = d
  end
  local params = { uri = vim.uri_from_bufnr(buf), diagnostics = diags }
  local enc = vim.json.encode(params)
  local best = {}
  for rep = 1, 5 do
    parts = {}
    local t0 = cpu()
    local dec = vim.json.decode(enc, { luanil = { object = true } })
    local t_dec = ms(t0)
    local ns = vim.lsp.diagnostic.get_namespace(1, false)
    t0 = cpu()
    local conv
    do
      -- the handler's conversion, as vim.lsp.diagnostic does it
      local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      conv = vim.tbl_map(function(d)
        local line = lines[d.range.start.line + 1] or ''
        return { lnum = d.range.start.line, col = vim.str_byteindex(line, 'utf-16', d.range.start.character, false),
          end_lnum = d.range['end'].line, end_col = vim.str_byteindex(line, 'utf-16', d.range['end'].character, false),
          severity = d.severity, message = d.message, source = d.source, code = d.code, user_data = { lsp = d } }
      end, dec.diagnostics)
    end
    local t_conv = ms(t0)
    t0 = cpu()
    D.set(ns, buf, conv)
    local t_set = ms(t0)
    local row = { n = n, decode = t_dec, convert = t_conv, set = t_set }
    for k, v in pairs(parts) do row[k] = v end
    if rep == 1 or row.set < best.set then best = row end
  end
  out[#out + 1] = best
  io.stdout:write(vim.json.encode(best) .. '\n')
end
vim.cmd('qall!')
