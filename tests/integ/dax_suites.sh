#!/bin/sh
# SPDX-License-Identifier: MIT
# The suites whose rdaxd shares come from --share, run again with those
# shares on the DAX store (RDAX_TEST_STORE=dax; see lib.sh): smbtorture's
# smb2 tests, the async API at several depths, and malformed traffic.
. "$(dirname "$0")/lib.sh"
d=$(dirname "$0")
for t in smbtorture async badinput; do
	RDAX_TEST_STORE=dax sh "$d/$t.sh" >"$T/$t.out" 2>&1
	rc=$?
	case $rc in
	0)
		ok "$t on the DAX store ($(grep -c '^ok' "$T/$t.out") checks)"
		# what the suite left out is left out here too, counted once
		sed -n "s|^SKIP-CASE: |SKIP-CASE: $t-dax/|p" "$T/$t.out"
		nskips=$((nskips + $(grep -c '^SKIP-CASE: ' "$T/$t.out"))) ;;
	77)
		# the whole suite is one skip, as tests/run.sh counts it
		skip_case "$t-dax" "$(grep -m1 '^SKIP: ' "$T/$t.out")" ;;
	*)
		not_ok "$t on the DAX store (rc=$rc)"
		grep -E 'FAIL|failure|error' "$T/$t.out" | head -n 20 | sed 's/^/    | /' ;;
	esac
done
finish
