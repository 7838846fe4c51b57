#!/usr/bin/env bash
# flips.sh BIN_DIR [FIRST_SEED COUNT]: seeded single-byte flips of a fresh recording
# through profopt-analyze (flips.py): a changed result must carry a warning.
set -u
bin=$1 first=${2:-1} count=${3:-60}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-flips.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin/profopt-record" --buffers pid -o "$work/trace" -- "$bin/profopt-sim" --workers 2 \
	--steps 200 --load-ms 1 --forward-ms 2 --kernels 4 --gpu-ms 1 >"$work/record.log" 2>&1 ||
	{ cat "$work/record.log"; exit 1; }
/usr/bin/python3 "$here/flips.py" "$bin/profopt-analyze" "$work/trace" "$work" "$first" "$count"
