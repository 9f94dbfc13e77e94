-- Function-event scripts: tree-sitter highlighting (parser/fev.so, built by
-- scripts/install-test-deps.sh or `mkdir -p editors/nvim/parser && cc -shared -fPIC -O2
-- -I grammar/src grammar/src/parser.c -o editors/nvim/parser/fev.so`) and `#` comments.
vim.bo.commentstring = '# %s'
vim.bo.comments = ':#'
pcall(vim.treesitter.start)
