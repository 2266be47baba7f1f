# SPDX-License-Identifier: Apache-2.0
# Drives zsh's own completion system in a real interactive zsh, in a pseudo-terminal:
#
#   zsh -f zsh-harness.zsh FUNCTIONS-DIR OUT-FILE LINE...
#
# types each LINE and asks for a completion at its end (complete-word, what Tab does), and
# writes to OUT-FILE, for each LINE, "=== LINE", every match offered (one a line, with the
# part of the word before it that completion keeps), and "buffer: " with the line after
# the completion. The command mycmd completes "alpha beta", as a command's own completion.
zmodload zsh/zpty || exit 2
dir=$1 out=$2
shift 2
rm -f $out $out.done
zpty z zsh -f -i
zpty -w z "bindkey -e; PROMPT='> '; fpath=(${(q)dir} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "compdef '_values item alpha beta' mycmd"
zpty -w z "compadd() { local -a h; builtin compadd -A h \"\$@\"; (( \$#h )) && print -rl -- \"\${IPREFIX}\"\${^h} >> ${(q)out}; builtin compadd \"\$@\"; }"
zpty -w z "_harness_complete() { zle complete-word; print -r -- \"buffer: \$BUFFER\" >> ${(q)out}; print > ${(q)out}.done; }; zle -N _harness_complete; bindkey '^T' _harness_complete"
zpty -w z "zstyle ':completion:*' menu no; zstyle ':completion:*' list-prompt ''; LISTMAX=100000"
for line in "$@"; do
    print -r -- "=== $line" >> $out
    rm -f $out.done
    zpty -w -n z "$line"$'\x14'
    for i in {1..600}; do
        while zpty -r -t z o; do :; done
        [[ -e $out.done ]] && break
        sleep 0.1
    done
    [[ -e $out.done ]] || { print "zsh-harness: no completion in time for: $line" >&2; zpty -d z; exit 3; }
    zpty -w -n z $'\x15' # kill the line
done
zpty -d z
rm -f $out.done
exit 0
