# SPDX-License-Identifier: Apache-2.0
# Runs agent-sandbox's bash completion function the way bash's programmable completion
# calls it (COMP_LINE, COMP_POINT, COMP_WORDS split at COMP_WORDBREAKS, COMP_CWORD):
#
#   bash --norc bash-harness.sh COMPLETION-FILE LINE...
#
# prints, for each LINE, "=== LINE" and every match (COMPREPLY). WORDBREAKS in the
# environment replaces COMP_WORDBREAKS. The commands mycmd and mycmd2 have completions
# of their own: a word list (alpha beta) and a function (one two).
set -u
source "$1"
shift
complete -W 'alpha beta' mycmd
_mycmd2() { COMPREPLY=($(compgen -W "one two" -- "$2")); }
complete -F _mycmd2 mycmd2
[[ -n ${WORDBREAKS-} ]] && COMP_WORDBREAKS=$WORDBREAKS
for line in "$@"; do
    echo "=== $line"
    COMP_LINE=$line
    COMP_POINT=${#line}
    # bash's words: split at blanks, and at the COMP_WORDBREAKS characters, kept as words
    COMP_WORDS=()
    word=
    for ((k = 0; k < ${#line}; k++)); do
        c=${line:k:1}
        if [[ $c == [[:blank:]] ]]; then
            [[ -n $word ]] && COMP_WORDS+=("$word")
            word=
        elif [[ $COMP_WORDBREAKS == *"$c"* ]]; then
            [[ -n $word ]] && COMP_WORDS+=("$word")
            COMP_WORDS+=("$c")
            word=
        else
            word+=$c
        fi
    done
    COMP_WORDS+=("$word")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _agent_sandbox agent-sandbox "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
done
exit 0
