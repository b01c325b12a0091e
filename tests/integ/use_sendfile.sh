#!/bin/sh
# SPDX-License-Identifier: MIT
# "use sendfile" (Samba's name, per share or in [global]): with yes, a
# lone TCP READ of 16 KiB or more on the posix store goes from the page
# cache to the socket by sendfile(2); with no, it is read into the
# response and sent from there. Both give the file's bytes (rdax get,
# fio's verify, a READ across EOF); the workers' tcp_zero_copy_bytes
# (SIGUSR1 stats) say which path ran. A DAX share sends from its mapping
# whatever the option says, and a signed session never zero-copies.
. "$(dirname "$0")/lib.sh"
need fio
[ -f "$B/fio-rdax.so" ] || die "$B/fio-rdax.so not built (make fio)"

zc_sum() { worker_stat "$T/$1.log" tcp_zero_copy_bytes; }

# get_zc LOG WHAT URL [RDAX OPTIONS...]: gets URL's file (big.bin) as WHAT,
# checks its bytes; ZC is then the zero-copy bytes rdaxd counted for it
get_zc() {
	_log=$1 _what=$2 _url=$3
	shift 3
	[ $# -gt 0 ] || set -- --guest
	_z0=$(zc_sum "$_log")
	check "get 64 MiB $_what" $RDAX "$@" get "$_url" "$T/got.bin"
	check "... byte-identical" cmp "$T/big.bin" "$T/got.bin"
	rm -f "$T/got.bin"
	ZC=$(($(zc_sum "$_log") - _z0))
}
MIB60=$((60 << 20))

share_dir "$T/sf" "$T/inh" "$T/dax"
make_user "$T/passdb" alice 'sendfile pw'
cat >"$T/smb.conf" <<CONF
[global]
	guest ok = yes
	passdb file = $T/passdb
	use sendfile = no
[sf]
	path = $T/sf
	store = posix
	read only = no
	use sendfile = yes
[inh]
	path = $T/inh
	store = posix
	read only = no
[dax]
	path = $T/dax
	store = dax
	read only = no
CONF
PMEM2_FORCE_GRANULARITY=CACHE_LINE start_rdaxd on --config "$T/smb.conf" --workers 2
U="smb://127.0.0.1:$PORT"
check "rdaxd --list-params lists the option" sh -c "'$RDAXD' --list-params | grep -q '^use sendfile'"

head -c $((64 << 20)) /dev/urandom >"$T/big.bin"
for s in sf inh dax; do cp "$T/big.bin" "$T/$s/big.bin"; done

get_zc on "from the share with use sendfile = yes" "$U/sf/big.bin"
check "... sent by sendfile ($ZC bytes zero-copy)" test $ZC -ge $MIB60
get_zc on "from the share that takes [global]'s use sendfile = no" "$U/inh/big.bin"
check "... read into the responses ($ZC bytes zero-copy)" test $ZC = 0
get_zc on "from the DAX share (it takes [global]'s no)" "$U/dax/big.bin"
check "... sent from the mapping all the same ($ZC bytes)" test $ZC -ge $MIB60
get_zc on "signed, from the yes share" "$U/sf/big.bin" \
	--sign --user alice --password-file "$T/alice.pw"
check "... never zero-copy: the signature covers the data ($ZC)" test $ZC = 0

F="--ioengine=external:$B/fio-rdax.so --hostname=127.0.0.1 --port=$PORT --guest"
for s in sf inh; do
	z0=$(zc_sum on)
	check "fio-rdax on $s: 256 KiB random writes then reads QD8, crc32c verify" \
		fio --name=sf $F --share=$s --filename=fio.bin --rw=randwrite --bs=256k \
		--size=32m --iodepth=8 --verify=crc32c --verify_state_save=0
	eval "fio_zc_$s=\$((\$(zc_sum on) - z0))"
done
# shellcheck disable=SC2154 # set by the eval above
check "... sf's reads went zero-copy ($fio_zc_sf bytes), inh's did not ($fio_zc_inh)" \
	test "$fio_zc_sf" -ge $((16 << 20)) -a "$fio_zc_inh" = 0

# a READ that runs past EOF: the file's bytes, then the end (both paths)
head -c $((1 << 20)) /dev/urandom >"$T/odd.bin"
head -c 123457 /dev/urandom >>"$T/odd.bin"
for s in sf inh; do
	cp "$T/odd.bin" "$T/$s/odd.bin"
	check "get of a 1 MiB + 123457 byte file from $s" $RDAX --guest get "$U/$s/odd.bin" "$T/odd-$s.bin"
	check "... byte-identical" cmp "$T/odd.bin" "$T/odd-$s.bin"
done
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# the default (--share, nothing said): yes (Samba's is no; on this host's
# loopback sendfile measured ahead, docs/dax.md); -o on the command line
# reaches the --share shares
share_dir "$T/def" "$T/opt"
cp "$T/big.bin" "$T/def/big.bin"
cp "$T/big.bin" "$T/opt/big.bin"
start_rdaxd def --share data="$T/def" --guest
get_zc def "with the option left at its default" "smb://127.0.0.1:$PORT/data/big.bin"
check "... sent by sendfile ($ZC bytes)" test $ZC -ge $MIB60
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
start_rdaxd opt --share data="$T/opt" --guest -o 'use sendfile = no'
get_zc opt "with -o 'use sendfile = no'" "smb://127.0.0.1:$PORT/data/big.bin"
check "... read into the responses ($ZC bytes zero-copy)" test $ZC = 0
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
