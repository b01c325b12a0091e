#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cache coherence between two SMB mounts of one share (tests/vm/check-caching).

usage: coherence.py MOUNT_A MOUNT_B ROUNDS [PREFIX]

Every round one mount writes 64 KiB of fresh random bytes and the other
must read exactly them; the direction alternates (A->B, B->A). The kinds
of round, in turn:

  new       the writer creates a new file; the reader opens and reads it
  reopen    the reader read the file before (and closed it: cifs.ko keeps
            the handle and its lease a while, closetimeo); the writer
            rewrites it; the reader opens and reads it again
  held      the reader holds the file open and has read it (its page
            cache has the old bytes); the writer opens, rewrites, closes;
            the reader reads again through the fd it held
  both      both hold the file open; the writer writes through its fd
            (no close, no fsync); the reader reads through its fd

Same length every time, so the file's size tells the reader nothing. A
read that returns old bytes is retried every 10 ms for up to 5 s
(COHERENCE_BOUND_S in the environment sets another bound): a lease
break from R to none needs no acknowledgement, so the writer's WRITE may
complete a moment before the reader's client has processed the break.
Prints one summary line on stdout, `rounds N coherent N first_read_stale
N max_delay_ms N stale N`, the rounds on stderr; exit 0 when every read
saw the new bytes within the bound, 1 otherwise, 2 on an I/O error.
"""
import os
import sys
import time

SIZE = 65536
BOUND = float(os.environ.get("COHERENCE_BOUND_S", "5"))
KINDS = ("new", "reopen", "held", "both")


def put(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def get(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.pread(fd, SIZE + 1, 0)
    finally:
        os.close(fd)


def wait_fresh(read, want):
    """(first read was fresh, seconds until fresh or None)"""
    t0 = time.monotonic()
    first = read() == want
    if first:
        return True, 0.0
    while time.monotonic() - t0 < BOUND:
        time.sleep(0.01)
        if read() == want:
            return False, time.monotonic() - t0
    return False, None


def one_round(r, kind, wdir, rdir, prefix):
    name = "%s%02d-%s" % (prefix, r, kind)
    wpath, rpath = os.path.join(wdir, name), os.path.join(rdir, name)
    old, new = os.urandom(SIZE), os.urandom(SIZE)
    if kind == "new":
        put(wpath, new)
        return wait_fresh(lambda: get(rpath), new)
    put(wpath, old)
    if get(rpath) != old:
        raise OSError("the reader did not see the first version of %s" % name)
    if kind == "reopen":
        put(wpath, new)
        return wait_fresh(lambda: get(rpath), new)
    rfd = os.open(rpath, os.O_RDONLY)
    try:
        if os.pread(rfd, SIZE + 1, 0) != old:
            raise OSError("the reader's fd did not see the first version of %s" % name)
        if kind == "held":
            put(wpath, new)
        else:
            wfd = os.open(wpath, os.O_WRONLY)
            try:
                if os.pwrite(wfd, new, 0) != SIZE:
                    raise OSError("short write to %s" % name)
                return wait_fresh(lambda: os.pread(rfd, SIZE + 1, 0), new)
            finally:
                os.close(wfd)
        return wait_fresh(lambda: os.pread(rfd, SIZE + 1, 0), new)
    finally:
        os.close(rfd)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    a, b, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    prefix = sys.argv[4] if len(sys.argv) == 5 else "coh"
    coherent = first_stale = stale = 0
    max_delay = 0.0
    for r in range(rounds):
        kind = KINDS[(r // 2) % len(KINDS)]
        w, rd, tag = (a, b, "A->B") if r % 2 == 0 else (b, a, "B->A")
        try:
            first, delay = one_round(r, kind, w, rd, prefix)
        except OSError as e:
            print("round %d %s %s: %s" % (r, kind, tag, e), file=sys.stderr)
            return 2
        if delay is None:
            stale += 1
            what = "STALE after %.1f s" % BOUND
        else:
            coherent += 1
            first_stale += not first
            max_delay = max(max_delay, delay)
            what = "fresh" if first else "fresh after %.0f ms" % (delay * 1000)
        print("round %d %s %s: %s" % (r, kind, tag, what), file=sys.stderr)
    print("rounds %d coherent %d first_read_stale %d max_delay_ms %.0f stale %d"
          % (rounds, coherent, first_stale, max_delay * 1000, stale))
    return 0 if stale == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
