//! Hover: what a type keyword means (spec §3) and what a field reads (slot, register,
//! the redirects in words, spec §2 and §4).

use super::{leaf_at, slot_register};
use fevlint_kernel::Kernel;
use fevlint_syntax::kinds;
use fevlint_syntax::machine::{fold_redirects, AbsValue, Atom, Field, Source};
use fevlint_syntax::tree::{self, FieldNode};
use fevlint_syntax::{Parse, Span, Target};

/// Markdown for the hovered span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    pub span: Span,
    pub markdown: String,
}

/// The hover at a byte offset, if there is anything to say.
pub fn hover(parse: &Parse, text: &str, offset: usize) -> Option<Hover> {
    hover_with(parse, text, offset, &[])
}

/// [`hover`] with kernels: a function name shows its signature, registers and
/// traceability on each kernel; a field adds the C expression it reads on each.
pub fn hover_with(parse: &Parse, text: &str, offset: usize, kernels: &[&Kernel]) -> Option<Hover> {
    if !kernels.is_empty() {
        let parsed = parse.line_at(offset).and_then(|l| l.parsed.as_ref());
        if let Some((name, span)) = parsed.and_then(|p| p.function.as_ref()) {
            if span.start <= offset && offset <= span.end {
                return Some(Hover { span: *span, markdown: crate::kernel_aware::function_doc(kernels, name, parsed) });
            }
        }
    }
    let root = parse.tree.root_node();
    let leaf = leaf_at(root, offset)?;
    let target = parse.target;
    match leaf.kind() {
        kinds::COMMENT => return None,
        kinds::UNSIGNED => {
            return Some(Hover {
                span: tree::span(leaf),
                markdown: "`unsigned`: makes `long int short char` unsigned (printed with `%u`/`%llu`). \
                           On other types it is accepted and meaningless: `unsigned x64` prints decimal."
                    .to_owned(),
            })
        }
        kinds::NULL | "NULL" => {
            return Some(Hover {
                span: tree::span(leaf),
                markdown: "`NULL`: skips this argument slot (records nothing for it).".to_owned(),
            })
        }
        _ => {}
    }
    let field_node = ancestor(leaf, kinds::FIELD).map(FieldNode)?;
    if leaf.parent().is_some_and(|p| p.kind() == kinds::TYPE) || leaf.kind() == kinds::TYPE {
        let type_node = field_node.type_node()?;
        let atom = Atom::from_name(tree::span(type_node).text(text).as_bytes())
            .or_else(|| (tree::span(type_node).text(text) == "string").then_some(Atom::String))?;
        let count = field_node
            .array_count()
            .and_then(|n| fevlint_syntax::lex::kstrtoul(tree::span(n).text(text).as_bytes(), target.ptr_size * 8));
        let unsigned = field_node.unsigned().is_some();
        return Some(Hover { span: tree::span(type_node), markdown: type_doc(atom, unsigned, count, target) });
    }
    // Anything else inside a field: what the kernel records for it.
    let field = machine_field(parse, field_node.span())?;
    let mut markdown = field_doc(parse, text, field, target);
    if !kernels.is_empty() {
        let parsed = parse.line_at(field.span.start).and_then(|l| l.parsed.as_ref()).filter(|p| p.rejection.is_none());
        if let Some(parsed) = parsed {
            if let Some(i) = parsed.fields.iter().position(|f| std::ptr::eq(f, field)) {
                markdown.push_str(&crate::kernel_aware::field_doc(kernels, parsed, i, target));
            }
        }
    }
    Some(Hover { span: field.name_span, markdown })
}

fn ancestor<'t>(mut node: tree_sitter::Node<'t>, kind: &str) -> Option<tree_sitter::Node<'t>> {
    loop {
        if node.kind() == kind {
            return Some(node);
        }
        node = node.parent()?;
    }
}

/// The field the kernel's parser recorded for the field node spanning `span`.
fn machine_field(parse: &Parse, span: Span) -> Option<&Field> {
    let line = parse.line_at(span.start)?;
    let parsed = line.parsed.as_ref()?;
    parsed
        .fields
        .iter()
        .find(|f| f.span.start < span.end.max(span.start + 1) && span.start < f.span.end.max(f.span.start + 1))
}

/// How the kernel prints a type: (printf format, signed).
fn printed(atom: Atom) -> &'static str {
    match atom {
        Atom::Long | Atom::S64 => "`%lld`",
        Atom::Int | Atom::Short | Atom::S32 | Atom::S16 | Atom::S8 => "`%d`",
        Atom::Char => "`%c`",
        Atom::SizeT | Atom::U64 => "`%llu`",
        Atom::U32 | Atom::U16 | Atom::U8 => "`%u`",
        Atom::X64 => "`%llx` (no `0x` prefix)",
        Atom::X32 | Atom::X16 | Atom::X8 => "`%x` (no `0x` prefix)",
        Atom::Symbol => "`%pS` (`func+0x10/0x40`; a NULL prints `(null)`)",
        Atom::String => "`%s`, at most 512 bytes, copied from user or kernel memory",
    }
}

fn arch(target: Target) -> &'static str {
    if target == Target::X86_32 {
        "x86_32"
    } else {
        "x86_64"
    }
}

