#!/usr/bin/env python3
"""Compile-time cost of #[derive(Arena)] against the same code written out by hand.

Run from anywhere: python3 arena-spec/measurements/compile_time.py [--runs N]
Prints a Markdown table (committed as compile_time.md). Works in a scratch directory; the
repository's own target/ is not touched. Needs only cargo and python3; about 15 minutes on
2 cores.

What it measures (median of --runs runs each):
 1. a clean build of arena-macros with its dependencies, against a clean build of an empty
    proc-macro crate with the same syn/quote/proc-macro2 versions and features: each built as
    the dependency of an empty crate (how a user's build compiles it: no debuginfo), and, for
    reference, each built as the root package;
 2. `cargo build -p arena-spec --lib`, derive vs hand-written, clean (all dependencies) and
    after touching src/arena/mod.rs; the hand-written variant is generated from the expansion
    (arena-tests' `write_hand_expanded`), never maintained by hand, and builds arena-runtime
    without the derive feature, so arena-macros is not compiled at all;
 3. synthetic arenas of 100, 300 and 1000 buffers: the derive's expansion time (in-process)
    and the crate's build time after touching it;
 4. BufferSizes::from_config per call (benches/from_config.rs), derive vs hand-written.
 5. the const sizing path's share of arena-spec's build.
 6. what a user's build pays: the clean build of an empty crate depending on arena-runtime
    (feature derive), against an empty crate depending only on thiserror + syn + quote +
    proc-macro2 (the floor any derive-based library pays), and, with --before REV, the same
    user crate against the workspace as it was at REV; the three interleaved.
"""
import argparse, os, re, resource, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COPY = ["Cargo.toml", "Cargo.lock", "arena-macros", "arena-runtime", "arena-spec", "tests"]


def run(cmd, cwd, env=None, capture=False):
    e = dict(os.environ, CARGO_TERM_COLOR="never", **(env or {}))
    r = subprocess.run(cmd, cwd=cwd, env=e, shell=True, text=True,
                       stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"failed: {cmd} (in {cwd})\n{r.stderr[-3000:]}")
    return r.stdout


def timed(cmd, cwd, env=None):
    """Wall seconds of `cmd`; its CPU seconds (user + system, every child) go to CPU_TIMES."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    run(cmd, cwd, env)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_TIMES.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


CPU_TIMES = []


def median_of(runs, setup, cmd, cwd, env=None):
    out = []
    for _ in range(runs):
        setup()
        out.append(timed(cmd, cwd, env))
    return statistics.median(out)


def interleaved(runs, *jobs, cpu=None):
    """Medians of several (setup, cmd, cwd, env) jobs, run in turn each round, so drift in
    the machine's state falls on all of them alike. Also the median of each round's
    difference between the first two jobs. With `cpu` (a list), the median CPU seconds of
    each job are appended to it."""
    times = [[] for _ in jobs]
    cpus = [[] for _ in jobs]
    for _ in range(runs):
        for i, (setup, cmd, cwd, env) in enumerate(jobs):
            setup()
            times[i].append(timed(cmd, cwd, env))
            cpus[i].append(CPU_TIMES[-1])
    diff = statistics.median(a - b for a, b in zip(times[0], times[1])) if len(jobs) > 1 else 0.0
    if cpu is not None:
        cpu.extend(statistics.median(c) for c in cpus)
    return [statistics.median(t) for t in times], diff


def copy_workspace(dest):
    dest.mkdir(parents=True)
    for name in COPY:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)


def make_hand(work):
    hand = work / "hand"
    copy_workspace(hand)
    out = work / "hand-src"
    run("cargo test -q -p arena-tests --test snapshot write_hand_expanded -- --ignored", ROOT,
        {"ARENA_HAND_OUT": str(out), "CARGO_TARGET_DIR": str(work / "tool-target")})
    for f in out.rglob("*.rs"):
        shutil.copy(f, hand / "arena-spec/src" / f.relative_to(out))
    toml = hand / "arena-spec/Cargo.toml"
    toml.write_text(toml.read_text().replace(
        "arena-runtime.workspace = true",
        'arena-runtime = { path = "../arena-runtime", default-features = false }'))
    return hand


def make_no_const(work):
    """The workspace without the arena's const sizing path: `const` dropped from
    `#[arena(...)]` and the budgets module (its only user in the library) removed."""
    nc = work / "no-const"
    copy_workspace(nc)
    arena = nc / "arena-spec/src/arena/mod.rs"
    text = arena.read_text()
    assert "#[arena(\n    const,\n" in text
    arena.write_text(text.replace("#[arena(\n    const,\n", "#[arena(\n", 1))
    arena.write_text(arena.read_text().replace("pub mod budgets;\n", "", 1))
    lib = nc / "arena-spec/src/lib.rs"
    lib.write_text(lib.read_text().replace("pub use arena::{budgets, ", "pub use arena::{", 1))
    return nc


def workspace_syn():
    """The workspace's `syn` dependency line (version and features), for the baselines."""
    return re.search(r'^syn = (.*)$', (ROOT / "Cargo.toml").read_text(), re.M).group(1)


