//! Formulas: plain Rust tokens restricted to arithmetic, rewritten into checked arithmetic.
//!
//! A formula is kept three ways: the author's tokens (re-emitted with their own spans, so
//! rustc's type errors land on them), its text for reports, and its parse tree
//! (`formula_parse`), which `Formula::checked` rewrites so each `+ - * / %` and
//! helper call becomes a call on an `::arena_runtime::CheckedArith` that errs instead of wrapping.

use crate::ctxt::Ctxt;
use crate::formula_parse::{self, Node, NodeKind, Parsed};
use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};

/// Helpers a formula may call by bare name; they map to checked methods of `Formula`.
pub(crate) const HELPERS: &[&str] = &["ceil16", "round_up", "ceil_div", "max", "min"];

/// One parsed formula.
pub struct Formula {
    parsed: Parsed,
    /// The formula as written, for docs and reports.
    pub text: String,
}

/// How a failed checked operation leaves the expression.
#[derive(Clone, Copy)]
enum Style<'a> {
    /// `?`: the enclosing function returns the `SizeError` (the run-time path).
    Try,
    /// Panic (in const evaluation, a compile error: the const path): the operations are a
    /// `KonstArith`'s, which panic themselves; a call's value is unwrapped with the message
    /// this local holds (a `&'static str` bound once a formula, so no operation repeats its
    /// text).
    Panic(&'a Ident),
    /// `break 'label Err(..)` out of a labeled block: `?` for a `const fn` (`size!`,
    /// region sizes), where `?` itself is not allowed.
    Break(&'a TokenStream),
}

/// Where a sub-expression's value goes: a size, a truth value, or a call argument.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Size,
    Bool,
    Arg,
}

impl Formula {
    /// Parses `tokens` as a formula; reports the first problem to `cx` and returns `None` then.
    pub fn parse(tokens: TokenStream, what: &str, cx: &Ctxt) -> Option<Formula> {
        if tokens.is_empty() {
            cx.error_at(Span::call_site(), format!("{what} is empty"));
            return None;
        }
        let text = text_of(tokens.clone());
        let parsed = formula_parse::parse(tokens, what, cx)?;
        Some(Formula { parsed, text })
    }

    /// The bare lowercase names the formula reads as values (not called as functions):
    /// these must be inputs or derived values.
    pub(crate) fn value_names(&self) -> Vec<Ident> {
        let mut out = Vec::new();
        collect_names(&self.parsed.root, &mut out);
        out
    }

    /// The methods the formula calls (`x.min(y)` gives `min`) and the last name of each
    /// function path it calls (`Scratch::layout(m)` gives `layout`), for the const path's
    /// check.
    pub(crate) fn called_names(&self) -> Vec<Called> {
        let mut out = Vec::new();
        collect_calls(&self.parsed, &self.parsed.root, &mut out);
        out
    }

    /// Tokens computing the size with checked arithmetic through the `Formula` named `f`.
    /// The value is a `usize`; `?` propagates a `SizeError`.
    pub(crate) fn checked(&self, f: &Ident) -> TokenStream {
        self.rewrite(&self.parsed.root, Mode::Size, f, Style::Try)
    }

    /// Tokens computing a gate (a `bool`), with checked arithmetic inside comparisons.
    pub(crate) fn checked_bool(&self, f: &Ident) -> TokenStream {
        self.rewrite(&self.parsed.root, Mode::Bool, f, Style::Try)
    }

    /// The size for a `const fn`: a failed operation panics with `msg` (a compile error under
    /// const evaluation).
    pub(crate) fn konst(&self, f: &Ident, msg: &Ident) -> TokenStream {
        self.rewrite(&self.parsed.root, Mode::Size, f, Style::Panic(msg))
    }

    /// A gate for a `const fn`, as [`Self::konst`].
    pub(crate) fn konst_bool(&self, f: &Ident, msg: &Ident) -> TokenStream {
        self.rewrite(&self.parsed.root, Mode::Bool, f, Style::Panic(msg))
    }

    /// The size inside a block labeled `label` whose value is a `Result<usize, SizeError>`:
    /// a failed operation breaks out of it with the error. Usable in a `const fn`.
    pub(crate) fn breaking(&self, f: &Ident, label: &TokenStream) -> TokenStream {
        self.rewrite(&self.parsed.root, Mode::Size, f, Style::Break(label))
    }

    /// The author's tokens of `range` at `level`.
    fn tokens(&self, level: usize, range: std::ops::Range<usize>) -> TokenStream {
        self.parsed.levels[level][range].iter().cloned().collect()
    }

