#!/usr/bin/env bash
# run_cases.sh PROGRAM SOURCE_DIR: runs PROGRAM with the corpus directory found next to the
# checkout (SOURCE_DIR/../shared/corpus/babeltrace-ctf-traces) or in $PROFOPT_CORPUS_DIR.
corpus=${PROFOPT_CORPUS_DIR:-$2/../shared/corpus/babeltrace-ctf-traces}
if [ ! -d "$corpus" ]; then
	# 77: ctest reports the test as skipped (SKIP_RETURN_CODE), with this reason.
	echo "run_cases: skipped: babeltrace2's corpus is not at $corpus (set PROFOPT_CORPUS_DIR)"
	exit 77
fi
exec "$1" "$corpus"
