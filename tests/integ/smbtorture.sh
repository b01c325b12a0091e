#!/bin/sh
# SPDX-License-Identifier: MIT
# Samba's smbtorture smb2 tests against rdaxd: the conformance subset
# rdaxd passes today. A test that regresses fails here. (Streams, ACLs,
# change notify, oplocks and leases are not offered yet.)
. "$(dirname "$0")/lib.sh"
need smbtorture

share_dir "$T/share"
make_user "$T/passdb" torture 'torture pw'
start_rdaxd srv --share tort="$T/share" --passdb "$T/passdb"

for t in smb2.connect smb2.scan.find smb2.dir.find smb2.dir.many \
	smb2.dir.sorted smb2.dir.large-files smb2.compound.related1 \
	smb2.compound.related2 smb2.compound.related3 smb2.compound.related5 \
	smb2.compound.related6 smb2.compound.related9 smb2.compound.unrelated1 \
	smb2.compound.invalid1 smb2.compound.invalid2 smb2.compound.invalid3 \
	smb2.compound.compound-break smb2.compound.create-write-close \
	smb2.read.eof smb2.read.position smb2.rename.simple \
	smb2.rename.no_sharing smb2.maxfid smb2.create.multi; do
	check_output "smbtorture $t" "^success: " \
		timeout 120 smbtorture -s /dev/null //127.0.0.1/tort -p "$PORT" \
		-U 'torture%torture pw' "$t"
done
check "rdaxd survived the torture" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