pub(super) fn type_doc(atom: Atom, unsigned: bool, count: Option<u64>, target: Target) -> String {
    let size = atom.size(target.ptr_size);
    let mut name = String::new();
    if unsigned {
        name.push_str("unsigned ");
    }
    name.push_str(atom.name());
    let signed = atom.signed() && !unsigned;
    let mut s = format!("`{name}`: ");
    if atom == Atom::String {
        s.push_str("4 bytes in the record (a `__data_loc` pointing at the copied string), unsigned");
    } else {
        s.push_str(&format!(
            "{size} byte{} on {}, {}",
            if size == 1 { "" } else { "s" },
            arch(target),
            if signed { "signed" } else { "unsigned" }
        ));
    }
    s.push_str(&format!("; printed as {}", printed(atom)));
    if unsigned && !matches!(atom, Atom::Long | Atom::Int | Atom::Short | Atom::Char) {
        s.push_str("\n\n`unsigned` is accepted here but meaningless: the value prints as an unsigned decimal.");
    } else if unsigned {
        s.push_str(" with `u`");
    }
    if let Some(n) = count {
        s.push_str(&format!(
            "\n\n`{name}[{n}]`: copies {n} × {size} = {} bytes from the computed address; prints as {}",
            n.saturating_mul(u64::from(size)),
            if atom == Atom::Char { "a string (`%s`)" } else { "`{v:v:…}`" }
        ));
    }
    s.push_str(&format!("\n\nSizes: `long`, `size_t` and `symbol` are {} bytes on {}.", target.ptr_size, arch(target)));
    s
}

/// The C type of a field-sized read.
fn read_type(field: &Field, target: Target) -> String {
    let size = field.elem_size(target);
    if field.atom.signed() && !field.unsigned {
        format!("s{}", size * 8)
    } else {
        format!("u{}", size * 8)
    }
}

fn field_doc(parse: &Parse, text: &str, field: &Field, target: Target) -> String {
    let name = if field.name.is_empty() { "(null)" } else { field.name.as_str() };
    let function = parse
        .line_at(field.span.start)
        .and_then(|l| l.parsed.as_ref())
        .and_then(|p| p.function.as_ref())
        .map(|(f, _)| f.as_str())
        .unwrap_or("the function");
    let mut s = format!("`{} {name}`", field.type_string());
    let reads = match &field.source {
        Source::Param { slot, redirects } => {
            match slot_register(target, *slot) {
                Some(reg) => s.push_str(&format!(
                    ": slot {slot}, register `{reg}` of `{function}` on {} (the parameter the ABI put there)",
                    arch(target)
                )),
                None => s.push_str(&format!(
                    ": slot {slot}, beyond the {} argument registers of {}",
                    target.max_args,
                    arch(target)
                )),
            }
            describe(&format!("param{slot}"), field, &fold_redirects(redirects), target)
        }
        Source::Absolute { value, ignored, .. } => {
            s.push_str(": an absolute address (uses no slot)");
            let addr = match value {
                AbsValue::Address(a) => format!("{a:#x}"),
                AbsValue::Symbol(sym) => format!("&{sym}"),
            };
            let mut r = describe_absolute(&addr, field, target);
            if let (Some(first), Some(last)) = (ignored.first(), ignored.last()) {
                let written = first.span().cover(last.span());
                r.push_str(&format!(" (the `{}` before `=` is ignored)", written.text(text)));
            }
            r
        }
    };
    s.push_str("\n\n");
    s.push_str(&reads);
    s
}

fn describe_absolute(addr: &str, field: &Field, target: Target) -> String {
    match (field.atom, field.array) {
        (Atom::String, _) => format!("copies the string at `{addr}`"),
        (_, Some((n, _))) => format!("copies {n} × {} bytes from `{addr}`", field.elem_size(target)),
        _ => format!("reads `*({} *){addr}`", read_type(field, target)),
    }
}

/// Spec §4 in words: the expression the kernel evaluates for a parameter field.
fn describe(param: &str, field: &Field, pairs: &[fevlint_syntax::machine::RedirectPair], target: Target) -> String {
    let size = u64::from(field.elem_size(target));
    let mut addr = param.to_owned();
    if pairs.is_empty() {
        return format!("records `{param}` itself (no memory read)");
    }
    let plus = |expr: &str, n: u64| if n == 0 { expr.to_owned() } else { format!("{expr} + {n}") };
    for (i, pair) in pairs.iter().enumerate() {
        let Some(index) = pair.index else {
            return format!("records `{}` (an address computed without reading memory)", plus(&addr, pair.offset));
        };
        let at = plus(&addr, pair.offset.wrapping_add(index.wrapping_mul(size)));
        match pairs.get(i + 1) {
            Some(next) if next.index.is_some() => addr = format!("*(void **)({at})"),
            next => {
                let value = match (field.atom, field.array) {
                    (Atom::String, _) => return format!("copies the string at `{at}`"),
                    (_, Some((n, _))) => return format!("copies {n} × {size} bytes from `{at}`"),
                    _ => format!("*({} *)({at})", read_type(field, target)),
                };
                return match next {
                    Some(n) if n.offset != 0 => format!(
                        "reads `{value} + {}`: the trailing `+{}` is added to the value read, not followed",
                        n.offset, n.offset
                    ),
                    _ => format!("reads `{value}`"),
                };
            }
        }
    }
    format!("records `{addr}`")
}
