#!/usr/bin/env bash
# compile.sh COMPILER LANG STD INCLUDE_DIR LIB_DIR SOURCE: builds SOURCE as LANG (c or c++)
# of standard STD with warnings as errors against an installed-style include directory
# (profopt.h alone), links it to libprofopt and runs it.
set -eu
compiler=$1 lang=$2 std=$3 include=$4 libdir=$5 source=$6
work=$(mktemp -d /tmp/profopt-compile.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$compiler" -x "$lang" -std="$std" -Wall -Wextra -Werror -pedantic -I"$include" \
	-c "$source" -o "$work/api_use.o"
"$compiler" "$work/api_use.o" -L"$libdir" -Wl,-rpath,"$libdir" -lprofopt -o "$work/api_use"
"$work/api_use"
echo "ok   $lang $std: compiled, linked and ran"
