#!/bin/sh
# SPDX-License-Identifier: MIT
# Fuzzing regression: build every tests/fuzz target against a small
# replay driver (no libFuzzer) with ASan+UBSan and run it over its seed
# corpus in tests/data/corpus/. A crash, sanitizer report or broken
# invariant fails the target.
. "$(dirname "$0")/lib.sh"
cd "$top" || die "cannot cd to $top"

FUZZ_REPLAY_CC=${FUZZ_REPLAY_CC:-${FUZZ_CC:-clang}}
need "$FUZZ_REPLAY_CC" make

# The sanitizer runtime must link and run here.
printf 'int main(void) { return 0; }\n' >"$T/san.c"
if ! "$FUZZ_REPLAY_CC" -fsanitize=address,undefined -o "$T/san" "$T/san.c" \
	>"$T/san.log" 2>&1; then
	sed 's/^/    | /' "$T/san.log" | tail -n 5
	die "$FUZZ_REPLAY_CC cannot link -fsanitize=address,undefined (libclang-rt-14-dev; tools/deps.sh)"
fi
"$T/san" >"$T/san.log" 2>&1 ||
	skip "ASan programs do not run here: $(head -n 1 "$T/san.log")"

out="$B/fuzz-replay"
if ! make -f tests/fuzz/fuzz.mk -j2 FUZZ_REPLAY_B="$out" \
	FUZZ_REPLAY_CC="$FUZZ_REPLAY_CC" fuzz-replay-build >"$T/build.log" 2>&1; then
	sed 's/^/    | /' "$T/build.log" | tail -n 30
	die "building the replay binaries failed"
fi
ok "replay binaries built in $out"

make -s -f tests/fuzz/fuzz.mk FUZZ_REPLAY_B="$out" \
	FUZZ_REPLAY_CC="$FUZZ_REPLAY_CC" fuzz-replay >"$T/replay.log" 2>&1
rc=$?
cat "$T/replay.log"
if [ $rc = 0 ]; then
	ok "every target replayed its corpus cleanly"
else
	not_ok "a target failed on its corpus (rc=$rc)"
fi
finish
