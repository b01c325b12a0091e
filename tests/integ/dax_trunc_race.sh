#!/bin/sh
# SPDX-License-Identifier: MIT
# One file of a DAX share (libpmem2's PMEM2_FORCE_GRANULARITY on the
# host, as in dax_store.sh), two clients on two workers: one reads and
# writes it (4 KiB to 1 MiB: CPU copies and TCP zero-copy windows), the
# other cuts it short and extends it in a loop (tests/integ/trunc_race.c).
# rdaxd must not fault, drop either connection, fail a request, or show
# a byte nobody wrote. The store's readers take no lock: what unmaps
# waits for them (RCU), and a window's pieces cut off stay memory.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/trunc_race" ] || die "$B/tests/trunc_race not built (make tests)"

share_dir "$T/dax"
cat >"$T/smb.conf" <<CONF
[global]
	guest ok = yes
[dax]
	path = $T/dax
	store = dax
	read only = no
CONF
PMEM2_FORCE_GRANULARITY=CACHE_LINE start_rdaxd srv --config "$T/smb.conf" --workers 2
check_output "8 s of reads and writes against truncates and extensions" \
	"^ok: every byte read was the one written there, or zero" \
	"$B/tests/trunc_race" "smb://127.0.0.1:$PORT/dax/race.bin" 8
cp "$T/check.out" "$T/race.out"
sed 's/^/    /' "$T/race.out" | head -5
check "... no request failed" grep -q "^ok: every request succeeded" "$T/race.out"
check "... rdaxd dropped no connection" sh -c "! grep -q 'dropping connection' '$T/srv.log'"
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
