//! What one long line costs the syntax layer: the kernel's view (`lines`) and the
//! tree-sitter tree, for lines of N copies of a piece. `cargo run --release -p
//! fevlint-syntax --example line_cost -- '|' 40000 80000 160000`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let piece = args.first().cloned().unwrap_or_else(|| "|".into());
    let mut parser = fevlint_syntax::Parser::new();
    for n in args.iter().skip(1).filter_map(|a| a.parse::<usize>().ok()) {
        let text = format!("{}\n", piece.repeat(n));
        let t = std::time::Instant::now();
        let lines = parser.lines(&text, fevlint_syntax::Target::default());
        let kernel = t.elapsed();
        let t = std::time::Instant::now();
        let tree = parser.tree(&text, None);
        let ts = t.elapsed();
        let mut nodes = 0usize;
        let mut c = tree.walk();
        'walk: loop {
            nodes += 1;
            if c.goto_first_child() || c.goto_next_sibling() {
                continue;
            }
            loop {
                if !c.goto_parent() {
                    break 'walk;
                }
                if c.goto_next_sibling() {
                    break;
                }
            }
        }
        println!(
            "{n:>8} x {piece:?}: {} bytes, lines {:.2} ms ({} lines), tree {:.2} ms, {nodes} nodes",
            text.len(),
            kernel.as_secs_f64() * 1e3,
            lines.len(),
            ts.as_secs_f64() * 1e3
        );
    }
}
