" fevlint lsp under Vim 9 + ALE 3.3 (Debian vim + vim-ale), headless, with the shipped
" plugin editors/vim on the runtimepath (ftdetect, syntax, ftplugin, ALE linter):
"
"   FEVLINT=target/debug/fevlint FEV_FILE=tests/editors/problems.fev FEV_OUT=out.json \
"     vim -Nu tests/editors/vim_ale_test.vim -i NONE -n -es </dev/null
"
" Checks the filetype, syntax groups, the diagnostics ALE receives and lists, and a hover;
" then a *.dynevents file's diagnostics, and a *.bt script's kernel diagnostic (K210 from
" tests/editors/kernel/kernel.bt in a folder whose fevlint.toml names the 6.12.117
" fixture: one more server and kernel load, about 2 s);
" writes a JSON report to $FEV_OUT ({"failures": [...]}) and exits 0 when every check
" passed, 1 otherwise. Run by server/tests/lsp_editors.rs.
set nocompatible
let s:root = fnamemodify(expand('<sfile>:p'), ':h:h:h')
execute 'set runtimepath^=' . fnameescape(s:root . '/editors/vim')
filetype plugin on
syntax on
let g:ale_linters = {'fev': ['fevlint'], 'dynevents': ['fevlint'], 'bpftrace': ['fevlint']}
let g:ale_linters_explicit = 1
let g:ale_fev_fevlint_executable = empty($FEVLINT) ? 'fevlint' : $FEVLINT
let g:ale_lint_on_text_changed = 'never'
let g:ale_lint_on_insert_leave = 0
let g:ale_echo_cursor = 0
let g:ale_set_signs = 0
let g:ale_virtualtext_cursor = 'disabled'
" Debian's vim-ale is an optional package (pack/dist-bundle/opt/ale).
packadd ale

let s:out = {'vim': v:versionlong, 'publish': [], 'hover': [], 'checks': [], 'failures': []}
let s:started = 0

function! s:Check(name, ok, detail) abort
  call add(s:out.checks, a:name)
  if !a:ok
    call add(s:out.failures, a:name . ': ' . string(a:detail))
  endif
endfunction

function! s:OnMessage(conn_id, msg) abort
  if get(a:msg, 'method', '') is# 'textDocument/publishDiagnostics'
    call add(s:out.publish, a:msg.params)
  elseif has_key(a:msg, 'result') && type(a:msg.result) == v:t_dict && has_key(a:msg.result, 'contents')
    call add(s:out.hover, a:msg.result)
  endif
endfunction

