#!/bin/sh
# SPDX-License-Identifier: MIT
# rdaxctl against a real rdaxd: status shows an smbclient session (user,
# dialect, channel, tree) and the file it holds open; status --json says
# the same and parses; metrics parse as Prometheus text and count the
# bytes the client read; close-session ends the session; SIGUSR1 logs
# what status prints; bad input: a non-root user is refused (by the
# socket's mode, and by SO_PEERCRED when the mode would let it in), an
# unknown session id and an unknown request fail and rdaxd keeps serving.
. "$(dirname "$0")/lib.sh"
need smbclient python3 setpriv
[ -x "$RDAXCTL" ] || die "$RDAXCTL not built (make)"
[ "$(id -u)" = 0 ] || skip "the control socket is root's: run as root"

make_user "$T/passdb" alice 'ctl pw alice'
share_dir "$T/share"
head -c 300000 /dev/urandom >"$T/share/big"
echo held >"$T/share/held.txt"
chmod 0666 "$T/share/big" "$T/share/held.txt"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/share
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf" --workers 2
ctl() { "$RDAXCTL" -s "$RDAXD_CTL" "$@"; }
smb() { smbclient -U "alice%ctl pw alice" -p "$PORT" //127.0.0.1/data "$@"; }

check_output "status answers on an idle server" '^stats: 0 connections, 0 sessions, 0 opens' ctl status

# a client holding a file open while rdaxctl looks
mkfifo "$T/cmds"
smb <"$T/cmds" >"$T/hold.out" 2>&1 &
hold=$!
exec 3>"$T/cmds"
echo "open held.txt" >&3
i=0
until ctl status 2>/dev/null | grep -q '^stats open'; do
	i=$((i + 1))
	[ $i -gt 50 ] && break
	sleep 0.1
done
check_output "status: the session, its user, dialect and tree" \
	'^stats session 0x[0-9a-f]+ alice as alice: 1 channel, 1 tree, 1 open; tcp 127\.0\.0\.1:[0-9]+ .*; dialect 3\.1\.1 trees 1:\[data\]' \
	ctl status
check_output "status: the connection, its transport and dialect" \
	'^stats connection [0-9]+ worker [01] tcp 127\.0\.0\.1:[0-9]+ dialect 3\.1\.1 channels 1 credits [0-9]+' ctl status
check_output "status: the open file, its path and caching" \
	'^stats open 0x[0-9a-f]+ session 0x[0-9a-f]+ \[data\] "held\.txt" owner alice .* durable ' ctl status
check_output "status: the share, its store and rung" \
	'^stats share \[data\]: store posix rung none ' ctl status
ctl status --json >"$T/status.json" 2>&1
check "status --json parses (python3 -m json.tool)" python3 -m json.tool "$T/status.json"
check "status --json: the session, tree, open and connection match" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d["sessions"] if x["user"] == "alice"]
assert len(s) == 1 and s[0]["dialect"] == "3.1.1", s
assert [t["share"] for t in s[0]["trees"]] == ["data"], s
assert s[0]["channels"][0]["transport"] == "tcp", s
o = [x for x in d["opens"] if x["path"] == "held.txt"]
assert len(o) == 1 and o[0]["session"] == s[0]["id"] and o[0]["share"] == "data", o
c = [x for x in d["connections"] if x["id"] == s[0]["channels"][0]["connection"]]
assert len(c) == 1 and c[0]["transport"] == "tcp", c
assert d["summary"]["sessions"] == 1 and d["summary"]["opens"] == 1, d["summary"]
assert [x["name"] for x in d["shares"]] == ["data"], d["shares"]
' "$T/status.json"

# SIGUSR1 logs the same lines
n0=$(wc -l <"$T/srv.log")
kill -USR1 "$RDAXD_PID"
i=0
until tail -n +$((n0 + 1)) "$T/srv.log" | grep -q 'stats worker 1'; do
	i=$((i + 1))
	[ $i -gt 50 ] && break
	sleep 0.1
done
check_output "SIGUSR1 logs the status lines (session, open)" \
	'stats open 0x[0-9a-f]+ session 0x[0-9a-f]+ \[data\] "held\.txt"' \
	sh -c "tail -n +$((n0 + 1)) '$T/srv.log'"

# close-session: the held session ends
sid=$(python3 -c 'import json,sys; print([x for x in json.load(open(sys.argv[1]))["sessions"] if x["user"] == "alice"][0]["id"])' "$T/status.json")
check_output "close-session $sid" "session $sid closed" ctl close-session "$sid"
check_output "status: the session and its open are gone" '^stats: [0-9]+ connections, 0 sessions, 0 opens' ctl status
echo "ls" >&3
exec 3>&-
wait $hold
check_output "the client's next request finds its session deleted" \
	'NT_STATUS_USER_SESSION_DELETED|NT_STATUS_NETWORK_SESSION_EXPIRED|NT_STATUS_CONNECTION' cat "$T/hold.out"

# metrics: Prometheus text, and the bytes a client read
smb -c "get big $T/big.copy" >/dev/null 2>&1
check "a client reads a 300 kB file" cmp "$T/share/big" "$T/big.copy"
ctl metrics >"$T/metrics" 2>&1
check "metrics: every line is a comment or 'name{labels} value'" python3 -c '
import re, sys
pat = re.compile(r"^(# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\")*\})? (-?[0-9.e+-]+|\+Inf|NaN))$")
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) > 20, lines
bad = [l for l in lines if not pat.match(l)]
assert not bad, bad
' "$T/metrics"
check "metrics: the share's TCP read bytes are at least the file's" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"^rdax_share_bytes_total\{share=\"data\",transport=\"tcp\",op=\"read\"\} (\d+)$", t, re.M)
assert m and int(m.group(1)) >= 300000, m and m.group(0)
m = re.search(r"^rdax_share_io_latency_seconds_count\{share=\"data\",transport=\"tcp\",op=\"read\"\} (\d+)$", t, re.M)
assert m and int(m.group(1)) >= 1, m
' "$T/metrics"

# bad input
check_fails_output "close-session of an unknown id fails" 'no session 0x1234' ctl close-session 0x1234
check_fails_output "close-session of a non-number fails" 'not a session id' ctl close-session nonsense
check_fails_output "an unknown request fails" "unknown request" \
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"frobnicate\n"); r=s.makefile().read(); print(r); sys.exit(0 if r.startswith("ok") else 1)' "$RDAXD_CTL"
check_fails_output "rdaxctl as nobody: refused (socket mode 0600)" 'Permission denied|root only' \
	setpriv --reuid nobody --regid nogroup --clear-groups "$RDAXCTL" -s "$RDAXD_CTL" status
chmod 0666 "$RDAXD_CTL"
check_fails_output "rdaxctl as nobody through a 0666 socket: refused by SO_PEERCRED" \
	'root only' setpriv --reuid nobody --regid nogroup --clear-groups "$RDAXCTL" -s "$RDAXD_CTL" status
chmod 0600 "$RDAXD_CTL"
check_fails_output "rdaxctl without a server says so" 'is rdaxd running' "$RDAXCTL" -s "$T/none.ctl" status
check_output "rdaxd still serves" 'held\.txt' smb -c ls
check "rdaxd stops cleanly and removes its socket" sh -c "kill -TERM $RDAXD_PID; wait $RDAXD_PID 2>/dev/null; i=0; while kill -0 $RDAXD_PID 2>/dev/null && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i+1)); done; [ ! -e '$RDAXD_CTL' ]"
finish
