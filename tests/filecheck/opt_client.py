"""The ``ziggurat-opt`` of the lit tests (run by ``shim/ziggurat-opt`` as ``python -SI``):
hands its stdin/stdout/stderr, argv, cwd and environment to ``opt_server.py`` at
``$ZIGGURAT_OPT_SERVER`` and exits as the served run ended.  Without a server it execs the real
``ziggurat-opt`` (``$ZIGGURAT_OPT_REAL``, else the next one on PATH).  Standard library only."""

import marshal
import os
import signal
import socket
import struct
import sys


def real_binary() -> str:
    real = os.environ.get("ZIGGURAT_OPT_REAL", "")
    if real:
        return real
    me = os.path.realpath(os.path.join(os.path.dirname(__file__), "shim", "ziggurat-opt"))
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder or ".", "ziggurat-opt")
        if os.access(candidate, os.X_OK) and os.path.realpath(candidate) != me:
            return candidate
    sys.exit("ziggurat-opt (lit shim): no real ziggurat-opt on PATH")


def fall_back() -> None:
    real = real_binary()
    os.execv(real, [real, *sys.argv[1:]])


def recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            break
        data += more
    return data


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # ^C: end at once; the server then kills the run
    path = os.environ.get("ZIGGURAT_OPT_SERVER", "")
    if not path:
        fall_back()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        payload = marshal.dumps(([os.fsencode(a) for a in sys.argv[1:]], os.getcwdb(), dict(os.environb)))
        message = struct.pack("!I", len(payload)) + payload
        sent = socket.send_fds(conn, [message], [0, 1, 2])
        conn.sendall(message[sent:])
        conn.settimeout(600)  # the server may still be importing
        accepted = conn.recv(1) == b"A"
    except OSError:
        accepted = False
    if not accepted:
        conn.close()
        fall_back()
    conn.settimeout(None)
    status = recv_exactly(conn, 8)
    if len(status) != 8:
        print("ziggurat-opt (lit shim): the fork server lost this run", file=sys.stderr)
        return 1
    kind, value = struct.unpack("!ii", status)
    if kind == 1:  # killed by a signal: end the same way
        signal.signal(value, signal.SIG_DFL)
        os.kill(os.getpid(), value)
        return 128 + value
    return value


if __name__ == "__main__":
    sys.exit(main())
