#!/bin/sh
# SPDX-License-Identifier: MIT
# `make` only compiles: in a fresh clone of the committed tree (HEAD),
# without fio's source, it builds rdaxd, rdax and librdax, says how to get
# the fio engine, runs no package tool, installs nothing and writes
# nothing outside the clone. (`make fio`, `make check` and `make demo`
# are the targets that may change the system.)
#
# How "nothing outside the clone" is checked:
#   - every package tool on PATH is a shim that fails and logs;
#   - as root, make runs in a mount namespace where the root file system,
#     the usual separate ones (/usr /var /home /tmp ... when they are
#     mounts) and the repository's are read-only, this test's directory
#     aside: a write anywhere else on them fails the build;
#   - HOME and TMPDIR are empty directories of the test's, empty after;
#   - listings of /etc (but its account files), /usr/local and
#     /var/lib/dpkg (path, type, mode, size, mtime) and dpkg's package
#     list are the same before and after.
. "$(dirname "$0")/lib.sh"
not_in_sanitizer_pass "builds a fresh clone"
need git make cc

head=$(git -C "$top" rev-parse --verify HEAD) || die "no HEAD commit in $top"
src=$T/clone
git clone -q --no-checkout "$top" "$src" >"$T/clone.out" 2>&1 &&
	git -C "$src" checkout -q --detach "$head" >>"$T/clone.out" 2>&1 ||
	{ cat "$T/clone.out"; die "git clone of $top failed"; }
[ -z "$(git -C "$top" status --porcelain --untracked-files=no)" ] ||
	echo "note: $top has uncommitted changes; the clone builds HEAD $(git -C "$top" rev-parse --short HEAD)"
check "the clone is at HEAD, with no build directory and no fio source" \
	sh -c "[ \"\$(git -C '$src' rev-parse HEAD)\" = '$head' ] && [ ! -e '$src/build' ]"

# every package tool fails loudly and leaves a trace
mkdir -p "$T/shim" "$T/home" "$T/tmp"
for t in apt-get apt aptitude apt-mark dpkg debconf-set-selections add-apt-repository \
	sudo pip pip3 npm; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$t" "$T/shim.log" >"$T/shim/$t"
	chmod 755 "$T/shim/$t"
done
: >"$T/shim.log"

# The account files are left out: other tests on this machine add and
# remove users (lib.sh make_user) while make runs, and with / read-only
# make could not have written them.
sys_state() {
	find /etc /usr/local /var/lib/dpkg -xdev -mindepth 1 -printf '%p %y %m %s %T@\n' 2>/dev/null |
		grep -Ev '^/etc/(passwd|group|shadow|gshadow|subuid|subgid)-? ' | sort
	dpkg-query -W -f '${Package} ${Version} ${db:Status-Status}\n' 2>/dev/null | sort
}
sys_state >"$T/sys.before"

# The root file system read-only but for $T (root only: a mount namespace)
ro=""
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	ro=1
else
	skip_case read-only-root "not root: make cannot run with / read-only here; the listings still compare"
fi

# rmake LOG: a make of its own in the clone (none of the caller's
# jobserver, build directory or flags), HOME and TMPDIR the test's
rmake() {
	_log=$1
	set -- env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u B -u CFLAGS -u EXTRA_CFLAGS \
		-u SANITIZE -u FIO_SRC HOME="$T/home" TMPDIR="$T/tmp" PATH="$T/shim:$PATH" \
		make -C "$src" -j2 WERROR=1
	if [ -n "$ro" ]; then
		unshare -m --propagation private sh -c '
			t=$1 top=$2
			shift 2
			mount --bind "$t" "$t" || exit 1
			for m in / /usr /etc /var /home /root /opt /srv /tmp /var/tmp \
				"$(findmnt -n -o TARGET -T "$top")"; do
				mountpoint -q "$m" || continue
				mount -o remount,bind,ro "$m" || exit 1
			done
			exec "$@"' sh "$T" "$top" "$@"
	else
		"$@"
	fi >"$_log" 2>&1
}
rmake "$T/make.out"
rc=$?
check "make in the fresh clone succeeds (rc $rc, warnings are errors${ro:+, / read-only})" test "$rc" = 0
[ "$rc" = 0 ] || sed 's/^/    | /' "$T/make.out" | tail -n 30

for f in rdaxd rdax librdax.so rdax.pc; do
	check "make built build/$f" test -e "$src/build/$f"
done
check "no fio engine without fio's source" test ! -e "$src/build/fio-rdax.so"
check_output "... and make says which command fetches it" "'make fio' fetches it" cat "$T/make.out"
check "make ran no package tool" test ! -s "$T/shim.log"
sed 's/^/    | ran: /' "$T/shim.log"
check "make fetched no fio source" test ! -e "$src/build/fio-src"
find "$T/home" "$T/tmp" -mindepth 1 >"$T/left"
check "make wrote nothing in HOME or TMPDIR" test ! -s "$T/left"
head -n 10 "$T/left" | sed 's/^/    | /'

sys_state >"$T/sys.after"
check "nothing changed under /etc, /usr/local or /var/lib/dpkg; no package installed or removed" \
	cmp -s "$T/sys.before" "$T/sys.after"
diff "$T/sys.before" "$T/sys.after" | head -n 10 | sed 's/^/    | /'

# a second make has nothing left to do
rmake "$T/make2.out"
check "a second make succeeds" test $? = 0
check "... and compiles nothing" sh -c "! grep -Eq '^  (CC|LD|AR) ' '$T/make2.out'"
finish
