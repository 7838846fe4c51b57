# lib.sh: sourced by the end-to-end analyzer tests once $bin and $work are set.
# analyzer ARGS... runs $bin/profopt-analyze; with PROFOPT_VALGRIND=1 it runs under valgrind
# memcheck, which follows the forked analysis child, with one log per process in
# $work/valgrind/. "${analyzer_command[@]}" is the same command, for timeout(1). No vgdb
# server (--vgdb=no): its shared-memory file in /tmp is named by pid, and a test that runs
# the analyzer as nobody in a fresh PID namespace can meet a root-owned one of an earlier run.
# valgrind_verdict (called at the end) fails the test on any memcheck error or definite
# leak in those logs (leaks inside system libraries: tests/lib/valgrind.supp).
# expect_exit, contains and holds check one thing each and report it through the ok and
# fail functions that the test defines.
analyzer_command=("$bin/profopt-analyze")
if [ "${PROFOPT_VALGRIND:-0}" = 1 ]; then
	mkdir -p "$work/valgrind"
	analyzer_command=(valgrind --tool=memcheck --vgdb=no --trace-children=yes --leak-check=full
		--errors-for-leak-kinds=definite --show-leak-kinds=definite --error-exitcode=99
		--suppressions="$(dirname "${BASH_SOURCE[0]}")/../../lib/valgrind.supp"
		--log-file="$work/valgrind/%p.log" "$bin/profopt-analyze")
fi

analyzer() {
	"${analyzer_command[@]}" "$@"
}

valgrind_verdict() {
	[ "${PROFOPT_VALGRIND:-0}" = 1 ] || return 0
	local bad
	if ! ls "$work"/valgrind/*.log >/dev/null 2>&1; then
		echo "FAIL valgrind: no logs"
		return 1
	fi
	bad=$(grep -L "ERROR SUMMARY: 0 errors" "$work"/valgrind/*.log)
	if [ -n "$bad" ]; then
		echo "FAIL valgrind: memcheck errors:"
		for log in $bad; do grep -A30 -m1 -E "^==[0-9]+== [A-Z0-9]" "$log"; done
		return 1
	fi
	echo "ok   valgrind: $(ls "$work"/valgrind/*.log | wc -l) processes, 0 errors"
}

# expect_exit STATUS DESCRIPTION ARGS...: profopt-analyze ARGS -q, its exit status and, when
# it fails, one line on stderr ($work/err; stdout in $work/out).
expect_exit() {
	local want=$1 what=$2
	shift 2
	analyzer "$@" -q >"$work/out" 2>"$work/err"
	local got=$?
	if [ "$got" -eq "$want" ] && { [ "$want" -eq 0 ] || [ "$(wc -l <"$work/err")" -eq 1 ]; }; then
		ok "$what ($got): $(cat "$work/err")"
	else
		fail "$what: status $got, want $want; stderr: $(cat "$work/err")"
	fi
}

# contains FILE TEXT DESCRIPTION
contains() { grep -qF -- "$2" "$1" && ok "$3" || fail "$3: $1 lacks \"$2\": $(head -c 300 "$1")"; }

# holds TEXT DESCRIPTION FILE...: every FILE still holds exactly TEXT (nothing removed it).
holds() {
	local text=$1 what=$2 file
	shift 2
	for file in "$@"; do
		if [ "$(cat "$file" 2>/dev/null)" != "$text" ]; then
			fail "$what: $file was removed or changed: $(ls -la "$(dirname "$file")")"
			return
		fi
	done
	ok "$what: $* intact"
}
