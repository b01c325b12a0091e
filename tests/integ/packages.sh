#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages: dpkg-buildpackage -b builds rdaxd, rdax, librdax1,
# librdax-dev (and fio-rdax when fio's source is in build/fio-src) from a
# scratch copy of the tree; lintian finds no error in them; they install
# with dpkg; the installed rdaxd, unit, manual pages, library and
# pkg-config file work (rdaxd serves a share to the installed rdax, a
# program builds with `pkg-config --cflags --libs rdax`); and purging
# them leaves the package database and the files as they were.
. "$(dirname "$0")/lib.sh"
not_in_sanitizer_pass "builds the packages"

[ "$(id -u)" = 0 ] || skip "not root: dpkg cannot install the packages"
command -v dpkg-buildpackage >/dev/null 2>&1 || skip "dpkg-buildpackage is missing (tools/deps.sh build)"
need dh
need lintian
need pkg-config
pkgs="rdaxd rdax librdax1 librdax-dev fio-rdax"
for p in $pkgs; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ -z "$s" ] || [ "$s" = not-installed ] ||
		skip "package $p is installed on this machine already ($s): the test would remove it"
done

# one run at a time on this machine (the test installs and removes)
exec 9>/run/rdax-packages.lock
flock -w 600 9 || die "another packages test holds /run/rdax-packages.lock"

# --- build, from a copy of the tree (what git tracks or would) ---
mkdir -p "$T/src/rdax"
(cd "$top" && git ls-files -co --exclude-standard -z | tar --null --no-recursion -T - -cf -) |
	tar -xf - -C "$T/src/rdax" || die "copying the tree failed"
fio_src=$(readlink -f "$top/build/fio-src" 2>/dev/null || true)
if [ -n "$fio_src" ] && [ -f "$fio_src/.version" ]; then
	export FIO_SRC="$fio_src"
	with_fio=1
else
	export FIO_SRC="$T/no-fio-src"
	with_fio=0
	skip_case "fio-rdax" "fio's source is not in build/fio-src ('make fetch-fio'): package left out"
fi
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -le 2 ] || jobs=2
# no debug symbol packages: quicker, and nothing here installs them
(cd "$T/src/rdax" && DEB_BUILD_OPTIONS="noautodbgsym nocheck" \
	dpkg-buildpackage -b -us -uc -j"$jobs") >"$T/build.log" 2>&1
rc=$?
check "dpkg-buildpackage -b -us -uc (rc $rc)" test $rc = 0
[ $rc = 0 ] || { tail -n 30 "$T/build.log" | sed 's/^/    | /'; finish; }
want="rdaxd rdax librdax1 librdax-dev"
[ $with_fio = 0 ] || want="$want fio-rdax"
debs=""
for p in $want; do
	d=$(ls "$T/src/${p}_"*.deb 2>/dev/null | head -n 1)
	check "package $p is built" test -n "$d"
	debs="$debs $d"
done
[ $with_fio = 1 ] || check "fio-rdax is left out without fio's source" \
	sh -c "! ls '$T/src/'fio-rdax_*.deb 2>/dev/null"

