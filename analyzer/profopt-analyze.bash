# bash completion for profopt-analyze: its options (from --help), the rules --set takes
# (from --list-rules), directories for TRACE_DIR and -o, files where a file is asked for.
# Installed into bash-completion's completions directory; works without bash-completion too.

_profopt_analyze()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local program=${COMP_WORDS[0]}

	case $prev in
	-o | --output | --baseline)
		COMPREPLY=($(compgen -d -- "$cur"))
		[ "$prev" = --baseline ] && COMPREPLY+=($(compgen -f -X '!*.json' -- "$cur"))
		return
		;;
	--config | --alerts)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--set)
		local rules
		rules=$("$program" --list-rules 2>/dev/null | cut -f1 | sed 's/$/=/')
		COMPREPLY=($(compgen -W "$rules" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
		;;
	--on-alert)
		COMPREPLY=($(compgen -c -- "$cur"))
		return
		;;
	--live)
		COMPREPLY=($(compgen -W "net://localhost/host/$(hostname)/" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
		;;
	-j | --jobs | --every | --recording | --ready-fd | --trace-done-fd | --timeline-steps | \
		--fail-if)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		local options
		options=$("$program" --help 2>/dev/null | grep -oE '^ +(-[A-Za-z], )?--[a-z-]+' |
			grep -oE -- '--[a-z-]+|-[A-Za-z]')
		COMPREPLY=($(compgen -W "$options" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -d -- "$cur"))
}
complete -F _profopt_analyze profopt-analyze
