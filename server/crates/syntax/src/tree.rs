//! Typed views over the tree-sitter tree: definitions, arguments, fields, targets and
//! redirects with byte spans. They work inside broken lines (a half-typed
//! `vfs_read(int fd, x` still has a definition with its function and first field).

use super::kinds::{self, field};
use super::Span;
use tree_sitter::Node;

pub fn span(node: Node<'_>) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

fn named_children<'t>(node: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut cursor = node.walk();
    let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
    children.into_iter()
}

/// A definition line: `func(args…)`.
#[derive(Clone, Copy, Debug)]
pub struct Definition<'t>(pub Node<'t>);

impl<'t> Definition<'t> {
    pub fn cast(node: Node<'t>) -> Option<Self> {
        (node.kind() == kinds::DEFINITION).then_some(Definition(node))
    }

    pub fn span(&self) -> Span {
        span(self.0)
    }

    /// The function name node.
    pub fn function(&self) -> Option<Node<'t>> {
        self.0.child_by_field_name(field::FUNCTION)
    }

    /// Arguments in order, also those nested in ERROR nodes of a broken line.
    pub fn arguments(&self) -> Vec<Argument<'t>> {
        let mut out = Vec::new();
        collect(self.0, kinds::ARGUMENT, &mut out);
        out.into_iter().map(Argument).collect()
    }

    /// Every field of the definition, in order.
    pub fn fields(&self) -> Vec<FieldNode<'t>> {
        let mut out = Vec::new();
        collect(self.0, kinds::FIELD, &mut out);
        out.into_iter().map(FieldNode).collect()
    }
}

fn collect<'t>(node: Node<'t>, kind: &str, out: &mut Vec<Node<'t>>) {
    for child in named_children(node) {
        if child.kind() == kind {
            out.push(child);
        } else if child.kind() == kinds::ERROR || child.kind() == kinds::ARGUMENT {
            collect(child, kind, out);
        }
    }
}

/// One comma-separated group: `NULL`, or fields joined by `|`.
#[derive(Clone, Copy, Debug)]
pub struct Argument<'t>(pub Node<'t>);

impl<'t> Argument<'t> {
    pub fn span(&self) -> Span {
        span(self.0)
    }

    pub fn is_null(&self) -> bool {
        named_children(self.0).next().is_some_and(|n| n.kind() == kinds::NULL)
    }

    pub fn fields(&self) -> Vec<FieldNode<'t>> {
        named_children(self.0).filter(|n| n.kind() == kinds::FIELD).map(FieldNode).collect()
    }
}

/// `[unsigned] type[[N]] target`.
#[derive(Clone, Copy, Debug)]
pub struct FieldNode<'t>(pub Node<'t>);

impl<'t> FieldNode<'t> {
    pub fn span(&self) -> Span {
        span(self.0)
    }

    pub fn unsigned(&self) -> Option<Node<'t>> {
        self.0.child_by_field_name(field::UNSIGNED)
    }

    /// The type keyword; `None` when tree-sitter had to invent it (MISSING).
    pub fn type_node(&self) -> Option<Node<'t>> {
        self.0.child_by_field_name(field::TYPE).filter(|n| !n.is_missing())
    }

    pub fn array_count(&self) -> Option<Node<'t>> {
        self.0.child_by_field_name(field::ARRAY).and_then(|a| a.child_by_field_name(field::COUNT))
    }

    pub fn target(&self) -> Option<TargetNode<'t>> {
        TargetNode::cast(self.0.child_by_field_name(field::TARGET)?)
    }
}

/// What a field reads.
#[derive(Clone, Copy, Debug)]
pub enum TargetNode<'t> {
    /// `name` followed by `+N`/`[N]` redirects.
    Parameter(Node<'t>),
    /// `name[+N…]=0x…` or `name=$sym`.
    NamedAddress(Node<'t>),
    /// A bare `0x…`.
    Address(Node<'t>),
    /// A bare `$sym`.
    SymbolRef(Node<'t>),
}

impl<'t> TargetNode<'t> {
    pub fn cast(node: Node<'t>) -> Option<Self> {
        Some(match node.kind() {
            kinds::PARAMETER => TargetNode::Parameter(node),
            kinds::NAMED_ADDRESS => TargetNode::NamedAddress(node),
            kinds::ADDRESS => TargetNode::Address(node),
            kinds::SYMBOL_REF => TargetNode::SymbolRef(node),
            _ => return None,
        })
    }

    pub fn node(&self) -> Node<'t> {
        match *self {
            TargetNode::Parameter(n)
            | TargetNode::NamedAddress(n)
            | TargetNode::Address(n)
            | TargetNode::SymbolRef(n) => n,
        }
    }

    /// The field-name node (`None` for bare addresses, whose name is the literal).
    pub fn name(&self) -> Option<Node<'t>> {
        match *self {
            TargetNode::Parameter(n) | TargetNode::NamedAddress(n) => {
                n.child_by_field_name(field::NAME).filter(|n| !n.is_missing() && n.end_byte() > n.start_byte())
            }
            TargetNode::Address(_) | TargetNode::SymbolRef(_) => None,
        }
    }

    /// `+N` and `[N]` nodes in order.
    pub fn redirects(&self) -> Vec<RedirectNode<'t>> {
        match *self {
            TargetNode::Parameter(n) | TargetNode::NamedAddress(n) => {
                let mut cursor = n.walk();
                let nodes: Vec<Node<'t>> = n.children_by_field_name(field::REDIRECT, &mut cursor).collect();
                nodes.into_iter().filter_map(RedirectNode::cast).collect()
            }
            TargetNode::Address(_) | TargetNode::SymbolRef(_) => Vec::new(),
        }
    }
}

/// `+N` or `[N]`.
#[derive(Clone, Copy, Debug)]
pub enum RedirectNode<'t> {
    Offset(Node<'t>),
    Index(Node<'t>),
}

impl<'t> RedirectNode<'t> {
    pub fn cast(node: Node<'t>) -> Option<Self> {
        match node.kind() {
            kinds::OFFSET => Some(RedirectNode::Offset(node)),
            kinds::INDEX => Some(RedirectNode::Index(node)),
            _ => None,
        }
    }

    pub fn node(&self) -> Node<'t> {
        match *self {
            RedirectNode::Offset(n) | RedirectNode::Index(n) => n,
        }
    }

    pub fn number(&self) -> Option<Node<'t>> {
        self.node().child_by_field_name(field::VALUE)
    }
}

/// The definition whose line holds `offset` (the tree keeps one per line).
pub fn definition_at(root: Node<'_>, offset: usize) -> Option<Definition<'_>> {
    let mut cursor = root.walk();
    let found = root
        .named_children(&mut cursor)
        .find(|n| n.kind() == kinds::DEFINITION && n.start_byte() <= offset && offset <= n.end_byte());
    found.map(Definition)
}

/// All definition nodes of the file, in order.
pub fn definitions(root: Node<'_>) -> Vec<Definition<'_>> {
    named_children(root).filter_map(Definition::cast).collect()
}
