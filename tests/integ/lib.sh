# SPDX-License-Identifier: MIT
# Shared helpers for integration tests (sourced). Each test runs real
# processes: rdaxd, the rdax CLI, smbclient, smbd.

set -u
top=${RDAX_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-build}
case $B in /*) ;; *) B=$top/$B ;; esac
RDAXD=$B/rdaxd
RDAX=$B/rdax
RDAXCTL=$B/rdaxctl
export LD_LIBRARY_PATH=$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

T=$(mktemp -d /tmp/rdax-test.XXXXXX)
# rdaxd acts as each session's Unix user: they must reach the shares in $T
chmod 0711 "$T"
pids=""
nfail=0
nchecks=0
nskips=0
made_users=""
mounts=""
USERS_DIR=/run/rdax-test-users	# unix_user's claims

cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	for u in $made_users; do
		user_release "$u"
	done
	for m in $mounts; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	[ -n "${RDAX_KEEP_T:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }
# ok DESC / not_ok DESC: one check that passed / failed
ok() { nchecks=$((nchecks + 1)); echo "ok: $*"; }
not_ok() { nchecks=$((nchecks + 1)); nfail=$((nfail + 1)); echo "FAIL: $*"; }
# skip_case PART REASON: a part of this test that cannot run here;
# tests/run.sh counts it as one skip, with the reason
skip_case() { nskips=$((nskips + 1)); echo "SKIP-CASE: $1: $2"; }
# _show: the last lines of the last check's output
_show() { sed 's/^/    | /' "$T/check.out" | tail -n 20; }
# check DESC CMD...: the command must succeed
check() {
	desc=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc (rc=$?)"
		_show
	fi
}
# check_fails DESC CMD...: the command must fail
check_fails() {
	desc=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then
		not_ok "$desc (unexpected success)"
		_show
	else
		ok "$desc"
	fi
}
# check_output DESC PATTERN CMD...: the command must succeed and its
# output (stdout+stderr) match PATTERN
check_output() {
	desc=$1 pat=$2
	shift 2
	"$@" >"$T/check.out" 2>&1
	_rc=$?
	if [ "$_rc" != 0 ]; then
		not_ok "$desc (rc=$_rc)"
		_show
	elif grep -Eq -- "$pat" "$T/check.out"; then
		ok "$desc"
	else
		not_ok "$desc (no match for /$pat/)"
		_show
	fi
}
# check_fails_output DESC PATTERN CMD...: the command must fail and its
# output match PATTERN (an error that says why)
check_fails_output() {
	desc=$1 pat=$2
	shift 2
	"$@" >"$T/check.out" 2>&1
	_rc=$?
	if [ "$_rc" = 0 ]; then
		not_ok "$desc (unexpected success)"
		_show
	elif grep -Eq -- "$pat" "$T/check.out"; then
		ok "$desc"
	else
		not_ok "$desc (rc=$_rc, no match for /$pat/)"
		_show
	fi
}
# finish: exit status of the test. A test that ran no checks fails,
# unless every part of it was skipped: then the test is one skip.
finish() {
	if [ "$nchecks" = 0 ] && [ "$nskips" -gt 0 ]; then
		echo "SKIP: none of its $nskips part(s) could run here (SKIP-CASE lines above)"
		exit 77
	fi
	if [ "$nchecks" = 0 ]; then
		echo "FAIL: no checks ran"
		exit 1
	fi
	if [ "$nfail" -gt 0 ]; then
		echo "$nfail of $nchecks check(s) failed"
		exit 1
	fi
	echo "all $nchecks checks passed"
	exit 0
}

# free_port [ADDR]: a port to listen on, below the ephemeral range
free_port() {
	python3 "$top/tools/lib/free-port.py" "$@"
}

# need CMD...: programs the test cannot run without. tools/deps.sh
# installs them all, so a missing one is a failure, not a skip.
need() {
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || die "$c is not installed (tools/deps.sh installs it)"
	done
}

# start_rdaxd NAME ARGS...: start rdaxd on a free port (or RDAXD_PORT);
# sets PORT and RDAXD_PID.
# RDAX_TEST_STORE=dax runs its --share shares on the DAX store (forced
# cache-line persistence where there is no pmem: libpmem2's test switch).
start_rdaxd() {
	name=$1
	shift
	PORT=${RDAXD_PORT:-$(free_port)}
	if [ "${RDAX_TEST_STORE:-}" = dax ]; then
		set -- --store dax "$@"
		export PMEM2_FORCE_GRANULARITY=${PMEM2_FORCE_GRANULARITY:-CACHE_LINE}
	fi
	# each test server its own control socket (rdaxctl -s $RDAXD_CTL)
	RDAXD_CTL=$T/$name.ctl
	# a NAME used before holds the last server's "ready": only this one's
	rm -f "$T/$name.log"
	"$RDAXD" --listen "tcp://127.0.0.1:$PORT" --control "$RDAXD_CTL" "$@" >"$T/$name.log" 2>&1 &
	RDAXD_PID=$!
	pids="$pids $RDAXD_PID"
	i=0
	while ! grep -q "ready" "$T/$name.log" 2>/dev/null; do
		if ! kill -0 "$RDAXD_PID" 2>/dev/null; then
			cat "$T/$name.log"
			die "rdaxd did not start"
		fi
		i=$((i + 1))
		[ $i -gt 100 ] && die "rdaxd not ready after 10 s"
		sleep 0.1
	done
}

# stop_rdaxd: SIGTERM, wait for a clean exit (status 0)
stop_rdaxd() {
	kill -TERM "$RDAXD_PID"
	wait "$RDAXD_PID"
	rc=$?
	pids=$(echo "$pids" | sed "s/ $RDAXD_PID//")
	return $rc
}

# unix_user NAME: a Unix account NAME, as rdaxd needs for each SMB user
# it serves; made here (as root: group "users", no home, no shell) and
# removed when the test ends. Without root rdaxd acts as the user running
# it for everyone, and no account is needed.
unix_user() {
	[ "$(id -u)" = 0 ] || { getent passwd "$1" >/dev/null; return 0; }
	# suites that run at once share the accounts: each holds a claim,
	# and the last one out deletes an account one of them made
	mkdir -p "$USERS_DIR/$1" || die "mkdir $USERS_DIR/$1"
	(
		flock 9
		if ! getent passwd "$1" >/dev/null; then
			useradd -M -N -g users -s /usr/sbin/nologin "$1" || exit 1
			touch "$USERS_DIR/$1/made"
		fi
		touch "$USERS_DIR/$1/$$"
	) 9>"$USERS_DIR/.lock" || die "useradd $1 failed"
	made_users="$made_users $1"
}

# user_release USER: drop this suite's claim (unix_user)
user_release() {
	(
		flock 9
		rm -f "$USERS_DIR/$1/$$"
		# another suite's claim, or one whose suite is gone
		for c in "$USERS_DIR/$1"/*; do
			case ${c##*/} in
			made | '*') continue ;;
			esac
			kill -0 "${c##*/}" 2>/dev/null && exit 0
			rm -f "$c"
		done
		[ -e "$USERS_DIR/$1/made" ] && userdel "$1" 2>/dev/null
		rm -rf "${USERS_DIR:?}/$1"
	) 9>"$USERS_DIR/.lock"
}

