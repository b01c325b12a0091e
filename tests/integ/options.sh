#!/bin/sh
# SPDX-License-Identifier: MIT
# rdaxd's one option table (src/server/options.c): man/rdax.conf.5 is what
# tools/rdax-conf-man.sh makes of `rdaxd --list-params`; --help lists every
# long option of the table and rdaxd accepts every option --help lists;
# and the file and the command line take the same words: every word and
# range end of every bool, enum, int and size parameter gives the same
# result in the file, with --option and with its long option, and a bad
# value is refused by all three with "invalid value".
. "$(dirname "$0")/lib.sh"

[ -x "$RDAXD" ] || die "$RDAXD not built (make)"
"$RDAXD" --list-params >"$T/params.tsv" || die "rdaxd --list-params failed"
# read splits on a separator that is not a blank, so empty fields stay
tr '\t' '^' <"$T/params.tsv" >"$T/params"
"$RDAXD" --help >"$T/help" 2>&1 || die "rdaxd --help failed"
npar=$(wc -l <"$T/params")
[ "$npar" -ge 40 ] || die "only $npar parameters in rdaxd --list-params"

# --- rdax.conf.5 is generated from the table ---
"$top/tools/rdax-conf-man.sh" "$RDAXD" >"$T/rdax.conf.5" || die "rdax-conf-man.sh failed"
if diff -u "$top/man/rdax.conf.5" "$T/rdax.conf.5" >"$T/diff"; then
	ok "man/rdax.conf.5 is what tools/rdax-conf-man.sh makes of the table"
else
	not_ok "man/rdax.conf.5 differs from the table (run tools/rdax-conf-man.sh):"
	head -n 30 "$T/diff" | sed 's/^/    | /'
fi
# and, read back from the page: one entry per parameter, default and peer
sed 's/\\-/-/g' "$top/man/rdax.conf.5" >"$T/page"
grep -c '^\.BI ".* = "' "$T/page" >"$T/n"
check "rdax.conf.5 has $npar entries, one per parameter" test "$(cat "$T/n")" = "$npar"
nbad=0
while IFS='^' read -r name alias scope type arg vals def lopt peer help restart; do
	awk -v n="$name" 'index($0, ".BI \"" n " = \"") == 1 { f = 1; next }
		/^\.(TP|SH)/ { f = 0 } f' "$T/page" >"$T/entry"
	for want in "Samba/ksmbd: $peer." ${def:+"Default: $def."} ${lopt:+"Option: \\fB--$lopt\\fP."}; do
		if ! grep -qF -- "$want" "$T/entry"; then
			not_ok "rdax.conf.5: '$name' lacks '$want'"
			nbad=$((nbad + 1))
		fi
	done
done <"$T/params"
[ "$nbad" -eq 0 ] && ok "rdax.conf.5 gives every parameter's default, option and Samba/ksmbd name"

# --- --help and the table ---
nbad=0
for lopt in $(cut -f8 "$T/params.tsv"); do
	grep -q -- "--$lopt\\b" "$T/help" || { not_ok "--help lacks --$lopt"; nbad=$((nbad + 1)); }
done
for o in $(grep -o -- '--[a-z][a-z-]*' "$T/help" | sort -u); do
	"$RDAXD" "$o" >"$T/out" 2>&1 </dev/null
	if grep -q "unrecognized option" "$T/out"; then
		not_ok "--help lists $o, which rdaxd does not take"
		nbad=$((nbad + 1))
	fi
done
[ "$nbad" -eq 0 ] && ok "--help lists every long option of the table, and rdaxd takes each"

