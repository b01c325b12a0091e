#!/bin/sh
# SPDX-License-Identifier: MIT
# Fetch the source of the installed fio (apt-get source) into DIR and
# configure it, so an external engine can be built against the exact
# headers and config of the fio binary that will load it. Writes only
# under DIR: the deb-src entry apt needs is tools/deps.sh's business.
#
# usage: tools/fetch-fio.sh DIR     prints the source directory;
#                                   DIR/src links to it
set -eu
dir=${1:?usage: fetch-fio.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
have=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || true)
if [ -z "$have" ]; then
	echo "fetch-fio: fio is not installed (tools/deps.sh fio)" >&2
	exit 1
fi
upstream=${have%-*}
upstream=${upstream#*:}
src=$dir/fio-$upstream
if [ -f "$src/config-host.h" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$have" ]; then
	ln -sfn "fio-$upstream" "$dir/src"
	echo "$src"
	exit 0
fi
command -v dpkg-source >/dev/null || {
	echo "fetch-fio: dpkg-source missing (dpkg-dev; tools/deps.sh fio)" >&2
	exit 1
}
rm -rf "$src" "$dir"/fio_*
cd "$dir"
if ! apt-get source -q --print-uris "fio=$have" 2>/dev/null | grep -q "fio_.*\.dsc"; then
	echo "fetch-fio: apt has no source entry (deb-src) for fio $have;" \
		"'tools/deps.sh fio' (as root) adds one" >&2
	exit 1
fi
echo "fetch-fio: apt-get source fio=$have" >&2
apt-get source -q "fio=$have" >/dev/null 2>"$dir/apt-source.log" || {
	cat "$dir/apt-source.log" >&2
	exit 1
}
cd "$src"
# Debian's own configure line (debian/rules), minus the GUI
./configure --disable-native --prefix=/usr >"$dir/configure.log" 2>&1 || {
	tail -20 "$dir/configure.log" >&2
	exit 1
}
echo "$have" >"$dir/.version"
ln -sfn "fio-$upstream" "$dir/src"
echo "$src"