# reflink_fs DIR SIZE_MB: mount a fresh XFS with reflink (an image on a
# loop device, in $T) at DIR, unmounted when the test ends. Fails with
# the reason in REFLINK_WHY where the machine cannot (not root, no loop
# device): the caller makes that a skip_case.
reflink_fs() {
	REFLINK_WHY=""
	[ "$(id -u)" = 0 ] || { REFLINK_WHY="loop devices need root"; return 1; }
	truncate -s "${2}M" "$T/xfs.img" || { REFLINK_WHY="no room for an image"; return 1; }
	mkfs.xfs -q -m reflink=1 "$T/xfs.img" >"$T/mkfs.out" 2>&1 ||
		{ REFLINK_WHY="mkfs.xfs: $(tail -n 1 "$T/mkfs.out")"; return 1; }
	mkdir -p "$1"
	mount -o loop "$T/xfs.img" "$1" >"$T/mount.out" 2>&1 ||
		{ REFLINK_WHY="no loop device: $(tail -n 1 "$T/mount.out")"; return 1; }
	mounts="$1 $mounts"
	chmod 0711 "$1"
}

# share_dir DIR...: directories every user of a share may write
share_dir() {
	mkdir -p "$@" || die "mkdir $*"
	chmod 0777 "$@"
}

