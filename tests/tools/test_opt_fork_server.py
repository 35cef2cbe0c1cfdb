"""The lit tests' ziggurat-opt fork server (tests/filecheck/opt_server.py, opt_client.py): a run
through the client ends with the same stdout, stderr and status as the real ziggurat-opt, and the
client runs the real binary when no server answers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

FILECHECK = Path(__file__).resolve().parents[1] / "filecheck"
SHIM = FILECHECK / "shim" / "ziggurat-opt"
REAL = Path(sys.executable).parent / "ziggurat-opt"
GOOD = FILECHECK / "dialects" / "fused_roundtrip.mlir"
BAD = FILECHECK / "inputs" / "bad_syntax.mlir"
CASES = {  # name: (arguments, stdin)
    "good": ([str(GOOD), "-p", "torch-canonicalize"], None),
    "stdin": (["-", "-p", "torch-canonicalize"], GOOD.read_bytes()),
    "malformed": ([str(BAD)], None),
}

pytestmark = pytest.mark.skipif(not REAL.exists(), reason="no installed ziggurat-opt")


def _env(server: str, real: Path = REAL) -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "ZIGGURAT_OPT_SERVER": server,
            "ZIGGURAT_OPT_REAL": str(real), "ZIGGURAT_OPT_PYTHON": sys.executable}


def _start(argv: list[str], stdin: bytes | None, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], bytes]:
    process = subprocess.Popen(argv, env=env, cwd=FILECHECK, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return process, stdin or b""


def _result(started: tuple[subprocess.Popen[bytes], bytes]) -> tuple[int, bytes, bytes]:
    process, stdin = started
    out, err = process.communicate(stdin, timeout=120)
    return process.returncode, out, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[int, bytes, bytes]]]:
    """Every case through the server; the real binary's runs, started at the same time (to
    overlap their imports): the malformed case, and the stdin case through the client with no
    server at its socket, which must fall back to the real binary."""
    sock = str(tmp_path_factory.mktemp("opt-server") / "s")
    server = subprocess.Popen([sys.executable, str(FILECHECK / "opt_server.py"), sock, str(REAL),
                               str(os.getpid()), "120"], env=_env(""), stdin=subprocess.DEVNULL)
    missing = str(tmp_path_factory.mktemp("no-server") / "s")
    args, stdin = CASES["stdin"]
    real = {"stdin": _start([str(SHIM), *args], stdin, _env(missing)),
            "malformed": _start([str(REAL), *CASES["malformed"][0]], None, _env(""))}
    while not os.path.exists(sock):
        assert server.poll() is None, "the server died"
        time.sleep(0.01)
    no_fallback = _env(sock, real=Path("/nonexistent/ziggurat-opt"))  # served, or it fails
    served = {name: _start([str(SHIM), *args], stdin, no_fallback) for name, (args, stdin) in CASES.items()}
    results = {f"real-{n}": _result(p) for n, p in real.items()}
    results |= {f"served-{n}": _result(p) for n, p in served.items()}
    yield results
    server.terminate()
    server.wait(timeout=30)


@pytest.mark.parametrize("case", sorted(CASES))
def test_served_run_matches_real_binary(runs: dict[str, tuple[int, bytes, bytes]], case: str) -> None:
    # a file and stdin print the same module: the real binary ran the stdin case
    assert runs[f"served-{case}"] == runs["real-malformed" if case == "malformed" else "real-stdin"]


def test_real_runs_succeed_and_fail(runs: dict[str, tuple[int, bytes, bytes]]) -> None:
    status, out, err = runs["real-stdin"]  # the fallback: nothing listens at that socket
    assert status == 0 and b"fused.linear" in out and err == b""
    status, out, err = runs["real-malformed"]
    assert status == 1 and out == b"" and b"error" in err
