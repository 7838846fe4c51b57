#!/usr/bin/env bash
# golden.sh BIN_DIR: analyses every committed golden trace (tests/data/traces/NAME, small
# real recordings made by record_golden.sh; tests/data/gpu-traces/NAME.tar.xz, recordings
# made on an H100 by tests/gpu/device_checks.sh, unpacked here) and compares its
# summary.json byte for byte with tests/data/expected/NAME.summary.json. The whole
# pipeline runs on fixed input, so any change of a number shows, with no timing in the loop.
#
# UPDATE_GOLDEN=1 rewrites the expected files from this build and then FAILS, so that it
# can never make a run pass: review the diff (git diff tests/data/expected), commit it,
# and run again.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-golden-traces.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 rewritten=0
mkdir -p "$work/unpacked"
for archive in "$here"/gpu-traces/*.tar.xz; do
	tar -C "$work/unpacked" -xJf "$archive" || { echo "FAIL cannot unpack $archive"; exit 1; }
done
for trace in "$here"/traces/*/ "$work"/unpacked/*/; do
	name=$(basename "$trace")
	expected=$here/expected/$name.summary.json
	if ! "$bin/profopt-analyze" --json-only -o "$work/$name" "$trace" >"$work/$name.out" 2>&1; then
		failed=$((failed + 1))
		echo "FAIL $name: profopt-analyze failed: $(tail -n 1 "$work/$name.out")"
		continue
	fi
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		cmp -s "$work/$name/summary.json" "$expected" ||
			{ cp "$work/$name/summary.json" "$expected"; rewritten=$((rewritten + 1)); }
		echo "rewrote $expected"
	elif cmp -s "$work/$name/summary.json" "$expected"; then
		passed=$((passed + 1))
		echo "ok   $name"
	else
		failed=$((failed + 1))
		echo "FAIL $name: summary.json differs from $expected:"
		diff -u "$expected" "$work/$name/summary.json" | head -n 60
	fi
done
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
	echo "UPDATE_GOLDEN=1: $rewritten expected file(s) changed; review, commit, run again"
	exit 1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
