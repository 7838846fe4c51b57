#!/usr/bin/env bash
# run_corpus.sh PROGRAM SOURCE_DIR EXPECTED: runs PROGRAM over the babeltrace2 CTF corpus and
# diffs its "trace status" lines against EXPECTED. The corpus lives next to the checkout, in
# SOURCE_DIR/../shared/corpus/babeltrace-ctf-traces (or $PROFOPT_CORPUS_DIR).
set -u
program=$1 source_dir=$2 expected=$3
corpus=${PROFOPT_CORPUS_DIR:-$source_dir/../shared/corpus/babeltrace-ctf-traces}
if [ ! -d "$corpus" ]; then
	# 77: ctest reports the test as skipped (SKIP_RETURN_CODE), with this reason.
	echo "run_corpus: skipped: babeltrace2's corpus is not at $corpus (set PROFOPT_CORPUS_DIR)"
	exit 77
fi
actual=$(mktemp /tmp/profopt-corpus.XXXXXX)
trap 'rm -f "$actual"' EXIT
"$program" "$corpus" >"$actual"
status=$?
if [ -n "${PROFOPT_UPDATE_GOLDEN:-}" ]; then
	# Rewrites and fails, so that an update can never make a run pass: review, commit, rerun.
	cp "$actual" "$expected"
	echo "run_corpus: rewrote $expected; review the diff, commit it and run again" >&2
	exit 1
fi
if ! diff -u "$expected" "$actual"; then
	echo "run_corpus: outcomes differ from $expected" >&2
	exit 1
fi
if [ "$status" -ne 0 ]; then
	echo "run_corpus: $program reported unexpected outcomes (status $status)" >&2
	exit 1
fi
echo "run_corpus: $(wc -l <"$actual") traces as expected"
