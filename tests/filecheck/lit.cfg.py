# lit configuration of Ziggurat's FileCheck tests (run by `make test` as `lit tests/filecheck`).
import os
import shutil
import subprocess
import sys
import tempfile
import time

import lit.formats

config.name = "ziggurat"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir", ".ts", ".test"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["inputs", "lit.cfg.py", "shim", "opt_server.py", "opt_client.py"]  # noqa: F821


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            return {flag for line in f if line.startswith("flags") for flag in line.split(":", 1)[1].split()}
    except OSError:
        return set()


# `REQUIRES: avx512bf16`: tests of the bf16 GEMM lowering (AMX or AVX512-BF16 kernels)
if "avx512_bf16" in _cpu_flags():
    config.available_features.add("avx512bf16")  # noqa: F821
# `REQUIRES: avx512vnni`: tests of the int8 GEMM lowering (vpdpbusd)
if "avx512_vnni" in _cpu_flags():
    config.available_features.add("avx512vnni")  # noqa: F821
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")  # noqa: F821
config.environment["PYTHONUNBUFFERED"] = "1"  # noqa: F821
config.substitutions.append(("%python", sys.executable))  # noqa: F821
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "inputs")))  # noqa: F821


def start_opt_server():
    """Start opt_server.py (a warm, forking ziggurat-opt; see opt_client.py) and return the
    environment that routes the RUN lines' ziggurat-opt to it, or None to run the real one."""
    here = os.path.dirname(os.path.abspath(__file__))
    real = os.path.join(bin_dir, "ziggurat-opt")
    if os.environ.get("ZIGGURAT_OPT_NO_SERVER") or not os.access(real, os.X_OK):
        return None
    folder = tempfile.mkdtemp(prefix="ziggurat-opt-")
    sock = os.path.join(folder, "s")
    server = subprocess.Popen(
        [sys.executable, os.path.join(here, "opt_server.py"), sock, real, str(os.getpid())],
        env=dict(config.environment), stdin=subprocess.DEVNULL,  # noqa: F821
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(sock) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if not os.path.exists(sock):
        server.kill()
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return {"PATH": os.path.join(here, "shim") + os.pathsep + config.environment["PATH"],  # noqa: F821
            "ZIGGURAT_OPT_SERVER": sock, "ZIGGURAT_OPT_REAL": real,
            "ZIGGURAT_OPT_PYTHON": sys.executable}


try:
    server_env = start_opt_server()
except Exception as e:  # never a reason for lit to fail: the RUN lines then run the real binary
    server_env = None
    lit_config.note(f"ziggurat-opt fork server not started ({e}); running the real ziggurat-opt")  # noqa: F821
if server_env is not None:
    config.environment.update(server_env)  # noqa: F821
elif not os.environ.get("ZIGGURAT_OPT_NO_SERVER"):
    lit_config.note("ziggurat-opt fork server unavailable; running the real ziggurat-opt")  # noqa: F821
