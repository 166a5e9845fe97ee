"""Hostile ``NCCL_DEBUG=INFO`` logs are read in linear time (``nccl-log``, ``POST …/nccl-log/``).

Same yardstick as ``test_bounded_parsing.py``: each input scaled 1x / 10x / 100x, and the CPU
time must grow about linearly. Each line targets one pattern of the reader: the connection
line's transport (a run of spaces before the end), the channel-count line (a run of digits),
the Init line (``comm 0x`` repeated), glued prefixes (a line holding thousands of
``h:1:1 [0] NCCL INFO`` prefixes, read part by part without recursion), NIC lists and trees.
"""
from __future__ import annotations

import pytest

from designer.engine.io.nccl_debug_log import parse_logs
from tests.security.test_bounded_parsing import assert_linear

P = "h:1:1 [0] NCCL INFO "
LINES = {
    "transport then spaces": lambda n: P + "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC" + " " * n + "x",
    "digits before coll channels": lambda n: P + "1" * n + " coll channels, x",
    "comm 0x repeated": lambda n: P + "comm 0x1 rank 0 nranks 8 cudaDev 0 " * n,
    "glued prefixes": lambda n: P * n + "Using network IB",
    "NIC list junk": lambda n: P + "NET/IB : Using " + "[0]" + "a" * n,
    "trees junk": lambda n: P + "Trees " + "[0] 1/" * n,
    "ring of spaces": lambda n: P + "Channel 00/02 :" + " 1" * n + " x",
}


def parse(text: str):
    return parse_logs([("x.log", text)])


@pytest.mark.parametrize("name", LINES)
def test_hostile_nccl_debug_lines_parse_in_linear_time(name):
    make = LINES[name]
    base = max(1, 300 // len(make(1)))
    assert_linear(parse, lambda n: make(n) + "\n", base)


def test_many_lines_parse_in_linear_time():
    line = P + "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    assert_linear(parse, lambda n: line * n, 40)
