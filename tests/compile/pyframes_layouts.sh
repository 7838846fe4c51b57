#!/usr/bin/env bash
# pyframes_layouts.sh CC TRACEPOINTS 3.X: compiles pyframes_layouts.c against CPython 3.X's
# headers (pyenv's newest 3.X.*, else /usr/include/python3.X with its internal headers) and
# runs it; exits 77 (ctest's skip) with the reason where there are none.
set -eu
cc=$1 tracepoints=$2 version=$3
here=$(cd "$(dirname "$0")" && pwd)
pyenv_root=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
include=
for candidate in $(ls -d "$pyenv_root"/versions/"$version".*/include/python"$version" \
	/usr/include/python"$version" 2>/dev/null | sort -V -r); do
	if [[ -f $candidate/Python.h && ( $version == 3.9 || $version == 3.10 ||
		-f $candidate/internal/pycore_frame.h ) ]]; then
		include=$candidate
		break
	fi
done
if [[ -z $include ]]; then
	echo "skip: no headers of CPython $version here ($pyenv_root/versions/$version.*," \
		"/usr/include/python$version)"
	exit 77
fi
work=$(mktemp -d /tmp/profopt-layouts.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$cc" -std=gnu11 -Wall -Werror -I"$include" -I"$tracepoints" "$here/pyframes_layouts.c" \
	-o "$work/layouts"
echo "headers: $include"
"$work/layouts"
