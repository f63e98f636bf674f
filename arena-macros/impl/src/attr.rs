//! Attribute parsing: `#[arena(...)]`, `#[buffer(...)]`, `#[regions(...)]`, `#[region(...)]`.
//!
//! Every attribute is a comma-separated list of `key`, `key = tokens` or `key(tokens)`.
//! Splitting at top-level commas is enough, since brackets and parentheses arrive as single
//! token groups; each value is then parsed by its key.

use arena_macros_core::ctxt::Ctxt;
use arena_macros_core::suggest::{did_you_mean, hint};
use proc_macro2::{Delimiter, Ident, Spacing, Span, TokenStream, TokenTree};
use syn::spanned::Spanned;

/// What follows a key.
pub enum Value {
    /// `key`
    Flag,
    /// `key = tokens`
    Assign(TokenStream),
    /// `key(tokens)`
    List(TokenStream),
}

pub struct Entry {
    pub key: Ident,
    pub value: Value,
}

impl Entry {
    /// The tokens of `key = tokens`, or an error saying how the key is written.
    pub fn assigned(self, usage: &str, cx: &Ctxt) -> Option<TokenStream> {
        match self.value {
            Value::Assign(ts) if !ts.is_empty() => Some(ts),
            _ => {
                cx.error_at(
                    self.key.span(),
                    format!("`{}` needs a value: `{usage}`", self.key),
                );
                None
            }
        }
    }

    /// The tokens of `key(tokens)`.
    pub fn listed(self, usage: &str, cx: &Ctxt) -> Option<TokenStream> {
        match self.value {
            Value::List(ts) => Some(ts),
            _ => {
                cx.error_at(
                    self.key.span(),
                    format!("`{}` is written `{usage}`", self.key),
                );
                None
            }
        }
    }

    /// A bare `key`.
    pub fn flag(self, cx: &Ctxt) -> bool {
        match self.value {
            Value::Flag => true,
            _ => {
                cx.error_at(
                    self.key.span(),
                    format!("`{}` takes no value: write just `{}`", self.key, self.key),
                );
                false
            }
        }
    }
}

/// `a, b, c`, without instantiating `join` for another slice type.
fn list(items: &[&str]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(item);
    }
    out
}

/// Splits a token stream at its top-level commas.
pub fn split_commas(tokens: TokenStream) -> Vec<TokenStream> {
    let mut parts = vec![TokenStream::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' && p.spacing() == Spacing::Alone => {
                parts.push(TokenStream::new());
            }
            _ => parts.last_mut().expect("never empty").extend([tt]),
        }
    }
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// The entries of `#[name(...)]`, with unknown and duplicate keys reported.
pub fn entries(attr: &syn::Attribute, name: &str, known: &[&str], cx: &Ctxt) -> Vec<Entry> {
    let tokens = match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        other => {
            cx.error_spanned_by(other, format!("expected `#[{name}(key = value, ...)]`"));
            return Vec::new();
        }
    };
    let mut seen: Vec<Ident> = Vec::new();
    let mut out = Vec::new();
    let mut parts: std::collections::VecDeque<TokenStream> = split_commas(tokens).into();
    while let Some(part) = parts.pop_front() {
        let mut trees = part.clone().into_iter();
        let key = match trees.next() {
            Some(TokenTree::Ident(key)) => key,
            Some(other) => {
                cx.error_at(
                    other.span(),
                    format!("expected a key of `#[{name}(...)]`: {}", list(known)),
                );
                continue;
            }
            None => {
                cx.error_at(
                    Span::call_site(),
                    format!("empty entry in `#[{name}(...)]`"),
                );
                continue;
            }
        };
        let rest: Vec<TokenTree> = trees.collect();
        let value = match rest.first() {
            None => Value::Flag,
            Some(TokenTree::Punct(p)) if p.as_char() == '=' && p.spacing() == Spacing::Alone => {
                // `shape = [..] gate = x`: a missing comma before another key's `=`.
                let next_key = (2..rest.len()).find(|&j| {
                    matches!(&rest[j], TokenTree::Ident(id) if known.contains(&id.to_string().as_str()))
                        && matches!(rest.get(j + 1), Some(TokenTree::Punct(p)) if p.as_char() == '=' && p.spacing() == Spacing::Alone)
                });
                match next_key {
                    Some(j) => {
                        cx.error_at(
                            rest[j].span(),
                            format!("expected `,` before `{}`: the keys of `#[{name}(...)]` are separated by commas", rest[j]),
                        );
                        parts.push_front(rest[j..].iter().cloned().collect());
                        Value::Assign(rest[1..j].iter().cloned().collect())
                    }
                    None => Value::Assign(rest[1..].iter().cloned().collect()),
                }
            }
            Some(TokenTree::Group(g))
                if g.delimiter() == Delimiter::Parenthesis
                    && matches!(rest.get(1), None | Some(TokenTree::Ident(_))) =>
            {
                if let Some(next) = rest.get(1) {
                    // `inputs(..) derived(..)`: a missing comma. Read the key, then the rest
                    // as the next entry, so the keys after it are not lost (each would be one
                    // more error at every use of what it declares).
                    cx.error_at(
                        next.span(),
                        format!("expected `,` after `{key}(...)`: the keys of `#[{name}(...)]` are separated by commas"),
                    );
                    parts.push_front(rest[1..].iter().cloned().collect());
                }
                Value::List(g.stream())
            }
            Some(other) => {
                cx.error_at(
                    other.span(),
                    format!("expected `{key} = ...` or `{key}(...)` after `{key}`, then `,` before the next key"),
                );
                continue;
            }
        };
        let k = key.to_string();
        let key = if known.contains(&k.as_str()) {
            key
        } else {
            cx.error_at(
                key.span(),
                format!(
                    "unknown key `{k}` in `#[{name}(...)]`{}",
                    hint(&k, known.iter().copied())
                ),
            );
            // A near miss (`phase(...)` for `phases(...)`) is read as the key it misses, so
            // the rest of the declaration is checked against it: one typo, one error.
            match did_you_mean(&k, known.iter().copied()) {
                Some(meant) => Ident::new(meant, key.span()),
                None => continue,
            }
        };
        if seen.iter().any(|s| s == &key) {
            cx.error_at(
                key.span(),
                format!("duplicate key `{k}` in `#[{name}(...)]`"),
            );
            continue;
        }
        seen.push(key.clone());
        out.push(Entry { key, value });
    }
    out
}

