#!/bin/sh
# SPDX-License-Identifier: MIT
# The layers of docs/architecture.md, checked on the source: rdaxd's
# server code (src/server) reaches RDMA only through src/transport and
# src/mem, so none of its files includes a verbs or rdmacm header, even
# through another header (cc -M lists every header a file pulls in), and
# none calls ibv_* itself; the pure codecs (src/proto) include no verbs,
# rdmacm, liburing or libpmem2 header.
. "$(dirname "$0")/lib.sh"
need cc

# deps FILE...: every header the files include, one per line
deps() {
	for f in "$@"; do
		cc -M -D_GNU_SOURCE -I"$top/include" -I"$top/src" "$f" || echo "BROKEN $f"
	done | tr ' \\' '\n\n' | grep -v '^$' | grep -v ':$'
}

cd "$top" || die "no $top"
deps src/server/*.c >"$T/server.deps"
check "every server file's headers listed" sh -c "! grep -q '^BROKEN' '$T/server.deps'"
check_fails "src/server includes no <infiniband/*> or <rdma/*> header, directly or not" \
	grep -E '/(infiniband|rdma)/' "$T/server.deps"
check_fails "src/server calls no ibv_* function" \
	grep -nE '\<ibv_[a-z_]+[[:space:]]*\(' src/server/*.c src/server/*.h
deps src/proto/*.c >"$T/proto.deps"
check_fails "src/proto includes no verbs, rdmacm, liburing or libpmem2 header" \
	grep -E '/(infiniband|rdma)/|liburing|libpmem2' "$T/proto.deps"
finish
