"""A bounded reader and a small writer of the protobuf wire format (no ``protobuf`` package).

Only what Chakra execution traces need (:mod:`designer.engine.io.chakra`): varints, zig-zag
varints, length-delimited fields (strings, bytes, sub-messages, packed repeated varints) and the
fixed 32/64-bit fields, per the published encoding (https://protobuf.dev/programming-guides/encoding/).
Groups (wire types 3 and 4, deprecated since proto2) are refused. Every read is bounded by the end
of its enclosing message: a varint over 10 bytes, a length past the end or a truncated fixed field
raises :class:`WireError` with the byte offset, which the caller turns into a located problem
(``rank 3 (trace.3.et) byte 1,204: length 1,000,000,000 past the end``). Nothing recurses, so a
deeply nested hostile message costs no stack.
"""
from __future__ import annotations

import struct

__all__ = ["WireError", "read_varint", "length_end", "skip_field", "packed_varints", "to_signed64", "zigzag",
           "fixed64_double", "fixed32_float", "encode_varint", "encode_key", "encode_bytes",
           "encode_packed", "delimited"]

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_DOUBLE, _FLOAT = struct.Struct("<d"), struct.Struct("<f")


class WireError(ValueError):
    """Malformed wire data at byte ``offset`` of the buffer."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset, self.message = offset, message


def read_varint(buf, pos: int, end: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the offset after it.

    Raises
    ------
    WireError
        Truncated (the message ends inside it) or longer than 10 bytes.
    """
    if pos >= end:
        raise WireError(pos, "truncated varint (the message ends here)")
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    start, result, shift = pos, b & 0x7F, 7
    pos += 1
    while True:
        if pos >= end:
            raise WireError(start, "truncated varint (the message ends inside it)")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError(start, "varint longer than 10 bytes")


def length_end(buf, pos: int, end: int) -> tuple[int, int]:
    """``(start, stop)`` of the length-delimited value at ``pos`` (its length varint read)."""
    n, start = read_varint(buf, pos, end)
    if n > end - start:
        raise WireError(pos, f"length {n:,} past the end ({end - start:,} bytes left)")
    return start, start + n


def skip_field(buf, wire_type: int, pos: int, end: int) -> int:
    """The offset after a field of ``wire_type`` whose key was read (an unknown field)."""
    if wire_type == VARINT:
        return read_varint(buf, pos, end)[1]
    if wire_type == LENGTH:
        return length_end(buf, pos, end)[1]
    size = 8 if wire_type == FIXED64 else 4 if wire_type == FIXED32 else 0
    if not size:
        raise WireError(pos, f"unsupported wire type {wire_type} (groups are not read)")
    if pos + size > end:
        raise WireError(pos, f"truncated {size * 8}-bit field")
    return pos + size


def packed_varints(buf, start: int, stop: int) -> list[int]:
    """The varints of a packed repeated field occupying ``buf[start:stop]``."""
    out, pos = [], start
    while pos < stop:
        v, pos = read_varint(buf, pos, stop)
        out.append(v)
    return out


def to_signed64(v: int) -> int:
    """An ``int32``/``int64`` read as an unsigned varint (negatives are 10-byte two's complement)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def zigzag(v: int) -> int:
    """A ``sint32``/``sint64`` value from its zig-zag varint."""
    return (v >> 1) ^ -(v & 1)


def fixed64_double(buf, pos: int, end: int) -> float:
    if pos + 8 > end:
        raise WireError(pos, "truncated 64-bit field")
    return _DOUBLE.unpack_from(buf, pos)[0]


def fixed32_float(buf, pos: int, end: int) -> float:
    if pos + 4 > end:
        raise WireError(pos, "truncated 32-bit field")
    return _FLOAT.unpack_from(buf, pos)[0]


def encode_varint(v: int) -> bytes:
    """The varint of ``v`` >= 0 (a negative ``int64`` is written as its 64-bit two's complement)."""
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def encode_key(field: int, wire_type: int) -> bytes:
    return encode_varint(field << 3 | wire_type)


def encode_bytes(field: int, payload: bytes | str) -> bytes:
    """A length-delimited field (a ``str`` is written as UTF-8)."""
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    return encode_key(field, LENGTH) + encode_varint(len(data)) + data


def encode_packed(field: int, values) -> bytes:
    """A packed repeated varint field (nothing when ``values`` is empty, as proto3 writes it)."""
    values = list(values)
    return encode_bytes(field, b"".join(encode_varint(v) for v in values)) if values else b""


def delimited(message: bytes) -> bytes:
    """A message prefixed with its varint length: one record of a Chakra ``.et`` stream."""
    return encode_varint(len(message)) + message
