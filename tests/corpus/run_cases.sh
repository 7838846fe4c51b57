#!/usr/bin/env bash
# run_cases.sh PROGRAM SOURCE_DIR: runs PROGRAM with the corpus directory found next to the
# checkout (SOURCE_DIR/../shared/corpus/babeltrace-ctf-traces) or in $PROFOPT_CORPUS_DIR.
corpus=${PROFOPT_CORPUS_DIR:-$2/../shared/corpus/babeltrace-ctf-traces}
if [ ! -d "$corpus" ]; then
	echo "run_cases: corpus not found at $corpus" >&2
	exit 1
fi
exec "$1" "$corpus"
