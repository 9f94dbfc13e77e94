" ALE linter for bpftrace scripts (*.bt): fevlint's
" language server, configured by the same variables as for *.fev scripts:
"   let g:ale_fev_fevlint_executable = '/path/to/fevlint'   " default: fevlint on PATH
"   let g:ale_fev_fevlint_config = {'fevlint': {'kernels': ['/path/to/kernel']}}
call ale#Set('fev_fevlint_executable', 'fevlint')
call ale#Set('fev_fevlint_config', {})

function! ale_linters#bpftrace#fevlint#GetProjectRoot(buffer) abort
  let l:toml = ale#path#FindNearestFile(a:buffer, 'fevlint.toml')
  if !empty(l:toml)
    return fnamemodify(l:toml, ':h')
  endif
  let l:git = ale#path#FindNearestDirectory(a:buffer, '.git')
  return !empty(l:git) ? fnamemodify(l:git, ':h:h') : expand('#' . a:buffer . ':p:h')
endfunction

call ale#linter#Define('bpftrace', {
\   'name': 'fevlint',
\   'lsp': 'stdio',
\   'executable': {b -> ale#Var(b, 'fev_fevlint_executable')},
\   'command': '%e lsp',
\   'project_root': function('ale_linters#bpftrace#fevlint#GetProjectRoot'),
\   'lsp_config': {b -> ale#Var(b, 'fev_fevlint_config')},
\})
