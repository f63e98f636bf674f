//! The parser against syn's expression tree, and its refusals.

use super::*;
use crate::rng::Rng;
use quote::ToTokens;
use std::ops::Range;
use syn::Expr;

/// Our tree, fully parenthesized: the same rendering as `show_syn` gives syn's.
fn show(p: &Parsed, n: &Node) -> String {
    let text = |level: usize, r: Range<usize>| -> String {
        p.levels[level][r]
            .iter()
            .cloned()
            .collect::<TokenStream>()
            .to_string()
    };
    let list = |args: &[Node]| {
        args.iter()
            .map(|a| show(p, a))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &n.kind {
        NodeKind::Lit | NodeKind::Path { .. } => text(n.level, n.range.clone()),
        NodeKind::Field(b) => format!(
            "({}).{}",
            show(p, b),
            text(n.level, n.range.end - 1..n.range.end)
        ),
        NodeKind::Index(b, i) => format!("({})[{}]", show(p, b), show(p, i)),
        NodeKind::Cast(e) => format!(
            "({} as {})",
            show(p, e),
            text(n.level, e.range.end + 1..n.range.end)
        ),
        NodeKind::Prefix(e) | NodeKind::Not(e) => {
            format!(
                "({}{})",
                text(n.level, n.range.start..n.range.start + 1),
                show(p, e)
            )
        }
        NodeKind::Binary {
            op_range,
            left,
            right,
            ..
        } => {
            format!(
                "({} {} {})",
                show(p, left),
                text(n.level, op_range.clone()),
                show(p, right)
            )
        }
        NodeKind::Paren(e) => show(p, e),
        NodeKind::Call { func, args } => format!("{}({})", show(p, func), list(args)),
        NodeKind::Method {
            receiver,
            method,
            turbofish,
            args,
        } => format!(
            "({}).{method}{}({})",
            show(p, receiver),
            text(n.level, turbofish.clone()),
            list(args)
        ),
    }
}

/// syn's tree rendered like `show`; an error for what lies outside the formula grammar.
fn show_syn(e: &Expr) -> Result<String, String> {
    let ts = |t: &dyn ToTokens| t.to_token_stream().to_string();
    let list = |args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>| {
        args.iter()
            .map(show_syn)
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.join(", "))
    };
    Ok(match e {
        Expr::Lit(l) => ts(l),
        Expr::Path(p) => ts(p),
        Expr::Field(f) => format!("({}).{}", show_syn(&f.base)?, ts(&f.member)),
        Expr::Index(i) => format!("({})[{}]", show_syn(&i.expr)?, show_syn(&i.index)?),
        Expr::Cast(c) if matches!(*c.ty, syn::Type::Path(_)) => {
            format!("({} as {})", show_syn(&c.expr)?, ts(&c.ty))
        }
        Expr::Unary(u) => format!("({}{})", ts(&u.op), show_syn(&u.expr)?),
        Expr::Reference(r) if r.mutability.is_none() => format!("(&{})", show_syn(&r.expr)?),
        Expr::Binary(b) => format!(
            "({} {} {})",
            show_syn(&b.left)?,
            ts(&b.op),
            show_syn(&b.right)?
        ),
        Expr::Paren(p) => show_syn(&p.expr)?,
        Expr::Call(c) => format!("{}({})", show_syn(&c.func)?, list(&c.args)?),
        Expr::MethodCall(m) => format!(
            "({}).{}{}({})",
            show_syn(&m.receiver)?,
            m.method,
            m.turbofish.as_ref().map(|t| ts(t)).unwrap_or_default(),
            list(&m.args)?
        ),
        other => return Err(format!("outside the grammar: {}", ts(other))),
    })
}

fn ours(src: &str) -> Result<String, String> {
    let cx = Ctxt::default();
    let tokens: TokenStream = src.parse().unwrap();
    match parse(tokens, "formula", &cx) {
        Some(p) => Ok(squeeze(&show(&p, &p.root))),
        None => Err(cx.to_compile_errors().to_string()),
    }
}

/// syn's reading of `src`, or its error.
fn syns(src: &str) -> Result<String, String> {
    let expr = syn::parse_str::<Expr>(src).map_err(|e| e.to_string())?;
    show_syn(&expr).map(|s| squeeze(&s))
}

/// Without spaces: token printing spaces `::<` differently when syn re-creates `::`.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect()
}

