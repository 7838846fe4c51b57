#!/usr/bin/env bash
# packaging/deb.sh [OUT_DIR]: builds profopt for /usr in build-deb/ and makes its Debian
# packages with cpack: OUT_DIR/profopt_VERSION_amd64.deb and profopt-dev_VERSION_amd64.deb
# (default OUT_DIR: out/deb). Installs what is missing to build, as samples/demo.sh does.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/out/deb}
build=${PROFOPT_DEB_BUILD_DIR:-$root/build-deb}

"$root/tests/lib/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
	-DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
ls "$out"/*.deb