    fn rewrite(&self, node: &Node, mode: Mode, f: &Ident, style: Style) -> TokenStream {
        match &node.kind {
            NodeKind::Binary {
                op,
                op_range,
                left,
                right,
            } => {
                let op_tokens = self.tokens(node.level, op_range.clone());
                if let Some(method) = op.method() {
                    let span = self.parsed.levels[node.level][op_range.start].span();
                    let method = Ident::new(method, span);
                    let l = self.rewrite(left, Mode::Size, f, style);
                    let r = self.rewrite(right, Mode::Size, f, style);
                    return checked_op(quote_spanned!(span=> #f.#method(#l, #r)), style, span);
                }
                let operand = match op {
                    formula_parse::BinOp::And | formula_parse::BinOp::Or => Mode::Bool,
                    _ => Mode::Size,
                };
                let l = grouped(self.rewrite(left, operand, f, style));
                let r = grouped(self.rewrite(right, operand, f, style));
                quote!(#l #op_tokens #r)
            }
            NodeKind::Not(inner) => {
                let op = self.tokens(node.level, node.range.start..node.range.start + 1);
                let inner = grouped(self.rewrite(inner, Mode::Bool, f, style));
                quote!(#op #inner)
            }
            NodeKind::Paren(inner) => grouped(self.rewrite(inner, mode, f, style)),
            NodeKind::Call { func, args } => {
                if let NodeKind::Path { name: Some(id) } = &func.kind {
                    if mode != Mode::Bool && HELPERS.contains(&id.to_string().as_str()) {
                        let args = args.iter().map(|a| self.rewrite(a, Mode::Size, f, style));
                        let call = quote_spanned!(id.span()=> #f.#id(#(#args),*));
                        return checked_op(call, style, id.span());
                    }
                }
                let span = self.parsed.levels[func.level][func.range.start].span();
                let func = self.tokens(func.level, func.range.clone());
                let args = args.iter().map(|a| self.rewrite(a, Mode::Arg, f, style));
                wrap_value(
                    quote_spanned!(span=> #func(#(#args),*)),
                    mode,
                    f,
                    span,
                    style,
                )
            }
            NodeKind::Method {
                receiver,
                method,
                turbofish,
                args,
            } => {
                let receiver = grouped(self.rewrite(receiver, Mode::Arg, f, style));
                let turbofish = self.tokens(node.level, turbofish.clone());
                let args = args.iter().map(|a| self.rewrite(a, Mode::Arg, f, style));
                // Spanned at the method, so rustc's errors about the call (a method that is not
                // a `const fn` on the const path, say) point at the formula's tokens.
                let call = quote_spanned!(method.span()=> #receiver.#method #turbofish(#(#args),*));
                wrap_value(call, mode, f, method.span(), style)
            }
            // Literals, paths, fields, indexing, casts, `-x` and `&x`: as written.
            _ => self.tokens(node.level, node.range.clone()),
        }
    }
}

/// Visits every node of the tree below `node`, children before their parent, in source
/// order; a called function's path is not visited (its name is not a value).
fn walk(node: &Node, visit: &mut dyn FnMut(&Node)) {
    match &node.kind {
        NodeKind::Path { .. } | NodeKind::Lit => {}
        NodeKind::Field(inner)
        | NodeKind::Cast(inner)
        | NodeKind::Prefix(inner)
        | NodeKind::Not(inner)
        | NodeKind::Paren(inner) => walk(inner, visit),
        NodeKind::Index(base, index) => {
            walk(base, visit);
            walk(index, visit);
        }
        NodeKind::Binary { left, right, .. } => {
            walk(left, visit);
            walk(right, visit);
        }
        NodeKind::Call { args, .. } => args.iter().for_each(|a| walk(a, visit)),
        NodeKind::Method { receiver, args, .. } => {
            walk(receiver, visit);
            args.iter().for_each(|a| walk(a, visit));
        }
    }
    visit(node);
}

fn collect_names(node: &Node, out: &mut Vec<Ident>) {
    walk(node, &mut |n| {
        if let NodeKind::Path { name: Some(id) } = &n.kind {
            out.push(id.clone());
        }
    });
}

/// A call in a formula, by its last name.
pub(crate) enum Called {
    Method(Ident),
    /// The path's last name, the path as written, and the number of arguments.
    Function(Ident, String, usize),
}

fn collect_calls(parsed: &Parsed, node: &Node, out: &mut Vec<Called>) {
    walk(node, &mut |n| match &n.kind {
        NodeKind::Call { func, args } => {
            let path = &parsed.levels[func.level][func.range.clone()];
            let last = path.iter().rev().find_map(|t| match t {
                TokenTree::Ident(id) => Some(id.clone()),
                _ => None,
            });
            if let Some(id) = last {
                let text = text_of(path.iter().cloned().collect());
                out.push(Called::Function(id, text, args.len()));
            }
        }
        NodeKind::Method { method, .. } => out.push(Called::Method(method.clone())),
        _ => {}
    });
}

/// Wraps tokens in an invisible group, so precedence survives without parentheses.
fn grouped(ts: TokenStream) -> TokenStream {
    TokenTree::Group(Group::new(Delimiter::None, ts)).into()
}

/// `op` (a `Result<usize, SizeError>`), unwrapped inside a block labeled `label` whose
/// value is a `Result<usize, SizeError>`: an error breaks out of the block with it.
pub(crate) fn breaking_op(op: TokenStream, label: &TokenStream) -> TokenStream {
    checked_op(op, Style::Break(label), Span::call_site())
}

/// A checked operation's `Result<usize, SizeError>` unwrapped as `style` says.
fn checked_op(op: TokenStream, style: Style, span: Span) -> TokenStream {
    match style {
        Style::Try => quote_spanned!(span=> #op?),
        // The const path's `f` is a `KonstArith`, whose operations unwrap themselves.
        Style::Panic(_) => op,
        Style::Break(label) => quote_spanned! {span=> {
            let __r = #op;
            let __v = match &__r {
                ::core::result::Result::Ok(__v) => *__v,
                ::core::result::Result::Err(_) => break #label __r,
            };
            ::core::mem::forget(__r);
            __v
        }},
    }
}

/// A call's result in a size position: a plain `usize` (or `u32`, `u64`) or a checked
/// result of a sizing function, through `IntoSize` at run time and `Konst` in a `const fn`.
fn wrap_value(call: TokenStream, mode: Mode, f: &Ident, span: Span, style: Style) -> TokenStream {
    if mode != Mode::Size {
        return call;
    }
    match style {
        Style::Try => quote_spanned!(span=> #f.value(#call)?),
        // `Konst` picks the conversion by the call's type with inherent `const fn`s, since a
        // `const fn` cannot call `IntoSize`; on the const path its `get` converts and unwraps
        // in one call.
        Style::Panic(msg) => quote_spanned!(span=> __K(#call).get(#msg)),
        Style::Break(_) => checked_op(
            quote_spanned!(span=> ::arena_runtime::__private::Konst(#call).into_result(#f)),
            style,
            span,
        ),
    }
}

/// The formula's text as an author would write it: spaces around binary operators, none
/// around `.` and `::`.
pub fn text_of(tokens: TokenStream) -> String {
    #[derive(PartialEq, Clone, Copy)]
    enum Last {
        Start,
        Word,
        Tight,
        Spaced,
    }
    fn walk(tokens: TokenStream, out: &mut String) {
        let mut last = Last::Start;
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{ ", " }"),
                        Delimiter::None => ("", ""),
                    };
                    out.push_str(open);
                    walk(g.stream(), out);
                    out.push_str(close);
                    last = Last::Word;
                }
                TokenTree::Ident(_) | TokenTree::Literal(_) => {
                    if last == Last::Word {
                        out.push(' ');
                    }
                    out.push_str(&trees[i].to_string());
                    last = Last::Word;
                }
                TokenTree::Punct(_) => {
                    let op = formula_parse::operator_at(&trees, &mut i);
                    match op.as_str() {
                        "." | "::" => {
                            out.push_str(&op);
                            last = Last::Tight;
                        }
                        "," => {
                            out.push_str(", ");
                            last = Last::Spaced;
                        }
                        "&" | "!" | "-" if last != Last::Word => {
                            out.push_str(&op);
                            last = Last::Tight;
                        }
                        _ => {
                            out.push(' ');
                            out.push_str(&op);
                            out.push(' ');
                            last = Last::Spaced;
                        }
                    }
                }
            }
            i += 1;
        }
    }
    let mut out = String::new();
    walk(tokens, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::format_ident;

    fn parse(ts: TokenStream) -> Result<Formula, String> {
        let cx = Ctxt::default();
        let f = Formula::parse(ts, "formula", &cx);
        let errors = cx.to_compile_errors().to_string();
        f.ok_or(errors)
    }

    #[test]
    fn text_reads_like_the_source() {
        assert_eq!(
            text_of(quote!([max_batch_tokens, config.hidden_size])),
            "[max_batch_tokens, config.hidden_size]"
        );
        assert_eq!(
            text_of(quote!(2 * config.a + ceil16(m))),
            "2 * config.a + ceil16(m)"
        );
        assert_eq!(
            text_of(quote!(f(&config, x) >= 0 && !b)),
            "f(&config, x) >= 0 && !b"
        );
        assert_eq!(text_of(quote!(a::B::<u8>(1))), "a::B:: < u8 > (1)");
    }

    #[test]
    fn rejects_outside_the_grammar() {
        // Each construct is rejected with the message that says what it is.
        for (bad, says) in [
            (
                quote!(if a { 1 } else { 2 }),
                "`if` is not allowed: a formula is arithmetic",
            ),
            (
                quote!(|x| x),
                "`|` is not allowed: neither a closure nor a bitwise or",
            ),
            (
                quote!(a | b),
                "`|` is not allowed: neither a closure nor a bitwise or",
            ),
            (quote!({ 1 }), "a block is not allowed"),
            (quote!(a = 1), "`=` (assignment) is not allowed"),
            (quote!(a += 1), "`+=` (assignment) is not allowed"),
            (
                quote!(a?),
                "`?` is not allowed: the derive checks the arithmetic itself",
            ),
            (
                quote!(a ^ b),
                "`^` is not allowed: only + - * / % and comparisons are checked",
            ),
            (
                quote!(a << 2),
                "`<<` is not allowed: only + - * / % and comparisons are checked",
            ),
            (
                quote!(a >> 2),
                "`>>` is not allowed: only + - * / % and comparisons are checked",
            ),
            (quote!(foo!(x)), "a macro call is not allowed"),
            (quote!(a..b), "`..` (a range) is not allowed"),
            (quote!(a; b), "`;` is not allowed"),
            (quote!((a, b)), "formula is not a formula"),
        ] {
            let err = parse(bad.clone())
                .err()
                .unwrap_or_else(|| panic!("accepted {bad}"));
            assert!(err.contains("formula is not a formula: "), "{bad}: {err}");
            assert!(err.contains(says), "{bad}: `{err}` does not say `{says}`");
        }
        for good in [
            quote!(a * b + c),
            quote!(config.x > 0 && !y),
            quote!(f(&config, m) - 1),
            quote!(x as usize),
            quote!(a.max(b)),
            quote!(-1),
            quote!(t[!(x)]),
            quote!(a * -b),
        ] {
            assert!(
                parse(good.clone()).is_ok(),
                "rejected {good}: {:?}",
                parse(good.clone()).err()
            );
        }
    }

    #[test]
    fn rewrites_arithmetic_into_checked_calls() {
        let f = format_ident!("__f");
        let formula = parse(quote!(a * ceil16(b) + g(c))).unwrap();
        let out = formula.checked(&f).to_string();
        assert!(out.contains("__f . add"), "{out}");
        assert!(out.contains("__f . mul"), "{out}");
        assert!(out.contains("__f . ceil16 (b) ?"), "{out}");
        assert!(out.contains("__f . value (g (c)) ?"), "{out}");
        let names: Vec<String> = formula
            .value_names()
            .iter()
            .map(|i| i.to_string())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn every_operator_is_checked_under_negation_and_logic() {
        let f = format_ident!("__f");
        for (op, method) in [
            ("+", "add"),
            ("-", "sub"),
            ("*", "mul"),
            ("/", "div"),
            ("%", "rem"),
        ] {
            let ts: TokenStream = format!("a {op} b").parse().unwrap();
            let out = parse(ts).unwrap().checked(&f).to_string();
            assert_eq!(out, format!("__f . {method} (a , b) ?"), "{op}");
        }
        // Inside `!` and `&&` the arithmetic is still checked; the logic stays as written.
        let gate = parse(quote!(!(m + 1 > k) && (k - 1) % 2 == 0)).unwrap();
        let out = gate.checked_bool(&f).to_string();
        assert!(out.starts_with("! "), "{out}");
        for call in ["__f . add (m , 1) ?", "__f . sub (k , 1) ?", "__f . rem ("] {
            assert!(out.contains(call), "{call} in {out}");
        }
        assert!(out.contains("&&"), "{out}");
        assert_eq!(gate.text, "!(m + 1 > k) && (k - 1) % 2 == 0");
        // A boolean operand of `&&` / `||` is a truth value, not a size to convert.
        let flags = parse(quote!(on || config.enabled() && k > 0)).unwrap();
        let out = flags.checked_bool(&f).to_string();
        assert!(
            !out.contains("value (on)") && !out.contains("value (config"),
            "{out}"
        );
        assert_eq!(text_of(quote!(a * -b - c)), "a * -b - c");
    }
}
