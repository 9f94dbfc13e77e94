-- Starts fevlint's language server for *.fev and *.dynevents buffers (config in
-- lsp/fevlint.lua).
if vim.fn.has('nvim-0.11') == 1 then
  vim.lsp.enable('fevlint')
end
