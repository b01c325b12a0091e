# SPDX-License-Identifier: MIT
# Shared helpers for integration tests (sourced). Each test runs real
# processes: rdaxd, the rdax CLI, smbclient, smbd.

set -u
top=${RDAX_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-build}
case $B in /*) ;; *) B=$top/$B ;; esac
RDAXD=$B/rdaxd
RDAX=$B/rdax
export LD_LIBRARY_PATH=$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

T=$(mktemp -d /tmp/rdax-test.XXXXXX)
pids=""
nfail=0

cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
# check DESC CMD...: run, report, count failures
check() {
	desc=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then
		echo "ok: $desc"
	else
		echo "FAIL: $desc (rc=$?)"
		sed 's/^/    | /' "$T/check.out" | tail -n 20
		nfail=$((nfail + 1))
	fi
}
# check_fails DESC CMD...: the command must fail
check_fails() {
	desc=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then
		echo "FAIL: $desc (unexpected success)"
		sed 's/^/    | /' "$T/check.out" | tail -n 20
		nfail=$((nfail + 1))
	else
		echo "ok: $desc"
	fi
}
# check_output DESC PATTERN CMD...: output (stdout+stderr) must match
check_output() {
	desc=$1 pat=$2
	shift 2
	"$@" >"$T/check.out" 2>&1
	if grep -Eq -- "$pat" "$T/check.out"; then
		echo "ok: $desc"
	else
		echo "FAIL: $desc (no match for /$pat/)"
		sed 's/^/    | /' "$T/check.out" | tail -n 20
		nfail=$((nfail + 1))
	fi
}
finish() {
	if [ "$nfail" -gt 0 ]; then
		echo "$nfail check(s) failed"
		exit 1
	fi
	exit 0
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

need() {
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (tools/deps.sh installs it)"
	done
}

# start_rdaxd NAME ARGS...: start rdaxd on a free port; sets PORT and RDAXD_PID.
# RDAX_TEST_STORE=dax runs its --share shares on the DAX store (forced
# cache-line persistence where there is no pmem: libpmem2's test switch).
start_rdaxd() {
	name=$1
	shift
	PORT=$(free_port)
	if [ "${RDAX_TEST_STORE:-}" = dax ]; then
		set -- --store dax "$@"
		export PMEM2_FORCE_GRANULARITY=${PMEM2_FORCE_GRANULARITY:-CACHE_LINE}
	fi
	"$RDAXD" --listen "tcp://127.0.0.1:$PORT" "$@" >"$T/$name.log" 2>&1 &
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

# make_user DB USER PASSWORD: passdb entry and a 0600 password file
make_user() {
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
