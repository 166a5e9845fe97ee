"""Chakra ``.et`` traces written from plain node dicts (the schema of :mod:`designer.engine.io.chakra`).

Used to make trace fixtures and benchmark inputs without the ``protobuf`` package; the message
layout follows mlcommons/chakra ``schema/protobuf/et_def.proto`` (``GlobalMetadata``, ``Node``,
``AttributeProto``, ``IOInfo``) and proto3's encoding (zero values are not written).
"""
from __future__ import annotations

from designer.engine.io.protowire import (LENGTH, VARINT, delimited, encode_bytes, encode_key, encode_packed,
                                          encode_varint)

__all__ = ["NODE_TYPE_CODES", "COMM_TYPE_CODES", "encode_attr", "encode_node", "encode_trace"]

NODE_TYPE_CODES = {"METADATA_NODE": 1, "MEM_LOAD_NODE": 2, "MEM_STORE_NODE": 3, "COMP_NODE": 4,
                   "COMM_SEND_NODE": 5, "COMM_RECV_NODE": 6, "COMM_COLL_NODE": 7}
COMM_TYPE_CODES = {"ALL_REDUCE": 0, "REDUCE": 1, "ALL_GATHER": 2, "GATHER": 3, "SCATTER": 4, "BROADCAST": 5,
                   "ALL_TO_ALL": 6, "REDUCE_SCATTER": 7, "REDUCE_SCATTER_BLOCK": 8, "BARRIER": 9}
# AttributeProto value fields used here: int64_val = 9, int32_val = 7, bool_val = 27, string_val = 29.
_FIELD = {"int64": 9, "int32": 7, "bool": 27, "string": 29}


def encode_attr(name: str, value, typ: str = "int64") -> bytes:
    """One ``AttributeProto`` (``typ``: int64, int32, bool or string)."""
    f = _FIELD[typ]
    body = encode_bytes(1, name)
    if typ == "string":
        body += encode_bytes(f, str(value))
    else:
        body += encode_key(f, VARINT) + encode_varint(int(value))
    return body


def encode_node(node: dict) -> bytes:
    """A ``Node`` message of ``{"id", "name", "type" (name), "ctrl_deps", "data_deps",
    "start_time_micros", "duration_micros", "inputs", "outputs" (IOInfo dicts), "attrs" (list of
    (name, value, typ))}``."""
    out = [encode_key(1, VARINT) + encode_varint(node["id"]) if node["id"] else b""]
    if node.get("name"):
        out.append(encode_bytes(2, node["name"]))
    out.append(encode_key(3, VARINT) + encode_varint(NODE_TYPE_CODES[node["type"]]))
    out.append(encode_packed(4, node.get("ctrl_deps", ())))
    out.append(encode_packed(5, node.get("data_deps", ())))
    for f, key in ((6, "start_time_micros"), (7, "duration_micros")):
        if node.get(key):
            out.append(encode_key(f, VARINT) + encode_varint(node[key]))
    for f, key in ((8, "inputs"), (9, "outputs")):
        if node.get(key):
            io = node[key]
            out.append(encode_bytes(f, b"".join(encode_bytes(k, io[n]) for k, n in
                                                ((1, "values"), (2, "shapes"), (3, "types")) if io.get(n))))
    for attr in node.get("attrs", ()):
        out.append(encode_key(10, LENGTH) + delimited(encode_attr(*attr)))
    return b"".join(out)


def encode_trace(nodes, version: str = "0.0.4") -> bytes:
    """A rank's ``.et`` bytes: the ``GlobalMetadata`` then every node, each length-prefixed."""
    meta = encode_bytes(1, version)
    return delimited(meta) + b"".join(delimited(encode_node(n)) for n in nodes)
