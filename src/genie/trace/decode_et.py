#!/usr/bin/env python3
"""Independent Chakra ET decoder (raw protobuf wire format, no genie code, no protobuf lib).

Used to derive the exact figures written into genie's tests, so that those figures do not come
from genie's own reader. Usage: decode_et.py FILE... [--dump] ; prints per-file summaries.
"""
import gzip, sys, collections, json

NODE_TYPES = {0: "INVALID", 1: "METADATA", 2: "MEM_LOAD", 3: "MEM_STORE", 4: "COMP",
              5: "COMM_SEND", 6: "COMM_RECV", 7: "COMM_COLL"}
COLL = {0: "ALL_REDUCE", 1: "REDUCE", 2: "ALL_GATHER", 3: "GATHER", 4: "SCATTER", 5: "BROADCAST",
        6: "ALL_TO_ALL", 7: "REDUCE_SCATTER", 8: "REDUCE_SCATTER_BLOCK", 9: "BARRIER"}


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return r, i


def fields(b):
    i = 0; out = []
    while i < len(b):
        k, i = varint(b, i); f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v = b[i:i + 8]; i += 8
        elif w == 5:
            v = b[i:i + 4]; i += 4
        elif w == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        else:
            raise ValueError("wire type %d" % w)
        out.append((f, w, v))
    return out


def packed(v, w):
    if w == 0:
        return [v]
    vals = []; i = 0
    while i < len(v):
        x, i = varint(v, i); vals.append(x)
    return vals


def zz(x):
    return (x >> 1) ^ -(x & 1)


def attr(b):
    name = None; val = None; kind = None
    for f, w, v in fields(b):
        if f == 1:
            name = v.decode()
        elif f in (7, 9):
            x = v if v < 1 << 63 else v - (1 << 64); val, kind = x, {7: "int32", 9: "int64"}[f]
        elif f in (11, 13):
            val, kind = v, {11: "uint32", 13: "uint64"}[f]
        elif f in (15, 17):
            val, kind = zz(v), {15: "sint32", 17: "sint64"}[f]
        elif f == 27:
            val, kind = bool(v), "bool"
        elif f == 29:
            val, kind = v.decode(), "string"
        elif f == 28:  # BoolList message: repeated bool values = 1 (packed or not)
            vals = []
            for f2, w2, v2 in fields(v):
                vals += packed(v2, w2)
            val, kind = [bool(x) for x in vals], "bool_list"
        elif f == 3:
            import struct; val, kind = struct.unpack("<d", v)[0], "double"
        elif f > 2:
            val, kind = v, "field%d" % f
    return name, kind, val


def nodes(path):
    b = open(path, "rb").read()
    if b[:2] == b"\x1f\x8b":
        b = gzip.decompress(b)
    i = 0; first = True
    while i < len(b):
        n, i = varint(b, i); m = b[i:i + n]; i += n
        if first:
            first = False; continue
        node = {"id": 0, "name": "", "type": 0, "ctrl": [], "data": [], "dur": 0, "attr": {}}
        for f, w, v in fields(m):
            if f == 1: node["id"] = v
            elif f == 2: node["name"] = v.decode(errors="replace")
            elif f == 3: node["type"] = v
            elif f == 4: node["ctrl"] += packed(v, w)
            elif f == 5: node["data"] += packed(v, w)
            elif f == 7: node["dur"] = v
            elif f == 10:
                k, kind, val = attr(v); node["attr"][k] = (kind, val)
        yield node


def summary(path):
    by_type = collections.Counter(); coll = collections.Counter(); coll_bytes = 0
    ids = set(); ns = []
    for n in nodes(path):
        ns.append(n); ids.add(n["id"]); by_type[NODE_TYPES[n["type"]]] += 1
        if n["type"] == 7 and "comm_type" in n["attr"]:
            coll[COLL[n["attr"]["comm_type"][1]]] += 1
            if "comm_size" in n["attr"]:
                coll_bytes += n["attr"]["comm_size"][1]
    missing_ctrl = sum(1 for n in ns for d in n["ctrl"] if d not in ids)
    missing_data = sum(1 for n in ns for d in n["data"] if d not in ids)
    no_ct = sum(1 for n in ns if n["type"] == 7 and "comm_type" not in n["attr"])
    no_cs = sum(1 for n in ns if n["type"] == 7 and "comm_type" in n["attr"] and "comm_size" not in n["attr"])
    comp_us = sum(n["dur"] for n in ns if n["type"] == 4)
    cpu = lambda n: bool(n["attr"].get("is_cpu_op", ("", 0))[1])
    gpu_comp_us = sum(n["dur"] for n in ns if n["type"] == 4 and not cpu(n))
    wrappers = [n for n in ns if n["type"] == 7 and "comm_type" not in n["attr"] and cpu(n)]
    cpu_us = sum(n["dur"] for n in ns if n["type"] == 4 and cpu(n)) + sum(n["dur"] for n in wrappers)
    sends = [n for n in ns if n["type"] == 5]
    recvs = [n for n in ns if n["type"] == 6]
    return dict(nodes=len(ns), by_type=dict(by_type), coll=dict(coll), coll_bytes=coll_bytes,
                missing_ctrl=missing_ctrl, missing_data=missing_data, coll_without_type=no_ct,
                coll_without_size=no_cs, comp_us=comp_us,
                gpu_comp_us=gpu_comp_us, cpu_us=cpu_us, wrappers=len(wrappers),
                sends=len(sends), recvs=len(recvs),
                send_bytes=sum(n["attr"].get("comm_size", n["attr"].get("tensor_size", ("", 0)))[1] for n in sends),
                recv_bytes=sum(n["attr"].get("comm_size", n["attr"].get("tensor_size", ("", 0)))[1] for n in recvs))


if __name__ == "__main__":
    dump = "--dump" in sys.argv
    for p in [a for a in sys.argv[1:] if a != "--dump"]:
        if dump:
            for n in nodes(p):
                print(json.dumps(n, default=str))
        else:
            print(p, json.dumps(summary(p)))
