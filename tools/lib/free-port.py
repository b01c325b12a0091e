#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""free-port.py [ADDR]: print a TCP port that is free on ADDR (default
127.0.0.1), for a test or bench server to listen on.

The port is drawn below the kernel's ephemeral range
(net.ipv4.ip_local_port_range) and checked with a bind without
SO_REUSEADDR, which a server's leftover sockets there refuse. bind(0)
would hand out an ephemeral port: the range every client's connect()
takes its source ports from, and where the TIME_WAIT sockets of a test
suite's thousands of short connections sit (bind(0) fails with
EADDRINUSE once they fill it). Below the range a server's port was
never a client's, and a client's never a server's. Where the range
leaves no room below it, bind(0) it is.
"""
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def bindable(family, addr, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.bind((addr, port))  # no SO_REUSEADDR: any leftover socket conflicts
        return True
    except OSError:
        return False
    finally:
        s.close()


def main():
    addr = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    lo, hi = 10000, ephemeral_low()
    if hi - lo >= 1000:
        for _ in range(500):
            port = random.randrange(lo, hi)
            if bindable(family, addr, port):
                print(port)
                return
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.bind((addr, 0))
        print(s.getsockname()[1])
    except OSError as e:
        sys.exit("free-port.py: no free port on %s: %s" % (addr, e))
    finally:
        s.close()


if __name__ == "__main__":
    main()
