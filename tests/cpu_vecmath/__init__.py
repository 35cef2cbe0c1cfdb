"""Tests and accuracy measurement for ziggurat.backends.cpu.vecmath."""
