#!/usr/bin/env bash
# bad_text.sh BIN SOURCE_DIR: text from a trace that is not valid, printable UTF-8
# (docs/robustness.md, "Text from traces"), and an output that cannot be written.
# - a copy of the committed pytorch-hotspots trace whose strings are patched in place (same
#   length): a file name with one flipped byte (0x68 'h' -> 0xE8), function names holding
#   U+FDD0 and U+FFFE, one holding CSI clear-screen and OSC window-title sequences, the
#   procname context holding ESC and 0x01, and an event class's name in the metadata
#   holding ESC. The analysis succeeds, every output is written,
#   index.html is well-formed XML, summary.json is strict JSON, stdout is valid UTF-8
#   without a control character, and the bad bytes show as U+FFFD;
# - the committed trace with index.html over the file size limit (RLIMIT_FSIZE, SIGXFSZ
#   ignored: a full disk): exit 5 with one line naming DIR/index.html and its cause (no
#   libxml2 "I/O error" line), and the other outputs written and listed in the manifest;
# - --merge of partial summaries whose host names hold controls, invalid bytes and 60
#   bytes of Japanese: stdout (its ranks table cuts the host at 16 bytes) is valid UTF-8
#   without a control character, summary.json strict JSON.
set -u
bin=$1
source_dir=$2
work=$(mktemp -d /tmp/profopt-bad-text.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# Replaces NUL-terminated strings of the stream files in place: OLD=NEW pairs (hex); a
# pair written meta:OLD=NEW replaces bytes of the metadata files instead.
patch_strings() {
	/usr/bin/python3 - "$@" <<'PY'
import os, sys
root, pairs = sys.argv[1], [p.split("=") for p in sys.argv[2:]]
for old, new in pairs:
    meta = old.startswith("meta:")
    end = b"" if meta else b"\0"
    old, new = bytes.fromhex(old[5:] if meta else old) + end, bytes.fromhex(new) + end
    assert meta or len(old) == len(new)
    count = 0
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            if (name == "metadata") != meta or name.endswith(".idx"):
                continue
            data = open(path, "rb").read()
            count += data.count(old)
            open(path, "wb").write(data.replace(old, new))
    if not count:
        sys.exit("no string %r in the trace" % old)
PY
}
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }

# Checks that FILE is valid UTF-8 without C0/C1 controls (but newlines) or DEL.
printable() {
	/usr/bin/python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: raises on invalid bytes
bad = re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff]", text)
sys.exit("control or noncharacter U+%04X at %d" % (ord(bad.group()), bad.start()) if bad else 0)
PY
}

# check_trace NAME OLD=NEW...: a copy of pytorch-hotspots with those strings patched,
# analysed into $work/NAME; every output written and readable, stdout and stderr printable.
check_trace() {
	local name=$1 trace=$work/$1-trace status file
	shift
	cp -r "$source_dir/tests/data/traces/pytorch-hotspots" "$trace"
	patch_strings "$trace" "$@" || exit 1
	analyzer -o "$work/$name" "$trace" >"$work/$name.out" 2>"$work/$name.err"
	status=$?
	[ "$status" = 0 ] && ok "$name: the analysis succeeds" ||
		fail "$name: exit $status: $(head -c 400 "$work/$name.err")"
	for file in index.html report.pdf summary.json timeline.json pipeline.svg; do
		[ -s "$work/$name/$file" ] || fail "$name: no $file"
	done
	[ -s "$work/$name/index.html" ] && [ -s "$work/$name/report.pdf" ] &&
		ok "$name: every output written"
	if command -v xmllint >/dev/null; then
		xmllint --noout "$work/$name/index.html" 2>"$work/xmllint" &&
			ok "$name: index.html is well-formed XML" ||
			fail "$name: index.html is not well-formed: $(head -c 300 "$work/xmllint")"
	else
		echo "skip xmllint: not installed (apt-get install libxml2-utils)"
	fi
	/usr/bin/python3 -c 'import json, sys
for path in sys.argv[1:]: json.load(open(path, encoding="utf-8"))' \
		"$work/$name/summary.json" "$work/$name/timeline.json" &&
		ok "$name: summary.json and timeline.json are JSON" ||
		fail "$name: summary.json or timeline.json is not JSON"
	printable "$work/$name.out" && ok "$name: stdout is valid UTF-8, no control character" ||
		fail "$name: stdout holds what a terminal would obey"
	printable "$work/$name.err" && ok "$name: stderr is valid UTF-8, no control character" ||
		fail "$name: stderr holds what a terminal would obey"
}

