"""Argument types shared by the command lines (``sandbox`` and ``sandbox run``): argparse calls them on
the text and reports an ``ArgumentTypeError`` as one line with exit status 2."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """``text`` as an integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value
