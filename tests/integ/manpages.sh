#!/bin/sh
# SPDX-License-Identifier: MIT
# The manual pages: groff formats every one without a warning; every
# function include/rdax.h declares with RDAX_API has a page (its family's
# page or a .so link to it) whose SYNOPSIS shows the prototype as
# declared; rdax.1, rdaxd.8 and fio-rdax.7 name every command, option,
# smb.conf parameter and engine option the code accepts.
. "$(dirname "$0")/lib.sh"

need groff
man=$top/man
hdr=$top/include/rdax.h
[ -x "$RDAX" ] || die "$RDAX not built (make)"
[ -x "$RDAXD" ] || die "$RDAXD not built (make)"
ls "$man"/*.[1-8] >/dev/null 2>&1 || die "no manual pages in $man"

fail() { not_ok "$@"; }

# .so links resolve against the manual's root: man3/NAME.3 -> man/NAME.3
mkdir -p "$T/root"
ln -s "$man" "$T/root/man3"

# link_target PAGE: the page a ".so man3/X.3" link names, else nothing
link_target() {
	sed -n '1s|^\.so man3/\([^/ ]*\.3\)$|\1|p' "$1"
}

# render PAGE ARGS...: groff from the manual's root, stdout and stderr
render() {
	p=$1
	shift
	(cd "$T/root" && groff -man "$@" "$p")
}

# --- groff has nothing to warn about ---
npages=0
nwarn=0
for p in "$man"/*.[1-8]; do
	npages=$((npages + 1))
	name=${p##*/}
	tgt=$(link_target "$p")
	if [ -n "$tgt" ]; then
		[ "$(wc -l <"$p")" -eq 1 ] || fail "$name: a .so link page has more than one line"
		[ -f "$man/$tgt" ] || fail "$name: links to $tgt, which does not exist"
		[ -z "$(link_target "$man/$tgt" 2>/dev/null)" ] || fail "$name: links to $tgt, itself a link"
	elif grep -q '^\.so' "$p"; then
		fail "$name: .so other than a one-line link to man3/NAME.3"
	fi
	for dev in ps utf8; do
		render "$p" -ww -z -T"$dev" >"$T/warn" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || [ -s "$T/warn" ]; then
			fail "$name: groff -man -ww -z -T$dev (rc=$rc):"
			sed 's/^/    | /' "$T/warn" | head -n 20
			nwarn=$((nwarn + 1))
		fi
	done
done
[ "$nwarn" -eq 0 ] && ok "groff -man -ww formats all $npages pages without a warning"

# --- every public function: a page, listed in NAME, prototype as declared ---
# one line per declaration: "TYPE NAME(ARGS);" with blanks squeezed
awk '/^RDAX_API[ \t]/ {
	p = $0
	while (p !~ /;/ && (getline l) > 0)
		p = p " " l
	sub(/^RDAX_API[ \t]+/, "", p)
	gsub(/[ \t]+/, " ", p)
	print p
}' "$hdr" >"$T/protos"
nfun=$(wc -l <"$T/protos")
[ "$nfun" -ge 50 ] || fail "found only $nfun RDAX_API declarations in $hdr"
nbad=0
while IFS= read -r proto; do
	fn=$(printf '%s\n' "$proto" | sed 's/(.*//; s/.*[ *]//')
	p=$man/$fn.3
	if [ ! -f "$p" ]; then
		fail "$fn: no man/$fn.3"
		nbad=$((nbad + 1))
		continue
	fi
	tgt=$(link_target "$p")
	page=${tgt:-$fn.3}
	if ! awk '/^\.SH NAME/ { f = 1; next } /^\.SH/ { f = 0 } f' "$man/$page" |
		tr -s ', ' '\n' | grep -qx -- "$fn"; then
		fail "$fn: not in the NAME section of $page"
		nbad=$((nbad + 1))
	fi
	# the SYNOPSIS as text, blanks squeezed, must hold the declaration
	render "$man/$page" -Tascii -P-cbou 2>/dev/null |
		awk '/^SYNOPSIS/ { f = 1; next } /^[A-Z]/ { f = 0 } f' |
		tr '\n' ' ' | tr -s ' \t' '  ' >"$T/synopsis"
	if ! grep -qF -- "$proto" "$T/synopsis"; then
		fail "$fn: the SYNOPSIS of $page does not show: $proto"
		nbad=$((nbad + 1))
	fi
done <"$T/protos"
[ "$nbad" -eq 0 ] && ok "all $nfun RDAX_API functions have a page with their prototype"

# and no link page for a function that does not exist
for p in "$man"/*.3; do
	[ -n "$(link_target "$p")" ] || continue
	fn=${p##*/}
	fn=${fn%.3}
	grep -q "[ *]$fn(" "$T/protos" || fail "${p##*/}: $fn is not declared in $hdr"
done

# --- rdax(1): every command and option of rdax --help ---
# roff source (files or stdin) with \- as -, for option names
unroff() {
	sed 's/\\-/-/g' "$@"
}
"$RDAX" --help >"$T/help" 2>&1 || die "rdax --help failed"
sed -n '/^commands:/,/^$/p' "$T/help" |
	sed -n 's/^  \([a-z][a-z0-9]*\) .*/\1/p' >"$T/cmds"