# own USER PATH...: files the test made for USER to work on are USER's
own() {
	_u=$1
	shift
	chown -R "$_u" "$@" || die "chown $_u $*"
}

# make_user DB USER PASSWORD: a Unix account, its passdb entry and a 0600
# password file
make_user() {
	unix_user "$2"
	printf '%s\n' "$3" | "$RDAX" passwd --passdb "$1" "$2" || die "rdax passwd failed"
	printf '%s\n' "$3" >"$T/$2.pw"
	chmod 600 "$T/$2.pw"
}

# start_relay [--no-resume-key]: tests/integ/relay.c between clients and
# rdaxd's PORT; sets RPORT and RELAY_PID. SIGUSR1 holds the server's
# answers back, SIGUSR2 trickles them, SIGHUP passes them again.
start_relay() {
	[ -x "$B/tests/relay" ] || die "$B/tests/relay not built (make tests)"
	RPORT=$(free_port)
	rm -f "$T/relay.$RPORT.log"
	"$B/tests/relay" "$@" "$RPORT" "$PORT" >"$T/relay.$RPORT.log" 2>&1 &
	RELAY_PID=$!
	pids="$pids $RELAY_PID"
	i=0
	while ! grep -q "ready" "$T/relay.$RPORT.log" 2>/dev/null; do
		kill -0 "$RELAY_PID" 2>/dev/null || die "relay did not start: $(cat "$T/relay.$RPORT.log")"
		i=$((i + 1))
		[ $i -gt 100 ] && die "relay not ready after 10 s"
		sleep 0.1
	done
}

# worker_stat LOG FIELD: FIELD of the workers' SIGUSR1 stats lines
# (rdaxd RDAXD_PID, logging to LOG), summed over the workers
worker_stat() {
	_n0=$(wc -l <"$1")
	kill -USR1 "$RDAXD_PID"
	sleep 0.5
	tail -n +$((_n0 + 1)) "$1" | grep 'stats worker' | sed -n "s/.* $2 \([0-9]*\).*/\1/p" |
		awk '{ s += $1 } END { printf "%d\n", s }'
}

# rdaxd_idle LOG: rdaxd (RDAXD_PID, logging to LOG) reports on SIGUSR1 no
# connection, session or open left in any worker; retried for about 9 s
# while the last clients go away. The last report is in $T/stats.
rdaxd_idle() {
	_i=0
	while [ $_i -lt 30 ]; do
		_n0=$(wc -l <"$1")
		kill -USR1 "$RDAXD_PID"
		sleep 0.3
		tail -n +$((_n0 + 1)) "$1" | grep 'stats worker' >"$T/stats" || true
		if [ -s "$T/stats" ] &&
			! grep -Evq 'connections 0 \(rdma 0\) sessions 0 opens 0' "$T/stats"; then
			return 0
		fi
		_i=$((_i + 1))
	done
	cat "$T/stats"
	return 1
}

# _rt1 DESC RC CMD ARGS...: `rdax AUTH --stats CMD ARGS` (AUTH: the
# caller's "$@") exits RC and reports exactly one round trip; output in
# $T/rt.out
_rt1() {
	_desc=$1 _rc=$2
	shift 2
	$RDAX $_auth --stats "$@" >"$T/rt.out" 2>&1
	_got=$?
	if [ "$_got" = "$_rc" ] && grep -Eq "$_one" "$T/rt.out"; then
		ok "$_desc"
	else
		not_ok "$_desc (exit $_got, wanted $_rc; or not one round trip)"
		sed 's/^/    | /' "$T/rt.out" | tail -n 20
	fi
}

