"""Benchmark: a chunked fit of a file 3x larger than a ``ulimit -v`` cap finishes under the cap.

Run with ``python -m hierlab.benchmarks.out_of_core [--cap-mb CAP] [--dir DIR]``. It

1. writes a block of 2,000 svmlight rows (16 leaves under 4 parents, 4,000 features, about
   1,000 nonzeros a row: 13 MB), then a training file of that block written again and again
   until it is larger than 3x the cap (the rows of one block are distinct, the blocks repeat);
2. measures the address space (``VmPeak``) of ``hierlab fit BLOCK --chunk-rows N --method
   hieron`` without a cap: what the process needs before it holds any data; the cap is that
   plus ``--headroom-mb`` (or ``--cap-mb``);
3. runs ``hierlab fit BIG --chunk-rows N --method hieron --out MODEL`` under ``ulimit -v CAP``
   (it must finish, its VmPeak under the cap) and, as the control, the same fit reading the
   file whole under the same cap (it must fail: the file does not fit);
4. checks the model against the exact oracle: Hieron is online (seed 002, Algorithm 1), so the
   fit of the file equals, to the bit, ``partial_fit`` of the block in memory once per repeat,
   in the file's order and in the same blocks of rows (``--chunk-rows`` must divide 2,000).

Both fits run with ``OPENBLAS_NUM_THREADS=1`` and ``MALLOC_ARENA_MAX=1``: OpenBLAS reserves a
buffer per thread and glibc an arena per thread, address space a ``ulimit -v`` counts though
no data lives there (about 80 and 60 MB here). ``fit --chunk-rows`` itself hands pyarrow's
strings to the system allocator (its default, mimalloc, reserves 1 GiB at its first use).
The files are removed at the end. No test asserts on these figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

#: rows of the block the training file repeats
BLOCK_ROWS = 2000

#: the environment of the measured fits (see the module's docstring)
LEAN_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "1"}

_RUN = textwrap.dedent(
    """
    import sys, time
    t0 = time.perf_counter()
    from hierlab.cli import main
    try:
        rc = main(sys.argv[1:])
    except MemoryError:
        rc = 3
    peak = open("/proc/self/status").read().split("VmPeak:")[1].split()[0]
    print(f"VmPeak {peak} wall {time.perf_counter() - t0:.1f}", file=sys.stderr)
    sys.exit(rc)
    """
)


def write_block(path: Path, n_features: int = 4000, nnz: int = 1000, seed: int = 0) -> None:
    """:data:`BLOCK_ROWS` svmlight rows with path labels ``p/pk``: each leaf and each parent
    has a feature of its own among ``nnz`` random ones (all values 1)."""
    rng = np.random.default_rng(seed)
    leaves = [f"{p}/{p}{k}" for p in "abcd" for k in range(1, 5)]
    lines = []
    for _ in range(BLOCK_ROWS):
        lab = int(rng.integers(len(leaves)))
        idx = rng.choice(np.arange(21, n_features + 1), nnz - 2, replace=False)
        idx = np.unique(np.concatenate([idx, [1 + lab, 17 + lab // 4]]))
        lines.append(leaves[lab] + " " + " ".join(f"{j}:1" for j in idx) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


def repeat_file(block: Path, path: Path, min_bytes: int) -> int:
    """Write ``block`` into ``path`` as often as needed to exceed ``min_bytes``; the repeats."""
    data = block.read_bytes()
    reps = min_bytes // len(data) + 1
    with open(path, "wb") as fh:
        for _ in range(reps):
            fh.write(data)
    return int(reps)


def hierlab_under_cap(args: list[str], cap_kb: int | None) -> dict[str, Any]:
    """``hierlab ARGS`` in a lean child process (under ``ulimit -v cap_kb`` if given): its exit
    status, VmPeak (kB), wall seconds and stderr's last line."""
    ulimit = f"ulimit -v {int(cap_kb)} && " if cap_kb else ""
    cmd = f'{ulimit}exec "$0" -c "$1" "${{@:2}}"'
    env = {**os.environ, **LEAN_ENV}
    out = subprocess.run(
        ["bash", "-c", cmd, sys.executable, _RUN, *args],
        capture_output=True,
        text=True,
        env=env,
    )
    tail = [ln for ln in out.stderr.splitlines() if ln.startswith("VmPeak")]
    peak, wall = (int(tail[-1].split()[1]), float(tail[-1].split()[3])) if tail else (0, 0.0)
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("hierlab:")]
    return {"rc": out.returncode, "vmpeak_kb": peak, "wall_s": wall,
            "error": errors[-1] if errors else ""}  # fmt: skip


