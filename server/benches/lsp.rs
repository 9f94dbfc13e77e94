//! LSP benchmark (written below).
fn main() {}