# check_meta_round_trips LABEL URL DIR AUTH...: issue 7's round-trip
# contract against the server behind URL (a writable directory, DIR its
# local path): touch, stat, mv, rm, mkdir and rmdir each cost exactly one
# round trip after the session setup (rdax --stats), and `rdax bench meta`
# counts one round trip per operation of each kind, with the SMB2 requests
# of its compounds (without leases: every stat goes to the server), and
# leaves nothing behind; with leases (the default) a stat of a file stat'ed
# just before (restat) costs none.
check_meta_round_trips() {
	_l=$1 _u=$2 _d=$3
	shift 3
	_auth=$*
	_one='^1 round trip \(\+[0-9]+ to set up the session\)$'
	_rt1 "$_l: touch is 1 round trip" 0 touch "$_u/rt.f"
	check "$_l: ... and created the file" test -f "$_d/rt.f"
	_rt1 "$_l: stat is 1 round trip" 0 stat "$_u/rt.f"
	check_output "$_l: ... and shows the empty file" "Size: 0 " cat "$T/rt.out"
	_rt1 "$_l: mv is 1 round trip" 0 mv "$_u/rt.f" "$_u/rt.g"
	check "$_l: ... and renamed it" test -f "$_d/rt.g" -a ! -e "$_d/rt.f"
	_rt1 "$_l: rm is 1 round trip" 0 rm "$_u/rt.g"
	check "$_l: ... and removed it" test ! -e "$_d/rt.g"
	_rt1 "$_l: mkdir is 1 round trip" 0 mkdir "$_u/rt.d"
	check "$_l: ... and made it" test -d "$_d/rt.d"
	_rt1 "$_l: rmdir is 1 round trip" 0 rmdir "$_u/rt.d"
	check "$_l: ... and removed it" test ! -e "$_d/rt.d"
	_rt1 "$_l: stat of a missing file fails in 1 round trip" 1 stat "$_u/rt.none"
	check_output "$_l: ... with the status" "STATUS_OBJECT_NAME_NOT_FOUND" cat "$T/rt.out"
	check "bench meta --no-leases --json against $_l" sh -c \
		"$RDAX $* --no-leases bench meta --count 25 --json '$_u' >'$T/meta.json'"
	check_output "$_l: bench meta: 1 round trip per operation, requests as compounded" \
		'^touch 1 3 stat 1 3 restat 1 3 truncate 1 3 mv 1 3 rm 1 2 mkdir 1 2 rmdir 1 3 ok$' \
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for j in d["jobs"]:
    out += [j["op"], "%g" % j["round_trips_per_op"], "%g" % j["requests_per_op"]]
    assert j["total_ios"] == 25 and j["round_trips"] == 25 and j["error"] == 0, j
    assert j["iops"] > 0 and j["lat_ns"]["percentile"]["50.000000"] > 0, j
assert d["config"]["count"] == 25 and d["session_setup"]["round_trips"] >= 3, d
print(" ".join(out), "ok")' "$T/meta.json"
	check "bench meta --json (leases) against $_l" sh -c \
		"$RDAX $* bench meta --count 25 --json '$_u' >'$T/meta-lease.json'"
	check_output "$_l: bench meta with leases: a restat is no round trip, the rest 1" \
		'^touch 1 stat 1 restat 0 truncate 1 mv 1 rm 1 mkdir 1 rmdir 1 ok$' \
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for j in d["jobs"]:
    out += [j["op"], "%g" % j["round_trips_per_op"]]
    assert j["total_ios"] == 25 and j["error"] == 0, j
print(" ".join(out), "ok")' "$T/meta-lease.json"
	check_output "$_l: bench meta left nothing behind" '^0$' \
		sh -c "find '$_d' -maxdepth 1 -name '.rdax-meta-*' | wc -l"
	check_output "$_l: bench meta table, one line per operation" \
		'^touch stat truncate mv rm mkdir rmdir $' \
		sh -c "$RDAX $* bench meta --count 3 '$_u' | awk 'NR > 2 && \$3 == \"1.00\" { printf \"%s \", \$1 }'"
}

