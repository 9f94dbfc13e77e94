-- *.fev files are function-event scripts; *.dynevents files and the tracefs files
-- (kprobe_events, dynamic_events) hold the mainline dialect; *.bt files are bpftrace
-- scripts (Neovim's own name for them). fevlint checks all three.
if vim.fn.has('nvim-0.8') == 1 then
  vim.filetype.add({
    extension = { fev = 'fev', dynevents = 'dynevents', bt = 'bpftrace' },
    filename = { kprobe_events = 'dynevents', dynamic_events = 'dynevents' },
  })
else
  -- Before 0.8 `vim.filetype` is opt-in: autocommands, so that plugin/fevlint.lua can
  -- say that the language server needs 0.11.
  vim.cmd([[
    autocmd BufRead,BufNewFile *.fev setfiletype fev
    autocmd BufRead,BufNewFile *.dynevents,kprobe_events,dynamic_events setfiletype dynevents
    autocmd BufRead,BufNewFile *.bt setfiletype bpftrace
  ]])
end
