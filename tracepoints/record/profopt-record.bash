# bash completion for profopt-record: its options (from --help) until the command, then the
# command and its own arguments (bash-completion's _command_offset when it is loaded).
# Installed into bash-completion's completions directory; works without bash-completion too.

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
		local rules
		rules=$(profopt-analyze --list-rules 2>/dev/null | cut -f1 | sed 's/$/=/')
		COMPREPLY=($(compgen -W "$rules" -- "$cur"))
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
		local options
		options=$("$program" --help 2>/dev/null | grep -oE '^ +(-[A-Za-z], )?--[a-z-]+' |
			grep -oE -- '--[a-z-]+|-[A-Za-z]')
		COMPREPLY=($(compgen -W "$options --" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -c -- "$cur"))
}
complete -F _profopt_record profopt-record