# A sanitizer build (make check-asan) of librdax loaded by a program that
# is not instrumented (fio) needs the sanitizer runtimes preloaded. fio's
# own leaks are not ours: a leak whose allocating frame is in the fio
# binary is suppressed (two frames are recorded: the allocator's and its
# caller's), one allocated by the engine or librdax is still reported.
SAN_PRELOAD=""
if nm -D "$B/librdax.so" 2>/dev/null | grep -q __asan_init; then
	SAN_PRELOAD=$(ldd "$B/librdax.so" | awk '/lib(asan|ubsan)\.so/ { printf "%s%s", s, $3; s = ":" }')
	echo "leak:bin/fio" >"$T/lsan-fio.supp"
fi
# not_in_sanitizer_pass WHAT: a test that builds and runs its own tree
# (not $B's binaries) checks nothing new against a sanitizer build; in
# make check-asan it is one skip saying so (make check runs it)
not_in_sanitizer_pass() {
	[ -n "$SAN_PRELOAD" ] &&
		skip "$*: it tests its own build, not the sanitizer build in $B (make check runs it)"
	return 0
}
fio() {
	if [ -n "$SAN_PRELOAD" ]; then
		LD_PRELOAD="$SAN_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}" \
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2" \
			LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$T/lsan-fio.supp:print_suppressions=0" \
			command fio "$@"
	else
		command fio "$@"
	fi
}

# capture_start NAME PORT: dumpcap on lo, TCP to or from PORT, into
# $T/NAME.pcap; capture_stop ends it. Capturing needs root: otherwise
# there is no capture, and check_wire counts its check as one skip
# (with the reason kept in $T/NAME.nocap). wire_protection NAME
# PORT [FILE] prints tests/vm/smbwire.py's protection summary of it: what
# was sealed, what was signed, whether FILE's first bytes went in clear.
capture_start() {
	need dumpcap
	CAP_FILE=$T/$1.pcap
	CAP_PID=""
	if [ "$(id -u)" != 0 ]; then
		echo "dumpcap needs root to capture on lo" >"$T/$1.nocap"
		return 0
	fi
	dumpcap -q -i lo -f "tcp port $2" -P -w "$CAP_FILE" >"$T/$1.dumpcap" 2>&1 &
	CAP_PID=$!
	pids="$pids $CAP_PID"
	_i=0
	until [ -s "$CAP_FILE" ] && [ "$(stat -c %s "$CAP_FILE")" -ge 24 ]; do
		kill -0 "$CAP_PID" 2>/dev/null || die "dumpcap did not start: $(cat "$T/$1.dumpcap")"
		_i=$((_i + 1))
		[ $_i -gt 100 ] && die "dumpcap not capturing after 10 s"
		sleep 0.1
	done
	sleep 0.3		# the filter is attached before the header is written
}
capture_stop() {
	[ -n "$CAP_PID" ] || return 0
	sleep 0.3		# the last packets reach the ring
	kill -INT "$CAP_PID"
	wait "$CAP_PID"
	pids=$(echo "$pids" | sed "s/ $CAP_PID//")
}
wire_protection() {
	python3 "$top/tests/vm/smbwire.py" protection "$T/$1.pcap" "$2" ${3:+--pattern "$3"}
}
# check_wire DESC NAME PORT PYEXPR [FILE]: PYEXPR holds for the summary
# (a dict named w), e.g. 'w["sealed"] > 0 and w["plain_pdus"] == 0'
check_wire() {
	if [ -f "$T/$2.nocap" ]; then
		skip_case "wire-$2" "$1: not checked, no capture: $(cat "$T/$2.nocap")"
		return 0
	fi
	if [ ! -f "$T/$2.pcap" ]; then
		not_ok "$1 (no capture file $T/$2.pcap)"
		return 0
	fi
	wire_protection "$2" "$3" ${5:+"$5"} >"$T/$2.wire" 2>&1
	check_output "$1" '^holds' env W_EXPR="$4" W_FILE="$T/$2.wire" python3 -c '
import json, os
w = json.load(open(os.environ["W_FILE"]))
print("holds" if eval(os.environ["W_EXPR"]) else "does not hold:", w)'
}
