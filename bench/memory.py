"""Process memory from /proc/self/status (no psutil).

What the harness reports as "peak MB" for a backend: the peak resident set size (VmHWM) of
this process during that backend's compile + first run, minus the resident size just before
it started (after a gc). The high-water mark is reset first by writing "5" to
/proc/self/clear_refs. This is the extra memory the backend needed in this process
(compiled code, packed/frozen weight copies, workspace, activations of the first run).
It does not count child processes (e.g. Inductor's C++ compiler workers), and memory freed
by earlier backends and kept by the allocator can be reused, so it is a lower bound.
"""

from __future__ import annotations

from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kib(field: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def rss_bytes() -> int | None:
    """Current resident set size (VmRSS)."""
    kib = _status_kib("VmRSS")
    return None if kib is None else kib * 1024


def peak_rss_bytes() -> int | None:
    """Resident set high-water mark since process start or the last `reset_peak_rss`."""
    kib = _status_kib("VmHWM")
    return None if kib is None else kib * 1024


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS; False where the kernel does not allow it."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


class PeakRssDelta:
    """Context manager: `delta_bytes` = peak RSS inside the block minus RSS at entry (None if unknown)."""

    def __init__(self) -> None:
        self.delta_bytes: int | None = None
        self._start: int | None = None
        self._reset_ok = False

    def __enter__(self) -> "PeakRssDelta":
        self._start = rss_bytes()
        self._reset_ok = reset_peak_rss()
        return self

    def __exit__(self, *exc: object) -> None:
        peak = peak_rss_bytes()
        if self._reset_ok and peak is not None and self._start is not None:
            self.delta_bytes = max(0, peak - self._start)
