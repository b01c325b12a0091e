#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the RoCEv2 frames (UDP port 4791) of a pcap that carry PATTERN.

usage: rocegrep.py PCAP PATTERN

Prints one JSON object: frames in the file, RoCEv2 frames, the RoCEv2
frames whose UDP payload holds PATTERN whole ("hits"), and those hits
by the InfiniBand opcode class of their base transport header (send,
rdma_write, rdma_read_response, other). Ethernet (linktype 1), IPv4
only: the two-guest testbed's link (tests/vm/run --two --capture).
"""
import json
import struct
import sys

ROCE_PORT = 4791


def opclass(op):
    op &= 0x1F  # the RC/UC/UD transport bits are above
    if op <= 0x05 or op in (0x16, 0x17):  # 0x16-17: with invalidate
        return "send"
    if op <= 0x0B:
        return "rdma_write"
    if 0x0D <= op <= 0x10:
        return "rdma_read_response"
    return "other"


def frames(path):
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            end = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            end = ">"
        else:
            raise SystemExit(f"{path}: not a pcap file")
        if struct.unpack(end + "I", head[20:24])[0] != 1:
            raise SystemExit(f"{path}: not Ethernet")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(end + "IIII", rec)[2]
            data = f.read(incl)
            if len(data) < incl:
                return
            yield data


def roce_payload(frame):
    """The UDP payload of a RoCEv2 frame (BTH first), or None."""
    if len(frame) < 14 + 20 + 8 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0F) * 4
    if ip[9] != 17 or len(ip) < ihl + 8:
        return None
    dport = struct.unpack(">H", ip[ihl + 2:ihl + 4])[0]
    if dport != ROCE_PORT:
        return None
    return ip[ihl + 8:]


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    pattern = sys.argv[2].encode()
    out = {"frames": 0, "roce": 0, "hits": 0, "copies": 0,
           "by_opcode": {}}
    for frame in frames(sys.argv[1]):
        out["frames"] += 1
        udp = roce_payload(frame)
        if udp is None:
            continue
        out["roce"] += 1
        n = udp.count(pattern)
        if n == 0 or len(udp) < 12:
            continue
        out["hits"] += 1
        out["copies"] += n
        cls = opclass(udp[0])
        out["by_opcode"][cls] = out["by_opcode"].get(cls, 0) + 1
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
