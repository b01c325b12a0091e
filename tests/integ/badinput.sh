#!/bin/sh
# SPDX-License-Identifier: MIT
# Malformed traffic against rdaxd: every bad request fails alone.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/badinput" ] || die "$B/tests/badinput not built (make tests)"
share_dir "$T/pub"
# the share has the SMB3 POSIX extensions: their bad input is refused too
cat >"$T/smb.conf" <<CONF
[global]
	map to guest = bad user
	smb3 unix extensions = yes
[pub]
	path = $T/pub
	read only = no
	guest ok = yes
CONF
start_rdaxd srv --config "$T/smb.conf"
check "malformed requests are refused one by one" "$B/tests/badinput" 127.0.0.1 "$PORT" pub
cat "$T/check.out"
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
