#!/usr/bin/env bash
# python-version.sh 3.X ARGS...: runs CPython 3.X (pyenv's newest 3.X.*, else /usr/bin's
# python3.X) with ARGS; exits 77 (ctest's skip) with the reason when none is installed.
set -eu
version=$1
shift
pyenv_root=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
found=
for candidate in $(ls -d "$pyenv_root"/versions/"$version".* 2>/dev/null | sort -V) ; do
	[[ -x $candidate/bin/python$version ]] && found=$candidate/bin/python$version
done
[[ -z $found && -x /usr/bin/python$version ]] && found=/usr/bin/python$version
if [[ -z $found ]]; then
	echo "skip: no CPython $version here ($pyenv_root/versions/$version.*, /usr/bin/python$version)"
	exit 77
fi
exec "$found" "$@"
