"""Errors that point back at user code.

Every error Ziggurat raises for bad input is a :class:`ZigguratError`: it
names the op, its schema and the source location it came from, and its
``str()`` is one readable line (plus detail lines), never a traceback from
inside xDSL or llvmlite.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OpReport:
    """One op that something could not handle, and why."""

    op: str
    reason: str
    schema: str | None = None
    location: str | None = None

    def format(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.op}: {self.reason}"
        if self.schema:
            text += f"\n    schema: {self.schema}"
        return text


class ZigguratError(Exception):
    """Base class of every error Ziggurat reports to its users."""

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        schema: str | None = None,
        location: str | None = None,
    ) -> None:
        self.message = message
        self.op = op
        self.schema = schema
        self.location = location
        super().__init__(self.format())

    def format(self) -> str:
        return OpReport(self.op or "error", self.message, self.schema, self.location).format()


class ModelImportError(ZigguratError):
    """A model or graph that cannot be imported into the ``torch`` dialect."""


class InputError(ZigguratError):
    """Inputs that do not match what a module was compiled for."""


@dataclass
class UnsupportedOpsError(ZigguratError):
    """Several ops a backend cannot take, reported all at once."""

    backend: str = ""
    reports: list[OpReport] = field(default_factory=list)

    def __init__(self, backend: str, reports: list[OpReport]) -> None:
        self.backend = backend
        self.reports = reports
        lines = [f"backend '{backend}' cannot take {len(reports)} op(s):"]
        lines += ["  " + r.format().replace("\n", "\n  ") for r in reports]
        ZigguratError.__init__(self, "\n".join(lines))

    def format(self) -> str:
        return self.message


def verify_imported(module: object) -> None:
    """Verify a freshly imported module; a verifier error is the model's fault, not a crash."""
    from xdsl.utils.exceptions import DiagnosticException

    try:
        module.verify()  # pyright: ignore[reportAttributeAccessIssue]
    except DiagnosticException as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        message = next((ln for ln in lines if "does not verify" in ln or ": operand" in ln or "must" in ln),
                       lines[0] if lines else "verification failed")
        raise ModelImportError(f"the imported IR does not verify: {message.lstrip('| ')}", op="import") from None
