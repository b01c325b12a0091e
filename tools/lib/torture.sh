# SPDX-License-Identifier: MIT
# Calibrated smbtorture runs (sourced by tests/integ/smbtorture_*.sh after
# lib.sh): the same test against Samba smbd and rdaxd, judged by one rule.
#
#  - Samba passes it: rdaxd must pass (ok), or fail (not ok);
#  - Samba fails or skips it: no bar, a counted skip giving both results;
#  - the caller's NEEDS table ("TEST FEATURE" lines) names a feature rdaxd
#    lacks: its failure is a skip naming the feature (needs_why FEATURE,
#    the caller's, may explain it); a listed test that passes fails, so
#    the line is deleted when the feature lands.
#
# Outputs go to $T/SERVER.TEST.out (one test) or $T/SERVER.FAMILY.out.
# TORTURE_SHARE (default tort) is the share both servers export.

NEEDS=${NEEDS:-}
torture_samba_fails=""

torture_needs() {
	# the feature is the last word: test names may hold spaces
	echo "$NEEDS" | awk -v t="$1" 'NF > 1 { f = $NF; $NF = ""; sub(/ +$/, ""); if ($0 == t) print f }'
}

# needs_why FEATURE: the reason a skip gives (callers may override)
if ! command -v needs_why >/dev/null 2>&1; then
	needs_why() { echo "needs $1"; }
fi

# torture_one SERVER PORT USER%PW TEST: prints success, failure, error or skip
torture_one() {
	timeout "${TORTURE_TIMEOUT:-120}" smbtorture -s /dev/null \
		"//127.0.0.1/${TORTURE_SHARE:-tort}" -p "$2" -U "$3" "$4" \
		>"$T/$1.$4.out" 2>&1
	_r=$(sed -n 's/^\(success\|failure\|error\|skip\): .*/\1/p' "$T/$1.$4.out" | head -n 1)
	echo "${_r:-error}"
}

# torture_family SERVER PORT USER%PW FAMILY: the family's output kept
torture_family() {
	timeout "${TORTURE_FAMILY_TIMEOUT:-1200}" smbtorture -s /dev/null \
		"//127.0.0.1/${TORTURE_SHARE:-tort}" -p "$2" -U "$3" "$4" \
		>"$T/$1.$4.out" 2>&1
}

# torture_result SERVER FAMILY TEST: one test's result in a family's output
torture_result() {
	_r=$(sed -n "s/^\(success\|failure\|error\|skip\): $3\( \[\)\{0,1\}\$/\1/p" \
		"$T/$1.$2.out" | head -n 1)
	echo "${_r:-missing}"
}

# torture_judge NAME SAMBA RDAXD OUT [TEST]: the verdict for one test; OUT
# is rdaxd's output, TEST the name inside a family's output (its lines
# are shown on a failure)
torture_judge() {
	_t=$1 _s=$2 _r=$3 _out=$4 _in=${5:-}
	_need=$(torture_needs "$_t")
	if [ "$_s" != success ]; then
		torture_samba_fails="$torture_samba_fails $_t($_s)"
		skip_case "$_t" "Samba itself fails it: $_s (rdaxd: $_r); no bar"
	elif [ "$_r" = success ]; then
		if [ -n "$_need" ]; then
			not_ok "$_t: passes against rdaxd but NEEDS lists it ($_need): delete its line"
		else
			ok "$_t: passes, as against Samba"
		fi
	elif [ -n "$_need" ]; then
		skip_case "$_t" "$(needs_why "$_need")"
	else
		not_ok "$_t: Samba passes it, rdaxd: $_r"
		if [ -n "$_in" ]; then
			# its lines up to the result, and the reason after "result: NAME ["
			awk -v t="$_in" '$0 == "test: " t { on = 1 }
				on && !/^time:/ { print }
				on && $0 ~ "^(success|failure|error|skip): " {
					if ($0 !~ /\[$/) exit
					inr = 1 }
				inr && $0 == "]" { exit }' "$_out" | tail -n 8 | sed 's/^/    | /'
		else
			grep -E "failure|error|Expected|Failed|assert|\.c:[0-9]+" "$_out" |
				head -n 5 | sed 's/^/    | /'
		fi
	fi
}

# torture_tests SPORT SCRED RPORT RCRED TEST...: one test at a time
torture_tests() {
	_sp=$1 _sc=$2 _rp=$3 _rc=$4
	shift 4
	for _tt in "$@"; do
		_ts=$(torture_one smbd "$_sp" "$_sc" "$_tt")
		_tr=$(torture_one rdaxd "$_rp" "$_rc" "$_tt")
		torture_judge "$_tt" "$_ts" "$_tr" "$T/rdaxd.$_tt.out"
	done
}

# torture_list FAMILY: its tests, as a family run names them ("FAMILY.T.T"
# in smbtorture's list is "T"; a run cut short names only what it reached)
torture_list() {
	smbtorture --list "$1" 2>/dev/null |
		awk -v f="$1." 'index($0, f) == 1 { t = substr($0, length(f) + 1)
			sub(/\.[^.]*$/, "", t); if (t != "") print t }'
}

