#!/bin/sh
# SPDX-License-Identifier: MIT
# The guest suites' plans, checked on the host before any VM boots: every
# check a suite reports by a literal name (ok, not_ok, skip NAME) is one
# its --list declares, since the VM run fails a name it was not told of
# (tests/vm/common.sh vm_tap_compare) only after an hour of CI.
. "$(dirname "$0")/lib.sh"

cd "$top" || die "no $top"
for s in tests/vm/check-*; do
	grep -q 'tap.sh' "$s" || continue
	sh "$s" --list >"$T/declared" 2>/dev/null || {
		check_fails "$s --list runs" true
		continue
	}
	grep -oE '^[[:space:]]*(ok|not_ok|skip)[[:space:]]+[a-z0-9][a-z0-9-]*[a-z0-9]([[:space:]]|$)' "$s" |
		awk '{print $2}' | sort -u >"$T/reported"
	sort -u "$T/declared" >"$T/declared.sorted"
	comm -13 "$T/declared.sorted" "$T/reported" >"$T/undeclared"
	check_fails "${s#tests/vm/}: every literal name it reports is in its --list" \
		grep . "$T/undeclared"
done
finish
