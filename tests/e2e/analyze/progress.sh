#!/usr/bin/env bash
# progress.sh BIN_DIR: the progress line of profopt-analyze, on a recording of the simulator
# long enough to decode for a few tenths of a second. On a terminal (script(1)
# gives one) it is drawn on stderr and erased before the summary; with -q, when stderr is
# not a terminal, or for an analysis shorter than its delay (1 s), nothing is drawn.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-progress.XXXXXX)
trap 'rm -rf "$work"' EXIT
trace=$work/trace
"$bin/profopt-record" -o "$trace" -- "$bin/profopt-sim" --workers 2 --steps 1500 \
	--load-ms 0.2 --forward-ms 0.3 --backward-ms 0.3 --kernels 60 --gpu-ms 0.5 \
	>"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
failed=0
fail() {
	echo "FAIL $*"
	failed=$((failed + 1))
}

# on_terminal OUT ARGS...: profopt-analyze ARGS on a pseudo-terminal, what it showed in OUT
on_terminal() {
	local out=$1
	shift
	script -qec "$(printf '%q ' "$bin/profopt-analyze" "$@")" /dev/null >"$out" 2>&1
}

PROFOPT_PROGRESS_AFTER_MS=0 on_terminal "$work/tty" --json-only -o "$work/a" "$trace" ||
	fail "the analysis on a terminal failed: $(tail -c 300 "$work/tty")"
grep -qa $'\rprofopt-analyze: ' "$work/tty" || fail "no progress line on a terminal"
grep -qaE $'\rprofopt-analyze: decoding, [0-9.]+k events of about [0-9.]+[kM] \\([0-9]+%\\)' \
	"$work/tty" || fail "the progress line never counted decoded events: $(tr '\r' '\n' <"$work/tty" | head -5)"
# erased before the summary: \r and erase-to-end, then the summary's first line (the
# verdict, or before it the trace-quality section or how the run ended, which a recording
# can have: discarded events on a busy machine)
grep -qaE $'\r\033\\[K(Verdict|Trace quality|Run ended):' "$work/tty" ||
	fail "the progress line was not erased before the summary: $(cat -v "$work/tty" |
		grep -ao '.\{0,80\}\(Verdict\|Trace quality\|Run ended\):' | head -n 1)"
# The sampler's values are read before they are stamped; on a busy machine the stamp can
# come late, which is no damage (unit.model.processes, test_sample_stamped_late).
grep -qa 'implausible-values' "$work/tty" &&
	fail "an undamaged recording was said to hold values that cannot be physical: $(grep -a 'implausible-values' "$work/tty")"

PROFOPT_PROGRESS_AFTER_MS=0 on_terminal "$work/quiet" -q --json-only -o "$work/b" "$trace" ||
	fail "the quiet analysis failed"
[ -s "$work/quiet" ] && fail "-q on a terminal printed: $(head -c 200 "$work/quiet")"

PROFOPT_PROGRESS_AFTER_MS=0 "$bin/profopt-analyze" --json-only -o "$work/c" "$trace" \
	>/dev/null 2>"$work/pipe.err" || fail "the analysis without a terminal failed"
[ -s "$work/pipe.err" ] && fail "stderr that is not a terminal got: $(head -c 200 "$work/pipe.err")"

# an analysis shorter than the delay (set to 10 minutes: as if the trace were small)
PROFOPT_PROGRESS_AFTER_MS=600000 on_terminal "$work/short" --json-only -o "$work/d" "$trace" ||
	fail "the short analysis failed"
grep -qa $'\rprofopt-analyze: ' "$work/short" &&
	fail "a progress line for an analysis shorter than its delay"

[ "$failed" -eq 0 ] && echo "ok: progress"
[ "$failed" -eq 0 ]