# --- lintian: no error (warnings and info are printed) ---
(cd "$T/src" && lintian --fail-on error --tag-display-limit 0 ./*.changes) >"$T/lintian" 2>&1
rc=$?
grep -E '^[EW]:' "$T/lintian" | sed 's/^/    | /'
check "lintian: no error ($(grep -c '^E:' "$T/lintian") errors, $(grep -c '^W:' "$T/lintian") warnings)" \
	test $rc = 0

# --- install ---
dpkg-query -W -f='${Package} ${Version} ${db:Status-Status}\n' | sort >"$T/dpkg.before"
# dpkg waits for no lock: another apt or dpkg may be at work a moment
dpkg_retry() {
	i=0
	while ! dpkg "$@" >"$T/dpkg.out" 2>&1; do
		grep -q 'lock' "$T/dpkg.out" || return 1
		i=$((i + 1))
		[ $i -lt 60 ] || return 1
		sleep 2
	done
}
# shellcheck disable=SC2086
dpkg_retry -i $debs
rc=$?
check "dpkg -i installs them" test $rc = 0
[ $rc = 0 ] || sed 's/^/    | /' "$T/dpkg.out" | tail -n 20
# purged at the end, and whatever happens (lib.sh's cleanup after)
installed=1
cleanup_pkgs() {
	[ "$installed" = 1 ] || return 0
	installed=0
	# shellcheck disable=SC2086
	dpkg_retry --purge $want
}
trap 'cleanup_pkgs; cleanup' EXIT INT TERM

# the installed programs and library, not build/'s
unset LD_LIBRARY_PATH
check_output "rdaxd --version" "^rdaxd $(cat "$top/VERSION")\$" /usr/sbin/rdaxd --version
check_output "rdax --version" "$(cat "$top/VERSION")" /usr/bin/rdax --version
unit=/lib/systemd/system/rdaxd.service
check_output "the unit runs the installed rdaxd" "^ExecStart=/usr/sbin/rdaxd " cat "$unit"
check_output "... and reloads with the installed rdaxctl" "^ExecReload=/usr/sbin/rdaxctl reload" \
	cat "$unit"
check "the package neither enables nor starts the unit" \
	test ! -e /etc/systemd/system/multi-user.target.wants/rdaxd.service
if command -v systemd-analyze >/dev/null 2>&1; then
	check "systemd-analyze verify of the installed unit" systemd-analyze verify --man=no "$unit"
else
	skip_case "systemd-analyze verify" "systemd-analyze is not installed"
fi
for m in man8/rdaxd.8 man8/rdaxctl.8 man5/rdax.conf.5 man1/rdax.1 man3/rdax.3 \
	man3/rdax_connect.3; do
	check "manual page $m is installed" test -s "/usr/share/man/$m.gz"
done
[ $with_fio = 0 ] || check "manual page fio-rdax.7 is installed" \
	test -s /usr/share/man/man7/fio-rdax.7.gz
check_output "rdax.conf.5 lists the parameters" "server signing" \
	sh -c "zcat /usr/share/man/man5/rdax.conf.5.gz"
check_output "pkg-config --libs rdax" "^-lrdax *\$" pkg-config --libs rdax
check_output "pkg-config --static --libs rdax: the verbs libraries" "-lrdmacm.*-libverbs" \
	pkg-config --static --libs rdax
cat >"$T/v.c" <<'C'
#include <stdio.h>
#include <rdax.h>
int main(void) { printf("%s\n", rdax_version()); return 0; }
C
check "a program builds with pkg-config's flags" \
	sh -c "cc -o '$T/v' '$T/v.c' \$(pkg-config --cflags --libs rdax)"
check_output "... runs" "$(cat "$top/VERSION")" "$T/v"
# (usrmerge: /lib is /usr/lib)
check_output "... on the packaged librdax.so.1" "librdax.so.1 => /(usr/)?lib/[a-z0-9_-]+/librdax" \
	ldd "$T/v"
lib=$(dpkg -L librdax1 | grep '/librdax\.so\.1$')
check_output "the packaged library's symbols are at RDAX_1.0" "RDAX_1\.0 +rdax_connect\$" \
	objdump -T "$lib"
check "... and rdax_passdb_set is not one of them" sh -c "! objdump -T '$lib' | grep -q passdb"
printf 'pw\n' | /usr/bin/rdax passwd --passdb "$T/pkg.passdb" nobody >/dev/null 2>&1
check_output "the installed rdax passwd writes a password database" "^nobody:[0-9A-F]{32}\$" \
	cat "$T/pkg.passdb"
if [ $with_fio = 1 ]; then
	eng=$(dpkg -L fio-rdax | grep '/fio-rdax.so$')
	check_output "fio-rdax.so finds the packaged librdax.so.1" \
		"librdax.so.1 => /(usr/)?lib/[a-z0-9_-]+/librdax" ldd "$eng"
fi
# the installed server and client, end to end
mkdir -p "$T/share"
echo "packaged" >"$T/share/hello.txt"
RDAXD=/usr/sbin/rdaxd
start_rdaxd pkg --share s="$T/share" --guest
check_output "the installed rdax reads a file from the installed rdaxd" "^packaged\$" \
	/usr/bin/rdax --guest cat "smb://127.0.0.1:$PORT/s/hello.txt"
check_output "the installed rdaxctl talks to it" "sessions" \
	/usr/sbin/rdaxctl --socket "$RDAXD_CTL" status
stop_rdaxd

# --- remove: the machine as it was ---
cleanup_pkgs
check "dpkg --purge removes them" test $? = 0
[ $? = 0 ] || sed 's/^/    | /' "$T/dpkg.out" | tail -n 20
dpkg-query -W -f='${Package} ${Version} ${db:Status-Status}\n' | sort >"$T/dpkg.after"
check "the package database is as it was" cmp -s "$T/dpkg.before" "$T/dpkg.after"
check "no packaged file is left" sh -c "! ls /usr/sbin/rdaxd /usr/bin/rdax /usr/include/rdax.h \
	/lib/systemd/system/rdaxd.service /usr/lib/*/librdax.so* /usr/lib/*/pkgconfig/rdax.pc 2>/dev/null"
finish