/// A random formula of the grammar, as text.
fn formula(rng: &mut Rng, depth: usize) -> String {
    let leaf = |rng: &mut Rng| match rng.below(5) {
        0 => format!("{}", rng.below(300)),
        1 => ["m", "rows", "config", "_x"][rng.below(4)].to_string(),
        2 => "config.hidden_size".to_string(),
        3 => "consts::WIDTH".to_string(),
        _ => "true".to_string(),
    };
    if depth == 0 {
        return leaf(rng);
    }
    let sub = |rng: &mut Rng| formula(rng, depth - 1);
    match rng.below(11) {
        0..=2 => {
            let op = [
                "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
            ][rng.below(13)];
            format!("{} {op} {}", sub(rng), sub(rng))
        }
        3 => format!("({})", sub(rng)),
        4 => format!("{}{}", ["-", "!", "&"][rng.below(3)], sub(rng)),
        5 => format!("ceil_div({}, {})", sub(rng), sub(rng)),
        6 => format!("({}).width()", sub(rng)),
        7 => format!("({}).max::<usize>({})", sub(rng), sub(rng)),
        8 => format!("({}) as usize", sub(rng)),
        9 => format!("table[{}].rows", sub(rng)),
        _ => leaf(rng),
    }
}

#[test]
fn same_tree_as_syn() {
    let fixed = [
        "a + b * c - d / e % f",
        "a - b - c",
        "a * 2 > b && !c || d == 0",
        "-a * b",
        "a as usize * b",
        "&config",
        "f(&config, m) - 1",
        "config.f().g(1, 2).h",
        "x.0 + t[i][j]",
        "a::B::<u8>(1)",
        // Generic arguments inside a path, followed by more of it.
        "T::<u8>::f(1) + m::<A, B>::n",
        "::core::cmp::max(a, b)",
        "q8_1_mmq_bytes(m16, max(widest_k, ffn_k))",
        "(config.index_n_heads + 1) * config.index_head_dim",
        "f(a, b,)",
        // A field followed by an index is not a method call.
        "a.b[c] + d.e[0].f",
    ];
    for src in fixed {
        assert_eq!(ours(src), syns(src), "{src}");
    }
    let (mut same, mut both_rejected) = (0, 0);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..3000 {
        let src = formula(&mut rng, 4);
        match (ours(&src), syns(&src)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{src}");
                same += 1;
            }
            (Err(_), Err(_)) => both_rejected += 1,
            (a, b) => panic!("{src}: ours {a:?}, syn {b:?}"),
        }
    }
    assert!(
        same > 2000 && both_rejected > 0,
        "{same} same, {both_rejected} rejected"
    );
}

/// A value followed by an invisible group (a macro_rules `$x`) is two values, not an
/// index: only `[...]` indexes.
#[test]
fn only_brackets_index() {
    use proc_macro2::{Group, Ident, Span};
    let cx = Ctxt::default();
    let inner: TokenStream = "b".parse().unwrap();
    let tokens: TokenStream = [
        TokenTree::Ident(Ident::new("a", Span::call_site())),
        TokenTree::Group(Group::new(Delimiter::None, inner)),
    ]
    .into_iter()
    .collect();
    assert!(parse(tokens, "formula", &cx).is_none());
    assert!(cx
        .to_compile_errors()
        .to_string()
        .contains("expected an operator"));
}

#[test]
fn true_and_false_are_literals_not_names() {
    let cx = Ctxt::default();
    let parsed = parse("flag && true || !false".parse().unwrap(), "formula", &cx).unwrap();
    let mut names = Vec::new();
    fn walk(node: &Node, out: &mut Vec<String>) {
        match &node.kind {
            NodeKind::Path { name: Some(id) } => out.push(id.to_string()),
            NodeKind::Binary { left, right, .. } => {
                walk(left, out);
                walk(right, out);
            }
            NodeKind::Not(inner) | NodeKind::Paren(inner) => walk(inner, out),
            _ => {}
        }
    }
    walk(&parsed.root, &mut names);
    assert_eq!(names, ["flag"]);
}

#[test]
fn reports_what_is_outside_the_grammar() {
    for (src, msg) in [
        ("a b", "expected an operator, found `b`"),
        ("(a, b)", "tuples are not allowed"),
        ("a & b", "bitwise operators are not allowed"),
        ("[1, 2]", "arrays and blocks are not allowed"),
        ("a.", "expected a field or method name"),
        ("a +", "expected a value at the end"),
        ("f(a b)", "expected `,` or the end of the arguments"),
        ("a::<u8", "unclosed `<`"),
        ("x as", "expected a type after `as`"),
        ("(a)(b)", "only named functions can be called"),
        ("a.b::<u8>", "expected the method's arguments"),
        ("a, b", "one value was expected here, not a list"),
        ("()", "expected a value"),
        ("a !", "expected an operator, found `!`"),
        ("a; b", "a formula is one expression, not statements"),
        ("a + < b", "expected a value, found `<`"),
        ("a =- b", "`=-` is not allowed"),
    ] {
        let err = ours(src).expect_err(src);
        assert!(err.contains("formula is not a formula"), "{src}: {err}");
        assert!(err.contains(msg), "{src}: {err}");
    }
}
