#!/usr/bin/env bash
# golden.sh BIN_DIR: analyses every committed torch.profiler trace (tests/data/kineto/NAME/,
# public traces with a README each) and compares its summary.json byte for byte with
# expected/NAME.summary.json, then checks the text summary against NAME/expect.txt: each
# line "must REGEX" must match a line of it, each "must-not REGEX" none.
#
# UPDATE_GOLDEN=1 rewrites the expected summaries from this build and then FAILS, so that
# it can never make a run pass: review the diff, commit it, and run again.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-golden-kineto.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
for trace in "$here"/*/; do
	name=$(basename "$trace")
	[ "$name" = expected ] && continue
	expected=$here/expected/$name.summary.json
	if ! "$bin/profopt-analyze" --json-only -o "$work/$name" "$trace" >"$work/$name.out" 2>&1; then
		failed=$((failed + 1))
		echo "FAIL $name: profopt-analyze failed: $(tail -n 1 "$work/$name.out")"
		continue
	fi
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$work/$name/summary.json" "$expected"
		echo "rewrote $expected"
		failed=$((failed + 1))
		continue
	fi
	ok=1
	if ! cmp -s "$work/$name/summary.json" "$expected"; then
		ok=0
		echo "FAIL $name: summary.json differs from $expected:"
		diff -u "$expected" "$work/$name/summary.json" | head -n 60
	fi
	while read -r rule pattern; do
		case $rule in
		must) grep -Eq -- "$pattern" "$work/$name.out" ||
			{ ok=0; echo "FAIL $name: the summary does not say /$pattern/"; } ;;
		must-not) ! grep -Eq -- "$pattern" "$work/$name.out" ||
			{ ok=0; echo "FAIL $name: the summary says /$pattern/"; } ;;
		'' | '#'*) ;;
		*) ok=0; echo "FAIL $name: expect.txt: unknown rule '$rule'" ;;
		esac
	done <"$trace/expect.txt"
	if [ $ok = 1 ]; then
		passed=$((passed + 1))
		echo "ok   $name"
	else
		failed=$((failed + 1))
		sed 's/^/    /' "$work/$name.out"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