def make_baseline(work):
    """An empty proc-macro crate with the derive's syn/quote/proc-macro2 (arena-macros-impl's),
    pinned by the same lock."""
    base = work / "baseline"
    (base / "src").mkdir(parents=True)
    deps = (ROOT / "arena-macros/impl/Cargo.toml").read_text()
    syn = workspace_syn()
    (base / "Cargo.toml").write_text(
        '[package]\nname = "baseline"\nversion = "0.1.0"\nedition = "2021"\n[lib]\nproc-macro = true\n'
        f'[dependencies]\nsyn = {syn}\nquote = "1"\nproc-macro2 = "1"\n[workspace]\n')
    (base / "src/lib.rs").write_text(
        "use proc_macro::TokenStream;\n#[proc_macro_derive(Baseline)]\n"
        "pub fn d(i: TokenStream) -> TokenStream { let _ = syn::parse_macro_input!(i as syn::DeriveInput); "
        "quote::quote!().into() }\n")
    shutil.copy(ROOT / "Cargo.lock", base / "Cargo.lock")
    assert "syn.workspace" in deps
    return base


def empty_crate(work, name, deps, lock=ROOT / "Cargo.lock"):
    """An empty library with these `[dependencies]` lines, pinned by `lock`: Cargo then builds
    its dependencies the way a user's build does (proc-macros as host dependencies, without
    debuginfo)."""
    crate = work / name
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'
        f'[dependencies]\n{deps}\n[workspace]\n')
    (crate / "src/lib.rs").write_text("")
    shutil.copy(lock, crate / "Cargo.lock")
    return crate


def user_of(work, name, dep_path):
    """An empty library depending on the proc-macro at `dep_path`."""
    return empty_crate(work, f"user-of-{name}", f'{name} = {{ path = "{dep_path}" }}')


def floor_crate(work):
    """An empty library depending on thiserror, syn, quote and proc-macro2 alone, with the
    workspace's syn features."""
    return empty_crate(work, "user-floor", f'thiserror = "2"\nsyn = {workspace_syn()}\nquote = "1"\nproc-macro2 = "1"')


def user_of_runtime(work, name, workspace):
    """An empty library depending on `workspace`'s arena-runtime (default features: derive),
    pinned by that workspace's lock."""
    return empty_crate(work, f"user-{name}", f'arena-runtime = {{ path = "{workspace / "arena-runtime"}" }}',
                       workspace / "Cargo.lock")


