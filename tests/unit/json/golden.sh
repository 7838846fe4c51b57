#!/bin/sh
# golden.sh RENDERER GOLDEN_DIR WORK_DIR FILE: renders the fixture's outputs into WORK_DIR and
# compares FILE byte for byte with GOLDEN_DIR/FILE. With UPDATE_GOLDEN=1 it copies the new
# output over the committed one instead (review the diff before committing).
set -eu
renderer=$1 golden_dir=$2 work_dir=$3 file=$4

rm -rf "$work_dir"
mkdir -p "$work_dir"
"$renderer" write "$work_dir"
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
	cp "$work_dir/$file" "$golden_dir/$file"
	echo "golden: updated $golden_dir/$file; review the diff, commit it and run again (this run fails)"
	exit 1
fi
if [ ! -f "$golden_dir/$file" ]; then
	echo "golden: $golden_dir/$file is missing; run with UPDATE_GOLDEN=1" >&2
	exit 1
fi
if ! cmp -s "$golden_dir/$file" "$work_dir/$file"; then
	echo "golden: $file differs from $golden_dir/$file:" >&2
	diff -u "$golden_dir/$file" "$work_dir/$file" >&2 || true
	exit 1
fi
echo "golden: $file matches"
