#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages rdax needs. Idempotent; prints what it installs.
#
# usage: tools/deps.sh [GROUP...]   groups: build test vm vm612 fio xfstests all
#                                   (default all; vm includes vm612)
set -eu

pkgs_build="gcc clang libclang-rt-14-dev make pkg-config libc6-dev libssl-dev libinih-dev
	liburing-dev libpmem2-dev libibverbs-dev librdmacm-dev libnuma-dev liburcu-dev
	libacl1-dev libsystemd-dev debhelper fakeroot lintian dpkg-dev"
pkgs_test="samba samba-vfs-modules smbclient samba-testsuite tshark xxd procps psmisc
	iproute2 openssl python3 gnuplot-nox acl xfsprogs"
pkgs_fio="fio dpkg-dev libaio-dev iperf3 librpma-dev libprotobuf-c-dev libpmem2-dev libpmem-dev"
pkgs_vm="linux-image-amd64 qemu-system-x86 busybox-static cpio kmod
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	ndctl daxctl e2fsprogs cifs-utils iproute2 bc bison flex libelf-dev
	xz-utils patch libpmem2-dev libibverbs-dev gcc make libc6-dev
	fio procps numactl dbench librpma-dev libprotobuf-c-dev libpmem1 linux-perf"
# vm612: bookworm's second kernel series (Linux 6.12, bookworm-security),
# booted by the VM testbed for the ksmbd comparisons only (RDAX_VM_KVER; 6.1
# stays the default kernel). Its headers and source come with kver_pkgs.
pkgs_vm612="linux-image-6.12-amd64"
# xfstests (../shared/tools/xfstests-*.tar.gz, built by tests/vm/xfstests):
# the build dependencies of its README ("Ubuntu or Debian") and what its
# generic tests run in the guest
pkgs_xfstests="acl attr autoconf automake bc gawk gcc libacl1-dev libaio-dev
	libcap-dev libgdbm-dev libgdbm-compat-dev libtool libtool-bin liburing-dev
	make psmisc python3 quota sed uuid-dev uuid-runtime xfsprogs xfslibs-dev
	cifs-utils"

groups=${*:-all}
want=""
for g in $groups; do
	case $g in
	build) want="$want $pkgs_build" ;;
	test) want="$want $pkgs_test" ;;
	fio) want="$want $pkgs_fio" ;;
	vm) want="$want $pkgs_vm $pkgs_vm612" ;;
	vm612) want="$want $pkgs_vm612" ;;
	xfstests) want="$want $pkgs_xfstests" ;;
	all) want="$want $pkgs_build $pkgs_test $pkgs_fio $pkgs_vm $pkgs_vm612 $pkgs_xfstests" ;;
	*) echo "deps.sh: unknown group '$g' (build test fio vm vm612 xfstests all)" >&2; exit 2 ;;
	esac
done

# The VM tier also needs headers and source matching each installed kernel
# image; resolve them once the images are known. The source is pinned to
# the image's own version when the archive has it (bookworm-security may
# carry a newer linux-source-6.12 than the newest signed 6.12 image).
kver_pkgs() {
	for img in /boot/vmlinuz-*-amd64; do
		[ -e "$img" ] || continue
		kver=${img#/boot/vmlinuz-}
		echo "linux-headers-$kver"
		series=$(echo "$kver" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
		src=linux-source-$series
		[ -z "$(missing "$src")" ] && { echo "$src"; continue; }
		ver=$(dpkg-query -W -f='${Version}' "linux-image-$kver" \
			"linux-image-$kver-unsigned" 2>/dev/null | head -n 1)
		if [ -n "$ver" ] && apt-cache show "$src=$ver" >/dev/null 2>&1; then
			echo "$src=$ver"
		else
			echo "$src"
		fi
	done
}

missing() {
	for p in "$@"; do
		s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$s" = installed ] || echo "$p"
	done
}

install_pkgs() {
	[ $# -gt 0 ] || return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: missing packages: $*" >&2
		echo "deps.sh: run as root to install them" >&2
		exit 1
	fi
	echo "deps.sh: installing: $*"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture; keep the default.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections 2>/dev/null || true
	if ! apt-get install -y -q --no-install-recommends "$@" >/tmp/rdax-deps.log 2>&1; then
		apt-get update -q >>/tmp/rdax-deps.log 2>&1 || true
		if ! apt-get install -y -q --no-install-recommends "$@" >>/tmp/rdax-deps.log 2>&1; then
			tail -n 30 /tmp/rdax-deps.log >&2
			echo "deps.sh: apt-get install failed (log: /tmp/rdax-deps.log)" >&2
			exit 1
		fi
	fi
}

# `apt-get source fio` (tools/fetch-fio.sh) needs a deb-src entry: one
# that mirrors the system's deb sources, added once.
deb_src() {
	have=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || true)
	[ -n "$have" ] || return 0
	apt-get source -q --print-uris "fio=$have" 2>/dev/null | grep -q 'fio_.*\.dsc' && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: apt has no deb-src entry for fio; run as root to add one" >&2
		exit 1
	fi
	echo "deps.sh: adding /etc/apt/sources.list.d/rdax-deb-src.sources"
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			case $f in *rdax-deb-src*) continue ;; esac
			awk 'BEGIN { RS = ""; ORS = "\n\n" }
			     /Types:[^\n]*deb/ && /debian/ { sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f"
		done
	} >/etc/apt/sources.list.d/rdax-deb-src.sources
	if [ -f /etc/apt/sources.list ] && grep -q '^deb .*debian' /etc/apt/sources.list; then
		sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >/etc/apt/sources.list.d/rdax-deb-src.list
	fi
	apt-get update -q >/tmp/rdax-deps.log 2>&1 || {
		tail -n 20 /tmp/rdax-deps.log >&2
		echo "deps.sh: apt-get update failed (log: /tmp/rdax-deps.log)" >&2
		exit 1
	}
}

# shellcheck disable=SC2086
install_pkgs $(missing $want | sort -u)
case " $groups " in
*" fio "* | *" all "*) deb_src ;;
esac
case " $groups " in
*" vm "* | *" vm612 "* | *" all "*)
	# shellcheck disable=SC2046
	install_pkgs $(missing $(kver_pkgs) | sort -u) ;;
esac
exit 0
