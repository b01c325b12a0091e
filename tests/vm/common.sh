# SPDX-License-Identifier: MIT
# Host-side helpers shared by tests/vm/{run,check,build-peers} and
# bench/baseline. Sourced, never run; the caller sets $top (repo root) and
# $prog (name for messages) first.

# Bump when build-peers changes how the modules are built: it is part of the
# cache key, next to the patches and the kernel source/header versions.
vm_peers_recipe=1

vm_die() {
	echo "${prog:-tests/vm}: $*" >&2
	exit "${vm_die_rc:-125}"
}

vm_note() {
	echo "${prog:-tests/vm}: $*" >&2
}

# Kernel release to boot: $RDAX_VM_KVER (a release, or a series such as
# 6.12 for the newest installed one of it), else the default kernel: the
# one Debian's linux-image-amd64 stands for (6.1 on bookworm; the 6.12
# kernel of tools/deps.sh vm612 is only booted when asked for), else the
# newest /boot/vmlinuz-* that has a matching /lib/modules directory.
vm_kver() {
	case ${RDAX_VM_KVER:-} in
	'') ;;
	[0-9]*.[0-9]* )
		if echo "$RDAX_VM_KVER" | grep -qE '^[0-9]+\.[0-9]+$'; then
			vm_kver_of "$RDAX_VM_KVER"
		else
			echo "$RDAX_VM_KVER"
		fi
		return ;;
	*) echo "$RDAX_VM_KVER"; return ;;
	esac
	_v=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -nE 's/^linux-image-([^ ,]+)( .*)?$/\1/p')
	_v=${_v%-unsigned}
	if [ -n "$_v" ] && [ -e "/boot/vmlinuz-$_v" ] && [ -d "/lib/modules/$_v/kernel" ]; then
		echo "$_v"
	else
		vm_kver_of ""
	fi
}

# vm_kver_of SERIES: the newest installed kernel of SERIES (6.12), any
# series when empty; nothing when there is none
vm_kver_of() {
	for img in /boot/vmlinuz-"$1"*; do
		[ -e "$img" ] || continue
		v=${img#/boot/vmlinuz-}
		[ -z "$1" ] || [ "$(vm_series "$v")" = "$1" ] || continue
		[ -d "/lib/modules/$v/kernel" ] && echo "$v"
	done | sort -V | tail -n 1
}

# Cache outside the clone: survives `make clean` and fresh clones.
# $RDAX_VM_CACHE overrides; when the default is not writable (not root),
# fall back to build/vm/cache in the clone.
vm_cache_dir() {
	if [ -n "${RDAX_VM_CACHE:-}" ]; then
		mkdir -p "$RDAX_VM_CACHE" 2>/dev/null && [ -w "$RDAX_VM_CACHE" ] ||
			vm_die "cache dir $RDAX_VM_CACHE (RDAX_VM_CACHE) is not writable"
		echo "$RDAX_VM_CACHE"
	elif mkdir -p /var/cache/rdax-testbed 2>/dev/null &&
	     [ -w /var/cache/rdax-testbed ]; then
		echo /var/cache/rdax-testbed
	else
		mkdir -p "$top/build/vm/cache"
		echo "$top/build/vm/cache"
	fi
}

# Sets vm_accel (kvm|tcg) and vm_accel_why. KVM only when it can run a
# stock kernel: a real VMX/SVM host. PVM's /dev/kvm (kvm_pvm) only boots
# PVM-patched guests, so it counts as no KVM.
vm_pick_accel() {
	case ${RDAX_VM_ACCEL:-auto} in
	kvm | tcg)
		vm_accel=$RDAX_VM_ACCEL
		vm_accel_why="RDAX_VM_ACCEL=$RDAX_VM_ACCEL"
		return ;;
	auto) ;;
	*) vm_die "RDAX_VM_ACCEL must be kvm, tcg or auto, not '$RDAX_VM_ACCEL'" ;;
	esac
	vm_accel=tcg
	if [ ! -c /dev/kvm ]; then
		vm_accel_why="no /dev/kvm"
	elif [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		vm_accel_why="/dev/kvm not accessible"
	elif [ -d /sys/module/kvm_pvm ]; then
		vm_accel_why="/dev/kvm is kvm_pvm, which boots only PVM guest kernels"
	elif ! grep -qwE 'vmx|svm' /proc/cpuinfo; then
		vm_accel_why="no vmx/svm in /proc/cpuinfo"
	else
		vm_accel=kvm
		vm_accel_why="/dev/kvm with vmx/svm"
	fi
}

