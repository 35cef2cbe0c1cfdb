"""Runs mutated inputs through ``ziggurat-opt`` and ``ziggurat.load``, each in its own process.

    python -m tests.malformed.runner JOBS.json RESULTS.json

A fork server: this process imports Ziggurat, torch and the modules the tools load lazily
once (and runs no torch op, so forking is safe), then forks one child per job.  The child
runs ``ziggurat.tools.ziggurat_opt.main(argv)`` (what the ``ziggurat-opt`` script calls) or
``ziggurat.load(path)`` with its stdout/stderr in files; a signal, a hang, an exit status
and the output are recorded per job.  ``exec`` jobs run the real ``ziggurat-opt`` script
instead (slower; they check that the forked runs behave as the real process does).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

TIMEOUT_S = 60.0
LOADED, LOAD_ERROR, RAW_EXCEPTION = 0, 3, 4


def _warm_imports() -> None:
    """Import what the children would each import again (no torch op runs here)."""
    import torch._dynamo  # noqa: F401 - torch's Python meta kernels import it on first use

    import ziggurat  # noqa: F401
    import ziggurat.backends.cpu.backend  # noqa: F401
    import ziggurat.backends.reference  # noqa: F401
    import ziggurat.backends.serialization  # noqa: F401
    import ziggurat.backends.tensorrt.backend  # noqa: F401
    import ziggurat.dialects.torch.result_types  # noqa: F401
    import ziggurat.passes  # noqa: F401
    import ziggurat.tools.ziggurat_opt  # noqa: F401


def _child(job: dict[str, Any]) -> int:
    if job["tool"] == "ziggurat-opt":
        from ziggurat.tools.ziggurat_opt import main

        try:
            return main(job["argv"])
        except SystemExit as e:
            return e.code if isinstance(e.code, int) else 1
    from ziggurat.backends.serialization import load
    from ziggurat.ir.errors import ZigguratError

    try:
        load(job["path"])
        return LOADED
    except ZigguratError as e:  # LoadError, or an environment's own (TensorRT not installed)
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return LOAD_ERROR


def _fork(job: dict[str, Any], out: Path, err: Path) -> tuple[int | None, int | None, bool]:
    """(exit status, signal, timed out) of ``job`` run in a forked child."""
    pid = os.fork()
    if pid == 0:
        code = RAW_EXCEPTION
        try:
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
            os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            code = _child(job)
        except BaseException:  # noqa: BLE001 - what escapes is what the harness looks for
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, None, True
        time.sleep(0.01)
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status), False
    return os.WEXITSTATUS(status), None, False


def _exec(job: dict[str, Any], out: Path, err: Path) -> tuple[int | None, int | None, bool]:
    script = Path(sys.executable).with_name("ziggurat-opt")
    with open(out, "wb") as o, open(err, "wb") as e:
        try:
            rc = subprocess.run([str(script), *job["argv"]], stdin=subprocess.DEVNULL, stdout=o,
                                stderr=e, timeout=TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            return None, None, True
    return (None, -rc, False) if rc < 0 else (rc, None, False)


def run(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    _warm_imports()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        for job in jobs:
            start = time.monotonic()
            status, sig, timed_out = (_exec if job.get("exec") else _fork)(job, out, err)
            results.append({
                **job, "status": status, "signal": sig, "timed_out": timed_out,
                "seconds": round(time.monotonic() - start, 3),
                "stdout": out.read_bytes()[-2000:].decode(errors="replace") if out.exists() else "",
                "stderr": err.read_bytes()[-6000:].decode(errors="replace") if err.exists() else "",
            })
    return results


if __name__ == "__main__":
    jobs_file, results_file = sys.argv[1:3]
    Path(results_file).write_text(json.dumps(run(json.loads(Path(jobs_file).read_text()))))
