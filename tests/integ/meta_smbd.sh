#!/bin/sh
# SPDX-License-Identifier: MIT
# Round trips of metadata operations against Samba smbd (started here on a
# loopback port with a temporary smb.conf): touch, stat, mv, rm, mkdir and
# rmdir from the rdax CLI each cost exactly one round trip after the
# session setup, and `rdax bench meta` counts one per operation (issue 7;
# the rdaxd side is in cli_loopback.sh).
. "$(dirname "$0")/lib.sh"
need smbd smbpasswd python3
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

. "$top/tools/lib/smbd.sh"
S=$T/smbd
scratch_smbd "$S" data || die "smbd did not start"
pids="$pids $SMBD_PID"

check_meta_round_trips smbd "smb://127.0.0.1:$SMBD_PORT/data" "$S/data" \
	--user root --password-file "$S/root.pw"
# the same in a subdirectory, signed (compounds are signed PDU by PDU)
mkdir "$S/data/sub"
check_meta_round_trips "smbd signed, subdirectory" "smb://127.0.0.1:$SMBD_PORT/data/sub" \
	"$S/data/sub" --user root --password-file "$S/root.pw" --sign
finish