function! s:OnStarted() abort
  let s:started = 1
  for l:id in keys(ale#lsp#GetConnections())
    call ale#lsp#RegisterCallback(l:id, function('s:OnMessage'))
  endfor
endfunction
autocmd User ALELSPStarted call s:OnStarted()

function! s:Wait(cond, seconds) abort
  let l:start = reltime()
  while !eval(a:cond) && reltimefloat(reltime(l:start)) < a:seconds
    sleep 20m
  endwhile
  return eval(a:cond)
endfunction

" The codes of the last publish (of a document whose URI ends with `suffix`).
function! s:Codes(...) abort
  let l:suffix = a:0 ? a:1 : '.fev'
  let l:mine = filter(copy(s:out.publish), 'v:val.uri =~# "\\V" . escape(l:suffix, "\\") . "\\$"')
  if empty(l:mine)
    return ''
  endif
  return join(map(copy(l:mine[-1].diagnostics), 'v:val.code . "@" . v:val.range.start.line . ":" . v:val.range.start.character'), ' ')
endfunction

function! s:Syn(line, text, offset) abort
  let l:col = stridx(getline(a:line), a:text) + 1 + a:offset
  return synIDattr(synID(a:line, l:col, 1), 'name')
endfunction

function! s:Main() abort
  let l:dir = tempname()
  call mkdir(l:dir, 'p')
  let l:file = l:dir . '/problems.fev'
  call writefile(readfile($FEV_FILE), l:file)
  execute 'edit' fnameescape(l:file)
  call s:Check('filetype fev from ftdetect', &filetype is# 'fev', &filetype)
  call s:Check('commentstring from ftplugin', &commentstring is# '# %s', &commentstring)
  " Syntax groups (problems.fev line 4: `__vfs_read(symbol read+40[0]+16)`).
  for [l:line, l:text, l:offset, l:want] in [
        \ [1, '# Known', 0, 'fevComment'],
        \ [4, '__vfs_read', 0, 'fevFunction'],
        \ [4, 'symbol', 0, 'fevType'],
        \ [4, 'read+', 0, 'fevName'],
        \ [4, '+40', 0, 'fevOperator'],
        \ [4, '+40', 1, 'fevNumber'],
        \ [3, '=0x', 1, 'fevAddress'],
        \ [2, 'x64 skb', 4, 'fevName']]
    let l:have = s:Syn(l:line, l:text, l:offset)
    call s:Check(printf('syntax %d:%s+%d', l:line, l:text, l:offset), l:have is# l:want, l:have)
  endfor
  ALELint
  call s:Check('ALE started fevlint lsp', s:Wait('s:started', 30), 'not started')
  let l:want = 'S001@1:16 S003@2:18'
  call s:Wait('s:Codes() is# "' . l:want . '"', 30)
  call s:Check('published S001 and S003', s:Codes() is# l:want, s:Codes())
  call s:Wait('len(ale#engine#GetLoclist(bufnr(""))) == 2', 10)
  let l:loclist = map(copy(ale#engine#GetLoclist(bufnr(''))), '[v:val.lnum, v:val.col, v:val.type, get(v:val, "code", "")]')
  call s:Check('ALE lists them', l:loclist == [[2, 17, 'E', 'S001'], [3, 19, 'W', 'S003']], l:loclist)
  " Hover on `read` in line 4 (0-based 3:19).
  call cursor(4, 20)
  call ale#hover#Show(bufnr(''), 4, 20, {})
  call s:Wait('len(s:out.hover) > 0', 10)
  let l:hover = empty(s:out.hover) ? '' : json_encode(s:out.hover[0])
  call s:Check('hover says what is read', stridx(l:hover, '*(u64 *)(param0 + 40) + 16') >= 0, l:hover)
  " The mainline dialect: a *.dynevents file gets its filetype, and the server's
  " diagnostics through the same linter.
  let l:mainline = l:dir . '/problems.dynevents'
  call writefile(readfile(fnamemodify($FEV_FILE, ':r') . '.dynevents'), l:mainline)
  execute 'edit' fnameescape(l:mainline)
  call s:Check('filetype dynevents from ftdetect', &filetype is# 'dynevents', &filetype)
  ALELint
  call s:Wait('s:Codes(".dynevents") is# "S001@1:24"', 30)
  call s:Check('published S001 for the .dynevents file', s:Codes('.dynevents') is# 'S001@1:24', s:Codes('.dynevents'))
  call s:Wait('len(ale#engine#GetLoclist(bufnr(""))) == 1', 10)
  let l:loclist = map(copy(ale#engine#GetLoclist(bufnr(''))), '[v:val.lnum, v:val.col, v:val.type, get(v:val, "code", "")]')
  call s:Check('ALE lists it', l:loclist == [[2, 25, 'E', 'S001']], l:loclist)
  " A bpftrace script next to a fevlint.toml naming the 6.12.117 fixture: its own project
  " root, so ALE starts a server there; K210 for the kprobe on a missing function.
  call mkdir(l:dir . '/kernel', 'p')
  call writefile(['kernels = [' . json_encode(s:root . '/fixtures/kernels/6.12.117+deb12-amd64') . ']'], l:dir . '/kernel/fevlint.toml')
  let l:bt = l:dir . '/kernel/kernel.bt'
  call writefile(readfile(s:root . '/tests/editors/kernel/kernel.bt'), l:bt)
  execute 'edit' fnameescape(l:bt)
  call s:Check('filetype bpftrace', &filetype is# 'bpftrace', &filetype)
  ALELint
  call s:Wait('s:Codes(".bt") is# "K210@2:7"', 30)
  call s:Check('published K210 for the .bt script', s:Codes('.bt') is# 'K210@2:7', s:Codes('.bt'))
  call s:Wait('len(ale#engine#GetLoclist(bufnr(""))) == 1', 10)
  let l:loclist = map(copy(ale#engine#GetLoclist(bufnr(''))), '[v:val.lnum, v:val.col, v:val.type, get(v:val, "code", "")]')
  call s:Check('ALE lists K210', l:loclist == [[3, 8, 'W', 'K210']], l:loclist)
  call writefile([json_encode(s:out)], $FEV_OUT)
  call ale#lsp#StopAll()
  call delete(l:dir, 'rf')
  execute empty(s:out.failures) ? 'qall!' : 'cquit 1'
endfunction

" ++nested: without it BufRead/FileType (and so ALE) do not fire for :edit inside VimEnter.
autocmd VimEnter * ++nested call s:Main()
