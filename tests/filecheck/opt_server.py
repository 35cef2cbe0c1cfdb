"""A fork server for ``ziggurat-opt`` in the lit tests (started by ``lit.cfg.py``).

    python opt_server.py SOCKET REAL_ZIGGURAT_OPT WATCHED_PID [IDLE_SECONDS]

It binds SOCKET at once, imports what a ``ziggurat-opt`` run imports (imports only: no torch
op, no JIT; a forked child must not inherit thread pools), then serves ``opt_client.py``: per
connection a handler process receives the client's stdin/stdout/stderr (SCM_RIGHTS), argv, cwd
and environment, forks a worker that runs the console script ``REAL_ZIGGURAT_OPT`` as a fresh
interpreter would, and sends back how the worker ended.  The server exits, removing SOCKET's
folder, when WATCHED_PID (lit) is gone or after IDLE_SECONDS without a request.

Protocol: the client sends ``!I`` length + ``marshal((argv, cwd, environ))`` (bytes) with its fds
0, 1, 2; the handler answers ``b"A"`` (accepted: the client must not fall back any more), then
``!ii`` (0, exit status) or (1, signal number).
"""

from __future__ import annotations

import atexit
import importlib
import io
import marshal
import os
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback
import types
from typing import NoReturn

# What runs import lazily after `ziggurat.tools.ziggurat_opt` (python -X importtime and a
# sys.modules diff over RUN lines of passes/, loop/, trt/, import/, kernel/, driver/).
WARM_MODULES = (
    "ziggurat.tools.ziggurat_opt", "torch", "torch._meta_registrations", "torch._decomp",
    "torch._refs", "torch._prims", "torch._dynamo", "torch._inductor", "torch._numpy",
    "torch.onnx", "sympy", "networkx", "numpy.random", "numpy.fft", "llvmlite.binding",
    "llvmlite.ir", "ziggurat.ir.importer.frontends", "ziggurat.ir.interpreter",
    "ziggurat.backends.explain_pass", "ziggurat.backends.bisect", "ziggurat.backends.driver",
    "ziggurat.backends.cpu.backend", "ziggurat.backends.cpu.plan_loop_buffers",
    "ziggurat.backends.tensorrt.convert_torch_to_trt",
)
XDSL_DIALECTS = ("builtin", "func", "arith", "math", "scf", "cf", "memref", "vector", "affine",
                 "tensor", "linalg", "llvm")
REQUEST = struct.Struct("!I")
STATUS = struct.Struct("!ii")


def warm_up() -> None:
    """Imports, and the lazy factories of Ziggurat's xDSL universe and of the xDSL dialects
    the tests use (they only import)."""
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    try:
        from xdsl.universe import Universe

        from ziggurat.tools.universe import ZIGGURAT_UNIVERSE

        xdsl_dialects = Universe.get_multiverse().all_dialects
        factories = [*(xdsl_dialects[n] for n in XDSL_DIALECTS if n in xdsl_dialects),
                     *ZIGGURAT_UNIVERSE.all_dialects.values(), *ZIGGURAT_UNIVERSE.all_passes.values(),
                     *ZIGGURAT_UNIVERSE.all_frontends.values(), *ZIGGURAT_UNIVERSE.all_targets.values()]
    except Exception:
        return
    for factory in factories:
        try:
            factory()
        except Exception:
            pass


