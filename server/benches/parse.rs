//! Parse throughput on a 100,000-line script corpus, on one core.
//!
//! `cargo bench -p fevlint --bench parse` prints lines per second for the kernel view
//! (tokenizer + state machine: what `fevlint check` runs), the tree-sitter tree (what
//! editors get), and both together (what the language server does on open).

use fevlint_syntax::{Parser, Target};
use std::hint::black_box;
use std::time::Instant;

/// Realistic definitions and a few broken ones, varied so no two lines are equal.
fn corpus(lines: usize) -> String {
    let shapes = [
        "SyS_openat(int dfd, string path, x32 flags, x16 mode)",
        "do_IRQ(symbol ip[16] | x64[6] irq_stack[16])",
        "__vfs_read(symbol read+40[0]+16[0])",
        "ip_rcv(x64 skb, x8[6] perm_addr+16[0]+558)",
        "do_IRQ(int total_forks=0xffffffff82354c18, symbol regs[16])",
        "# comment about the next probe",
        "link_path_walk(char[64] name)",
        "ip_rcv(NULL, x8[6] perm_addr+558)",
        "",
        "try_to_wake_up(x64 p, u32 state, s32 wake_flags | u32 pid+2464[0])  # trailing",
        "tcp_sendmsg(x64 sk, x64 msg, u64 size, u8 state+18[0])",
        "ip_rcv(x64 skb, x86 dev)",
        "vfs_read(int fd, x",
    ];
    let mut s = String::with_capacity(lines * 48);
    for i in 0..lines {
        let shape = shapes[i % shapes.len()];
        // Vary the function name so lines differ.
        if let Some(paren) = shape.find('(') {
            s.push_str(&shape[..paren]);
            s.push_str(&format!("_{}", i % 977));
            s.push_str(&shape[paren..]);
        } else {
            s.push_str(shape);
        }
        s.push('\n');
    }
    s
}

fn measure(name: &str, lines: usize, mut f: impl FnMut()) {
    f(); // warm up
    let runs = 5;
    let mut best = f64::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!("{name:<28} {:>8.1} ms  {:>12.0} lines/s", best * 1e3, lines as f64 / best);
}

fn main() {
    let lines = 100_000;
    let text = corpus(lines);
    println!("corpus: {lines} lines, {} bytes (best of 5)", text.len());
    let mut parser = Parser::new();
    measure("kernel view (check)", lines, || {
        black_box(parser.lines(black_box(&text), Target::X86_64));
    });
    let mut ts = tree_sitter::Parser::new();
    ts.set_language(&tree_sitter_fev::LANGUAGE.into()).expect("grammar loads");
    measure("tree-sitter tree", lines, || {
        black_box(ts.parse(black_box(&text), None));
    });
    measure("both (language server)", lines, || {
        black_box(parser.parse(black_box(&text), Target::X86_64, None));
    });
    measure("full check with rules", lines, || {
        black_box(
            fevlint_check::analysis::check(
                &mut parser,
                black_box(&text).as_bytes().to_vec(),
                &fevlint_check::analysis::Options::new(Target::X86_64),
            )
            .1,
        );
    });
}
