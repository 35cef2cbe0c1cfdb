"""Host description printed above the benchmark table and stored in the JSON."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

import torch


def cpu_model_name() -> str:
    """The first `model name` line of /proc/cpuinfo (falls back to platform.processor())."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def llvm_host_cpu() -> str | None:
    """LLVM's name for the host CPU (e.g. 'emeraldrapids'), the target the Ziggurat CPU backend sees."""
    try:
        import llvmlite.binding as llvm

        return str(llvm.get_host_cpu_name())
    except Exception:  # llvmlite missing or broken: informational only
        return None


def git_commit(repo: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def load_average() -> list[float] | None:
    """1/5/15-minute load averages: other work on the machine competes with the timed threads."""
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def host_info(threads: int) -> dict[str, object]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu_model": cpu_model_name(),
        "llvm_host_cpu": llvm_host_cpu(),
        "logical_cores": os.cpu_count(),
        "usable_cores": affinity,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "threads": threads,
        "git_commit": git_commit(Path(__file__).resolve().parent.parent),
        "load_average_start": load_average(),
    }
