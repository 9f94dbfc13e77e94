" Kernel function-event scripts.
autocmd BufRead,BufNewFile *.fev setfiletype fev
" Mainline probe definitions: *.dynevents and the tracefs files.
autocmd BufRead,BufNewFile *.dynevents,kprobe_events,dynamic_events setfiletype dynevents
" bpftrace scripts (Vim's own name for them since 9.0).
autocmd BufRead,BufNewFile *.bt setfiletype bpftrace
