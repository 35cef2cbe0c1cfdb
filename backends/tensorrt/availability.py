"""Whether the real TensorRT can be used here, and the error that says why not.

``tensorrt`` is imported lazily, only by the functions that need it, so the
rest of Ziggurat (and the ``tensorrt-reference`` backend) works without it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ziggurat.ir.errors import ZigguratError

_HINT = (
    'install TensorRT (`pip install tensorrt`, needs an NVIDIA GPU with CUDA) or use backend="tensorrt-reference", '
    "which runs the same trt IR on the CPU reference executor"
)


#: The TensorRT release the emitter's API calls are checked against (``tools/check_tensorrt_api.py``
#: reads that release's ``tensorrt_bindings/tensorrt.so``); another major version is refused.
CHECKED_TENSORRT_VERSION = "11.4.0.106"
CHECKED_TENSORRT_MAJOR = int(CHECKED_TENSORRT_VERSION.split(".")[0])


class TensorRTUnavailableError(ZigguratError):
    """The real TensorRT (or a CUDA device for it) is missing."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}; {_HINT}", op="backend 'tensorrt'")


def check_tensorrt_version(module: object) -> str:
    """``module.__version__`` if its major version is the one the emitter is checked against,
    else :class:`TensorRTUnavailableError` saying which version is installed and which is needed."""
    version = getattr(module, "__version__", None)
    if not isinstance(version, str) or not version.split(".")[0].isdigit():
        raise TensorRTUnavailableError(f"the `tensorrt` module has no readable __version__ ({version!r})")
    if int(version.split(".")[0]) != CHECKED_TENSORRT_MAJOR:
        raise TensorRTUnavailableError(
            f"TensorRT {version} is installed, but the emitter is checked only against TensorRT "
            f"{CHECKED_TENSORRT_MAJOR}.x ({CHECKED_TENSORRT_VERSION}); install `tensorrt=={CHECKED_TENSORRT_MAJOR}.*`"
        )
    return version


def import_tensorrt() -> ModuleType:
    """The ``tensorrt`` module (of the checked major version), or :class:`TensorRTUnavailableError`
    saying what is missing."""
    try:
        module = importlib.import_module("tensorrt")
    except ImportError as e:  # ModuleNotFoundError, or a broken install missing libnvinfer
        raise TensorRTUnavailableError(f"the TensorRT Python package cannot be imported ({type(e).__name__}: {e})") from e
    if not hasattr(module, "Builder"):
        # e.g. a directory called "tensorrt" on sys.path imported as a namespace package
        where = list(getattr(module, "__path__", [])) or getattr(module, "__file__", "?")
        raise TensorRTUnavailableError(f"the `tensorrt` module found at {where} is not TensorRT (it has no Builder)")
    check_tensorrt_version(module)
    return module


def require_cuda() -> None:
    """A CUDA device for TensorRT engines, or :class:`TensorRTUnavailableError`."""
    import torch

    if not torch.cuda.is_available():
        raise TensorRTUnavailableError(
            f"TensorRT engines run on CUDA, and this torch ({torch.__version__}) sees no CUDA device"
        )


def tensorrt_unavailable_reason() -> str | None:
    """None when TensorRT and a CUDA device are usable, else the reason (for test skips)."""
    try:
        import_tensorrt()
        require_cuda()
    except TensorRTUnavailableError as e:
        return e.message
    return None
