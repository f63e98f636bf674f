//! The formula grammar, parsed straight from the author's token trees.
//!
//! A formula is arithmetic: literals, names, paths, fields, calls, method calls, indexing,
//! `as` casts, unary `- ! &`, `* / %`, `+ -`, comparisons, `&&`, `||`, parentheses. This
//! small precedence-climbing parser covers exactly that. It replaces `syn::Expr`, whose
//! general parser cost about 20 µs per formula in an unoptimized proc-macro: paid for every
//! formula of a crate on every rebuild. Each node remembers where its tokens are, so the
//! rewrite re-emits the author's own tokens (and spans) for everything it does not check.

mod tree;

pub use tree::{BinOp, Node, NodeKind, Parsed};

use crate::ctxt::Ctxt;
use proc_macro2::{Delimiter, Ident, Spacing, Span, TokenStream, TokenTree};

/// `as` binds tighter than every binary operator.
const CAST_PRECEDENCE: u8 = 6;

/// Parses `tokens` (already through the token-level checks); reports the first problem.
pub fn parse(tokens: TokenStream, what: &str, cx: &Ctxt) -> Option<Parsed> {
    if !prescan(tokens.clone(), what, cx) {
        return None;
    }
    let mut p = Parser {
        levels: vec![tokens.into_iter().collect()],
        what,
        cx,
    };
    let root = p.whole(0, Span::call_site())?;
    Some(Parsed {
        levels: p.levels,
        root,
    })
}

const KEYWORDS: &[&str] = &[
    "if", "else", "match", "loop", "while", "for", "let", "return", "move", "async", "await",
    "unsafe", "break", "continue", "fn", "static", "mut", "in", "yield",
];

/// The token-level half of the grammar: constructs a formula cannot contain (keywords,
/// blocks, assignments, closures, `?`, ranges, macros...), rejected before parsing with a
/// message saying what they are. Stops at the first problem: one mistake in a formula is one
/// error. Messages read as the parser's: "`<what>` is not a formula: <why>".
fn prescan(tokens: TokenStream, what: &str, cx: &Ctxt) -> bool {
    let reject = |span: Span, msg: &str| {
        cx.error_at(span, format!("{what} is not a formula: {msg}"));
        false
    };
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Ident(id) => {
                let s = id.to_string();
                if KEYWORDS.contains(&s.as_str()) {
                    return reject(id.span(), &format!("`{s}` is not allowed: a formula is arithmetic over the inputs (use `max`/`min` for choices, `gate = ...` for on/off)"));
                }
            }
            TokenTree::Group(g) => {
                if g.delimiter() == Delimiter::Brace {
                    return reject(
                        g.span(),
                        "a block is not allowed: a formula is one arithmetic expression",
                    );
                }
                if !prescan(g.stream(), what, cx) {
                    return false;
                }
            }
            TokenTree::Punct(_) => {
                let start = i;
                let op = operator_at(&trees, &mut i);
                // `name!(...)` is a macro call; `!(...)` after an operator is a negation.
                let after_name = start > 0 && matches!(trees[start - 1], TokenTree::Ident(_));
                if let Some(msg) = forbidden_operator(&op, trees.get(i + 1), after_name) {
                    return reject(trees[start].span(), &msg);
                }
            }
            TokenTree::Literal(_) => {}
        }
        i += 1;
    }
    true
}

/// The operator starting at `trees[*i]`: a run of joint punctuation (`==`, `::`, `&&`).
/// Leaves `*i` on its last character.
pub(crate) fn operator_at(trees: &[TokenTree], i: &mut usize) -> String {
    let mut op = String::new();
    while let Some(TokenTree::Punct(p)) = trees.get(*i) {
        op.push(p.as_char());
        if p.spacing() == Spacing::Alone {
            break;
        }
        *i += 1;
    }
    op
}

fn forbidden_operator(op: &str, next: Option<&TokenTree>, after_name: bool) -> Option<String> {
    // Split a run like `*-` or `,&` into the operators Rust would read.
    const ALLOWED: &[&str] = &[
        "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "&", ".", "::",
        ",",
    ];
    if ALLOWED.contains(&op) {
        if op == "!" && after_name && matches!(next, Some(TokenTree::Group(_))) {
            return Some(
                "a macro call is not allowed: call a function, or `size!` inside it".into(),
            );
        }
        return None;
    }
    let msg = match op {
        "=" => "`=` (assignment) is not allowed: write `key = formula` once".to_string(),
        "+=" | "-=" | "*=" | "/=" | "%=" => format!("`{op}` (assignment) is not allowed"),
        "|" => "`|` is not allowed: neither a closure nor a bitwise or is part of a formula (`||` is the logical or)".to_string(),
        "?" => "`?` is not allowed: the derive checks the arithmetic itself".to_string(),
        ".." | "..=" => format!("`{op}` (a range) is not allowed"),
        ";" => "`;` is not allowed: a formula is one expression, not statements".to_string(),
        "^" | "<<" | ">>" => {
            format!("`{op}` is not allowed: only + - * / % and comparisons are checked")
        }
        _ => {
            // Runs such as `*&` or `,-` are two operators written together.
            let ok = op.char_indices().skip(1).any(|(k, _)| {
                ALLOWED.contains(&&op[..k]) && forbidden_operator(&op[k..], next, false).is_none()
            });
            if ok {
                return None;
            }
            format!("`{op}` is not allowed")
        }
    };
    Some(msg)
}

