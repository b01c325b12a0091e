#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Guest helper of tests/vm/check-ca: an application that keeps one file
open on a cifs.ko mount while the server behind it is killed and started
again, and expects to carry on with the same descriptor.

usage: ca-holder.py FILE DIR

1. opens FILE read-write (created, truncated), writes part A
   (1 MiB + 4321 bytes), fsync, reads it back through the descriptor;
2. creates DIR/opened and waits for DIR/go (600 s at most);
3. through the same descriptor: writes part B after A (2 MiB + 77
   bytes) and overwrites 1000 bytes inside A, fsync;
4. reads the whole file back through the descriptor and compares it with
   what it wrote; writes that content to DIR/expected for the caller.

Before the wait and before the close it prints cifs.ko's persistent
FileId and session id of its open ("cifs open before|after: FID SES",
from /proc/fs/cifs/open_files).

Prints each step with its time on stdout; exit 0 when every call worked
and every read-back matched, 1 otherwise (the first error is the last line).
"""
import os
import sys
import time

A_LEN = (1 << 20) + 4321
B_LEN = (2 << 20) + 77
PATCH_OFF, PATCH_LEN = 5000, 1000


def say(msg):
    print("%.3f %s" % (time.monotonic(), msg), flush=True)


def write_all(fd, buf, off):
    done = 0
    while done < len(buf):
        done += os.pwrite(fd, buf[done:], off + done)


def read_all(fd, n):
    out = bytearray()
    while len(out) < n:
        chunk = os.pread(fd, n - len(out), len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def cifs_open(path):
    """cifs.ko's view of this process's open of path: (persistent FileId,
    session id) from /proc/fs/cifs/open_files (tid ses pfid flags count
    pid uid name), or None"""
    name = os.path.basename(path)
    try:
        with open("/proc/fs/cifs/open_files") as f:
            for line in f:
                w = line.split()
                if len(w) >= 8 and not w[0].startswith("#") and \
                        w[5] == str(os.getpid()) and w[7] == name:
                    return w[2], w[1]
    except OSError:
        pass
    return None


def main():
    path, ctl = sys.argv[1], sys.argv[2]
    a, b, patch = os.urandom(A_LEN), os.urandom(B_LEN), os.urandom(PATCH_LEN)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    write_all(fd, a, 0)
    os.fsync(fd)
    if read_all(fd, A_LEN + 1) != a:
        raise SystemExit("part A read back differs before the restart")
    say("part A: %d bytes written, fsync, read back" % A_LEN)
    say("cifs open before: %s %s" % (cifs_open(path) or ("-", "-")))
    open(os.path.join(ctl, "opened"), "w").close()

    go = os.path.join(ctl, "go")
    t0 = time.monotonic()
    while not os.path.exists(go):
        if time.monotonic() - t0 > 600:
            raise SystemExit("no go after 600 s")
        time.sleep(0.1)
    say("go: carrying on with descriptor %d" % fd)

    t1 = time.monotonic()
    write_all(fd, b, A_LEN)
    write_all(fd, patch, PATCH_OFF)
    os.fsync(fd)
    say("part B: %d bytes written after A, %d overwritten at %d, fsync: %.2f s" % (
        B_LEN, PATCH_LEN, PATCH_OFF, time.monotonic() - t1))
    want = bytearray(a + b)
    want[PATCH_OFF:PATCH_OFF + PATCH_LEN] = patch
    got = read_all(fd, len(want) + 1)
    if got != want:
        bad = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                   min(len(got), len(want)))
        raise SystemExit("read back through the descriptor differs: %d bytes, want %d, "
                         "first difference at %d" % (len(got), len(want), bad))
    say("read back %d bytes through the descriptor: identical" % len(got))
    say("cifs open after: %s %s" % (cifs_open(path) or ("-", "-")))
    os.close(fd)
    with open(os.path.join(ctl, "expected"), "wb") as f:
        f.write(want)
    say("closed")


if __name__ == "__main__":
    try:
        main()
    except OSError as e:
        say("FAILED: %s" % e)
        sys.exit(1)
    except SystemExit as e:
        if e.code not in (None, 0):
            say("FAILED: %s" % e.code)
            sys.exit(1)
