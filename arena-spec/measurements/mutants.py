#!/usr/bin/env python3
"""Mutation testing of the workspace with cargo-mutants, run by hand (not in CI).

    cargo install cargo-mutants --locked          # 27.1 measured here
    python3 arena-spec/measurements/mutants.py run runtime --shard 0/16   # k/16, k = 0..15
    python3 arena-spec/measurements/mutants.py run macros --shard 3/8     # k/8, k = 0..7
    python3 arena-spec/measurements/mutants.py report     # writes arena-spec/measurements/mutants.md

Each crate is tested with the tests that exercise it:
  runtime: arena-runtime's own tests and the `tests` crate's (example arena, UI cases are
           skipped: they only re-check the derive's messages, not runtime behaviour);
           `src/cuda.rs` is left out: only the GPU suite reaches it (listed as such).
  macros:  arena-macros and arena-macros-core (its syn-free half, `arena-macros/core`), with
           both crates' own tests and the `tests` crate's, the UI cases and expansion
           snapshots included.
  spec:    arena-spec's tests (the GPU tests skip without a device).
A shard is a slice of the crate's mutants (`--shard k/n`, k counted from 0). The sets have grown (cargo-mutants
27.1 lists 1,050 for `runtime`, 601 for `macros`): `runtime` runs in 16 shards of about 66 and `macros` in 8 of
about 75, each well under an hour on 2 cores (SHARDS below; mutants.md has the measured times). Each shard mutates the
working tree as it is when the shard starts: shards run across commits measure slightly different mutant
lists (the report sums what each measured). Results go to arena-spec/measurements/mutants/<crate>-<k>of<n>/ (the
summaries are committed; cargo-mutants' own output folder is not). `report` merges every
shard's summary into mutants.md, with each surviving mutant's reason from
mutants_reasons.txt ("<mutant as cargo-mutants names it>\t<reason>"), or "unexplained".
"""
import argparse, json, subprocess, sys, time
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
# How many shards each crate's set is cut into so that one runs well under an hour on 2 cores.
SHARDS = {"runtime": 16, "macros": 8, "spec": 24}
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
    start = time.monotonic()
    subprocess.run(cmd, cwd=ROOT)  # exits non-zero when a mutant survives: expected
    minutes = (time.monotonic() - start) / 60
    results = out / "cargo-mutants" / "mutants.out"
    summary = {"crate": crate, "shard": shard, "command": " ".join(cmd), "minutes": round(minutes, 1)}
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
        shards = sorted((BENCH / "mutants").glob(f"{crate}-*/summary.json"),
                        key=lambda p: int(p.parent.name.split("-")[1].split("of")[0]))
        if not shards:
            continue
        runs = [json.loads(s.read_text()) for s in shards]
        totals = {k: 0 for k in KINDS}
        for d in runs:
            for k in KINDS:
                totals[k] += len(d[k])
            survivors += [(crate, d["shard"], m) for m in d["missed"]]
            timeouts.update(d["timeout"])
        viable = totals["caught"] + totals["missed"] + totals["timeout"]
        pct = 100.0 * totals["caught"] / viable if viable else 0.0
        detected = 100.0 * (totals["caught"] + totals["timeout"]) / viable if viable else 0.0
        # Survivors a test added after their shard kills (re-run the shard to confirm).
        later = sum(1 for d in runs for m in d["missed"]
                    if m not in d["timeout"] and reasons.get(m, "").startswith(("fixed", "a test was added")))
        with_later = 100.0 * (totals["caught"] + later) / viable if viable else 0.0
        done = ", ".join(f"{d['shard']} ({d['minutes']} min)" if "minutes" in d else d["shard"] for d in runs)
        rows.append(f"| {crate} | {len(runs)} of {SHARDS[crate]}: {done} | "
                    f"{totals['caught']} | {totals['missed']} | {totals['unviable']} | {totals['timeout']} | "
                    f"{pct:.1f}% | {detected:.1f}% | {later}: {with_later:.1f}% |")
    lines = ["# Mutation testing", "",
             "Run by hand: `python3 arena-spec/measurements/mutants.py run <runtime|macros|spec> --shard k/n` (k from 0), then",
             "`python3 arena-spec/measurements/mutants.py report` (this file). cargo-mutants 27.1, 2 cores.",
             "Caught / viable = caught / (caught + missed + timeout). A timeout is a mutant whose tests",
             "never finished (a parser loop that no longer advances, say): detected by the hang, so the",
             "last column counts it with the caught ones.",
             "Each shard mutated the working tree as it was when the shard started, so shards run at different",
             "commits measured slightly different mutant lists; a survivor marked \"fixed\" was killed by a test",
             "added after its shard ran. The sets are cut so that a shard runs well under an hour on 2 cores:",
             "`runtime` (1,050 mutants listed by cargo-mutants 27.1) in 16 shards, `macros` (601) in 8, `spec`",
             "in 24; each shard's time is beside it. This round re-runs them after the expansion moved into",
             "the runtime's helpers; the previous round's summaries (runtime 97.1%, macros 91.3%, spec 92.7%",
             "caught of viable, at 4, 8 and 3-of-24 shards) are kept in `mutants/previous/`.", "",
             "| crate | shards run | caught | missed | unviable | timeout | caught of viable | detected of viable | survivors a later test kills: caught of viable with them |",
             "|---|---|---|---|---|---|---|---|---|"] + rows + ["", "## Surviving mutants", "",
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
