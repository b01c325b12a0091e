#!/bin/sh
# SPDX-License-Identifier: MIT
# Test runner: runs every test of the selected tiers with a timeout and
# prints one "N passed, N failed, N skipped" line. A test exits 0 (pass),
# 77 (skip) or anything else (fail). A test that passed counts each
# "SKIP-CASE: PART: reason" line it printed as one more skip: the parts
# it could not run here. A test that exits 77 is one skip, whatever it
# printed before (its reason is its "SKIP: " line).
#
# usage: tests/run.sh [TIER...]   tiers: unit integ vm (default: all)
#        RDAX_SKIP_VM=1 leaves the VM tier out; TEST_TIMEOUT=secs per test.
#        B=build-asan runs the tests against that build; a sanitizer build
#        (make check-asan) fails a test on any ASan/UBSan/LSan report.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 99
B=${B:-build}
export B RDAX_TOP="$top"
tiers=${*:-unit integ vm}
[ "${RDAX_SKIP_VM:-0}" = 1 ] && tiers=$(echo "$tiers" | sed 's/vm//')
logdir="$B/test-logs"
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed="" skipped="" whys=""

# Sanitizer builds: every process of a test (rdaxd in the background, the
# CLI, tools, fio with the engine) writes its reports to $san/TEST.PID;
# the first error stops that process, leaks are reported at exit, and a
# test that leaves any report behind fails, whatever its own status.
san=""
if nm -D "$B/librdax.so" 2>/dev/null | grep -q __asan_init; then
	san=$logdir/sanitizer
	rm -rf "$san"
	mkdir -p "$san"
	user_asan=${ASAN_OPTIONS:-} user_ubsan=${UBSAN_OPTIONS:-}
	echo "sanitizer build $B: reports in $san"
fi
san_env() { # test-name
	[ -n "$san" ] || return 0
	ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:log_path=$san/$1${user_asan:+:$user_asan}"
	UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$san/$1${user_ubsan:+:$user_ubsan}"
	export ASAN_OPTIONS UBSAN_OPTIONS
}
# san_reports test-name log: appends any report to the log; 1 if there was one
san_reports() {
	[ -n "$san" ] || return 0
	found=0
	for r in "$san/$1".*; do
		[ -f "$r" ] || continue
		# a summary of suppressions used is not a report
		grep -Eq 'ERROR: |runtime error|WARNING: ' "$r" || continue
		found=1
		{ echo "=== sanitizer report ${r##*/}"; cat "$r"; } >>"$2"
	done
	return $found
}

# A test that passed may still have left parts out: each
# "SKIP-CASE: PART: reason" line of its log is one more skip.
skip_cases() { # name log
	while IFS= read -r line; do
		case $line in
		"SKIP-CASE: "*)
			line=${line#SKIP-CASE: }
			skip=$((skip + 1)); skipped="$skipped $1/${line%%: *}"
			printf '  SKIP  %-40s      %s\n' "$1/${line%%: *}" "$(echo "${line#*: }" | cut -c1-80)" ;;
		esac
	done <"$2"
}

# why_of name log: the first line that says why a test failed, kept for
# the end of the output (CI shows its tail)
why_of() {
	w=$(grep -m1 -E 'ERROR: [A-Za-z]+Sanitizer|runtime error|^(not ok|FAIL)|^TIMEOUT' "$2" |
		cut -c1-160)
	whys="$whys
  $1: ${w:-see $2}"
}

run_one() { # name timeout cmd...
	name=$1 t=$2
	shift 2
	log="$logdir/$(echo "$name" | tr '/ ' '__').log"
	start=$(date +%s)
	san_env "$(echo "$name" | tr '/ ' '__')"
	timeout -k 10 "$t" "$@" >"$log" 2>&1
	rc=$?
	if ! san_reports "$(echo "$name" | tr '/ ' '__')" "$log"; then
		echo "SANITIZER: report(s) above (exit status was $rc)" >>"$log"
		rc=98
	fi
	dur=$(($(date +%s) - start))
	case $rc in
	0) pass=$((pass + 1)); printf '  PASS  %-40s %3ss\n' "$name" "$dur"
		skip_cases "$name" "$log" ;;
	77) skip=$((skip + 1)); skipped="$skipped $name"
		why=$(grep -m1 '^SKIP: ' "$log" | cut -c1-90)
		printf '  SKIP  %-40s %3ss  %s\n' "$name" "$dur" "$why" ;;
	*) fail=$((fail + 1)); failed="$failed $name"
		[ $rc = 124 ] && echo "TIMEOUT after ${t}s" >>"$log"
		why_of "$name" "$log"
		printf '  FAIL  %-40s %3ss  (rc=%s, log %s)\n' "$name" "$dur" "$rc" "$log"
		if [ $rc = 98 ]; then
			sed -n '/^=== sanitizer report/,$p' "$log" | grep -v '^$' | head -n 15
		else
			tail -n 15 "$log"
		fi | sed 's/^/        | /' ;;
	esac
}

