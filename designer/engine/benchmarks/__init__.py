"""Benchmark modules for ``python -m designer.engine bench``; see ``commands/bench.py``."""