def serve(listener: socket.socket, script: str, watched: int, idle_limit: float) -> None:
    code = compile(open(script, encoding="utf-8").read(), script, "exec")
    listener.settimeout(1.0)
    handlers: set[int] = set()
    last = time.monotonic()
    while True:
        while handlers:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            handlers.discard(pid)
        if os.getppid() != watched and not _alive(watched):
            return
        if not handlers and time.monotonic() - last > idle_limit:
            return
        try:
            conn, _ = listener.accept()
        except (socket.timeout, InterruptedError):
            continue
        last = time.monotonic()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # until the child resets it
        pid = os.fork()
        if pid == 0:
            listener.close()
            _handle(conn, script, code)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        handlers.add(pid)
        conn.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _handle(conn: socket.socket, script: str, code: types.CodeType) -> NoReturn:
    """The per-connection process: receive, fork the worker, wait, report."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C reaches the worker, which reports it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    try:
        conn.settimeout(None)
        data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        while len(data) < REQUEST.size or len(data) < REQUEST.size + REQUEST.unpack_from(data)[0]:
            more = conn.recv(1 << 16)
            if not more:
                os._exit(1)
            data += more
        if len(fds) != 3:
            os._exit(1)
        argv, cwd, env = marshal.loads(data[REQUEST.size:])
        conn.sendall(b"A")
        pid = os.fork()
        if pid == 0:
            conn.close()
            _work(fds, argv, cwd, env, script, code)
        for fd in fds:  # a pipe's other end must see EOF when the worker is done with it
            os.close(fd)
        kind, value = _wait(pid, conn)
        conn.sendall(STATUS.pack(kind, value))
    except BaseException:
        os._exit(1)
    os._exit(0)


def _wait(pid: int, conn: socket.socket) -> tuple[int, int]:
    """Wait for the worker; kill it if the client goes away (lit's timeout, ^C)."""
    pidfd = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([pidfd, conn], [], [])
        if conn in ready and pidfd not in ready:
            os.kill(pid, signal.SIGKILL)
        if pidfd in ready or conn in ready:
            _, status = os.waitpid(pid, 0)
            if os.WIFSIGNALED(status):
                return 1, os.WTERMSIG(status)
            return 0, os.waitstatus_to_exitcode(status)


def _work(fds: list[int], argv: list[bytes], cwd: bytes, env: dict[bytes, bytes], script: str,
          code: types.CodeType) -> NoReturn:
    """The worker: become the client's process, then run the console script as ``__main__``."""
    status = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(cwd)
        os.environb.clear()
        os.environb.update(env)
        tempfile.tempdir = None  # gettempdir() caches $TMPDIR
        signal.signal(signal.SIGINT, signal.default_int_handler)
        atexit._clear()  # only what this run registers runs at its exit
        old = (sys.stdout, sys.stderr)
        _fresh_stdio()
        sys.argv = [script, *(os.fsdecode(a) for a in argv)]
        main = types.ModuleType("__main__")
        main.__file__ = script
        sys.modules["__main__"] = main
        status = _run(code, main)
        try:
            threading._shutdown()  # type: ignore[attr-defined]  # joins non-daemon threads
        except Exception:
            pass
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr, *old):
            try:
                stream.flush()
            except Exception:
                status = 120  # as Py_FinalizeEx failing to flush
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    os._exit(status)


def _run(code: types.CodeType, main: types.ModuleType) -> int:
    """Exec the script; map its end to an exit status as the interpreter does."""
    try:
        exec(code, main.__dict__)
        return 0
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code & 0xFF
        print(e.code, file=sys.stderr)
        return 1
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:  # drop this server's frames
            tb = tb.tb_next
        e.__traceback__ = tb or e.__traceback__  # the default hook prints the exception's own
        sys.excepthook(type(e), e, e.__traceback__)
        if isinstance(e, KeyboardInterrupt):
            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        return 1


def _fresh_stdio() -> None:
    """New sys.stdin/stdout/stderr on fds 0-2, built as CPython's create_stdio builds them."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    forced, _, forced_errors = os.environ.get("PYTHONIOENCODING", "").partition(":")
    encoding, errors = forced or encoding, forced_errors or errors
    streams: list[io.TextIOWrapper] = []
    for fd in (0, 1, 2):
        write = fd != 0
        raw_only = unbuffered and write
        buf = io.open(fd, "wb" if write else "rb", buffering=0 if raw_only else -1, closefd=False)
        tty = os.isatty(fd)
        line = not unbuffered and (tty or fd == 2)
        streams.append(io.TextIOWrapper(buf, encoding=encoding,  # type: ignore[arg-type]
                                        errors="backslashreplace" if fd == 2 else errors,
                                        newline="\n", line_buffering=line, write_through=unbuffered))
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


def main(argv: list[str]) -> int:
    sock_path, script, watched = argv[1], argv[2], int(argv[3])
    idle_limit = float(argv[4]) if len(argv) > 4 else 1800.0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # to remove the socket's folder
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(sock_path)
        listener.listen(64)  # clients queue here while the imports run
        sys.path[0] = os.path.dirname(script)  # as for the console script
        warm_up()
        serve(listener, script, watched, idle_limit)
    finally:
        listener.close()
        shutil.rmtree(os.path.dirname(sock_path), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
