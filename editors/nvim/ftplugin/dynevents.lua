-- Mainline probe definitions (*.dynevents, kprobe_events): `#` comments; fevlint's
-- language server checks them (lsp/fevlint.lua). No tree-sitter parser ships for them.
vim.bo.commentstring = '# %s'
vim.bo.comments = ':#'