# torture_families SPORT SCRED RPORT RCRED FAMILY...: whole families, the
# two servers at once (most families wait on timeouts), then every test
# either output names is judged
torture_families() {
	_sp=$1 _sc=$2 _rp=$3 _rc=$4
	shift 4
	for _f in "$@"; do
		_t0=$(date +%s)
		(torture_family smbd "$_sp" "$_sc" "$_f"
		 echo $? >"$T/smbd.$_f.rc"
		 echo $(($(date +%s) - _t0)) >"$T/smbd.$_f.secs") &
		_bg=$!
		torture_family rdaxd "$_rp" "$_rc" "$_f"
		_rrc=$?
		_t1=$(date +%s)
		wait $_bg
		echo "$_f: Samba $(cat "$T/smbd.$_f.secs") s, rdaxd $((_t1 - _t0)) s (at once)"
		_tests=$({ sed -n 's/^test: \(.*\)$/\1/p' "$T/smbd.$_f.out" "$T/rdaxd.$_f.out"
			  [ "$_rrc$(cat "$T/smbd.$_f.rc")" = 00 ] || torture_list "$_f"; } | sort -u)
		if [ -z "$_tests" ]; then
			not_ok "$_f: smbtorture ran no test"
			continue
		fi
		# test names may hold spaces ("CREATE Existing")
		while IFS= read -r _tt; do
			_ts=$(torture_result smbd "$_f" "$_tt")
			_tr=$(torture_result rdaxd "$_f" "$_tt")
			_out=$T/rdaxd.$_f.out _in=$_tt
			# a family cut off by its timeout: what it did not reach runs alone
			if [ "$_ts" = missing ] && [ "$(cat "$T/smbd.$_f.rc")" = 124 ]; then
				_ts=$(torture_one smbd "$_sp" "$_sc" "$_f.$_tt")
				echo "$_f.$_tt: Samba's family run timed out before it; alone: $_ts"
			fi
			if [ "$_tr" = missing ] && [ "$_rrc" = 124 ]; then
				_tr=$(torture_one rdaxd "$_rp" "$_rc" "$_f.$_tt")
				echo "$_f.$_tt: rdaxd's family run timed out before it; alone: $_tr"
				_out=$T/rdaxd.$_f.$_tt.out _in=
			fi
			torture_judge "$_f.$_tt" "$_ts" "$_tr" "$_out" "$_in"
		done <<-TESTS
		$_tests
		TESTS
	done
}

# torture_summary: what Samba itself does not pass (for the notes)
torture_summary() {
	echo "Samba does not pass:${torture_samba_fails:- none}"
}

# torture_rdaxd [GLOBAL_LINES]: rdaxd serving [tort] (a fresh $T/share)
# to user torture, with GLOBAL_LINES added to [global]; RCRED its login
torture_rdaxd() {
	share_dir "$T/share"
	make_user "$T/passdb" torture 'torture pw'
	RCRED="torture%torture pw"
	{
		printf '[global]\n\tpassdb file = %s\n' "$T/passdb"
		[ -z "${1:-}" ] || printf '\t%s\n' "$1"
		printf '[tort]\n\tpath = %s\n\tread only = no\n' "$T/share"
	} >"$T/smb.conf"
	start_rdaxd srv --config "$T/smb.conf"
}

# torture_end: rdaxd lived through it, holds no state, stops cleanly
torture_end() {
	check "rdaxd survived" kill -0 "$RDAXD_PID"
	rdaxd_idle "$T/srv.log" && ok "rdaxd holds no connection, session or open afterwards" ||
		not_ok "state left in rdaxd after the torture"
	check "SIGTERM stops rdaxd cleanly" stop_rdaxd
}
