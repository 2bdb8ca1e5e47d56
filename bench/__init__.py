"""Benchmarks: `python -m bench.detection`, `python -m bench.scenes`, `python -m bench.frame`."""
