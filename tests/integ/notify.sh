#!/bin/sh
# SPDX-License-Identifier: MIT
# CHANGE_NOTIFY (rdaxd's inotify): smbclient's notify sees what a local
# process and another SMB client change; the wire cases (interim response,
# queue, WATCH_TREE, CANCEL, close, tree disconnect, ENUM_DIR) in
# tests/integ/notify_raw.c; a flood of creates under watchers leaves
# rdaxd's memory bounded and rdaxd serving.
. "$(dirname "$0")/lib.sh"
need smbclient timeout stdbuf
[ -x "$B/tests/notify_raw" ] || die "$B/tests/notify_raw not built (make tests)"
share_dir "$T/share" "$T/share/sub"
start_rdaxd srv --share data="$T/share" --guest

SMB="smbclient //127.0.0.1/data -p $PORT -N"

# notify_bg DIR SECONDS: smbclient's notify in the background (output in
# $T/notify.out, line buffered), given time to log on and ask
notify_bg() {
	timeout "$2" stdbuf -oL $SMB -c "notify $1" >"$T/notify.out" 2>&1 &
	NPID=$!
	sleep 1.5
}

notify_bg sub 8
touch "$T/share/sub/by-local"
$SMB -c "put /etc/hostname sub/by-smbclient" >/dev/null 2>&1
mv "$T/share/sub/by-local" "$T/share/sub/renamed"
rm "$T/share/sub/by-smbclient"
sleep 1
kill "$NPID" 2>/dev/null
wait "$NPID" 2>/dev/null
cp "$T/notify.out" "$T/check.out"
grep -q "^0001 by-local" "$T/notify.out" && ok "smbclient notify: a local process's create (0001 by-local)" ||
	{ not_ok "smbclient notify: a local process's create"; _show; }
grep -q "^0001 by-smbclient" "$T/notify.out" && ok "... another smbclient's create (0001 by-smbclient)" ||
	{ not_ok "... another smbclient's create"; _show; }
grep -q "^0004 by-local" "$T/notify.out" && grep -q "^0005 renamed" "$T/notify.out" &&
	ok "... a rename (0004 by-local, 0005 renamed)" || { not_ok "... a rename"; _show; }
grep -q "^0002 by-smbclient" "$T/notify.out" && ok "... a delete (0002 by-smbclient)" ||
	{ not_ok "... a delete"; _show; }

check "the wire: interim, queue, WATCH_TREE, CANCEL, close, tdis, ENUM_DIR" \
	"$B/tests/notify_raw" 127.0.0.1 "$PORT" data "$T/share"
sed 's/^/    /' "$T/check.out"

# a flood under a tree watcher and a plain one: memory stays bounded
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$RDAXD_PID/status"; }
mkdir -p "$T/share/flood/d1" "$T/share/flood/d2"
chmod -R 0777 "$T/share/flood"
notify_bg flood 30
rss0=$(rss)
for d in flood flood/d1 flood/d2; do
	(cd "$T/share/$d" && seq 1 8000 | sed 's/^/f/' | xargs touch)
done
sleep 1
rss1=$(rss)
kill "$NPID" 2>/dev/null
wait "$NPID" 2>/dev/null
grow=$((rss1 - rss0))
echo "    rdaxd RSS ${rss0} KiB before, ${rss1} KiB after 24000 creates under watch"
[ "$grow" -lt 16384 ] && ok "rdaxd's memory grew ${grow} KiB (bounded: < 16 MiB)" ||
	not_ok "rdaxd's memory grew ${grow} KiB under a flood"
check_output "rdaxd still serves after the flood" "renamed" $SMB -c "ls sub/*"
check "rdaxd survived" kill -0 "$RDAXD_PID"
rdaxd_idle "$T/srv.log" && ok "no connection, session or open left" ||
	not_ok "state left in rdaxd"
notify_bg "" 10
check "SIGTERM stops rdaxd cleanly with a CHANGE_NOTIFY waiting" stop_rdaxd
kill "$NPID" 2>/dev/null
finish
