# bash completion for profopt-analyze and profopt-record, one file installed under both
# names into bash-completion's completions directory (it loads the file named after the
# program); works without bash-completion too. Options come from each program's --help,
# the rules --set takes from profopt-analyze --list-rules.

# Each option of a program's --help, for COMPREPLY.
_profopt_options()
{
	"$1" --help 2>/dev/null | grep -oE '^ +(-[A-Za-z], )?--[a-z-]+' |
		grep -oE -- '--[a-z-]+|-[A-Za-z]'
}

# RULE.KEY= of every rule, for --set.
_profopt_rules()
{
	profopt-analyze --list-rules 2>/dev/null | cut -f1 | sed 's/$/=/'
}

# profopt-analyze: directories for TRACE_DIR and -o, files where a file is asked for.
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
		COMPREPLY=($(compgen -W "$(_profopt_rules)" -- "$cur"))
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
	-j | --jobs | --every | --recording | --ready-fd | --trace-done-fd | --timeline-steps | --steps-in | \
		--fail-if)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_profopt_options "$program")" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -d -- "$cur"))
}
complete -F _profopt_analyze profopt-analyze

# profopt-record: its options until the command, then the command and its own arguments
# (bash-completion's _command_offset when it is loaded).
_profopt_record()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local program=${COMP_WORDS[0]} i

	# Past "--" or the first word that is not an option (or an option's value): the command.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--)
			break
			;;
		-o | --output | --buffers | --subbuf-size | --num-subbuf | --sample-ms | --alerts | \
			--on-alert | --every | --live-timer | --set)
			((i++))
			;;
		-*) ;;
		*)
			break
			;;
		esac
	done
	if [ "$i" -lt "$COMP_CWORD" ]; then
		[ "${COMP_WORDS[i]}" = -- ] && ((i++))
		if [ "$i" -lt "$COMP_CWORD" ] && declare -F _command_offset >/dev/null; then
			_command_offset "$i"
		elif [ "$i" -eq "$COMP_CWORD" ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return
	fi
	case $prev in
	-o | --output)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--alerts)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--buffers)
		COMPREPLY=($(compgen -W "uid pid" -- "$cur"))
		return
		;;
	--set)
		COMPREPLY=($(compgen -W "$(_profopt_rules)" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
		;;
	--on-alert)
		COMPREPLY=($(compgen -c -- "$cur"))
		return
		;;
	--subbuf-size | --num-subbuf | --sample-ms | --every | --live-timer)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_profopt_options "$program") --" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -c -- "$cur"))
}
complete -F _profopt_record profopt-record
