"""The JSON writer of the ``solve`` answer: one object from orjson's encodings of its keys
and of its values (``designer/engine/commands/_scenario_io.py``, ``ObjectWriter``), in place of
cutting them into a Python bytes object per key and per value and joining those.

Entry point: ``write_object``.

Bounds contract
---------------
Nothing is trusted. Every offset array is checked to cut its bytes (:func:`_cuts`), every ``pick``
against the number of values, and every copy against ``len(text)`` before it is made
(:func:`_put`); any failure returns -1 and the caller writes the answer with orjson.
"""
from __future__ import annotations

from designer.engine.solve.kernels.compiler import kernel

__all__ = ["write_object"]


@kernel
def _put(text, at, source, start, end):
    """Copy ``source[start:end]`` to ``text[at:]``; the index after it, or -1 when it does not fit."""
    if at < 0 or at + (end - start) > len(text):
        return -1
    for k in range(start, end):
        text[at] = source[k]
        at += 1
    return at


@kernel
def _cuts(ptr, size):
    """Do the offsets ``ptr`` (at least one) rise from 0 or more to at most ``size``?"""
    if len(ptr) == 0 or ptr[0] < 0 or ptr[len(ptr) - 1] > size:
        return False
    for k in range(len(ptr) - 1):
        if ptr[k + 1] < ptr[k]:
            return False
    return True


# D: one pass over the members, branches per way of giving the values (cut or picked) and per check
@kernel
def write_object(keys, values, value_ptr, pick, layout, layout_ptr, text):
    """Write to ``text`` the JSON object whose keys are the encoded strings of ``keys`` (the bytes
    between the outer ``["`` and ``"]`` of an encoded list of strings, cut at each ``","``,
    leftmost first: the caller vouches that no ``\\",`` occurs, so each is a separator) and
    whose values are: with an empty ``pick``, the pieces of ``values`` cut at its commas (an
    encoded array of numbers between its brackets); else ``values[value_ptr[p]:value_ptr[p + 1]]``
    for each ``p`` of ``pick`` (-1: the last one). ``layout[layout_ptr[j]:layout_ptr[j + 1]]``,
    j = 0..3: what opens the object, ends a key (its quote and the colon), separates two members
    (up to the next key's quote) and closes it. Returns the bytes written, or -1 when ``text`` is
    too small, a ``pick`` is out of range, the keys and the values are not as many, or an offset
    array does not cut its bytes (no bounds checks in compiled code)."""
    n_keys, n_values, n_picks, n_choices = len(keys), len(values), len(pick), len(value_ptr) - 1
    if (n_picks == 0 and n_values == 0) or not _cuts(layout_ptr, len(layout)) or len(layout_ptr) != 5:
        return -1
    if n_picks and not _cuts(value_ptr, n_values):
        return -1
    at = _put(text, 0, layout, layout_ptr[0], layout_ptr[1])
    ki, vi, member = 0, 0, 0
    while True:
        start = ki
        while ki < n_keys and not (keys[ki] == 34 and ki + 2 < n_keys and keys[ki + 1] == 44
                                   and keys[ki + 2] == 34):  # '","'
            ki += 1
        if n_picks == 0:
            v_start = vi
            while vi < n_values and values[vi] != 44:  # ','
                vi += 1
            v_end, last_value = vi, vi >= n_values
        else:
            p = pick[member]
            if p < 0:
                p += n_choices
            if p < 0 or p >= n_choices:
                return -1
            v_start, v_end, last_value = value_ptr[p], value_ptr[p + 1], member + 1 == n_picks
        at = _put(text, at, keys, start, ki)
        at = _put(text, at, layout, layout_ptr[1], layout_ptr[2])
        at = _put(text, at, values, v_start, v_end)
        member += 1
        if (ki >= n_keys) != last_value:
            return -1  # not as many keys as values
        if last_value:
            break
        at = _put(text, at, layout, layout_ptr[2], layout_ptr[3])
        ki += 3
        vi += 1
    return _put(text, at, layout, layout_ptr[3], layout_ptr[4])
