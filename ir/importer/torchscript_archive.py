"""Reading a ``torch.jit.save`` file without letting a damaged one take the process down.

``torch.jit.load`` trusts its input: a byte flipped in the zip archive, or a forged
archive whose CRCs match damaged contents, can end in ``std::terminate`` or a segfault
inside libtorch.  :func:`load_script_module` therefore

1. checks the archive with :mod:`zipfile`: readable, every entry's CRC, one top-level
   folder holding ``data.pkl``, ``constants.pkl``, ``version`` and ``code/``;
2. runs ``torch.jit.load`` once in a forked child (where fork exists), and prints the
   inlined forward graph there (which decodes the source ranges of the debug pickles, read
   lazily when the importer locates ops): a child killed by a signal, or raising, becomes
   an :class:`ModelImportError` naming the file;
3. only then loads the module in this process.
"""

from __future__ import annotations

import io
import os
import select
import signal
import time
import zipfile
import zlib

import torch

from ziggurat.ir.errors import ModelImportError

#: Entries of the archive's top-level folder that ``torch.jit.load`` needs.
REQUIRED_ENTRIES = ("data.pkl", "constants.pkl", "version")
PROBE_TIMEOUT_S = 300.0


def _error(input_name: str, problem: str) -> ModelImportError:
    return ModelImportError(f"cannot read {input_name} as a TorchScript file (torch.jit.save): {problem}",
                            op="torchscript")


def check_archive(data: bytes, input_name: str) -> None:
    """The zip structure of a ``torch.jit.save`` file, and the CRC of every entry."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            bad = archive.testzip()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, EOFError,
            OSError, RuntimeError, zlib.error) as e:  # RuntimeError: an encrypted entry
        raise _error(input_name, f"not a readable zip archive ({e})") from None
    if bad is not None:
        raise _error(input_name, f"the archive is damaged (entry '{bad}' fails its CRC check)")
    roots = {n.split("/", 1)[0] for n in names}
    if len(roots) != 1:
        raise _error(input_name, f"the archive has {len(roots)} top-level folders, not one")
    root = roots.pop()
    missing = [e for e in REQUIRED_ENTRIES if f"{root}/{e}" not in names]
    if not any(n.startswith(f"{root}/code/") for n in names):
        missing.append("code/")
    if missing:
        raise _error(input_name, f"the archive lacks {', '.join(missing)} (a torch.save file, "
                     "not torch.jit.save?)")


def _probe(data: bytes, input_name: str) -> None:
    """``torch.jit.load`` in a forked child; raises if it fails or dies there."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report on the pipe, never return into the caller's code
        code = 0
        try:
            os.close(read_end)
            os.dup2(write_end, 2)  # libtorch's terminate message goes to the pipe, not the terminal
            module = torch.jit.load(io.BytesIO(data), map_location="cpu")
            str(module.inlined_graph)  # decodes the debug pickles, as the importer's locations will
        except BaseException as e:  # noqa: BLE001
            os.write(write_end, f"\nerror: {_first_line(e)}\n".encode(errors="replace"))
            code = 3
        finally:
            os._exit(code)
    os.close(write_end)
    output, finished = _collect(read_end, pid)
    _, status = os.waitpid(pid, 0)
    if not finished:
        raise _error(input_name, f"torch.jit.load did not finish within {PROBE_TIMEOUT_S:.0f} s")
    if os.WIFSIGNALED(status):
        what = _last_line(output, "what():")
        raise _error(input_name, f"torch.jit.load dies on it ({signal.Signals(os.WTERMSIG(status)).name}"
                     + (f": {what}" if what else "") + ")")
    if os.WEXITSTATUS(status) != 0:
        raise _error(input_name, _last_line(output, "error:") or f"torch.jit.load exits with {status}")


def _collect(fd: int, pid: int) -> tuple[str, bool]:
    """What the child writes until it exits, and whether it exited in time (else it is killed)."""
    chunks: list[bytes] = []
    finished = True
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                finished = False
                break
            chunk = pipe.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace"), finished


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _last_line(output: str, marker: str) -> str:
    lines = [ln.split(marker, 1)[1].strip() for ln in output.splitlines() if marker in ln]
    return lines[-1] if lines else ""


def load_script_module(data: bytes, input_name: str) -> torch.jit.ScriptModule:
    """The module saved in ``data`` (the bytes of a ``torch.jit.save`` file)."""
    check_archive(data, input_name)
    if hasattr(os, "fork"):
        _probe(data, input_name)
    try:
        return torch.jit.load(io.BytesIO(data), map_location="cpu")
    except Exception as e:  # noqa: BLE001 - torch raises RuntimeError and others on bad files
        raise _error(input_name, _first_line(e)) from None


__all__ = ["check_archive", "load_script_module"]
