//! The parsed formula: nodes over the author's token trees, and the binary operators.

use proc_macro2::{Ident, TokenTree};
use std::ops::Range;

/// A parsed formula: its token trees by nesting level (level 0 is the formula itself, each
/// parenthesized, bracketed or argument group gets a level) and the root node.
pub struct Parsed {
    pub levels: Vec<Vec<TokenTree>>,
    pub root: Node,
}

/// One node: what it is, and the range of its tokens within its level.
pub struct Node {
    pub kind: NodeKind,
    pub level: usize,
    pub range: Range<usize>,
}

pub enum NodeKind {
    /// A literal, `true` or `false`.
    Lit,
    /// A path; `name` is set for a bare lowercase name, which must be an input or derived value.
    Path {
        name: Option<Ident>,
    },
    Field(Box<Node>),
    Index(Box<Node>, Box<Node>),
    Cast(Box<Node>),
    /// `-x` or `&x`.
    Prefix(Box<Node>),
    /// `!x`.
    Not(Box<Node>),
    /// `l op r`; `op` is the operator's token range within the node's level.
    Binary {
        op: BinOp,
        op_range: Range<usize>,
        left: Box<Node>,
        right: Box<Node>,
    },
    /// `(x)` or an invisible group.
    Paren(Box<Node>),
    /// `path(args)`.
    Call {
        func: Box<Node>,
        args: Vec<Node>,
    },
    /// `receiver.method::<T>(args)`; `turbofish` is a token range within the node's level.
    Method {
        receiver: Box<Node>,
        method: Ident,
        turbofish: Range<usize>,
        args: Vec<Node>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Compare,
    And,
    Or,
}

impl BinOp {
    pub(super) fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Compare => 3,
            BinOp::Add | BinOp::Sub => 4,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 5,
        }
    }

    /// The checked `Formula` method of an arithmetic operator.
    pub fn method(self) -> Option<&'static str> {
        Some(match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
            _ => return None,
        })
    }
}