def synthetic(work, n):
    """A crate with one arena of n buffers, mixing shapes, bytes, gates, floors and untracked."""
    crate = work / f"synth{n}"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(
        f'[package]\nname = "synth{n}"\nversion = "0.1.0"\nedition = "2021"\n'
        f'[dependencies]\narena-runtime = {{ path = "{work / "derive/arena-runtime"}" }}\n[workspace]\n')
    shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")
    fields = []
    dtypes = ["bf16", "f32", "u8", "i32", "F8E4M3"]
    for i in range(n):
        t = dtypes[i % len(dtypes)]
        kind = i % 5
        attr = {
            0: "shape = [m, c.hidden]",
            1: "shape = [m16, c.width * 2], min_bytes = 256",
            2: "shape = [m, c.experts], gate = c.experts > 0",
            3: "bytes = scratch(c, m)",
            4: "shape = [ceil_div(c.width, 128), m16], untracked",
        }[kind]
        fields.append(f"    /// Buffer {i}.\n    #[buffer({attr})]\n    pub b{i}: DevicePtr<{t}>,\n")
    src = (
        "use arena_runtime::{dtype::{bf16, F8E4M3}, Arena, DevicePtr};\n"
        "pub struct C { pub hidden: usize, pub width: usize, pub experts: usize }\n"
        "pub fn scratch(c: &C, m: usize) -> usize { c.hidden * 4 + m }\n"
        "#[derive(Arena)]\n#[arena(sizes = S, inputs(c: &C, m: usize), derived(m16 = ceil16(m)))]\n"
        "pub struct A {\n" + "".join(fields) + "}\n")
    (crate / "src/lib.rs").write_text(src)
    return crate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--parts", default="123456", help="which measurements to run, e.g. 3 or 124")
    ap.add_argument("--before", help="part 6: also measure the user crate against this revision")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arena-ctime-"))
    rows = []
    tgt = lambda name: {"CARGO_TARGET_DIR": str(work / f"target-{name}")}
    clean = lambda name: (lambda: shutil.rmtree(work / f"target-{name}", ignore_errors=True))
    try:
        derive = work / "derive"
        copy_workspace(derive)

        if "1" in args.parts:  # the macro crate over its dependencies
            base = make_baseline(work)
            users = user_of(work, "arena-macros", derive / "arena-macros"), user_of(work, "baseline", base)
            cpu = []
            (macros, baseline), added = interleaved(
                args.runs,
                (clean("um"), "cargo build -q", users[0], tgt("um")),
                (clean("ub"), "cargo build -q", users[1], tgt("ub")), cpu=cpu)
            rows.append(("clean build as a dependency: arena-macros (with arena-macros-impl and -core) + syn/quote/proc-macro2", f"{macros:.2f} s"))
            rows.append(("clean build as a dependency: empty proc-macro + the same syn/quote/proc-macro2", f"{baseline:.2f} s"))
            rows.append(("**the ratio** (target ≤ 1.25×); CPU (user + system) of the same builds",
                         f"**{macros / baseline:.2f}×**; CPU {cpu[0]:.2f} s / {cpu[1]:.2f} s = {cpu[0] / cpu[1]:.2f}×"))
            rows.append(("**arena-macros adds** (median of per-round differences; target ≤ 1 s)", f"**{added:+.2f} s**"))
            (macros, baseline), added = interleaved(
                args.runs,
                (clean("m"), "cargo build -q -p arena-macros", derive, tgt("m")),
                (clean("b"), "cargo build -q", base, tgt("b")))
            rows.append(("the same, each built as the root package (with debuginfo)", f"{macros:.2f} s / {baseline:.2f} s: {added:+.2f} s"))

        if "6" in args.parts:  # what a user's build pays
            floor = floor_crate(work)
            jobs = [(clean("un"), "cargo build -q", user_of_runtime(work, "now", derive), tgt("un")),
                    (clean("uf"), "cargo build -q", floor, tgt("uf"))]
            if args.before:
                before = work / "before"
                before.mkdir()
                run(f"git archive {args.before} | tar -x -C {before}", ROOT)
                jobs.append((clean("ubf"), "cargo build -q", user_of_runtime(work, "before", before), tgt("ubf")))
            cpu = []
            times, _ = interleaved(args.runs, *jobs, cpu=cpu)
            now, fl = times[0], times[1]
            if args.before:
                rows.append((f"user's clean build, arena-runtime (derive) at {args.before} / thiserror + syn + quote + proc-macro2",
                             f"{times[2]:.2f} s / {fl:.2f} s = **{times[2] / fl:.2f}×**; CPU {cpu[2] / cpu[1]:.2f}×"))
            rows.append(("user's clean build, arena-runtime (derive) now / thiserror + syn + quote + proc-macro2 (target ≤ 1.4×)",
                         f"{now:.2f} s / {fl:.2f} s = **{now / fl:.2f}×**; CPU {cpu[0]:.2f} s / {cpu[1]:.2f} s = {cpu[0] / cpu[1]:.2f}×"))

        if "2" in args.parts or "4" in args.parts:
            hand = make_hand(work)

        if "2" in args.parts:  # arena-spec: derive vs hand-written expansion
            build = "cargo build -q -p arena-spec --lib"
            cpu_clean, cpu_touch, cpu_only = [], [], []
            (d_clean, h_clean), _ = interleaved(
                args.runs, (clean("d"), build, derive, tgt("d")), (clean("h"), build, hand, tgt("h")),
                cpu=cpu_clean)
            touch = lambda ws: (lambda: (ws / "arena-spec/src/arena/mod.rs").touch())
            # A rebuild takes a quarter of a second: more rounds keep its median steady.
            (d_touch, h_touch), _ = interleaved(
                max(args.runs, 21), (touch(derive), build, derive, tgt("d")), (touch(hand), build, hand, tgt("h")),
                cpu=cpu_touch)
            only = lambda ws, name: (lambda: run("cargo clean -q -p arena-spec", ws, tgt(name)))
            (d_only, h_only), _ = interleaved(
                args.runs, (only(derive, "d"), build, derive, tgt("d")), (only(hand, "h"), build, hand, tgt("h")),
                cpu=cpu_only)
            ratio = lambda d, h, p=2: f"{d:.{p}f} s / {h:.{p}f} s = **{d / h:.3f}×**"
            cpu = lambda c: f"; CPU {c[0]:.2f} s / {c[1]:.2f} s = {c[0] / c[1]:.3f}×"
            rows.append(("arena-spec clean (all deps): derive / hand", ratio(d_clean, h_clean) + cpu(cpu_clean)))
            rows.append(("arena-spec crate alone (deps built): derive / hand", ratio(d_only, h_only) + cpu(cpu_only)))
            rows.append(("arena-spec after touching arena.rs (incremental): derive / hand", ratio(d_touch, h_touch, 3) + cpu(cpu_touch)))

        if "3" in args.parts:  # synthetic arenas, rebuilt whole (no incremental reuse)
            files, crates = [], {}
            for n in (100, 300, 1000):
                crates[n] = synthetic(work, n)
                files.append(str(crates[n] / "src/lib.rs"))
            out = run("cargo test -q -p arena-tests --test snapshot time_expansion -- --ignored --nocapture", ROOT,
                      {"ARENA_EXPAND_FILES": ":".join(files), "CARGO_TARGET_DIR": str(work / "tool-target")}, capture=True)
            expand = {int(re.search(r"synth(\d+)", l).group(1)): float(l.split()[-1]) for l in out.splitlines() if l.startswith("EXPAND")}
            env = dict(tgt("s"), CARGO_INCREMENTAL="0")
            for n, crate in crates.items():
                run("cargo build -q", crate, env)  # dependencies once
                only = lambda: run(f"cargo clean -q -p synth{n}", crate, env)
                t = median_of(args.runs, only, "cargo build -q", crate, env)
                rows.append((f"synthetic arena, {n} buffers: expansion / whole crate build", f"{expand[n] * 1000:.1f} ms / {t:.2f} s ({t / n * 1000:.2f} ms per buffer)"))

        if "4" in args.parts:  # from_config at run time
            bench = "cargo bench -q -p arena-spec --bench from_config"
            once = lambda ws, name: float(re.search(
                r"FROM_CONFIG_NS ([\d.]+)", run(bench, ws, tgt(name + "r"), capture=True)).group(1))
            # Interleaved: derive then hand each round, the ratio taken per round.
            pairs = [(once(derive, "d"), once(hand, "h")) for _ in range(max(args.runs, 5))]
            d_ns = statistics.median(d for d, _ in pairs)
            h_ns = statistics.median(h for _, h in pairs)
            ratio = statistics.median(d / h for d, h in pairs)
            rows.append(("from_config per call: derive / hand (target ≤ 1.05×; median of per-round ratios, interleaved)", f"{d_ns:.0f} ns / {h_ns:.0f} ns = **{ratio:.3f}×**"))
        if "5" in args.parts:  # the const sizing path's share: #[arena(const)] and the budgets
            nc = make_no_const(work)
            build = "cargo build -q -p arena-spec --lib"
            only = lambda ws, name: (lambda: run("cargo clean -q -p arena-spec", ws, tgt(name)))
            run(build, nc, tgt("n"))  # dependencies once
            run(build, derive, tgt("d"))
            (d_only, n_only), _ = interleaved(
                args.runs, (only(derive, "d"), build, derive, tgt("d")), (only(nc, "n"), build, nc, tgt("n")))
            touch = lambda ws: (lambda: (ws / "arena-spec/src/arena/mod.rs").touch())
            (d_touch, n_touch), _ = interleaved(
                max(args.runs, 21), (touch(derive), build, derive, tgt("d")), (touch(nc), build, nc, tgt("n")))
            rows.append(("const path's share, arena-spec crate alone: with / without `#[arena(const)]` and the budgets",
                         f"{d_only:.2f} s / {n_only:.2f} s = **{d_only / n_only:.3f}×**"))
            rows.append(("const path's share, after touching arena.rs: with / without",
                         f"{d_touch:.3f} s / {n_touch:.3f} s = **{d_touch / n_touch:.3f}×**"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cpu = subprocess.run("nproc", shell=True, capture_output=True, text=True).stdout.strip()
    rustc = subprocess.run("rustc --version", shell=True, capture_output=True, text=True).stdout.strip()
    print(f"Machine: {cpu} cores, {rustc}; median of {args.runs} runs.\n")
    print("| measurement | result |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    main()
