# Kakoune support for kernel function-event scripts (*.fev) and mainline probe
# definitions (*.dynevents): filetype, highlighting after
# grammar/queries/highlights.scm, `#` comments, and the kak-lsp server entry for
# `fevlint lsp`. Put this file in ~/.config/kak/autoload/ (with a link to the stock
# autoload folder) or `source` it from kakrc. With kak-lsp (`cargo install kak-lsp`,
# 17 or later): `lsp-enable` in kakrc; the server entry below is set for fev buffers.

hook global BufCreate .*[.]fev %{
    set-option buffer filetype fev
}

# Mainline probe definitions (*.dynevents and the tracefs files): `#` comments, and the
# same language server, which checks them in the kernel's own dialect.
hook global BufCreate .*([.]dynevents|/kprobe_events|/dynamic_events) %{
    set-option buffer filetype dynevents
}

# bpftrace scripts (*.bt): `//` comments and the same language server.
hook global BufCreate .*[.]bt %{
    set-option buffer filetype bpftrace
}

hook global WinSetOption filetype=bpftrace %{
    set-option window comment_line '//'
}

hook global WinSetOption filetype=dynevents %{
    set-option window comment_line '#'
}

hook global WinSetOption filetype=fev %{
    require-module fev
    set-option window comment_line '#'
    add-highlighter window/fev ref fev
    hook -once -always window WinSetOption filetype=.* %{ remove-highlighters window/fev }
}

# kak-lsp: the language server (kak-lsp 17+ reads `lsp_servers`; without kak-lsp the
# option does not exist and this does nothing).
hook -group fev-lsp global BufSetOption filetype=(fev|dynevents|bpftrace) %{
    try %{
        set-option buffer lsp_servers %{
            [fevlint]
            root_globs = ["fevlint.toml", ".git"]
            command = "fevlint"
            args = ["lsp"]
        }
    }
}

provide-module fev %§
    try %{ declare-option str comment_line '#' }
    add-highlighter shared/fev regions
    add-highlighter shared/fev/comment region '#' '$' fill comment
    add-highlighter shared/fev/code default-region group
    # The function: the identifier opening a line, before `(`.
    add-highlighter shared/fev/code/function regex '^\h*([A-Za-z_]\w*)\h*\(' 1:function
    # A field: [unsigned] TYPE [[N]] NAME, only right after `(`, `,` or `|` (keywords
    # are contextual: in `int int` the second `int` is the name).
    add-highlighter shared/fev/code/field regex '(?<=[(,|])\h*(?:(unsigned)\h+)?\b(long|int|short|char|size_t|u64|s64|x64|u32|s32|x32|u16|s16|x16|u8|s8|x8|symbol|string)\b(?:\h*\[\h*\w+\h*\])?\h*([A-Za-z_]\w*)?' 1:keyword 2:type 3:variable
    add-highlighter shared/fev/code/null regex '(?<=[(,|])\h*(NULL)\b' 1:value
    add-highlighter shared/fev/code/symbol regex '\$\h*[A-Za-z_]\w*' 0:value
    add-highlighter shared/fev/code/number regex '\b(?:0x\w*|\d\w*)' 0:value
    add-highlighter shared/fev/code/operator regex '[+=]' 0:operator
§
