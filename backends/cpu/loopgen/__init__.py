"""From the lowering's schedule (``backends/cpu/lowering/nodes.py``) to ``loop`` dialect IR."""
