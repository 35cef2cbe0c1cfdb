"""Ziggurat benchmark suite: a seeded model zoo and an interleaved harness (`python bench/run.py`)."""
