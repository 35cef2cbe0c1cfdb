"""Checks of MLIR text that run before xDSL's parser sees it.

xDSL's lexer matches a string literal with a regular expression whose nested quantifiers
backtrack exponentially when the literal is not closed on its line: a truncated weight
blob (``"0x4000...`` without its closing quote) keeps the parser busy for hours.  The same
expression with possessive quantifiers matches the same strings in linear time; an opening
quote that it cannot close is reported here, as the parser would report it.
"""

from __future__ import annotations

import re

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input, Position, Span

# A string literal (as xDSL's lexer accepts it), a comment, anything else up to a quote or
# a slash, a lone slash; a lone quote is a string literal that does not close.
_TEXT = re.compile(
    r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"'
    r"|//[^\n]*+"
    r'|[^"/]++'
    r"|/"
    r'|"'
)


def check_string_literals(text: str, name: str) -> None:
    """Raise the parser's ParseError at the first string literal of ``text`` that does not close."""
    for m in _TEXT.finditer(text):
        if m.group() == '"':
            start = Position(m.start())
            raise ParseError(Span(start, start + 1, Input(text, name)),
                             "End of file reached before closing string literal.")


__all__ = ["check_string_literals"]
