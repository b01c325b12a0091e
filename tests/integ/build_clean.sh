#!/bin/sh
# SPDX-License-Identifier: MIT
# `make` only compiles: in a fresh copy of the tree without fio's source
# it builds rdaxd, rdax and librdax, says how to get the fio engine, runs
# no package tool, installs nothing and changes nothing under /etc.
# (`make fio`, `make check` and `make demo` are the targets that may.)
. "$(dirname "$0")/lib.sh"
need git make cc

# the tree as committed plus what is not yet: tracked and untracked,
# nothing git ignores (no build/)
src=$T/clone
mkdir -p "$src"
(cd "$top" && git ls-files -z -co --exclude-standard) >"$T/files" ||
	die "git ls-files failed in $top"
(cd "$top" && tar --null -T "$T/files" -cf -) | (cd "$src" && tar -xf -) ||
	die "cannot copy the tree"
check "the copy has no build directory and no fio source" test ! -e "$src/build"

# every package tool fails loudly and leaves a trace
mkdir -p "$T/shim"
for t in apt-get apt aptitude apt-mark dpkg debconf-set-selections add-apt-repository \
	sudo pip pip3 npm; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$t" "$T/shim.log" >"$T/shim/$t"
	chmod 755 "$T/shim/$t"
done
: >"$T/shim.log"

etc_state() {
	find /etc -xdev -printf '%p %y %m %s %T@\n' 2>/dev/null | sort
}
pkg_state() {
	dpkg-query -W -f '${Package} ${Version} ${db:Status-Status}\n' 2>/dev/null | sort
	stat -c '%n %Y %s' /var/lib/dpkg/status
}
etc_state >"$T/etc.before"
pkg_state >"$T/pkg.before"

# a make of its own: none of the caller's jobserver, build directory or flags
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u B -u CFLAGS -u EXTRA_CFLAGS -u SANITIZE PATH="$T/shim:$PATH" \
	make -C "$src" -j2 WERROR=1 >"$T/make.out" 2>&1
rc=$?
check "make in the fresh copy succeeds (rc $rc, warnings are errors)" test "$rc" = 0
[ "$rc" = 0 ] || sed 's/^/    | /' "$T/make.out" | tail -n 30

for f in rdaxd rdax librdax.so rdax.pc; do
	check "make built build/$f" test -e "$src/build/$f"
done
check "no fio engine without fio's source" test ! -e "$src/build/fio-rdax.so"
check_output "... and make says which command fetches it" "'make fio' fetches it" cat "$T/make.out"
check "make ran no package tool" test ! -s "$T/shim.log"
sed 's/^/    | ran: /' "$T/shim.log"
check "make fetched no fio source" test ! -e "$src/build/fio-src"

etc_state >"$T/etc.after"
pkg_state >"$T/pkg.after"
check "nothing under /etc changed" cmp -s "$T/etc.before" "$T/etc.after"
diff "$T/etc.before" "$T/etc.after" | head -n 10 | sed 's/^/    | /'
check "no package was installed or removed" cmp -s "$T/pkg.before" "$T/pkg.after"
diff "$T/pkg.before" "$T/pkg.after" | head -n 10 | sed 's/^/    | /'

# a second make has nothing left to do
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u B -u CFLAGS -u EXTRA_CFLAGS -u SANITIZE PATH="$T/shim:$PATH" \
	make -C "$src" -j2 WERROR=1 >"$T/make2.out" 2>&1
check "a second make succeeds" test $? = 0
check "... and compiles nothing" sh -c "! grep -Eq '^  (CC|LD|AR) ' '$T/make2.out'"
finish
