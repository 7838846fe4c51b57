#!/usr/bin/env bash
# no_lttng.sh COMPILER INCLUDE_DIR SOURCE: profopt.h must not pull in any LTTng header.
set -eu
deps=$("$1" -M -I"$2" "$3")
if echo "$deps" | grep -q 'lttng'; then
	echo "FAIL profopt.h includes LTTng headers:"
	echo "$deps" | tr ' ' '\n' | grep lttng
	exit 1
fi
echo "$deps" | grep -q 'profopt.h' || { echo "FAIL profopt.h not found in $2"; exit 1; }
echo "ok   profopt.h includes no LTTng header"
