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
bad=$(clang-format --dry-run --Werror "${files[@]}" 2>&1 | grep -o '^[^:]*: error' | sort -u |
	sed 's/: error//')
if [ -n "$bad" ]; then
	echo "FAIL not formatted (run clang-format -i on them):"
	echo "$bad"
	exit 1
fi
echo "ok   ${#files[@]} C files formatted as .clang-format says ($(clang-format --version))"
