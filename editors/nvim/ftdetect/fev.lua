-- *.fev files are function-event scripts; *.dynevents files and the tracefs files
-- (kprobe_events, dynamic_events) hold the mainline dialect. fevlint checks both.
vim.filetype.add({
  extension = { fev = 'fev', dynevents = 'dynevents' },
  filename = { kprobe_events = 'dynevents', dynamic_events = 'dynevents' },
})
