-- Neovim >= 0.11 native LSP config for `fevlint lsp`, enabled by plugin/fevlint.lua.
-- Set $FEVLINT to use a fevlint binary that is not on PATH. Settings (arch, kernels,
-- ignore) come from fevlint.toml; `init_options`/`settings` here override them.
--
-- Diagnostics of open documents come by block (`fevlint/diagnosticBlocks`, see
-- lua/fevlint/blocks.lua): after an edit, only the blocks of lines whose findings changed.
---@type vim.lsp.Config
return {
  cmd = { vim.env.FEVLINT or 'fevlint', 'lsp' },
  filetypes = { 'fev', 'dynevents', 'bpftrace' },
  root_markers = { 'fevlint.toml', '.git' },
  capabilities = { experimental = { fevlintDiagnosticBlocks = true } },
  handlers = { ['fevlint/diagnosticBlocks'] = require('fevlint.blocks').handler },
}
