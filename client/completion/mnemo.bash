# bash completion for mnemo, installed with the client
# (PREFIX/share/bash-completion/completions/mnemo).
#
# Commands and options are read from mnemo's own help, so a new command or
# option completes without a change here; session ids come from
# 'mnemo sessions' (with the connection options already on the line, in
# any of their spellings: -d DB, -dDB, --dbname DB, --dbname=DB, DB a name,
# a connection string or a postgresql:// URI).

# The commands of 'mnemo --help' (MNEMO: the command to ask), and help.
_mnemo_commands() {
	"$1" --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
	echo help
}

# The session ids 'mnemo sessions' lists (MNEMO, then the connection
# options).
_mnemo_sessions() {
	"$@" sessions 2>/dev/null | awk 'NR > 1 { print $1 }'
}

# Bash splits the line at the characters of COMP_WORDBREAKS, '=', ':' and
# '@' among them: '-d postgresql://u@h:5432/db' reaches a completion as
# -d postgresql : //u @ h : 5432/db.  Without bash-completion, glue back
# into one word what no blank separates in the line (COMP_LINE), as its
# '_init_completion -n =:@' does, so that a URI or --dbname=DB is one word:
# words, cword, cur and prev of _mnemo.
_mnemo_words() {
	local line=$COMP_LINE i w j=-1 blank
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		[[ $line == [[:blank:]]* ]] && blank=1 || blank=
		line=${line#*"$w"}
		if ((j >= 1)) && [ -z "$blank" ] && [[ $w == +([=:@]) || ${words[j]} == *[=:@] ]]; then
			words[j]+=$w
		else
			words[++j]=$w
		fi
		((i == COMP_CWORD)) && cword=$j
	done
	cur=${words[cword]}
	prev=${words[cword - 1]}
}

# Bash replaces only the part of the word after its last break character,
# so each reply loses what comes before it in cur (bash-completion's
# __ltrim_colon_completions, for '=' and '@' too).
_mnemo_ltrim() {
	local breaks=${COMP_WORDBREAKS//[^=:@]/} head
	[ -n "$breaks" ] || return
	head=${cur%"${cur##*[$breaks]}"}
	if [ -n "$head" ]; then
		COMPREPLY=("${COMPREPLY[@]#"$head"}")
	fi
}

_mnemo() {
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		# 1: it completed a redirection's file name itself
		_init_completion -n =:@ || return
	else
		_mnemo_words
	fi
	_mnemo_reply
	_mnemo_ltrim
}

# A word as the command will get it: bash hands a completion the words of
# the line as typed, so -d 'postgresql://...' arrives with its quotes.
# Quotes around the whole word go, and so do backslash escapes outside
# them; nothing is expanded.
_mnemo_dequote() {
	local w=$1
	case $w in
	\'*\') w=${w:1:${#w}-2} ;;
	\"*\") w=${w:1:${#w}-2} w=${w//\\\"/\"} ;;
	*\\*) w=$(printf '%s' "$w" | sed 's/\\\(.\)/\1/g') ;;
	esac
	printf '%s' "$w"
}

# The replies for the words _mnemo has read.
_mnemo_reply() {
	local mnemo=${words[0]} cmd= conn=() args=() i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-d | --dbname | --db | -h | --host | -p | --port | -U | --username)
			conn+=("${words[i]}" "$(_mnemo_dequote "${words[i + 1]}")")
			((i++))
			;;
		--dbname=* | --db=* | --host=* | --port=* | --username=*)
			conn+=("${words[i]%%=*}=$(_mnemo_dequote "${words[i]#*=}")")
			;;
		-d?* | -h?* | -p?* | -U?*)
			conn+=("${words[i]:0:2}$(_mnemo_dequote "${words[i]:2}")")
			;;
		-*) ;;
		*) if [ -z "$cmd" ]; then cmd=${words[i]}; else args+=("${words[i]}"); fi ;;
		esac
	done
	case $prev in
	-d | --dbname | --db | -h | --host | -p | --port | -U | --username | --limit | --budget | \
		--level | --tail | --after | --model | --system | --base-url | --api-key | --context-limit | --add | \
		--id | --continuation | --max-turns | --max-retries | --timeout-ms | --concurrency | \
		--lease-ms | --max-items | --threshold)
		return
		;;
	--template | --items | --schema)
		_filedir 2>/dev/null || COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--provider)
		COMPREPLY=($(compgen -W "openai anthropic" -- "$cur"))
		return
		;;
	--format)
		COMPREPLY=($(compgen -W "mnemo claude-code pi openai anthropic swe-agent openhands" -- "$cur"))
		return
		;;
	--session)
		COMPREPLY=($(compgen -W "$(_mnemo_sessions "$mnemo" "${conn[@]}")" -- "$cur"))
		return
		;;
	esac
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--dbname --host --port --username --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_mnemo_commands "$mnemo")" -- "$cur"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$mnemo" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z-]*' | sort -u) --help" -- "$cur"))
		return
	fi
	# fork SOURCE AT, resume SESSION CHECKPOINT: the session's checkpoint labels
	if [[ $cmd == fork || $cmd == resume ]] && [ ${#args[@]} -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$mnemo" "${conn[@]}" checkpoints "${args[0]}" 2>/dev/null | cut -f2)" -- "$cur"))
		return
	fi
	[[ $cmd == fork ]] && [ ${#args[@]} -ge 2 ] && return
	case $cmd in
	import | file) _filedir 2>/dev/null || COMPREPLY=($(compgen -f -- "$cur")) ;;
	help) [ ${#args[@]} -eq 0 ] && COMPREPLY=($(compgen -W "$(_mnemo_commands "$mnemo")" -- "$cur")) ;;
	sessions | chat) ;;
	map) [ "${words[cword - 1]}" = map ] && COMPREPLY=($(compgen -W "status resume" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -W "$(_mnemo_sessions "$mnemo" "${conn[@]}")" -- "$cur")) ;;
	esac
}
complete -F _mnemo mnemo
