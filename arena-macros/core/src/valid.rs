//! Rules across fields: every name a formula reads is declared, and no declared name is
//! shadowed by a buffer.

use crate::ctxt::Ctxt;
use crate::formula::{Called, Formula};
use crate::model::{phase_variant, Container};
use crate::suggest::hint;
use proc_macro2::Ident;

pub fn check(cx: &Ctxt, cont: &Container) {
    check_unique_names(cx, cont);
    check_phases(cx, cont);

    let inputs: Vec<String> = cont.input_names().map(Ident::to_string).collect();
    let derived: Vec<String> = cont.derived.iter().map(|d| d.name.to_string()).collect();
    // A derived value whose formula did not parse was reported once; reading it is no error.
    let unparsed: Vec<String> = cont.unparsed_derived.iter().map(Ident::to_string).collect();

    // A derived value reads the inputs and the derived values before it.
    for (i, d) in cont.derived.iter().enumerate() {
        let known: Vec<&str> = inputs
            .iter()
            .chain(&unparsed)
            .chain(&derived[..i])
            .map(String::as_str)
            .collect();
        check_names(cx, &d.formula, &known, &derived[i..]);
    }

    let known: Vec<&str> = inputs
        .iter()
        .chain(&unparsed)
        .chain(&derived)
        .map(String::as_str)
        .collect();
    for f in all_buffer_formulas(cont) {
        check_names(cx, f, &known, &[]);
    }
    check_derived_read(cx, cont);
    check_rank(cx, cont);
    for f in cont
        .derived
        .iter()
        .map(|d| &d.formula)
        .chain(all_buffer_formulas(cont))
    {
        check_helper_arity(cx, f);
        if cont.const_path {
            check_const_calls(cx, f);
        }
    }
}

fn check_names(cx: &Ctxt, formula: &Formula, known: &[&str], later: &[String]) {
    for name in formula.value_names() {
        let s = name.to_string();
        if known.contains(&s.as_str()) {
            continue;
        }
        if later.contains(&s) {
            cx.error_at(name.span(), format!("`{s}` is derived after this value; a derived value reads only the inputs and the values derived before it"));
            continue;
        }
        cx.error_at(
            name.span(),
            format!(
                "`{s}` is not an input or a derived value of this arena{}",
                hint(&s, known.iter().copied())
            ),
        );
    }
}

fn check_unique_names(cx: &Ctxt, cont: &Container) {
    let mut seen: Vec<&Ident> = Vec::new();
    for name in cont
        .input_names()
        .chain(cont.derived.iter().map(|d| &d.name))
    {
        if seen.contains(&name) {
            cx.error_at(
                name.span(),
                format!("`{name}` is declared twice among the inputs and derived values"),
            );
        }
        if name.to_string().starts_with("__") {
            cx.error_at(
                name.span(),
                "names starting with `__` are reserved for generated code",
            );
        }
        seen.push(name);
    }
    for b in &cont.buffers {
        if seen.contains(&&b.ident) {
            cx.error_at(
                b.ident.span(),
                format!(
                    "buffer `{}` has the name of an input or derived value; rename one of them",
                    b.ident
                ),
            );
        }
        if b.ident.to_string().starts_with("__") {
            cx.error_at(
                b.ident.span(),
                "names starting with `__` are reserved for generated code",
            );
        }
    }
}

/// Phases: names unique, every buffer's phase known (did-you-mean), ranges in the declared
/// order, every declared phase used by some buffer.
fn check_phases(cx: &Ctxt, cont: &Container) {
    let names: Vec<String> = cont.phases.iter().map(Ident::to_string).collect();
    let variants: Vec<String> = cont
        .phases
        .iter()
        .map(|p| phase_variant(p).to_string())
        .collect();
    for (i, p) in cont.phases.iter().enumerate() {
        if names[..i].contains(&names[i]) {
            cx.error_at(
                p.span(),
                format!("phase `{p}` is listed twice in `phases(...)`"),
            );
        } else if let Some(j) = variants[..i].iter().position(|v| v == &variants[i]) {
            cx.error_at(
                p.span(),
                format!(
                    "phases `{}` and `{p}` would both be `{}` in the generated phase enum; rename one",
                    names[j], variants[i]
                ),
            );
        }
    }
    let index = |id: &Ident| cont.phases.iter().position(|p| p == id);
    let mut used = vec![false; names.len()];
    for b in &cont.buffers {
        let Some(range) = &b.phase else { continue };
        if names.is_empty() {
            // One error for the arena, not one per buffer: the list is what is missing.
            let others = cont.buffers.iter().filter(|o| o.phase.is_some()).count() - 1;
            let also = match others {
                0 => String::new(),
                1 => " (as does 1 other buffer)".to_string(),
                n => format!(" (as do {n} other buffers)"),
            };
            cx.error_at(
                range.first.span(),
                format!(
                    "`{}` names a phase{also}, but the arena declares none: list them in order with `#[arena(phases(...))]`",
                    b.ident
                ),
            );
            break;
        }
        let mut ends = Vec::new();
        for end in [&range.first, &range.last] {
            match index(end) {
                Some(i) => ends.push(i),
                None => cx.error_at(
                    end.span(),
                    format!("`{end}` is not a phase of this arena{}", {
                        let near = hint(&end.to_string(), names.iter().map(String::as_str));
                        if near.is_empty() {
                            let listed: Vec<String> =
                                names.iter().map(|n| format!("`{n}`")).collect();
                            format!("; its phases are {}", listed.join(", "))
                        } else {
                            near
                        }
                    }),
                ),
            }
        }
        if let [first, last] = ends[..] {
            if first > last {
                cx.error_at(
                    range.first.span(),
                    format!(
                        "the phases of `{}` run backwards: `{}` comes after `{}` in `phases(...)`; write `{}..={}`",
                        b.ident, range.first, range.last, range.last, range.first
                    ),
                );
            } else {
                used[first..=last].iter_mut().for_each(|u| *u = true);
            }
        }
    }
    if !cx.has_errors() {
        for (p, used) in cont.phases.iter().zip(used) {
            if !used {
                cx.error_at(
                    p.span(),
                    format!("no buffer is live in phase `{p}`: give one `phase = {p}`, or drop the phase"),
                );
            }
        }
    }
}

