-- Starts fevlint's language server for *.fev and *.dynevents buffers (config in
-- lsp/fevlint.lua). It needs Neovim 0.11 (`vim.lsp.enable`); an older Neovim (Debian
-- 12's apt package is 0.7) says so once, when the first such buffer opens.
if vim.fn.has('nvim-0.11') == 1 then
  vim.lsp.enable('fevlint')
  -- A large script highlighted twice costs every edit twice: tree-sitter reparses the
  -- whole flat tree (about 80 ms of Neovim's CPU per edit on 50,000 lines), and the
  -- server's semantic tokens come from the same highlights.scm, kept per line. Over
  -- `vim.g.fevlint_treesitter_max_lines` lines (default 5,000), tree-sitter highlighting
  -- stops once fevlint's tokens are there; below, both run (tree-sitter before the
  -- server answers).
  vim.api.nvim_create_autocmd('LspAttach', {
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      local max = vim.g.fevlint_treesitter_max_lines or 5000
      if client and client.name == 'fevlint' and client.server_capabilities.semanticTokensProvider
        and vim.treesitter.highlighter.active[args.buf] and vim.api.nvim_buf_line_count(args.buf) > max then
        vim.treesitter.stop(args.buf)
      end
    end,
  })
  -- A `*.bpf.c` under a fevlint.toml that names compiled objects (`objects = [...]`): the
  -- server reports their findings and hovers there (it never parses C). Other C files
  -- never start it.
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'c',
    callback = function(args)
      if not vim.api.nvim_buf_get_name(args.buf):match('%.bpf%.c$') then
        return
      end
      local root = vim.fs.root(args.buf, 'fevlint.toml')
      if not root then
        return
      end
      local names_objects = vim.iter(vim.fn.readfile(root .. '/fevlint.toml')):any(function(line)
        return line:match('^%s*objects%s*=') ~= nil
      end)
      if names_objects then
        vim.lsp.start(vim.tbl_extend('force', vim.lsp.config.fevlint, { root_dir = root }), { bufnr = args.buf })
      end
    end,
  })
else
  local version = vim.fn.matchstr(vim.fn.execute('version'), 'NVIM v[0-9.]\\+')
  _G.fevlint_too_old = function()
    vim.notify('fevlint: the language server needs Neovim 0.11 or later; this is ' .. version
      .. ': no diagnostics (see editors/nvim/README.md for how to get 0.11)', vim.log.levels.WARN)
  end
  vim.cmd('autocmd FileType fev,dynevents,bpftrace ++once lua _G.fevlint_too_old()')
end
