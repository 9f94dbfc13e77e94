-- bpftrace scripts: tree-sitter highlighting (parser/bpftrace.so, built by
-- scripts/install-test-deps.sh or `mkdir -p editors/nvim/parser && cc -shared -fPIC -O2
-- -I grammar-bpftrace/src grammar-bpftrace/src/parser.c grammar-bpftrace/src/scanner.c
-- -o editors/nvim/parser/bpftrace.so`) and `//` comments.
vim.bo.commentstring = '// %s'
pcall(vim.treesitter.start)