struct Parser<'c> {
    levels: Vec<Vec<TokenTree>>,
    what: &'c str,
    cx: &'c Ctxt,
}

impl Parser<'_> {
    fn fail<T>(&self, span: Span, msg: &str) -> Option<T> {
        self.cx
            .error_at(span, format!("{} is not a formula: {msg}", self.what));
        None
    }

    fn tree(&self, level: usize, i: usize) -> Option<&TokenTree> {
        self.levels[level].get(i)
    }

    fn punct(&self, level: usize, i: usize) -> Option<(char, Spacing)> {
        match self.tree(level, i) {
            Some(TokenTree::Punct(p)) => Some((p.as_char(), p.spacing())),
            _ => None,
        }
    }

    fn is_ident(&self, level: usize, i: usize, word: &str) -> bool {
        matches!(self.tree(level, i), Some(TokenTree::Ident(id)) if id == word)
    }

    /// `::` at `i`.
    fn is_path_sep(&self, level: usize, i: usize) -> bool {
        self.punct(level, i) == Some((':', Spacing::Joint))
            && matches!(self.punct(level, i + 1), Some((':', _)))
    }

    /// The span of the token at `i`, or of the end of the group for a missing token.
    fn span_at(&self, level: usize, i: usize, end: Span) -> Span {
        self.tree(level, i).map_or(end, TokenTree::span)
    }

    /// A new level from the inside of the group at `i`.
    fn enter(&mut self, level: usize, i: usize) -> usize {
        let inner = match &self.levels[level][i] {
            TokenTree::Group(g) => g.stream().into_iter().collect(),
            _ => Vec::new(),
        };
        self.levels.push(inner);
        self.levels.len() - 1
    }

    /// A whole level as one formula.
    fn whole(&mut self, level: usize, end: Span) -> Option<Node> {
        if self.levels[level].is_empty() {
            return self.fail(end, "expected a value");
        }
        let mut pos = 0;
        let node = self.expr(level, &mut pos, 0, end)?;
        match self.tree(level, pos) {
            None => Some(node),
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {
                self.fail(p.span(), "one value was expected here, not a list")
            }
            Some(t) => {
                let span = t.span();
                self.fail(span, &format!("expected an operator, found `{t}`"))
            }
        }
    }

    /// Comma-separated formulas filling a level (call arguments); a trailing comma is allowed.
    fn list(&mut self, level: usize, end: Span) -> Option<Vec<Node>> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < self.levels[level].len() {
            out.push(self.expr(level, &mut pos, 0, end)?);
            match self.punct(level, pos) {
                None if pos >= self.levels[level].len() => break,
                Some((',', Spacing::Alone)) => pos += 1,
                _ => {
                    let span = self.span_at(level, pos, end);
                    return self.fail(span, "expected `,` or the end of the arguments");
                }
            }
        }
        Some(out)
    }

    /// The binary operator at `pos`, with its length in tokens.
    fn binary_op(&self, level: usize, pos: usize) -> Option<(BinOp, usize)> {
        let (c, spacing) = self.punct(level, pos)?;
        let next = if spacing == Spacing::Joint {
            self.punct(level, pos + 1).map(|(c, _)| c)
        } else {
            None
        };
        Some(match (c, next) {
            ('&', Some('&')) => (BinOp::And, 2),
            ('|', Some('|')) => (BinOp::Or, 2),
            ('=', Some('=')) | ('!', Some('=')) | ('<', Some('=')) | ('>', Some('=')) => {
                (BinOp::Compare, 2)
            }
            ('<', _) | ('>', _) => (BinOp::Compare, 1),
            ('+', _) => (BinOp::Add, 1),
            ('-', _) => (BinOp::Sub, 1),
            ('*', _) => (BinOp::Mul, 1),
            ('/', _) => (BinOp::Div, 1),
            ('%', _) => (BinOp::Rem, 1),
            _ => return None,
        })
    }

    fn expr(&mut self, level: usize, pos: &mut usize, min: u8, end: Span) -> Option<Node> {
        let start = *pos;
        let mut left = self.unary(level, pos, end)?;
        loop {
            if self.is_ident(level, *pos, "as") && CAST_PRECEDENCE >= min {
                *pos += 1;
                self.path(level, pos, end, "expected a type after `as`")?;
                let le = matches!(self.binary_op(level, *pos), Some((BinOp::Compare, 2)));
                if self.punct(level, *pos).is_some_and(|(c, _)| c == '<') && !le {
                    let span = self.span_at(level, *pos, end);
                    return self.fail(
                        span,
                        "`<` after a cast reads as generic arguments; put the cast in parentheses",
                    );
                }
                left = Node {
                    kind: NodeKind::Cast(Box::new(left)),
                    level,
                    range: start..*pos,
                };
                continue;
            }
            let Some((op, len)) = self.binary_op(level, *pos) else {
                if let Some(('&' | '|' | '^', _)) = self.punct(level, *pos) {
                    let span = self.span_at(level, *pos, end);
                    return self.fail(span, "bitwise operators are not allowed");
                }
                break;
            };
            if op.precedence() < min {
                break;
            }
            if op == BinOp::Compare
                && matches!(
                    left.kind,
                    NodeKind::Binary {
                        op: BinOp::Compare,
                        ..
                    }
                )
            {
                let span = self.span_at(level, *pos, end);
                return self.fail(span, "comparison operators cannot be chained; use `&&`");
            }
            let op_range = *pos..*pos + len;
            *pos += len;
            let right = self.expr(level, pos, op.precedence() + 1, end)?;
            left = Node {
                kind: NodeKind::Binary {
                    op,
                    op_range,
                    left: Box::new(left),
                    right: Box::new(right),
                },
                level,
                range: start..*pos,
            };
        }
        Some(left)
    }

    fn unary(&mut self, level: usize, pos: &mut usize, end: Span) -> Option<Node> {
        let start = *pos;
        match self.punct(level, start) {
            Some(('-' | '&' | '!', _)) => {
                let not = self.punct(level, start).map(|(c, _)| c) == Some('!');
                *pos += 1;
                let inner = Box::new(self.unary(level, pos, end)?);
                let kind = if not {
                    NodeKind::Not(inner)
                } else {
                    NodeKind::Prefix(inner)
                };
                Some(Node {
                    kind,
                    level,
                    range: start..*pos,
                })
            }
            _ => {
                let atom = self.atom(level, pos, end)?;
                self.postfix(level, pos, atom, end)
            }
        }
    }

    fn atom(&mut self, level: usize, pos: &mut usize, end: Span) -> Option<Node> {
        let start = *pos;
        let kind = match self.tree(level, start) {
            Some(TokenTree::Literal(_)) => {
                *pos += 1;
                NodeKind::Lit
            }
            Some(TokenTree::Ident(id)) if id == "true" || id == "false" => {
                *pos += 1;
                NodeKind::Lit
            }
            Some(TokenTree::Ident(_)) | Some(TokenTree::Punct(_))
                if self.starts_path(level, start) =>
            {
                let bare = self.path(level, pos, end, "expected a name")?;
                NodeKind::Path { name: bare }
            }
            Some(TokenTree::Group(g))
                if matches!(g.delimiter(), Delimiter::Parenthesis | Delimiter::None) =>
            {
                let close = g.span_close();
                let inner = self.enter(level, start);
                if self.levels[inner].iter().any(is_top_comma) {
                    return self.fail(close, "tuples are not allowed; a formula is one value");
                }
                *pos += 1;
                NodeKind::Paren(Box::new(self.whole(inner, close)?))
            }
            Some(TokenTree::Group(g)) => {
                let span = g.span();
                return self.fail(
                    span,
                    "arrays and blocks are not allowed; a formula is one value",
                );
            }
            Some(TokenTree::Punct(p)) if p.as_char() == '|' => {
                return self.fail(
                    p.span(),
                    "closures are not allowed in a formula: write the value itself, or call a \
                     function that computes it",
                );
            }
            Some(t) => {
                let span = t.span();
                let found = t.to_string();
                return self.fail(span, &format!("expected a value, found `{found}`"));
            }
            None => return self.fail(end, "expected a value at the end"),
        };
        Some(Node {
            kind,
            level,
            range: start..*pos,
        })
    }

    fn starts_path(&self, level: usize, i: usize) -> bool {
        matches!(self.tree(level, i), Some(TokenTree::Ident(_))) || self.is_path_sep(level, i)
    }

    /// A path `a::b::<T>::c`, possibly with a leading `::`. Returns the name when the path is
    /// one bare lowercase identifier (`Some(None)` for any other path).
    fn path(
        &mut self,
        level: usize,
        pos: &mut usize,
        end: Span,
        msg: &str,
    ) -> Option<Option<Ident>> {
        let start = *pos;
        if self.is_path_sep(level, *pos) {
            *pos += 2;
        }
        loop {
            match self.tree(level, *pos) {
                Some(TokenTree::Ident(_)) => *pos += 1,
                _ => {
                    let span = self.span_at(level, *pos, end);
                    return self.fail(span, msg);
                }
            }
            if !self.is_path_sep(level, *pos) {
                break;
            }
            *pos += 2;
            if self.punct(level, *pos).map(|(c, _)| c) == Some('<') {
                self.generics(level, pos, end)?;
                if !self.is_path_sep(level, *pos) {
                    break;
                }
                *pos += 2;
            }
        }
        if *pos == start + 1 {
            if let Some(TokenTree::Ident(id)) = self.tree(level, start) {
                let s = id.to_string();
                if s.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
                    return Some(Some(id.clone()));
                }
            }
        }
        Some(None)
    }

    /// `<...>` with nesting, starting at `<`.
    fn generics(&mut self, level: usize, pos: &mut usize, end: Span) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.punct(level, *pos) {
                Some(('<', _)) => depth += 1,
                Some(('>', _)) => {
                    depth -= 1;
                    if depth == 0 {
                        *pos += 1;
                        return Some(());
                    }
                }
                _ if self.tree(level, *pos).is_none() => {
                    return self.fail(end, "unclosed `<` in generic arguments");
                }
                _ => {}
            }
            *pos += 1;
        }
    }

    fn postfix(
        &mut self,
        level: usize,
        pos: &mut usize,
        mut node: Node,
        end: Span,
    ) -> Option<Node> {
        let start = node.range.start;
        loop {
            let at = *pos;
            match self.tree(level, at) {
                Some(TokenTree::Punct(p))
                    if p.as_char() == '.' && p.spacing() == Spacing::Alone =>
                {
                    let member = match self.tree(level, at + 1) {
                        Some(TokenTree::Ident(id)) => Some(id.clone()),
                        Some(TokenTree::Literal(_)) => None,
                        _ => {
                            let span = self.span_at(level, at + 1, end);
                            return self.fail(span, "expected a field or method name after `.`");
                        }
                    };
                    *pos = at + 2;
                    let turbofish_start = *pos;
                    if let Some(method) = &member {
                        if self.is_path_sep(level, *pos) {
                            *pos += 2;
                            if self.punct(level, *pos).map(|(c, _)| c) != Some('<') {
                                let span = self.span_at(level, *pos, end);
                                return self.fail(span, "expected `<` after `::`");
                            }
                            self.generics(level, pos, end)?;
                        }
                        if let Some(args) = self.call_args(level, pos)? {
                            node = Node {
                                kind: NodeKind::Method {
                                    receiver: Box::new(node),
                                    method: method.clone(),
                                    turbofish: turbofish_start..*pos - 1,
                                    args,
                                },
                                level,
                                range: start..*pos,
                            };
                            continue;
                        }
                        if *pos != turbofish_start {
                            let span = self.span_at(level, *pos, end);
                            return self.fail(span, "expected the method's arguments `(...)`");
                        }
                    }
                    node = Node {
                        kind: NodeKind::Field(Box::new(node)),
                        level,
                        range: start..*pos,
                    };
                }
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    if !matches!(node.kind, NodeKind::Path { .. }) {
                        let span = g.span();
                        return self.fail(span, "only named functions can be called");
                    }
                    let args = self.call_args(level, pos)?.unwrap_or_default();
                    node = Node {
                        kind: NodeKind::Call {
                            func: Box::new(node),
                            args,
                        },
                        level,
                        range: start..*pos,
                    };
                }
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => {
                    let close = g.span_close();
                    let inner = self.enter(level, at);
                    let index = self.whole(inner, close)?;
                    *pos = at + 1;
                    node = Node {
                        kind: NodeKind::Index(Box::new(node), Box::new(index)),
                        level,
                        range: start..*pos,
                    };
                }
                _ => return Some(node),
            }
        }
    }

    /// The arguments of a parenthesized group at `pos`, if there is one.
    fn call_args(&mut self, level: usize, pos: &mut usize) -> Option<Option<Vec<Node>>> {
        match self.tree(level, *pos) {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                let close = g.span_close();
                let inner = self.enter(level, *pos);
                *pos += 1;
                Some(Some(self.list(inner, close)?))
            }
            _ => Some(None),
        }
    }
}

fn is_top_comma(t: &TokenTree) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == ',')
}

#[cfg(test)]
mod tests;
