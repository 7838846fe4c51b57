#!/usr/bin/env bash
# installed.sh BUILD_DIR SOURCE: installs the build into a temporary prefix and builds a
# program against the installed files only, as a C/C++ engine author would: once with
# CMake's find_package(profopt 0.1) (the package, its version file and the imported
# target), once with pkg-config. A find_package asking for a later major version must fail.
set -eu
build=$1 source=$2
work=$(mktemp -d /tmp/profopt-installed.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null

consumer() { # consumer DIR VERSION
	mkdir -p "$1"
	cp "$source" "$1/api_use.c"
	cat >"$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(profopt $2 REQUIRED)
add_executable(api_use api_use.c)
target_link_libraries(api_use PRIVATE profopt::profopt)
CMAKE
	cmake -S "$1" -B "$1/build" -DCMAKE_PREFIX_PATH="$work/prefix" >"$1/configure.log" 2>&1
}

consumer "$work/cmake" 0.1
cmake --build "$work/cmake/build" >/dev/null
LD_LIBRARY_PATH="$(dirname "$(find "$work/prefix" -name 'libprofopt.so' | head -n 1)")" \
	"$work/cmake/build/api_use"
echo "ok   find_package(profopt 0.1): built and ran"

if consumer "$work/later" 99.0; then
	echo "FAIL find_package(profopt 99.0) accepted version $(cat "$work/later/build/CMakeCache.txt" | grep -m1 profopt_VERSION)"
	exit 1
fi
grep -q "version: 0.1.0" "$work/later/configure.log" ||
	{ echo "FAIL find_package(profopt 99.0) failed, but not for the version: $(tail -n 5 "$work/later/configure.log")"; exit 1; }
echo "ok   find_package(profopt 99.0) refused: the installed package says version 0.1.0"

pc_dir=$(dirname "$(find "$work/prefix" -name profopt.pc | head -n 1)")
# shellcheck disable=SC2046
cc $(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags profopt) "$source" -o "$work/pc_use" \
	$(PKG_CONFIG_PATH=$pc_dir pkg-config --libs profopt)
LD_LIBRARY_PATH="$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=libdir profopt)" "$work/pc_use"
echo "ok   pkg-config profopt: built and ran"

# The Python module as installed: every module of the source package is there, and it
# loads the installed libprofopt; the GPU collector, when built, sits where the module and
# profopt-record look for it (next to libprofopt).
root=$(cd "$(dirname "$source")/../.." && pwd)
init=$(find "$work/prefix" -path '*/profopt/__init__.py' | head -n 1)
[ -n "$init" ] || { echo "FAIL the Python module is not installed"; exit 1; }
pydir=$(dirname "$init")
missing=""
for module in "$root"/tracepoints/python/profopt/*.py; do
	[ -e "$pydir/$(basename "$module")" ] || missing="$missing $(basename "$module")"
done
[ -z "$missing" ] || { echo "FAIL the installed Python module lacks:$missing"; exit 1; }
loaded=$(cd / && PYTHONPATH=$(dirname "$pydir") /usr/bin/python3 -c \
	'import profopt, profopt._pymem, profopt._gpu; from profopt._lib import LIB; print(LIB.path)')
case $loaded in
"$work/prefix"/*) echo "ok   the installed Python module has every module and loads $loaded" ;;
*) echo "FAIL the installed Python module loaded '$loaded', not the installed library"; exit 1 ;;
esac
if [ -e "$build/lib/libprofopt-cupti.so" ]; then
	collector="$(dirname "$loaded")/libprofopt-cupti.so.0"
	[ -e "$collector" ] || { echo "FAIL the GPU collector is not installed at $collector"; exit 1; }
	first=$(cd / && PYTHONPATH=$(dirname "$pydir") /usr/bin/python3 -c \
		'from profopt import _gpu; print(next(_gpu._candidates()))')
	[ "$first" = "$collector" ] ||
		{ echo "FAIL the module looks for the collector at $first, not $collector"; exit 1; }
	echo "ok   the GPU collector is installed next to libprofopt, where the module looks first"
fi
