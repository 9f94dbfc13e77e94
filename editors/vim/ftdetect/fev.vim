" Kernel function-event scripts.
autocmd BufRead,BufNewFile *.fev setfiletype fev
" Mainline probe definitions: *.dynevents and the tracefs files.
autocmd BufRead,BufNewFile *.dynevents,kprobe_events,dynamic_events setfiletype dynevents
