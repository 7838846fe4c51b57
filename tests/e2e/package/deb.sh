#!/usr/bin/env bash
# deb.sh SOURCE_DIR: the Debian packages from packaging/deb.sh, installed with apt-get and
# used from the installed files only, then removed. It all happens in a private mount
# namespace whose /usr, /var and /etc are overlays over the machine's, so the machine
# itself is not changed: apt-get installs both packages (profopt, profopt-dev), then
# profopt-record --check, a recording of the simulator (with a session daemon that
# profopt-record starts and stops), its report, the PyTorch sample recorded with Debian's
# python3-torch and the installed module, the module's library, and
# a C program built with pkg-config against profopt.h; then apt-get purges both and no
# file of theirs may be left.
set -u
src=$1
if [ "$(id -u)" -ne 0 ] || ! unshare --mount --propagation private true 2>/dev/null; then
	echo "deb.sh needs root and mount namespaces"
	exit 1
fi
work=$(mktemp -d /tmp/profopt-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
PROFOPT_DEB_BUILD_DIR=$work/build "$src/packaging/deb.sh" "$work/deb" >"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log"; exit 1; }

cp "$src/samples/pytorch/train.py" "$work/train.py"
cat >"$work/inside.sh" <<'INSIDE'
set -u
work=$1
fail() { echo "FAIL $*"; exit 1; }
for dir in usr var etc; do
	mkdir -p "$work/overlay/$dir/upper" "$work/overlay/$dir/work"
	mount -t overlay overlay -o "lowerdir=/$dir,upperdir=$work/overlay/$dir/upper,workdir=$work/overlay/$dir/work" "/$dir" ||
		fail "overlay over /$dir"
done
mkdir -p /run/lttng && mount -t tmpfs none /run/lttng && mount -t tmpfs none /dev/shm
export DEBIAN_FRONTEND=noninteractive LTTNG_HOME=$work/home HOME=$work/home
apt-get install -y -qq --no-install-recommends "$work"/deb/profopt_*.deb \
	"$work"/deb/profopt-dev_*.deb >"$work/apt.log" 2>&1 || fail "apt-get install: $(tail -n 5 "$work/apt.log")"
echo "ok   apt-get installed $(dpkg-query -W -f '${Package} ${Version}, ' profopt profopt-dev)"
dpkg -L profopt profopt-dev | sort -u >"$work/files"
cd "$work" || exit 1
export PATH=/usr/bin:/bin PYTHONPATH= PROFOPT_LIBRARY=
/usr/bin/profopt-record --check >check.log 2>&1 || fail "profopt-record --check: $(cat check.log)"
/usr/bin/profopt-record -o trace -- /usr/bin/profopt-sim --workers 2 --steps 120 --load-ms 5 \
	>record.log 2>&1 || fail "recording: $(tail -n 5 record.log)"
/usr/bin/profopt-analyze -o report trace >analyze.log 2>&1 || fail "analysis: $(tail -n 5 analyze.log)"
[ -s report/index.html ] && [ -s report/report.pdf ] || fail "no report"
steps=$(python3 -c 'import json; print(json.load(open("report/summary.json"))["steps"]["count"])')
[ "$steps" = 120 ] || fail "$steps steps in the report, want 120"
echo "ok   recorded and analysed with the installed programs: $steps steps"
/usr/bin/profopt-record -o torch-trace -- /usr/bin/python3 train.py --workers 2 --steps 40 \
	--slow-read-ms 2 >torch-record.log 2>&1 || fail "recording train.py: $(tail -n 5 torch-record.log)"
/usr/bin/profopt-analyze -o torch-report torch-trace >torch-analyze.log 2>&1 ||
	fail "analysing train.py: $(tail -n 5 torch-analyze.log)"
grep -q '^Verdict: ' torch-analyze.log || fail "no verdict for train.py"
echo "ok   the PyTorch sample recorded and analysed: $(grep '^Verdict: ' torch-analyze.log)"
lib=$(python3 -c 'import profopt; print(profopt.library_path())' 2>&1)
[ "$lib" = /usr/lib/x86_64-linux-gnu/libprofopt.so.0 ] || fail "the Python module loaded $lib"
echo "ok   the Python module in dist-packages loads $lib"
printf '#include <profopt.h>\nint main(void) { profopt_step_begin(0, 0, 1); profopt_step_end(0, 0, 1); return 0; }\n' >prog.c
# shellcheck disable=SC2046 # pkg-config's words
gcc prog.c -o prog $(pkg-config --cflags --libs profopt) 2>cc.log || fail "pkg-config build: $(cat cc.log)"
./prog || fail "the program built against profopt-dev does not run"
echo "ok   a C program builds with pkg-config profopt and runs"
[ -e /usr/share/bash-completion/completions/profopt-record ] || fail "no bash completion"
man -w profopt-analyze >/dev/null 2>&1 || [ -e /usr/share/man/man1/profopt-analyze.1 ] || fail "no man page"
apt-get purge -y -qq profopt-dev profopt >>"$work/apt.log" 2>&1 || fail "apt-get purge"
left=0
while read -r path; do
	[ -d "$path" ] && continue
	[ -e "$path" ] || [ -L "$path" ] || continue
	echo "left after purge: $path"
	left=$((left + 1))
done <"$work/files"
[ "$left" -eq 0 ] || fail "$left files left after apt-get purge"
echo "ok   apt-get purge removed every file"
INSIDE
unshare --mount --propagation private bash "$work/inside.sh" "$work"
