"""Small programs for the ops of the external e2e suite (see ``tests/api/test_e2e_suite_ops.py``)."""
