-- *.fev files are function-event scripts.
vim.filetype.add({ extension = { fev = 'fev' } })
