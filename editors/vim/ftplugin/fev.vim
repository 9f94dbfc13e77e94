" Kernel function-event scripts: one definition per line, `#` comments.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1
setlocal commentstring=#\ %s comments=:#
setlocal iskeyword=@,48-57,_
let b:undo_ftplugin = 'setlocal commentstring< comments< iskeyword<'