# What stops this host from booting the VM with kernel $1, in two kinds
# (both empty when it can boot):
#   vm_missing  what tools/deps.sh vm installs is missing: a failure,
#               since `make check` runs deps.sh first
#   vm_cannot   what this machine cannot do, for a reason outside the
#               repository: a skip. Not being root is one: deps.sh could
#               not install what is missing, nor can the kernel be read.
vm_probe() {
	kver=$1
	vm_missing= vm_cannot=
	if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
		vm_missing="qemu-system-x86_64 (qemu-system-x86)"
	elif [ -z "$kver" ]; then
		vm_missing="a kernel image with modules in /boot (linux-image-amd64)"
	elif [ ! -e "/boot/vmlinuz-$kver" ] || [ ! -d "/lib/modules/$kver/kernel" ]; then
		vm_missing="/boot/vmlinuz-$kver and /lib/modules/$kver (linux-image-$kver)"
	elif ! busybox_static >/dev/null; then
		vm_missing="a static busybox (busybox-static)"
	elif ! command -v cpio >/dev/null 2>&1; then
		vm_missing="cpio"
	fi
	if [ -n "$vm_missing" ]; then
		[ "$(id -u)" = 0 ] && return 0
		vm_cannot="$vm_missing is not installed and only root can install it (tools/deps.sh vm)"
		vm_missing=
	elif [ ! -r "/boot/vmlinuz-$kver" ]; then
		vm_cannot="/boot/vmlinuz-$kver is readable by root only"
	elif ! vm_qemu_out=$(qemu-system-x86_64 -version 2>&1); then
		vm_cannot="qemu-system-x86_64 does not run here: $(echo "$vm_qemu_out" | head -n 1)"
	fi
}

# vm_probe's verdict as a sentence; empty when the VM can boot
vm_why() {
	if [ -n "$vm_missing" ]; then
		echo "$vm_missing is not installed (tools/deps.sh vm installs it)"
	elif [ -n "$vm_cannot" ]; then
		echo "$vm_cannot"
	fi
}

busybox_static() {
	for b in /bin/busybox /usr/bin/busybox; do
		if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
			echo "$b"
			return 0
		fi
	done
	return 1
}

# Series of a Debian kernel release: 6.1.0-57-amd64 -> 6.1
vm_series() {
	echo "$1" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/'
}

# The testbed's patches for the kernel series $1 (tests/vm/patches/SERIES/;
# 6.12 needs none: it has both fixes), one path a line
vm_peers_patches() {
	for _p in "$top/tests/vm/patches/$1"/*.patch; do
		[ -e "$_p" ] && echo "$_p"
	done
	return 0
}

# Cache directory of the SMB-Direct cifs/ksmbd build for kernel $1. The key
# covers the patches, the recipe version and the exact linux-source and
# linux-headers package versions, so any of them changing rebuilds.
vm_peers_dir() {
	kver=$1
	series=$(vm_series "$kver")
	key=$({
		echo "recipe $vm_peers_recipe"
		dpkg-query -W -f='${Package} ${Version}\n' "linux-source-$series" \
			"linux-headers-$kver" 2>/dev/null || true
		vm_peers_patches "$series" | while read -r _p; do cat "$_p"; done
	} | sha256sum | cut -c1-12)
	echo "$(vm_cache_dir)/$kver/smbdirect-$key"
}

# vm_console_why FILE...: the guest kernel's last words in its console
# logs (a panic, an oops, a power-off), on one line; empty without any
vm_console_why() {
	_w=$(grep -hE 'corruption|kernel BUG|Kernel panic|BUG:|Oops|RIP:|Workqueue:|general protection|Out of memory|reboot: |Power down' \
		"$@" 2>/dev/null | sed 's/^\[ *[0-9.]*\] //' | awk '!seen[$0]++' | head -n 6 |
		tr '\n' ';')
	[ -n "$_w" ] || _w=$(tail -q -n 2 "$@" 2>/dev/null | sed 's/^\[ *[0-9.]*\] //' | tr '\n' ';')
	echo "$_w" | tr -d '\r' | cut -c1-600
}

# vm_tap_compare TAP WHY NAME...: the guest's TAP lines in file TAP
# against the checks its suite declared (NAME..., from SUITE --list):
# each declared check with no line is "not ok NAME - no result" (WHY: how
# the run ended), unless the guest said beforehand what it is then: the
# last "# if-stopped ok NAME ..." line (a suite about to do what may take
# the guest down). A line of a name not declared, or a second line of
# one, fails the plan. The first check with no result also carries the
# guest console's last kernel words (VM_CONSOLE: its files, default
# build/vm/console.log). Returns 1 when it printed any "not ok".
vm_tap_compare() {
	_tap=$1 _why=$2
	shift 2
	_bad=0
	_said=0
	for _n in "$@"; do
		grep -qE "^(not )?ok $_n( |\$)" "$_tap" && continue
		_alt=$(grep -E "^# if-stopped (not )?ok $_n( |\$)" "$_tap" | tail -n 1)
		if [ -n "$_alt" ]; then
			echo "${_alt#\# if-stopped }"
			case $_alt in "# if-stopped not ok"*) _bad=1 ;; esac
			continue
		fi
		_con=
		if [ $_said = 0 ]; then
			# shellcheck disable=SC2086
			_con=$(vm_console_why ${VM_CONSOLE:-build/vm/console.log})
			_con=${_con:+; the guest console: $_con}
			_said=1
		fi
		echo "not ok $_n - no result: the guest stopped before it ($_why$_con)"
		_bad=1
	done
	for _n in $(sed -nE 's/^(not )?ok ([^ ]+).*/\2/p' "$_tap" | sort | uniq -c |
		awk '$1 > 1 { print $2 }'); do
		echo "not ok vm-plan - $_n reported more than once"
		_bad=1
	done
	for _n in $(sed -nE 's/^(not )?ok ([^ ]+).*/\2/p' "$_tap"); do
		case " $* " in
		*" $_n "*) ;;
		*) echo "not ok vm-plan - $_n reported but not declared by its suite (--list)"
		   _bad=1 ;;
		esac
	done
	return $_bad
}
