#!/usr/bin/env bash
# gpu_findings.sh BIN_DIR: what the recordings made on an H100 (tests/data/gpu-traces, see
# its README) must and must not say: each advice where the kernels call for it, and none
# where they do not. golden.sh checks their summaries byte for byte; this says why.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-gpu-findings.XXXXXX)
trap 'rm -rf "$work"' EXIT
for archive in "$here"/gpu-traces/*.tar.xz; do
	name=$(basename "$archive" .tar.xz)
	tar -C "$work" -xJf "$archive" || exit 1
	"$bin/profopt-analyze" --json-only -o "$work/$name.report" "$work/$name" >/dev/null ||
		{ echo "FAIL $name: profopt-analyze failed"; exit 1; }
done
/usr/bin/python3 "$here/gpu-traces/check.py" "$work"
