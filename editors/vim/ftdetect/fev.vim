" Kernel function-event scripts.
autocmd BufRead,BufNewFile *.fev setfiletype fev
