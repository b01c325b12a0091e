#!/bin/sh
# SPDX-License-Identifier: MIT
# Signed and encrypted I/O makes no OpenSSL context per message (issue
# 16): rdaxd and the rdax CLI, with tests/integ/osslcount.c preloaded,
# count the calls that make OpenSSL contexts or fetch algorithms
# (EVP_CIPHER_CTX_new, EVP_MAC_CTX_new, EVP_MD_CTX_new, EVP_*_fetch).
# A put and a get of 64 MiB (64 WRITEs and 64 READs of 1 MiB, each a
# signed or an encrypted message) must make as many as those of 1 MiB,
# in the server and in the client: what is made per connection and per
# session (key derivation, the preauth hash, the kept contexts), never
# per message. Over TCP, with server signing = mandatory and then with
# smb encrypt = required; the files come back whole.
. "$(dirname "$0")/lib.sh"
SHIM=$B/tests/osslcount.so
[ -f "$SHIM" ] || die "$SHIM not built (make tests)"

share_dir "$T/pub" "$T/local"
head -c $((1 << 20)) /dev/urandom >"$T/local/small.bin"
head -c $((64 << 20)) /dev/urandom >"$T/local/large.bin"
mkdir -p "$T/counts"
# signing and encryption need a user's session (a guest's has no key)
make_user "$T/passdb" alice 'ctx pw alice'
AL="--user alice --password-file $T/alice.pw"

preload=$SHIM
asan_extra=""
if [ -n "$SAN_PRELOAD" ]; then
	preload="$SHIM:$SAN_PRELOAD"
	asan_extra="verify_asan_link_order=0"
fi
# counted CMD...: CMD (same pid: exec) with the shim, its counts in $T/counts/PID
cat >"$T/counted" <<WRAP
#!/bin/sh
ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}$asan_extra" \\
OSSLCOUNT_DIR="$T/counts" LD_PRELOAD="$preload" exec "\$@"
WRAP
chmod +x "$T/counted"
cat >"$T/rdaxd-counted" <<WRAP
#!/bin/sh
exec "$T/counted" "$B/rdaxd" "\$@"
WRAP
chmod +x "$T/rdaxd-counted"

# total PID: every count of that process, one line (empty if it wrote none)
total() {
	[ -f "$T/counts/$1" ] && awk '{ n += $2 } END { print n }' "$T/counts/$1"
}
# same WHAT A B: check that two counts are equal and not zero (the shim counted)
same() {
	check "$1: $2 = $3, the same for 64 times the I/O" \
		sh -c "[ -n '$2' ] && [ '$2' -gt 0 ] && [ '$2' = '$3' ]"
}

# round MODE SIZE: a put and a get of SIZE.bin under a fresh rdaxd;
# sets srv, put, get to their totals
round() {
	cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	$1
[pub]
	path = $T/pub
	valid users = alice
	read only = no
CONF
	RDAXD_REAL=$RDAXD
	RDAXD=$T/rdaxd-counted
	start_rdaxd srv --config "$T/smb.conf"
	RDAXD=$RDAXD_REAL
	U="smb://127.0.0.1:$PORT/pub"
	"$T/counted" $RDAX $AL -q put "$T/local/$2.bin" "$U/$2.bin" &
	pput=$!
	wait $pput || not_ok "$1: put of $2.bin"
	"$T/counted" $RDAX $AL -q get "$U/$2.bin" "$T/local/$2.back" &
	pget=$!
	wait $pget || not_ok "$1: get of $2.bin"
	check "$1: $2.bin comes back whole" cmp "$T/local/$2.bin" "$T/local/$2.back"
	rm -f "$T/local/$2.back" "$T/pub/$2.bin"
	srvpid=$RDAXD_PID
	check "$1: rdaxd stops cleanly" stop_rdaxd
	srv=$(total "$srvpid")
	put=$(total "$pput")
	get=$(total "$pget")
	echo "  $1, $2: rdaxd $srv, put $put, get $get"
	sed 's/^/    /' "$T/counts/$srvpid" | grep -v ' 0$'
}

for mode in "server signing = mandatory" "smb encrypt = required"; do
	round "$mode" small
	s_srv=$srv s_put=$put s_get=$get
	round "$mode" large
	same "$mode: rdaxd" "$s_srv" "$srv"
	same "$mode: rdax put" "$s_put" "$put"
	same "$mode: rdax get" "$s_get" "$get"
	rm -f "$T"/counts/*
done
finish