# --- the same words in the file and on the command line ---
mkdir -p "$T/a"
# try NAME VALUE SCOPE LOPT: prints "rc verdict" for the file, --option, --LOPT
try() {
	if [ "$3" = share ]; then
		printf '[x]\n\tpath = %s\n\t%s = %s\n' "$T/a" "$1" "$2" >"$T/f.conf"
	else
		printf '[global]\n\t%s = %s\n[x]\n\tpath = %s\n' "$1" "$2" "$T/a" >"$T/f.conf"
	fi
	"$RDAXD" --config "$T/f.conf" --guest --test-config >"$T/o1" 2>&1
	r1=$?
	if [ "$3" = share ]; then
		"$RDAXD" --share x="$T/a" --option "$1 = $2" --guest --test-config >"$T/o2" 2>&1
	else
		"$RDAXD" --option "$1 = $2" --share x="$T/a" --guest --test-config >"$T/o2" 2>&1
	fi
	r2=$?
	r3=$r2
	[ -z "$4" ] || { "$RDAXD" --share x="$T/a" "--$4" "$2" --guest --test-config >"$T/o3" 2>&1; r3=$?; }
	v1=$(grep -c 'invalid value' "$T/o1")
	v2=$(grep -c 'invalid value' "$T/o2")
	v3=$v2
	[ -z "$4" ] || v3=$(grep -c 'invalid value' "$T/o3")
	echo "$r1$r2$r3 $v1$v2$v3"
}
# the values to try, one per line: NAME^SCOPE^LOPT^VALUE^LISTED. Every word
# of every enum, an int's or size's range ends and one beyond each; bools
# share one word table, so each takes one yes and one no word, in turn.
awk -F '\t' '
function emit(v, listed) { print $1 "^" scope "^" $8 "^" v "^" listed }
$4 !~ /^(bool|enum|int|size)$/ { next }
{
	scope = $3 == "global,share" ? "share" : $3
	n = split($6, w, /, |\|/)
	if ($4 == "bool") {
		nb++
		if (n == 8) {
			emit(w[1 + nb % 4], 1)
			emit(w[5 + nb % 4], 1)
		} else {
			emit(w[1 + nb % n], 1)
			emit("yes", 0)
		}
	} else for (i = 1; i <= n; i++) {
		if (w[i] !~ /\.\./) {
			emit(w[i], 1)
			continue
		}
		split(w[i], r, /\.\./)
		k = r[1] ~ /K$/ ? "K" : ""
		lo = r[1] + 0
		hi = r[2] + 0
		emit(lo k, 1)
		emit(hi k, 1)
		if (lo > 0)
			emit(lo - 1 k, 0)
		emit(hi + 1 k, 0)
	}
	emit("bogus-value", 0)
}' "$T/params.tsv" >"$T/values"
# try NAME VALUE SCOPE LOPT: "RC RC INVALID INVALID" of the file and of the
# long option (--option where there is none)
try() {
	if [ "$3" = share ]; then
		printf '[x]\n\tpath = %s\n\t%s = %s\n' "$T/a" "$1" "$2" >"$T/f.conf"
	else
		printf '[global]\n\t%s = %s\n[x]\n\tpath = %s\n' "$1" "$2" "$T/a" >"$T/f.conf"
	fi
	"$RDAXD" --config "$T/f.conf" --guest --test-config >"$T/o1" 2>&1
	r1=$?
	if [ -n "$4" ]; then
		"$RDAXD" --share x="$T/a" "--$4" "$2" --guest --test-config >"$T/o2" 2>&1
	else
		"$RDAXD" --share x="$T/a" --option "$1 = $2" --guest --test-config >"$T/o2" 2>&1
	fi
	r2=$?
	echo "$r1$r2 $(grep -c 'invalid value' "$T/o1")$(grep -c 'invalid value' "$T/o2")"
}
nwords=0
nbad=0
while IFS='^' read -r name scope lopt w listed; do
	res=$(try "$name" "$w" "$scope" "$lopt")
	nwords=$((nwords + 1))
	case $res in
	"00 00" | "22 00") ok=1 ;;	# accepted (or refused later, by both)
	"22 11") ok=$((1 - listed)) ;;	# invalid for both: right unless listed
	*) ok=0 ;;
	esac
	if [ "$ok" != 1 ]; then
		not_ok "'$name = $w' (listed: $listed): file and ${lopt:+--}${lopt:-option} disagree or refuse a listed value (rc, invalid: $res)"
		sed 's/^/    | /' "$T/o1" "$T/o2" | head -n 6
		nbad=$((nbad + 1))
	fi
done <"$T/values"
[ "$nbad" -eq 0 ] && ok "$nwords values: the file and the command line agree"
# --option is the file's parser: a few of them through it too
for v in "server signing = required" "log level = 3" "smbd max io size = 1M"; do
	check "--option '$v' is taken" "$RDAXD" --share x="$T/a" --guest --option "$v" --test-config
done
check_fails_output "--option 'workers = 257' is refused" "invalid value" \
	"$RDAXD" --share x="$T/a" --guest --option "workers = 257" --test-config
check_output "--option store = posix applies to --share shares" "store posix" \
	"$RDAXD" --share x="$T/a" --guest --option "store = posix" --test-config
# the issue's example: the command line takes 'required' for signing now
check_output "--signing required is mandatory signing" "configuration OK" \
	"$RDAXD" --share x="$T/a" --guest --signing required --test-config
check_fails_output "an unknown --option parameter is refused" "known parameter" \
	"$RDAXD" --share x="$T/a" --guest --option "no such thing = 1" --test-config
check_fails_output "--workers 300 names the range" "0..256" \
	"$RDAXD" --share x="$T/a" --guest --workers 300 --test-config
finish
