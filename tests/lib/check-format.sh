#!/usr/bin/env bash
# check-format.sh SOURCE_DIR: every C source and header of profopt is formatted as
# .clang-format says (clang-format --dry-run --Werror); names the files that are not and
# how to fix them. The files are git's tracked ones, or all of them outside a git checkout.
set -u
root=$1
cd "$root" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files '*.c' '*.h')
else
	mapfile -t files < <(find . -path ./build -prune -o \( -name '*.c' -o -name '*.h' \) -print)
fi
[ "${#files[@]}" -gt 0 ] || { echo "FAIL no C sources found in $root"; exit 1; }
# clang-format names each place FILE:LINE:COLUMN: error: ...
not_formatted() {
	clang-format --dry-run --Werror "$@" 2>&1 | grep -o '^[^:]*:[0-9]*:[0-9]*: error' |
		cut -d: -f1 | sort -u
}
# The check must be able to fail: a file formatted otherwise is named (an earlier version
# matched no line of clang-format's output and passed everything).
probe=$(mktemp -d /tmp/profopt-format.XXXXXX)
cp .clang-format "$probe/" && printf 'int  f( void ){return 0 ;}\n' >"$probe/probe.c"
if [ "$(cd "$probe" && not_formatted probe.c)" != probe.c ]; then
	rm -rf "$probe"
	echo "FAIL the format check does not catch a file that is not formatted"
	exit 1
fi
rm -rf "$probe"
bad=$(not_formatted "${files[@]}")
if [ -n "$bad" ]; then
	echo "FAIL not formatted (run clang-format -i on them):"
	echo "$bad"
	exit 1
fi
echo "ok   ${#files[@]} C files formatted as .clang-format says ($(clang-format --version))"
