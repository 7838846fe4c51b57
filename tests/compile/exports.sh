#!/usr/bin/env bash
# exports.sh LIBRARY: libprofopt exports only profopt_* symbols (and its version node).
set -eu
symbols=$(nm -D --defined-only "$1" | awk '{ print $3 }' | sed 's/@.*//' | sort -u)
[ -n "$symbols" ] || { echo "FAIL no symbols exported by $1"; exit 1; }
other=$(echo "$symbols" | grep -v -E '^(profopt_[a-z0-9_]+|PROFOPT_[0-9]+)$' || true)
if [ -n "$other" ]; then
	echo "FAIL symbols outside the profopt_ namespace:"
	echo "$other"
	exit 1
fi
echo "$symbols" | grep -qx profopt_stage_begin || { echo "FAIL profopt_stage_begin missing"; exit 1; }
echo "ok   $(echo "$symbols" | grep -c '^profopt_') profopt_* symbols and nothing else"
