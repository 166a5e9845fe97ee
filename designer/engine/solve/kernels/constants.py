"""The numbers the kernels share with the Python code around them: tolerances, result codes, flags
and layouts. Numba-free on purpose: :mod:`designer.engine.solve.id_index`,
:mod:`designer.engine.routing.assemble` and the ``solve`` reader import it without importing numba
(a large part of a short command's start-up), and a kernel and its caller read one definition
instead of two kept equal by hand.

Numba reads these module globals once, when it compiles a kernel: an edit here changes the
sources' digest (:func:`~designer.engine.solve.kernels.loader.source_digest`), so the AOT module
built from the old values is refused until it is rebuilt.
"""
from __future__ import annotations

__all__ = [
    "SNAP_RTOL", "MIN_POSITIVE", "TIME_RTOL", "BYTES_PER_GBPS_S",
    "MAX_PROBES", "MAX_COMPARED_PER_BYTE",
    "SCAN_OK", "SCAN_NOT_AN_OBJECT", "SCAN_LINKS_KEYS", "SCAN_NOT_STRINGS", "SCAN_UNKNOWN_ID", "SCAN_COUNTS",
    "SCAN_TRUNCATED",
    "FLOWS_OK", "FLOWS_OUTSIDE", "FLOWS_FULL", "FLOWS_NO_CAP", "FLOW_ID", "FLOW_LINKS", "FLOW_DEMAND", "FLOW_BYTES",
    "ITEMS_OK", "ITEMS_OUTSIDE", "ITEMS_FULL", "ITEMS_UNKNOWN_REF",
    "VALUE_STRING", "VALUE_NUMBER", "VALUE_OBJECT", "VALUE_REF",
    "PIECE_SINGLE", "PIECE_INTRA", "PIECE_ROWS", "PIECE_FIELDS",
    "GOLDEN",
]

# --------------------------------------------------------------------------- water-filling, timeline
# Shares within this relative distance of the current level are frozen *at* the current level, so
# that exact ties broken by rounding (a share computed as 0.9999999999999999 of another) freeze
# together and rates never go down from one level to the next (the kernel fill and
# ``maxmin.maxmin_reference``).
SNAP_RTOL = 1e-12
MIN_POSITIVE = 5e-324   # smallest positive float64 (subnormal): a positive demand's level never below it
TIME_RTOL = 1e-9        # completions this close (relative) to the earliest one are one event
BYTES_PER_GBPS_S = 1e9 / 8.0

# --------------------------------------------------------------------------- hash tables
# How far past its hash slot a key may sit. FNV-1a is not keyed: ids chosen to collide (an
# untrusted document) would make every probe walk all of them, quadratic in the ids; a table
# whose keys do not all fit this close is refused and the caller's dict (keyed SipHash) answers.
# ``group_identical`` bounds its probes by the same number.
MAX_PROBES = 64
# How many bytes of other keys a lookup of a key may compare, per byte of the key. A lookup
# walks the keys between the key's slot and its own, comparing bytes while they agree: ids
# chosen to share one slot AND a long prefix (64 ids of 1,000 bytes, 996 in common) made each
# hop of a crafted `solve` input compare ~64k bytes — linear, but slower than the dict path
# (found in review). A table where some key would cost more is refused: the dict answers.
MAX_COMPARED_PER_BYTE = 4

# --------------------------------------------------------------------------- JSON scan results
# ``scan_paths`` (and ``scan_flows`` for a "links" value):
SCAN_OK = 0
SCAN_NOT_AN_OBJECT = 1   # an item of the chunk is not an object
SCAN_LINKS_KEYS = 2      # a flow object with no "links" key, or with more than one
SCAN_NOT_STRINGS = 3     # a "links" value that is not an array of strings only
SCAN_UNKNOWN_ID = 4      # a link id the table does not hold
SCAN_COUNTS = 5          # a flow count or a path length that is not orjson's
SCAN_TRUNCATED = 6       # the bytes end inside a value
# ``scan_flows`` (FLOWS_OK is SCAN_OK: a "links" status passes through unchanged):
FLOWS_OK = 0
FLOWS_OUTSIDE = 7    # bytes outside the accepted subset of JSON (or not JSON at all)
FLOWS_FULL = 8       # an output buffer is too small
FLOWS_NO_CAP = 9     # a flow with no link and no demand: the located path reports it
# ``scan_items`` (a topology file's "nodes" / "links" read into columns):
ITEMS_OK = 0
ITEMS_OUTSIDE = 1       # bytes outside the subset read (or not JSON): an unknown or repeated key, ...
ITEMS_FULL = 2          # an output is too small
ITEMS_UNKNOWN_REF = 3   # a reference that is not a key of the id table
# The value class of each key it reads (its ``classes``), and what it writes per item:
VALUE_STRING = 1   # a non-empty plain string: its bytes then a NUL in the field (a NUL alone when absent)
VALUE_NUMBER = 2   # a number token: its bytes then a comma (nothing when absent)
VALUE_OBJECT = 3   # an object of scalars: its text then a NUL (a NUL alone when absent)
VALUE_REF = 4      # a string that is a key of the id table: its index in ``refs`` (-1 when absent)
# The keys of a flow, as bits; in ``scan_flows``' ``flags``: the flow gives a number for that key.
FLOW_ID, FLOW_LINKS, FLOW_DEMAND, FLOW_BYTES = 1, 2, 4, 8

# --------------------------------------------------------------------------- path assembly
# ``path_lengths`` / ``path_entries``: the kind of a piece of a path, and the int64 fields per
# piece of their ``pieces`` argument (kind, firsts column, hosts column, choices column, first
# table row, row count).
PIECE_SINGLE, PIECE_INTRA, PIECE_ROWS = 0, 1, 2
PIECE_FIELDS = 6

# --------------------------------------------------------------------------- hashing
# 2^64 / φ: the multiplier of routing's flow hash (``routing.hashing.flow_hash`` and the kernel
# ``hashed_rows`` compute the same hash) and of the grouping hashes of identical flows.
GOLDEN = 0x9E3779B97F4A7C15
