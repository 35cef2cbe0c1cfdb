"""Ziggurat's version, at the bottom layer so that saved modules and cache keys below the
API can name it (the package root re-exports it as ``ziggurat.__version__``)."""

VERSION = "0.1.0"