# Bytes that are not valid UTF-8, and noncharacters.
check_trace invalid \
	"$(hex /work/main/tests/workloads/hotspots_workers.py)=$(hex /work/main/tests/workloads/)e8$(hex otspots_workers.py)" \
	"$(hex augment_record)=$(hex au)efb790$(hex nt_record)" \
	"$(hex normalize_record)=$(hex nor)efbfbe$(hex ize_record)"
grep -qF "$(printf '\xef\xbf\xbdotspots_workers.py')" "$work/invalid.out" &&
	grep -qF "$(printf 'au\xef\xbf\xbdnt_record')" "$work/invalid.out" &&
	grep -qF "$(printf 'nor\xef\xbf\xbdize_record')" "$work/invalid.out" &&
	ok "invalid: the bad byte and the noncharacters show as U+FFFD" ||
	fail "invalid: the cleaned names are not on stdout"
# Control characters in valid UTF-8: a function name, the procname context, and the
# metadata's name of an event class (named in a warning as unknown).
check_trace controls \
	"$(hex Connection._recv)=1b$(hex '[2J')1b$(hex ']0;pwned')07$(hex cv)" \
	"$(hex python3)=$(hex py)1b01$(hex on3)" \
	"meta:$(hex '"profopt:epoch_begin"')=$(hex '"profopt:ep')1b$(hex '[2Jbegin"')"
grep -qF "$(printf '\xef\xbf\xbd[2J\xef\xbf\xbd]0;pwned\xef\xbf\xbdcv')" "$work/controls.out" &&
	ok "controls: CSI and OSC sequences are shown, not obeyed" ||
	fail "controls: the escape sequences were not replaced"
grep -qF "$(printf 'profopt:ep\xef\xbf\xbd[2Jbegin')" "$work/controls.out" &&
	ok "controls: the event class's name in the warning is clean" ||
	fail "controls: the unknown event class is not named cleanly"

# index.html cannot be written whole (it is the largest output by far).
pdf_bytes=$(stat -c %s "$work/r/report.pdf" 2>/dev/null || echo 262144)
limit_kib=$((pdf_bytes / 1024 + 64))
(
	trap '' XFSZ
	ulimit -f "$limit_kib"
	analyzer -o "$work/full" "$source_dir/tests/data/traces/pytorch-hotspots" >"$work/out" \
		2>"$work/err"
)
status=$?
[ "$status" = 5 ] && ok "an output that cannot be written: exit 5" ||
	fail "exit $status, expected 5: $(head -c 400 "$work/err")"
[ "$(wc -l <"$work/err")" = 1 ] && grep -qF "$work/full/index.html: File too large" "$work/err" &&
	grep -qF "the other outputs were written to $work/full" "$work/err" &&
	ok "one line names index.html, its cause and where the others are" ||
	fail "stderr: $(head -c 600 "$work/err")"
grep -q "I/O error" "$work/err" && fail "libxml2's own message printed" || ok "no libxml2 line"
[ ! -e "$work/full/index.html" ] && [ -s "$work/full/report.pdf" ] && [ -s "$work/full/summary.json" ] &&
	grep -qx summary.json "$work/full/.profopt-report" && ! grep -qx index.html "$work/full/.profopt-report" &&
	ok "the other outputs are written and listed; index.html is not" ||
	fail "outputs: $(ls -A "$work/full" 2>&1 | tr '\n' ' ')"
grep -q "^Verdict:" "$work/out" && ok "the text summary is printed" || fail "no text summary"

# --merge of partials whose host names hold controls, bad bytes and long Japanese.
/usr/bin/python3 "$source_dir/tests/lib/synth_partials.py" "$work/parts" 4 --ranks-per-host 2 \
	--steps 40 >/dev/null || exit 1
/usr/bin/python3 - "$work"/parts/*.json <<'PY'
import json, sys
hosts = ["\x1b]0;pwned\x07host\x1b[2J", "\u65e5\u672c\u8a9e" * 20]
for i, path in enumerate(sys.argv[1:]):
    part = json.load(open(path))
    for rank in part["ranks"]:
        rank["host"] = hosts[i % 2]
    json.dump(part, open(path, "w"))
PY
analyzer --merge -o "$work/merged" "$work"/parts/*.json >"$work/out" 2>"$work/err"
status=$?
[ "$status" = 0 ] && ok "--merge succeeds" || fail "--merge exit $status: $(head -c 400 "$work/err")"
printable "$work/out" && ok "--merge stdout: valid UTF-8, no control character" ||
	fail "--merge stdout holds what a terminal would obey"
/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
	"$work/merged/summary.json" && ok "--merge summary.json is JSON" || fail "--merge summary.json"

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
