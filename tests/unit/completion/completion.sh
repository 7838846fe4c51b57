#!/usr/bin/env bash
# completion.sh BIN_DIR SOURCE_DIR: sources analyzer/profopt.bash (without
# bash-completion) and checks what it
# offer: every option of each program's --help, the rules of --set, directories for
# TRACE_DIR, the values of --buffers, and the command after profopt-record's options.
set -u
bin=$1 src=$2
export PATH=$bin:$PATH
# shellcheck source=/dev/null
source "$src/analyzer/profopt.bash"
failed=0 passed=0
work=$(mktemp -d /tmp/profopt-completion.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/trace-one" "$work/trace-two" && touch "$work/file"

# complete FUNCTION WORD...: COMPREPLY for the last word of the line.
complete_line() {
	local function=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	"$function"
}

expect() { # expect WHAT WORD...: every WORD is offered
	local what=$1 word missing=
	shift
	for word in "$@"; do
		printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$word" || missing="$missing $word"
	done
	if [ -n "$missing" ]; then
		failed=$((failed + 1))
		echo "FAIL $what: missing$missing (offered: ${COMPREPLY[*]:0:20})"
	else
		passed=$((passed + 1))
		echo "ok   $what"
	fi
}

options_of() {
	"$1" --help | grep -oE '^ +(-[A-Za-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+'
}

complete_line _profopt_analyze profopt-analyze --
# shellcheck disable=SC2046 # one word per option
expect "profopt-analyze: every option of --help" $(options_of profopt-analyze)
expect "profopt-analyze: the live options" --live --every --alerts --on-alert --list-rules
complete_line _profopt_analyze profopt-analyze --set live.win
expect "profopt-analyze --set: the rules" live.window_s=
complete_line _profopt_analyze profopt-analyze --set input-bound.warn
expect "profopt-analyze --set: the offline rules" input-bound.warning_pct=
complete_line _profopt_analyze profopt-analyze "$work/trace-"
expect "profopt-analyze TRACE_DIR: directories" "$work/trace-one" "$work/trace-two"
complete_line _profopt_analyze profopt-analyze -o "$work/tr"
expect "profopt-analyze -o: directories" "$work/trace-one"

complete_line _profopt_record profopt-record --
# shellcheck disable=SC2046
expect "profopt-record: every option of --help" $(options_of profopt-record)
complete_line _profopt_record profopt-record --buffers ""
expect "profopt-record --buffers" uid pid
complete_line _profopt_record profopt-record --set live.clear
expect "profopt-record --set: the rules" live.clear_windows= live.clear_margin_pct=
complete_line _profopt_record profopt-record --live -o "$work/trace-one" profopt-an
expect "profopt-record: the command after its options" profopt-analyze
complete_line _profopt_record profopt-record --live -- profopt-si
expect "profopt-record: the command after --" profopt-sim
complete_line _profopt_record profopt-record --live profopt-sim --st
if [ "${#COMPREPLY[@]}" -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- --steps; then
	failed=$((failed + 1))
	echo "FAIL profopt-record offered the command's option as its own"
else
	passed=$((passed + 1))
	echo "ok   profopt-record: the command's own arguments are not its options"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