# A suite prints TAP-style lines ("ok NAME", "not ok NAME",
# "ok NAME # SKIP reason") and each line counts as one test. A suite that
# exits 77 without any line is one skip; a non-zero exit without a
# "not ok" line is one failure.
run_suite() { # name timeout cmd...
	name=$1 t=$2
	shift 2
	log="$logdir/$name.log"
	timeout -k 10 "$t" "$@" >"$log" 2>&1
	rc=$?
	n=0
	while IFS= read -r line; do
		case $line in
		"not ok "*) n=$((n + 1)); fail=$((fail + 1)); sub=${line#not ok }
			failed="$failed $name/${sub%% *}"; echo "  FAIL  $name/$sub"
			whys="$whys
  $name/$(echo "$sub" | cut -c1-160)" ;;
		"ok "*"# SKIP"*) n=$((n + 1)); skip=$((skip + 1)); sub=${line#ok }
			echo "  SKIP  $name/$sub" ;;
		"ok "*) n=$((n + 1)); pass=$((pass + 1)); echo "  PASS  $name/${line#ok }" ;;
		esac
	done <"$log"
	if [ $rc = 77 ] && [ $n = 0 ]; then
		skip=$((skip + 1))
		printf '  SKIP  %-40s %s\n' "$name" "$(grep -m1 '^SKIP: ' "$log" | cut -c1-90)"
	elif [ $rc != 0 ] && [ $rc != 77 ] && ! grep -q '^not ok ' "$log"; then
		fail=$((fail + 1)); failed="$failed $name"
		[ $rc = 124 ] && echo "TIMEOUT after ${t}s" >>"$log"
		why_of "$name" "$log"
		printf '  FAIL  %-40s (rc=%s, log %s)\n' "$name" "$rc" "$log"
		tail -n 15 "$log" | sed 's/^/        | /'
	fi
}

for tier in $tiers; do
	case $tier in
	unit)
		echo "unit tests:"
		for t in "$B"/tests/test_*; do
			[ -x "$t" ] || continue
			run_one "unit/${t##*/}" "${TEST_TIMEOUT:-120}" "$t"
		done ;;
	integ)
		echo "integration tests:"
		for t in tests/integ/*.sh; do
			[ -f "$t" ] || continue
			[ "${t##*/}" = lib.sh ] && continue
			run_one "integ/$(basename "$t" .sh)" "${TEST_TIMEOUT:-600}" sh "$t"
		done ;;
	vm)
		echo "VM tests:"
		if [ -x tests/vm/check ]; then
			run_suite "vm" "${VM_TIMEOUT:-3060}" tests/vm/check
			run_suite "vm-powercut" "${VM_TIMEOUT:-1800}" tests/vm/powercut-check
			run_suite "vm-numa" "${VM_TIMEOUT:-1800}" tests/vm/numa-check
			run_suite "vm-two" "${VM_TIMEOUT:-1200}" tests/vm/two-check
			run_suite "vm-linux612" "${VM_TIMEOUT:-1200}" tests/vm/linux612-check
		else
			echo "SKIP: tests/vm/check missing" >"$logdir/vm.log"
			skip=$((skip + 1)); printf '  SKIP  %-40s\n' "vm (no tests/vm/check)"
		fi ;;
	*) echo "run.sh: unknown tier $tier" >&2; exit 99 ;;
	esac
done

[ -n "$skipped" ] && echo "skipped:$skipped"
[ -n "$failed" ] && echo "failed:$failed" && echo "why:$whys"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