ncmd=$(wc -l <"$T/cmds")
[ "$ncmd" -ge 10 ] || fail "found only $ncmd commands in rdax --help"
awk '/^\.SH COMMANDS/ { f = 1; next } /^\.SH/ { f = 0 } f' "$man/rdax.1" |
	unroff >"$T/rdax1.cmds"
nbad=0
while read -r c; do
	if ! grep -Eq "^\.B[IR]? \"?$c( |\"|$)" "$T/rdax1.cmds"; then
		fail "rdax.1: command '$c' of rdax --help is not an entry of COMMANDS"
		nbad=$((nbad + 1))
	fi
done <"$T/cmds"
[ "$nbad" -eq 0 ] && ok "rdax.1 documents all $ncmd commands of rdax --help"

# check_options PAGE HELPFILE [SOURCE]: every --option of the help, and
# every long option of the getopt table in SOURCE, appears in PAGE (rdaxd's
# help is generated from its option table: the help is enough)
check_options() {
	page=$1 help=$2 src=$3
	{
		grep -o -- '--[a-z][a-z-]*' "$help"
		[ -z "$src" ] || sed -n 's/^[ \t]*{ "\([a-z][a-z-]*\)", [a-z_]*argument.*/--\1/p' "$src"
	} | sort -u >"$T/opts"
	n=$(wc -l <"$T/opts")
	[ "$n" -ge 5 ] || fail "found only $n options for ${page##*/}"
	unroff "$page" >"$T/page.txt"
	bad=0
	while read -r o; do
		if ! grep -Eq -- "(^|[^a-zA-Z-])$o([^a-z-]|$)" "$T/page.txt"; then
			fail "${page##*/}: option $o is not documented"
			bad=$((bad + 1))
		fi
	done <"$T/opts"
	[ "$bad" -eq 0 ] && ok "${page##*/} documents all $n long options"
}
check_options "$man/rdax.1" "$T/help" "$top/tools/rdax.c"

# --- rdaxd(8): options and every smb.conf parameter config.c accepts ---
"$RDAXD" --help >"$T/dhelp" 2>&1 || die "rdaxd --help failed"
check_options "$man/rdaxd.8" "$T/dhelp" ""
# the option table's names and aliases (src/server/options.c)
"$RDAXD" --list-params | cut -f1,2 | tr '\t' '\n' | sed 's/, /\n/g' |
	sed '/^$/d' | sort -u >"$T/params"
npar=$(wc -l <"$T/params")
[ "$npar" -ge 20 ] || fail "found only $npar smb.conf parameters in rdaxd --list-params"
awk '/^\.SH CONFIGURATION FILE/ { f = 1; next } /^\.SH/ { f = 0 } f' "$man/rdaxd.8" |
	unroff >"$T/conf.txt"
nbad=0
while IFS= read -r par; do
	if ! grep -Eq "(^|[^a-z])$par([^a-z]|$)" "$T/conf.txt"; then
		fail "rdaxd.8: smb.conf parameter '$par' is not in CONFIGURATION FILE"
		nbad=$((nbad + 1))
	fi
done <"$T/params"
[ "$nbad" -eq 0 ] && ok "rdaxd.8 documents all $npar smb.conf parameters of the option table"

# --- fio-rdax(7): every engine option of fio/rdax.c ---
awk '/^static struct fio_option options\[\]/ { f = 1 } f && /^};/ { f = 0 } f' \
	"$top/fio/rdax.c" | sed -n 's/^[ \t]*\.name = "\([a-z_]*\)",.*/\1/p' >"$T/fioopts"
nfo=$(wc -l <"$T/fioopts")
[ "$nfo" -ge 5 ] || fail "found only $nfo engine options in fio/rdax.c"
awk '/^\.SH OPTIONS/ { f = 1; next } /^\.SH/ { f = 0 } f' "$man/fio-rdax.7" >"$T/fio.txt"
nbad=0
while read -r o; do
	if ! grep -Eq "^\.BI? $o(=| |$)" "$T/fio.txt"; then
		fail "fio-rdax.7: engine option '$o' is not an entry of OPTIONS"
		nbad=$((nbad + 1))
	fi
done <"$T/fioopts"
[ "$nbad" -eq 0 ] && ok "fio-rdax.7 documents all $nfo engine options"

# --- a page of ours that one names (.BR rdax_x (3), rdaxd (8) ...) exists ---
nref=0
nbad=0
grep -oE '^\.BR (rdax[a-z0-9_]*|fio-rdax) \([1-8]\)' "$man"/*.[1-8] >"$T/refs"
while IFS= read -r line; do
	page=${line%%:*}
	ref=${line#*:.BR }
	target=${ref%% *}.$(echo "$ref" | tr -dc 1-8)
	nref=$((nref + 1))
	[ -f "$man/$target" ] || { fail "${page##*/} names $target, which does not exist"; nbad=$((nbad + 1)); }
done <"$T/refs"
[ "$nbad" -eq 0 ] && ok "all $nref references to the project's pages resolve"

finish
