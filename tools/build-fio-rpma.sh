#!/bin/sh
# SPDX-License-Identifier: MIT
# Build a fio binary with the librpma engines (librpma_apm_client/server,
# librpma_gpspm_client/server) from the source tools/fetch-fio.sh fetched:
# Debian's fio 3.33 binary is built without librpma, its source has the
# engines (removed upstream in 3.38). A copy of the source is configured
# here, so the configured tree the fio-rdax engine builds against is
# untouched. Needs librpma-dev and libprotobuf-c-dev (tools/deps.sh fio).
# bench/rdma-to-dax runs it in the VM as the librpma anchor.
#
# usage: tools/build-fio-rpma.sh FIO_SRC DIR    prints DIR/fio
set -eu
fsrc=${1:?usage: build-fio-rpma.sh FIO_SRC DIR}
dir=${2:?usage: build-fio-rpma.sh FIO_SRC DIR}
[ -f "$fsrc/.version" ] || {
	echo "build-fio-rpma: no fetched fio source in $fsrc (make fetch-fio)" >&2
	exit 1
}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
have=$(cat "$fsrc/.version")
if [ -x "$dir/fio" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$have" ]; then
	echo "$dir/fio"
	exit 0
fi
src=$(cd "$fsrc/src" && pwd -P)
rm -rf "$dir/tree"
cp -a "$src" "$dir/tree"
cd "$dir/tree"
make clean >/dev/null 2>&1 || true
./configure --disable-native --prefix=/usr >"$dir/configure.log" 2>&1 || {
	tail -20 "$dir/configure.log" >&2
	exit 1
}
# fio 3.33's GPSPM server built with libpmem2 asks for the persist
# function of a map it has not made yet and dies (SIGSEGV in
# pmem2_get_persist_fn, librpma_gpspm.c server_init); with PMDK's
# libpmem it takes pmem_persist instead: leave libpmem2 out here.
sed -i '/CONFIG_LIBPMEM2_INSTALLED/d' config-host.mak config-host.h
for want in librpma libprotobuf_c libpmem; do
	grep -Eq "^$want +yes" "$dir/configure.log" || {
		echo "build-fio-rpma: configure found no $want (tools/deps.sh fio)" >&2
		exit 1
	}
done
make -j"${JOBS:-2}" fio >"$dir/make.log" 2>&1 || {
	tail -20 "$dir/make.log" >&2
	exit 1
}
cp fio "$dir/fio"
"$dir/fio" --enghelp | grep -q librpma_gpspm_server || {
	echo "build-fio-rpma: the fio built has no librpma engines" >&2
	exit 1
}
echo "$have" >"$dir/.version"
echo "$dir/fio"
