"""``hierlab compare ... --dask tcp://127.0.0.1:PORT`` on a real cluster: a ``dask scheduler`` and
two ``dask worker`` processes on the loopback, started here; the output equals the serial run's."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.slow

DASK = str(Path(sys.executable).with_name("dask"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _workers(address: str) -> int:
    import distributed

    with distributed.Client(address, timeout=10) as c:
        return len(c.scheduler_info(n_workers=-1)["workers"])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("dask")
    common = ["--no-dashboard"]
    procs = [
        subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), *common],
            stdout=subprocess.DEVNULL,
            stderr=open(log / "scheduler.log", "w"),
        )
    ]
    try:
        for k in range(2):
            procs.append(
                subprocess.Popen(
                    [DASK, "worker", address, "--host", "127.0.0.1", "--nthreads", "1", *common],
                    stdout=subprocess.DEVNULL,
                    stderr=open(log / f"worker{k}.log", "w"),
                    env=os.environ.copy(),
                )
            )
        deadline = time.monotonic() + 60
        while True:  # bounded: the scheduler and both workers up, or fail after 60 s
            try:
                if _workers(address) == 2:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the dask scheduler and two workers did not start within 60 s")
            time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _data(tmp_path: Path) -> Path:
    rng = np.random.default_rng(4)
    leaves = ["a/a1", "a/a2", "b/b1", "b/b2", "b/b3"]
    centers = rng.normal(scale=1.5, size=(len(leaves), 6))
    lab = rng.integers(0, len(leaves), size=150)
    X = centers[lab] + rng.normal(size=(150, 6))
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    df["label"] = np.array(leaves)[lab]
    path = tmp_path / "toy.csv"
    df.to_csv(path, index=False)
    return path


def _hierlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hierlab.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )


def _untimed(stdout: str) -> list[list[str]]:
    """The printed summary and tests, cell by cell, without the fit and predict times."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in stdout.splitlines() if line.strip()]
    header = stdout.split("\n", 1)[0].split()  # the metrics; a row of values starts with a name
    drop = [k for k, name in enumerate(header) if name.endswith("_time")]
    assert len(drop) == 2, header
    n = len(header)

    def keep(r: list[str]) -> list[str]:
        off = {n: 0, n + 1: 1}.get(len(r))
        return r if off is None else [c for k, c in enumerate(r) if k - off not in drop]

    return [keep(r) for r in rows]


def test_compare_on_a_dask_cluster_prints_the_serial_output(cluster: str, tmp_path: Path) -> None:
    data = _data(tmp_path)
    args = ["compare", str(data), "--methods", "topdown", "hieron", "ovr-svm", "--n-splits", "3"]
    serial = _hierlab(*args, "--csv", str(tmp_path / "serial.csv"))
    dist = _hierlab(*args, "--csv", str(tmp_path / "dask.csv"), "--dask", cluster)
    assert serial.returncode == 0, serial.stderr
    assert dist.returncode == 0, dist.stderr
    assert f"running on the dask cluster at {cluster}" in dist.stderr
    assert _untimed(dist.stdout) == _untimed(serial.stdout)  # every score, digit for digit
    assert "paired tests against topdown" in serial.stdout
    cols = ["method", "split", "metric", "value"]
    a = pd.read_csv(tmp_path / "serial.csv")[cols]
    b = pd.read_csv(tmp_path / "dask.csv")[cols]
    pd.testing.assert_frame_equal(a, b)


def test_fit_on_a_dask_cluster_says_what_ran_where(cluster: str, tmp_path: Path) -> None:
    data = str(_data(tmp_path))
    ran = _hierlab("fit", data, "--method", "topdown", "--dask", cluster)
    assert ran.returncode == 0, ran.stderr
    assert re.search(r"topdown.*: \d+ tasks ran on the cluster", ran.stderr), ran.stderr
    here = _hierlab("fit", data, "--method", "hr-svm", "--dask", cluster)  # global-cd: one process
    assert here.returncode == 0, here.stderr
    assert "hr-svm (solver global-cd) fitted in this process" in here.stderr, here.stderr
    assert "solver=block-cd" in here.stderr
    blocks = ["--param", "solver=block-cd", "--param", "loss=hinge", "--param", "max_iter=3"]
    split = _hierlab("fit", data, "--method", "hr-svm", *blocks, "--dask", cluster)
    assert split.returncode == 0, split.stderr
    assert re.search(r"hr-svm \(solver block-cd\): \d+ tasks ran on the cluster", split.stderr)


def test_a_wrong_address_is_a_clear_error(tmp_path: Path) -> None:
    out = _hierlab("compare", str(_data(tmp_path)), "--dask", "127.0.0.1:1")
    assert out.returncode == 2
    assert "tcp://host:port" in out.stderr
    assert "Traceback" not in out.stderr
