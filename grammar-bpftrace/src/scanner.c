// The predicate's closing `/`: bpftrace 0.17's lexer.l returns ENDPRED for a `/` that
// is followed by whitespace and then `/` or `{` (`\//{space}*[\/\{]`), DIV for any
// other. `//` starts a comment (the comment rule comes first in lexer.l).

#include "tree_sitter/parser.h"

enum TokenType { PREDICATE_END };

void *tree_sitter_bpftrace_external_scanner_create(void) { return NULL; }
void tree_sitter_bpftrace_external_scanner_destroy(void *payload) { (void)payload; }
unsigned tree_sitter_bpftrace_external_scanner_serialize(void *payload, char *buffer) {
    (void)payload;
    (void)buffer;
    return 0;
}
void tree_sitter_bpftrace_external_scanner_deserialize(void *payload, const char *buffer, unsigned length) {
    (void)payload;
    (void)buffer;
    (void)length;
}

static bool is_space(int32_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool tree_sitter_bpftrace_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid_symbols) {
    (void)payload;
    if (!valid_symbols[PREDICATE_END]) {
        return false;
    }
    while (is_space(lexer->lookahead)) {
        lexer->advance(lexer, true);
    }
    if (lexer->lookahead != '/') {
        return false;
    }
    lexer->advance(lexer, false);
    if (lexer->lookahead == '/') {
        return false;
    }
    lexer->mark_end(lexer);
    while (is_space(lexer->lookahead)) {
        lexer->advance(lexer, false);
    }
    if (lexer->lookahead == '{' || lexer->lookahead == '/') {
        lexer->result_symbol = PREDICATE_END;
        return true;
    }
    return false;
}
