#!/bin/sh
# SPDX-License-Identifier: MIT
# Write man/rdax.conf.5 from rdaxd's option table (`rdaxd --list-params`):
# every smb.conf parameter rdaxd reads, its values, default, command-line
# option and the Samba or ksmbd parameter it matches.
# tests/integ/options.sh checks the page in the tree is what this writes.
#
# usage: tools/rdax-conf-man.sh [RDAXD] >man/rdax.conf.5
set -eu
rdaxd=${1:-build/rdaxd}
version=$("$rdaxd" --version | sed 's/^rdaxd //')
list=$("$rdaxd" --list-params)

cat <<HEAD
.\\" SPDX-License-Identifier: MIT
.\\" Made by tools/rdax-conf-man.sh from rdaxd's option table
.\\" (src/server/options.c): edit the table, then run the script.
.TH RDAX.CONF 5 2026-12-02 "rdax $version" "File Formats"
.nh
.SH NAME
rdax.conf \\- the smb.conf-syntax configuration file of rdaxd
.SH SYNOPSIS
.B rdaxd \\-\\-config
.I FILE
.br
.B rdaxd \\-\\-option
.RI \\(aq NAME " = " VALUE \\(aq
.SH DESCRIPTION
.B rdaxd
reads a file in
.BR smb.conf (5)
syntax, with Samba's parameter names where Samba has the parameter.
The
.B [global]
section holds the server's parameters; every other section is a share of
that name.
Parameter names are compared without regard to case.
A parameter rdaxd does not know is logged with file and line and
ignored; an invalid value stops rdaxd (or fails a reload) with
.RI \\(dq FILE : LINE ": invalid value \\(aq" VALUE "\\(aq for \\(aq" NAME "\\(aq\\(dq."
.PP
This page lists every parameter, generated from the option table the
parser, the command line and
.B rdaxd \\-\\-help
use, so the three take the same words and ranges.
.BR rdaxd (8)
(CONFIGURATION FILE) describes what each one does in detail.
.PP
A
.I BOOL
is
.BR yes ,
.BR true ,
.BR on ,
.B 1
or
.BR no ,
.BR false ,
.BR off ,
.BR 0 .
A
.I SIZE
is a number of bytes with an optional
.BR K ,
.B M
or
.B G
(binary) and an optional
.BR B .
In a list of words,
.B a|b
are two spellings of one value.
A
.I LIST
is separated by commas or blanks.
.PP
Each entry gives the values, the default, the
.BR rdaxd (8)
option that sets it too (every parameter can also be given with
.BR \\-\\-option ),
and the parameter of Samba's
.BR smb.conf (5)
or ksmbd's
.BR ksmbd.conf (5)
it matches
.RB ( "rdax only" :
neither has it).
A [global] value of a parameter that a share may also set is every
share's default.
A change of a parameter marked
.B restart
is logged by a reload and takes effect when rdaxd is restarted.
HEAD

# section TITLE SCOPE
section() {
	echo ".SH $1"
	printf '%s\n' "$list" | awk -F '\t' -v scope="$2" '
	function roff(s) {
		gsub(/\\/, "\\e", s)
		gsub(/-/, "\\-", s)
		if (s ~ /^[.\047]/)
			s = "\\&" s
		return s
	}
	$3 != scope { next }
	{
		name = $1; alias = $2; type = $4; arg = $5; vals = $6; def = $7
		lopt = $8; peer = $9; help = $10; restart = $11
		if (arg == "")
			arg = type == "bool" ? "BOOL" : "VALUE"
		print ".TP"
		printf ".BI \"%s = \" %s\n", roff(name), roff(arg)
		print roff(toupper(substr(help, 1, 1)) substr(help, 2)) "."
		if (alias != "")
			print ".br\nAlso: " roff(alias) "."
		if (vals != "")
			print ".br\nValues: " roff(vals) "."
		if (def != "")
			print ".br\nDefault: " roff(def) "."
		if (lopt != "")
			print ".br\nOption: \\fB\\-\\-" roff(lopt) "\\fP."
		print ".br\nSamba/ksmbd: " roff(peer) "."
		if (restart == "restart")
			print ".br\nA reload: \\fBrestart\\fP."
	}'
}
section "GLOBAL PARAMETERS" global
section "GLOBAL OR SHARE PARAMETERS" global,share
section "SHARE PARAMETERS" share

cat <<'TAIL'
.SH SEE ALSO
.BR rdaxd (8),
.BR rdaxctl (8),
.BR smb.conf (5),
.BR ksmbd.conf (5)
TAIL
