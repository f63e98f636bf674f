#!/usr/bin/env python3
"""Mutation testing of the workspace with cargo-mutants, run by hand (not in CI).

    cargo install cargo-mutants --locked          # 27.1 measured here
    python3 arena-spec/measurements/mutants.py run runtime --shard 0/4
    python3 arena-spec/measurements/mutants.py run macros --shard 3/8
    python3 arena-spec/measurements/mutants.py report     # writes arena-spec/measurements/mutants.md

Each crate is tested with the tests that exercise it:
  runtime: arena-runtime's own tests and the `tests` crate's (example arena, UI cases are
           skipped: they only re-check the derive's messages, not runtime behaviour);
           `src/cuda.rs` is left out: only the GPU suite reaches it (listed as such).
  macros:  arena-macros and arena-macros-core (its syn-free half, `arena-macros/core`), with
           both crates' own tests and the `tests` crate's, the UI cases and expansion
           snapshots included.
  spec:    arena-spec's tests (the GPU tests skip without a device).
A shard is a slice of the crate's mutants (`--shard k/n`, k counted from 0); on 2 cores a shard of about 60
mutants took 5 to 25 minutes here (`macros` shards of 8, `runtime` shards of 4). Each shard mutates the
working tree as it is when the shard starts: shards run across commits measure slightly different mutant
lists (the report sums what each measured). Results go to arena-spec/measurements/mutants/<crate>-<k>of<n>/ (the
summaries are committed; cargo-mutants' own output folder is not). `report` merges every
shard's summary into mutants.md, with each surviving mutant's reason from
mutants_reasons.txt ("<mutant as cargo-mutants names it>\t<reason>"), or "unexplained".
"""
import argparse, json, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "arena-spec" / "measurements"
CRATES = {
    "runtime": {
        "files": ["arena-runtime/src/**"],
        "tests": ["arena-runtime", "arena-tests"],
        "exclude": ["arena-runtime/src/cuda.rs"],
        "test_args": ["--", "--skip", "compile_fail"],
    },
    "macros": {
        "files": ["arena-macros/src/**", "arena-macros/impl/src/**", "arena-macros/core/src/**"],
        "tests": ["arena-macros-core", "arena-macros-impl", "arena-macros", "arena-tests"],
        "exclude": [],
        "test_args": [],
    },
    "spec": {
        "files": ["arena-spec/src/**"],
        "tests": ["arena-spec"],
        "exclude": [],
        "test_args": [],
    },
}
KINDS = {"caught": "caught.txt", "missed": "missed.txt", "timeout": "timeout.txt", "unviable": "unviable.txt"}


def run(crate, shard):
    c = CRATES[crate]
    k, n = shard.split("/")
    out = BENCH / "mutants" / f"{crate}-{k}of{n}"
    out.mkdir(parents=True, exist_ok=True)
    # `--workspace --file` rather than `-p`: with `-p`, cargo-mutants 27.1 runs only the mutated
    # package's tests, whatever `--test-package` names. A fixed 240 s timeout: the baseline runs
    # the mutated package's tests alone, so the automatic one is too short for the UI cases.
    # A build timeout too: a mutant that stops the derive's parser from advancing hangs
    # rustc expanding the tests crate (no build timeout by default), holding GiBs of memory.
    cmd = ["cargo", "mutants", "--workspace"]
    for f in c["files"]:
        cmd += ["--file", f]
    cmd += ["--shard", shard, "--sharding", "slice", "--jobs", "2", "--timeout", "240",
            "--build-timeout", "300", "-o", str(out / "cargo-mutants")]
    cmd += ["--test-package", ",".join(c["tests"])]
    for e in c["exclude"]:
        cmd += ["--exclude", e]
    if c["test_args"]:
        cmd += ["--"] + c["test_args"]
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT)  # exits non-zero when a mutant survives: expected
    results = out / "cargo-mutants" / "mutants.out"
    summary = {"crate": crate, "shard": shard, "command": " ".join(cmd)}
    for kind, name in KINDS.items():
        f = results / name
        summary[kind] = sorted(l for l in f.read_text().splitlines() if l) if f.exists() else []
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print({k: len(summary[k]) for k in KINDS})


