#!/usr/bin/env bash
# Staging directories that profopt-analyze did not make are left alone. In a directory
# that another user can write (a sticky world-writable one, like /tmp), that user plants
# what a dead run would leave beside the report directory, .r.profopt-PID-START-XXXXXX/
# with a manifest, a mark and a symbolic link to a directory of root's: the next run, with
# or without --force, removes, moves and follows nothing of it, writes its report, and
# says in one line which directory it left alone and why. Directories made by this user
# (mode 0755, its own marks) are still recovered. Needs root (it plants as nobody).
set -u
bin=$1
trace=$2
[ "$(id -u)" -eq 0 ] || { echo "SKIP: plants files as another user, which needs root"; exit 77; }
work=$(mktemp -d /tmp/profopt-planted.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

chmod 1777 "$work" # like /tmp: anyone may create entries, only their owner rename them
[ -d "$work/valgrind" ] && chmod 777 "$work/valgrind"
sh -c 'exit 0' &
dead_pid=$!
wait "$dead_pid"

# root's files, outside any report: what the planted links point to.
mkdir -m 755 "$work/victim"
echo "root's" >"$work/victim/file"
echo "root's" >"$work/victim/summary.json"
victim_intact() { holds "root's" "$1" "$work/victim/file" "$work/victim/summary.json"; }

# plant NAME MARK...: as nobody, a staging directory beside DIR=r named after the dead
# run, holding the marks named, a manifest that lists lnk/file and summary.json, and
# lnk -> victim.
plant() {
	local dir="$work/.r.profopt-$dead_pid-1-$1"
	shift
	as_nobody mkdir -m 755 "$dir" || return 1
	as_nobody sh -c 'cd "$1" && shift && printf "profopt-report/1\nlnk/file\nsummary.json\n" >.profopt-report &&
		echo planted >summary.json && echo planted >notes.txt && ln -s "$0" lnk &&
		for mark in "$@"; do touch "$mark"; done' "$work/victim" "$dir" "$@"
}
left_alone() {
	[ -d "$work/.r.profopt-$dead_pid-1-$1" ] && [ -L "$work/.r.profopt-$dead_pid-1-$1/lnk" ] &&
		[ -f "$work/.r.profopt-$dead_pid-1-$1/notes.txt" ] && ok "$2: the planted directory is left alone" ||
		fail "$2: the planted directory was touched: $(ls -la "$work/.r.profopt-$dead_pid-1-$1" 2>&1)"
}

# 1. The issue's case: a planted "earlier report caught in a commit" (no staging mark)
# beside an existing report directory, and a run without --force.
mkdir "$work/r"
plant AAAAAA .profopt-replaced
analyzer "$trace" -o "$work/r" >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 0 ] && ok "a run beside a planted directory writes its report" ||
	fail "a run beside a planted directory: status $status: $(cat "$work/err")"
victim_intact "planted earlier report"
left_alone AAAAAA "planted earlier report"
[ ! -e "$work/r/notes.txt" ] && ok "nothing planted was moved into the report directory" ||
	fail "the planted notes.txt was moved into $work/r"
[ "$(wc -l <"$work/err")" -eq 1 ] && ok "one line on stderr: $(cat "$work/err")" ||
	fail "stderr is not one line: $(cat "$work/err")"
contains "$work/err" "$work/.r.profopt-$dead_pid-1-AAAAAA" "the warning names the directory"
contains "$work/err" "not owned by" "the warning says why"

# 2. The same with --force, and a planted incomplete staging directory (its mark) too.
plant BBBBBB .profopt-staging
analyzer "$trace" -o "$work/r" --force -q >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 0 ] && [ ! -s "$work/err" ] && ok "--force beside planted directories (-q: nothing said)" ||
	fail "--force beside planted directories: status $status: $(cat "$work/err")"
victim_intact "--force"
left_alone AAAAAA "--force, planted earlier report"
left_alone BBBBBB "--force, planted staging directory"

# 3. No report directory: a planted earlier report is not put in its place.
rm -rf "$work/r"
analyzer "$trace" -o "$work/r" -q >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 0 ] && [ -f "$work/r/summary.json" ] && [ ! -e "$work/r/lnk" ] &&
	[ ! -e "$work/r/notes.txt" ] && ok "the report directory is the run's own, not the planted one" ||
	fail "no report directory: status $status, $(ls -la "$work/r" 2>&1): $(cat "$work/err")"
[ "$(stat -c %u "$work/r")" -eq 0 ] && ok "the report directory is owned by root" ||
	fail "the report directory is owned by uid $(stat -c %u "$work/r")"
victim_intact "no report directory"
left_alone AAAAAA "no report directory"

# 4. root's own directory, but writable by anyone (mode 0777), with root's marks: left alone.
mkdir -m 777 "$work/.r.profopt-$dead_pid-1-CCCCCC"
chmod 777 "$work/.r.profopt-$dead_pid-1-CCCCCC"
touch "$work/.r.profopt-$dead_pid-1-CCCCCC/.profopt-staging"
analyzer "$trace" -o "$work/r" --force >"$work/out" 2>"$work/err"
[ -d "$work/.r.profopt-$dead_pid-1-CCCCCC" ] && ok "a staging directory others can write is left alone" ||
	fail "a staging directory others can write was removed"
contains "$work/err" "writable by others" "the warning says it is writable by others"

# 5. root's directory whose mark is a link to a file of root's: left alone.
mkdir -m 755 "$work/.r.profopt-$dead_pid-1-DDDDDD"
ln -s "$work/victim/file" "$work/.r.profopt-$dead_pid-1-DDDDDD/.profopt-staging"
analyzer "$trace" -o "$work/r" --force -q >"$work/out" 2>"$work/err"
[ -L "$work/.r.profopt-$dead_pid-1-DDDDDD/.profopt-staging" ] &&
	ok "a staging directory whose mark is a link is left alone" ||
	fail "a staging directory whose mark is a link was removed"
victim_intact "a mark that is a link"

# 6. A staging name that is a link to a directory of root's with a real mark: left alone.
mkdir -m 755 "$work/roots-dir"
touch "$work/roots-dir/.profopt-staging" "$work/roots-dir/keep"
as_nobody ln -s "$work/roots-dir" "$work/.r.profopt-$dead_pid-1-EEEEEE"
analyzer "$trace" -o "$work/r" --force -q >"$work/out" 2>"$work/err"
[ -f "$work/roots-dir/keep" ] && [ -L "$work/.r.profopt-$dead_pid-1-EEEEEE" ] &&
	ok "a staging name that is a link is left alone, and its target" ||
	fail "a staging name that is a link was followed: $(ls -la "$work/roots-dir")"

# 7. root's own staging directory of a dead run, mode 0755 with its mark: recovered. Its
# link (which profopt never makes) is removed as a link, not followed.
mkdir -m 755 "$work/.r.profopt-$dead_pid-1-FFFFFF"
touch "$work/.r.profopt-$dead_pid-1-FFFFFF/.profopt-staging"
ln -s "$work/victim" "$work/.r.profopt-$dead_pid-1-FFFFFF/lnk"
analyzer "$trace" -o "$work/r" --force -q >"$work/out" 2>"$work/err"
[ ! -e "$work/.r.profopt-$dead_pid-1-FFFFFF" ] && ok "root's own dead staging directory is removed" ||
	fail "root's own dead staging directory is left: $(ls -la "$work/.r.profopt-$dead_pid-1-FFFFFF")"
victim_intact "root's own dead staging directory with a link"

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
