#!/bin/sh
# SPDX-License-Identifier: MIT
# Caching and surviving, calibrated: smbtorture's smb2.oplock, smb2.lease,
# smb2.durable-open, smb2.durable-v2-open, smb2.sharemode, smb2.lock and
# smb2.rename families run against Samba smbd (leases and durable handles
# on: kernel oplocks, kernel share modes and posix locking off) and
# against rdaxd at the same time, one family after the other. Every test Samba passes here
# must pass against rdaxd. A test Samba itself fails or skips is no bar:
# it counts as a skip, with both results. A test listed in NEEDS counts as
# a skip naming what rdaxd lacks; any other failure fails here.
. "$(dirname "$0")/lib.sh"
need smbtorture smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

FAMILIES=${CACHING_FAMILIES:-"smb2.oplock smb2.lease smb2.durable-open
smb2.durable-v2-open smb2.sharemode smb2.lock smb2.rename"}

# What rdaxd does not do yet, by test. A listed test that passes against
# rdaxd fails here: delete its line.
NEEDS=""
needs() { echo "$NEEDS" | awk -v t="$1" '$1 == t { print $2 }'; }
needs_why() {
	case $1 in
	*) echo "needs $1" ;;
	esac
}

. "$top/tools/lib/smbd.sh"
SMBD_GLOBAL="kernel oplocks = no
	kernel share modes = no
	posix locking = no
	smb2 leases = yes" scratch_smbd "$T/smbd" tort || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$T/smbd/root.pw")

share_dir "$T/share"
make_user "$T/passdb" torture 'torture pw'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	smb2 leases = yes
	oplocks = yes
[tort]
	path = $T/share
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"

# family SERVER PORT USER%PW FAMILY: its output in $T/SERVER.FAMILY.out
family() {
	timeout 1200 smbtorture -s /dev/null //127.0.0.1/tort -p "$2" -U "$3" "$4" \
		>"$T/$1.$4.out" 2>&1
}
# result SERVER FAMILY TEST: success, failure, error, skip or missing
result() {
	r=$(sed -n "s/^\(success\|failure\|error\|skip\): $3\( \[\)\{0,1\}\$/\1/p" \
		"$T/$1.$2.out" | head -n 1)
	echo "${r:-missing}"
}

samba_fails=""
for f in $FAMILIES; do
	# side by side at once: the families mostly wait for break timeouts
	t0=$(date +%s)
	(family smbd "$SMBD_PORT" "root%$SPW" "$f"; echo $(($(date +%s) - t0)) >"$T/smbd.$f.secs") &
	family rdaxd "$PORT" "torture%torture pw" "$f"
	t1=$(date +%s)
	wait $!
	echo "$f: Samba $(cat "$T/smbd.$f.secs") s, rdaxd $((t1 - t0)) s (at once)"
	tests=$(sed -n 's/^test: \(.*\)$/\1/p' "$T/smbd.$f.out" "$T/rdaxd.$f.out" | sort -u)
	[ -n "$tests" ] || { not_ok "$f: smbtorture ran no test"; continue; }
	for t in $tests; do
		s=$(result smbd "$f" "$t")
		r=$(result rdaxd "$f" "$t")
		need=$(needs "$f.$t")
		if [ "$s" != success ]; then
			samba_fails="$samba_fails $f.$t($s)"
			skip_case "$f.$t" "Samba itself fails it: $s (rdaxd: $r); no bar"
		elif [ "$r" = success ]; then
			if [ -n "$need" ]; then
				not_ok "$f.$t: passes against rdaxd but NEEDS lists it ($need): delete its line"
			else
				ok "$f.$t: passes, as against Samba"
			fi
		elif [ -n "$need" ]; then
			skip_case "$f.$t" "$(needs_why "$need")"
		else
			not_ok "$f.$t: Samba passes it, rdaxd: $r"
			sed -n "/^test: $t\$/,/^\(success\|failure\|error\|skip\): $t/p" \
				"$T/rdaxd.$f.out" | grep -v '^time:' | tail -n 6 | sed 's/^/    | /'
		fi
	done
done
echo "Samba does not pass:${samba_fails:- none}"
check "rdaxd survived" kill -0 "$RDAXD_PID"
rdaxd_idle "$T/srv.log" && ok "rdaxd holds no connection, session or open afterwards" ||
	not_ok "state left in rdaxd after the torture"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