def report():
    reasons = {}
    rf = BENCH / "mutants_reasons.txt"
    if rf.exists():
        for line in rf.read_text().splitlines():
            if "\t" in line and not line.startswith("#"):
                name, why = line.split("\t", 1)
                reasons[name] = why
    rows, survivors, timeouts = [], [], set()
    for crate in CRATES:
        shards = sorted((BENCH / "mutants").glob(f"{crate}-*/summary.json"))
        if not shards:
            continue
        totals = {k: 0 for k in KINDS}
        for s in shards:
            d = json.loads(s.read_text())
            for k in KINDS:
                totals[k] += len(d[k])
            survivors += [(crate, d["shard"], m) for m in d["missed"]]
            timeouts.update(d["timeout"])
        viable = totals["caught"] + totals["missed"] + totals["timeout"]
        pct = 100.0 * totals["caught"] / viable if viable else 0.0
        detected = 100.0 * (totals["caught"] + totals["timeout"]) / viable if viable else 0.0
        rows.append(f"| {crate} | {', '.join(json.loads(s.read_text())['shard'] for s in shards)} | "
                    f"{totals['caught']} | {totals['missed']} | {totals['unviable']} | {totals['timeout']} | "
                    f"{pct:.1f}% | {detected:.1f}% |")
    lines = ["# Mutation testing", "",
             "Run by hand: `python3 arena-spec/measurements/mutants.py run <runtime|macros|spec> --shard k/n` (k from 0), then",
             "`python3 arena-spec/measurements/mutants.py report` (this file). cargo-mutants 27.1, 2 cores.",
             "Caught / viable = caught / (caught + missed + timeout). A timeout is a mutant whose tests",
             "never finished (a parser loop that no longer advances, say): detected by the hang, so the",
             "last column counts it with the caught ones.",
             "Each shard mutated the working tree as it was when the shard started, so shards run at different",
             "commits measured slightly different mutant lists; a survivor marked \"fixed\" was killed by a test",
             "added after its shard ran. `spec` (no target set for it) has three shards of 24 run: its tests take",
             "30 to 50 seconds per mutant, so a shard of about 40 is 6 to 10 minutes on 2 cores.",
             "The `macros` shards ran before the derive's syn-free half moved to `arena-macros/core/src/`",
             "(`formula*.rs`, `expand*.rs`, `valid.rs`, `ctxt.rs`, `items.rs`, `suggest.rs`; `ctxt.rs` rewritten",
             "without `syn`, the entry points and the model's types reshaped): their mutants are named by the",
             "old paths and lines, so a new `macros` run names its survivors anew and each needs its reason",
             "read again.", "",
             "| crate | shards run | caught | missed | unviable | timeout | caught of viable | detected of viable |",
             "|---|---|---|---|---|---|---|---|"] + rows + ["", "## Surviving mutants", "",
             "| crate | shard | mutant | reason |", "|---|---|---|---|"]
    for crate, shard, m in survivors:
        if m in timeouts:
            continue
        cell = m.replace("|", "\\|")
        lines.append(f"| {crate} | {shard} | `{cell}` | {reasons.get(m, 'unexplained')} |")
    # What the GPU suite alone reaches is left out of the figures above, and listed.
    gpu_only = [e for c in CRATES.values() for e in c["exclude"]]
    lines += ["", "## Left out: reached only by the GPU suite", ""]
    for path in gpu_only:
        listed = subprocess.run(["cargo", "mutants", "--workspace", "--file", path, "--list"],
                                cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
        lines.append(f"- `{path}`: {len(listed)} mutants (`arena-spec/tests/gpu.rs` on a GPU exercises it)")
    (BENCH / "mutants.md").write_text("\n".join(lines) + "\n")
    print("\n".join(rows))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("crate", choices=CRATES)
    r.add_argument("--shard", default="0/1")
    sub.add_parser("report")
    a = p.parse_args()
    if a.cmd == "run":
        run(a.crate, a.shard)
    else:
        report()


if __name__ == "__main__":
    main()