/// The `#[doc = "..."]` lines of an item, trimmed of the one leading space rustdoc adds.
pub fn doc_lines(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => {
                    let v = s.value();
                    Some(v.strip_prefix(' ').map(str::to_string).unwrap_or(v))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Parses `inputs(name: Type, ...)`.
pub fn parse_inputs(tokens: TokenStream, cx: &Ctxt) -> Vec<(Ident, syn::Type)> {
    let mut out = Vec::new();
    for part in split_commas(tokens) {
        let span = part.span();
        let parsed = syn::parse::Parser::parse2(
            |input: syn::parse::ParseStream| {
                let name: Ident = input.parse()?;
                let _: syn::Token![:] = input.parse()?;
                let ty: syn::Type = input.parse()?;
                Ok((name, ty))
            },
            part,
        );
        match parsed {
            Ok(pair) => out.push(pair),
            Err(e) => cx.error_at(span, format!("each input is `name: Type`: {e}")),
        }
    }
    out
}

/// Parses `derived(name = formula, ...)` into names and formula tokens.
pub fn parse_named(tokens: TokenStream, what: &str, cx: &Ctxt) -> Vec<(Ident, TokenStream)> {
    let mut out = Vec::new();
    for part in split_commas(tokens) {
        let trees: Vec<TokenTree> = part.into_iter().collect();
        match (trees.first(), trees.get(1)) {
            (Some(TokenTree::Ident(name)), Some(TokenTree::Punct(eq)))
                if eq.as_char() == '=' && eq.spacing() == Spacing::Alone && trees.len() > 2 =>
            {
                out.push((name.clone(), trees[2..].iter().cloned().collect()));
            }
            (first, _) => {
                let span = first.map_or(Span::call_site(), |t| t.span());
                cx.error_at(span, format!("each {what} is `name = formula`"));
            }
        }
    }
    out
}

/// Parses `[d0, d1, ...]`.
pub fn parse_shape(tokens: TokenStream, cx: &Ctxt) -> Option<(Vec<TokenStream>, Span)> {
    let mut trees = tokens.into_iter();
    match (trees.next(), trees.next()) {
        (Some(TokenTree::Group(g)), None) if g.delimiter() == Delimiter::Bracket => {
            let dims = split_commas(g.stream());
            if dims.is_empty() {
                cx.error_at(
                    g.span(),
                    "`shape` needs at least one dimension: `shape = [d0, d1, ...]`",
                );
                return None;
            }
            Some((dims, g.span()))
        }
        (Some(first), _) => {
            cx.error_at(
                first.span(),
                "`shape` is a list of dimensions: `shape = [d0, d1, ...]`",
            );
            None
        }
        (None, _) => None,
    }
}
