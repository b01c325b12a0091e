# SPDX-License-Identifier: MIT
# TAP helpers for the guest suites (tests/vm/check-*), sourced after the
# suite has set $checks: the name of every check it reports, in order,
# one TAP line each whatever happens. `sh tests/vm/check-X --list` prints
# those names and exits: the host counts its plan from them before the
# VM boots, so a suite that stops early, or leaves a check out, fails
# there (tests/vm/common.sh vm_tap_compare). RDAX_TAP_PREFIX names a
# second run of a suite apart (e.g. "k612-" in the Linux 6.12 boot).
tp=${RDAX_TAP_PREFIX:-}
case ${1:-} in
--list)
	printf "$tp%s\n" $checks
	exit 0 ;;
esac

failed=0
tap_seen=" "

ok() {
	tap_seen="$tap_seen$1 "
	echo "ok $tp$1${2:+ - $2}"
}
not_ok() {
	_tn=$1
	shift
	tap_seen="$tap_seen$_tn "
	echo "not ok $tp$_tn - $*"
	failed=$((failed + 1))
}
# give_up WHY: every check not reported yet fails with WHY, and the suite
# ends (exit 1)
give_up() {
	for _tc in $checks; do
		case $tap_seen in
		*" $_tc "*) ;;
		*) not_ok "$_tc" "not run: $*" ;;
		esac
	done
	exit 1
}
# skip NAME WHY: a check that cannot run here, and why (TAP's SKIP)
skip() {
	tap_seen="$tap_seen$1 "
	echo "ok $tp$1 # SKIP $2"
}
