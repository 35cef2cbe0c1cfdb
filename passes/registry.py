"""The list of every pass: name -> module:class (one pass per module)."""

from ziggurat.passes import register_pass

# Lines are added as passes land.
