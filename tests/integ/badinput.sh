#!/bin/sh
# SPDX-License-Identifier: MIT
# Malformed traffic against rdaxd: every bad request fails alone.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/badinput" ] || die "$B/tests/badinput not built (make tests)"
share_dir "$T/pub"
start_rdaxd srv --share pub="$T/pub" --guest
check "malformed requests are refused one by one" "$B/tests/badinput" 127.0.0.1 "$PORT" pub
cat "$T/check.out"
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