/// On the const path, `x.min(y)`, `x.max(y)` and `x.clamp(..)` are `Ord`'s methods, which
/// are not `const fn`s, and a `Regions` layout is a run-time value: rustc's own errors (E0015,
/// or a method missing on the const path's `Konst`) would not say what to write instead.
fn check_const_calls(cx: &Ctxt, formula: &Formula) {
    for called in formula.called_names() {
        match called {
            Called::Method(method) => {
                let instead = match method.to_string().as_str() {
                    "min" => "the built-in `min(a, b)`",
                    "max" => "the built-in `max(a, b)`",
                    "clamp" => "the built-in `max(lo, min(x, hi))`",
                    _ => continue,
                };
                cx.error_at(
                    method.span(),
                    format!(
                        "`.{method}(..)` is `Ord::{method}`, not a `const fn`, and this arena is `#[arena(const)]`: write {instead}, which is checked and const"
                    ),
                );
            }
            Called::Function(name, path, _) if name == "layout" => {
                let owner = path.strip_suffix("layout").unwrap_or("Name::");
                cx.error_at(
                    name.span(),
                    format!("a `Regions` layout is a run-time value, and this arena is `#[arena(const)]`: size the buffer with `{owner}bytes(..)` (a `const fn` under `#[regions(const)]`)"),
                )
            }
            Called::Function(..) => {}
        }
    }
}

/// The built-in helpers take a fixed number of arguments; rustc's own error for a wrong
/// count would point into the checked arithmetic the call is rewritten to.
fn check_helper_arity(cx: &Ctxt, formula: &Formula) {
    for called in formula.called_names() {
        let Called::Function(name, path, args) = called else {
            continue;
        };
        let (arity, usage) = match path.as_str() {
            "ceil16" => (1, "ceil16(x)"),
            "round_up" => (2, "round_up(x, multiple)"),
            "ceil_div" => (2, "ceil_div(a, b)"),
            "max" => (2, "max(a, b)"),
            "min" => (2, "min(a, b)"),
            _ => continue,
        };
        if args != arity {
            let plural = if arity == 1 { "" } else { "s" };
            cx.error_at(
                name.span(),
                format!("`{path}` takes {arity} argument{plural}, not {args}: `{usage}`"),
            );
        }
    }
}

/// A derived value no formula reads is dead code in the expansion (rustc would warn about a
/// generated variable): most likely a typo where it was meant to be used.
fn check_derived_read(cx: &Ctxt, cont: &Container) {
    let mut read: Vec<String> = Vec::new();
    for f in cont
        .derived
        .iter()
        .map(|d| &d.formula)
        .chain(all_buffer_formulas(cont))
    {
        read.extend(f.value_names().iter().map(Ident::to_string));
    }
    for d in &cont.derived {
        if !read.contains(&d.name.to_string()) {
            cx.error_at(
                d.name.span(),
                format!(
                    "derived value `{}` is read by no buffer and no other derived value: use it or remove it",
                    d.name
                ),
            );
        }
    }
}

/// Every formula of every buffer: sizes, gates and floors.
fn all_buffer_formulas(cont: &Container) -> impl Iterator<Item = &Formula> {
    cont.buffers.iter().flat_map(|b| {
        b.size
            .iter()
            .flat_map(|s| s.formulas())
            .chain(&b.gate)
            .chain(&b.min_bytes)
    })
}

/// A view reports up to `arena_runtime::MAX_RANK` (8) dimensions: a shape of more is refused
/// where it is written, not truncated in `shape()`.
fn check_rank(cx: &Ctxt, cont: &Container) {
    const MAX_RANK: usize = 8;
    for b in &cont.buffers {
        if let Some(crate::model::Size::Shape { dims, .. }) = &b.size {
            if dims.len() > MAX_RANK {
                cx.error_at(
                    b.ident.span(),
                    format!(
                        "`{}` has a shape of {} dimensions; at most {MAX_RANK} (fold some into one)",
                        b.ident,
                        dims.len()
                    ),
                );
            }
        }
    }
}