def oracle_equal(block: Path, reps: int, chunk_rows: int, model_path: Path) -> bool:
    """Whether the model of ``model_path`` is, to the bit, Hieron's ``partial_fit`` of
    ``block`` in memory ``reps`` times, in slices of ``chunk_rows`` rows (the file's rows in
    the file's order, in its blocks: the same sums)."""
    from hierlab.core.registry import make_estimator
    from hierlab.io.chunks import iter_chunks
    from hierlab.persistence import load

    model = load(model_path)
    (blk,) = list(iter_chunks(block, BLOCK_ROWS, taxonomy=model.taxonomy))
    if blk.X.shape[1] != model.coef_.shape[1]:
        return False
    est = make_estimator("hieron", taxonomy=model.taxonomy)
    for _ in range(reps):
        for lo in range(0, BLOCK_ROWS, chunk_rows):
            est.partial_fit(blk.X[lo : lo + chunk_rows], blk.y[lo : lo + chunk_rows])
    return bool(np.array_equal(est.coef_, model.coef_))


def run(workdir: Path, cap_mb: float | None, headroom_mb: float, chunk_rows: int) -> dict[str, Any]:
    """Steps 1-4 of the module's docstring in ``workdir``; the figures."""
    if chunk_rows < 1 or BLOCK_ROWS % chunk_rows:
        raise ValueError(f"chunk_rows must divide {BLOCK_ROWS}, got {chunk_rows}")
    block, big, model = workdir / "block.svm", workdir / "big.svm", workdir / "model.hl"
    write_block(block)
    lean = hierlab_under_cap(
        ["fit", str(block), "--chunk-rows", str(chunk_rows), "--method", "hieron"], None
    )
    if lean["rc"] != 0:
        raise RuntimeError(f"the fit of the block failed: {lean['error']}")
    cap_kb = int(cap_mb * 1024) if cap_mb else lean["vmpeak_kb"] + int(headroom_mb * 1024)
    t0 = time.perf_counter()
    reps = repeat_file(block, big, 3 * cap_kb * 1024)
    write_s = time.perf_counter() - t0
    fit = ["fit", str(big), "--method", "hieron"]
    try:
        chunked = hierlab_under_cap(
            [*fit, "--chunk-rows", str(chunk_rows), "--out", str(model)], cap_kb
        )
        whole = hierlab_under_cap(fit, cap_kb)
        same = chunked["rc"] == 0 and oracle_equal(block, reps, chunk_rows, model)
        size = big.stat().st_size
    finally:
        for p in (big, model):
            p.unlink(missing_ok=True)
    return {
        "cap_kb": cap_kb, "file_bytes": size, "file_over_cap": size / (cap_kb * 1024),
        "rows": reps * BLOCK_ROWS, "write_s": write_s, "lean_vmpeak_kb": lean["vmpeak_kb"],
        "chunked": chunked, "whole": whole, "equals_oracle": same,
    }  # fmt: skip


def report(res: dict[str, Any], chunk_rows: int) -> str:
    """The figures as lines of text."""
    mb = 1 / 1024
    c, w = res["chunked"], res["whole"]
    return "\n".join(
        [
            f"address-space cap (ulimit -v): {res['cap_kb'] * mb:.0f} MB; the fit of the "
            f"{BLOCK_ROWS}-row block alone peaks at {res['lean_vmpeak_kb'] * mb:.0f} MB",
            f"training file: {res['file_bytes'] / 2**20:.0f} MB = {res['file_over_cap']:.2f}x "
            f"the cap, {res['rows']:,} rows (written in {res['write_s']:.1f} s)",
            f"hierlab fit --chunk-rows {chunk_rows} --method hieron under the cap: exit "
            f"{c['rc']}, VmPeak {c['vmpeak_kb'] * mb:.0f} MB, {c['wall_s']:.1f} s",
            f"the same fit reading the file whole under the cap: exit {w['rc']} "
            f"({w['error'] or 'no error line'}), VmPeak {w['vmpeak_kb'] * mb:.0f} MB",
            f"model equal to Hieron's partial_fit of the block in memory, "
            f"{res['rows'] // BLOCK_ROWS} times (to the bit): {res['equals_oracle']}",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    """Command line: see the module's docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cap-mb", type=float, default=None, help="the cap (default: lean + headroom)")
    ap.add_argument("--headroom-mb", type=float, default=128.0, help="the cap above the lean fit")
    ap.add_argument("--chunk-rows", type=int, default=500)
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary dir)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        res = run(Path(tmp), args.cap_mb, args.headroom_mb, args.chunk_rows)
    print(report(res, args.chunk_rows))


if __name__ == "__main__":
    main()
