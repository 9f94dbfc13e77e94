-- Starts fevlint's language server for *.fev and *.dynevents buffers (config in
-- lsp/fevlint.lua). It needs Neovim 0.11 (`vim.lsp.enable`); an older Neovim (Debian
-- 12's apt package is 0.7) says so once, when the first such buffer opens.
if vim.fn.has('nvim-0.11') == 1 then
  vim.lsp.enable('fevlint')
else
  local version = vim.fn.matchstr(vim.fn.execute('version'), 'NVIM v[0-9.]\\+')
  _G.fevlint_too_old = function()
    vim.notify('fevlint: the language server needs Neovim 0.11 or later; this is ' .. version
      .. ': no diagnostics (see editors/nvim/README.md for how to get 0.11)', vim.log.levels.WARN)
  end
  vim.cmd('autocmd FileType fev,dynevents,bpftrace ++once lua _G.fevlint_too_old()')
end
