#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Puts the SPDX license line into every source file of agent-sandbox that lacks it:
#
#   scripts/spdx.sh            add the line where it is missing
#   scripts/spdx.sh --check    list the files without it; exit 1 when there are some
#
# Source files: *.java, *.c, *.h, *.sh, *.zsh, *.fish, Makefile, pom.xml, and the scripts
# without an extension that start with #! (.ci/run). The line goes first, or after a #!
# line or an <?xml ...?> declaration. Safe to run again, for example after a merge: a file
# that has the line is left as it is. SpdxTest checks the same set.
set -euo pipefail

die() {
    echo "spdx.sh: $*" >&2
    exit 1
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
check=false
case ${1-} in
    --check) check=true ;;
    "") ;;
    *) die "usage: scripts/spdx.sh [--check]" ;;
esac
id="SPDX-License-Identifier: Apache-2.0"

# The files, as git knows them (tracked, and new ones not ignored).
mapfile -t files < <(git ls-files --cached --others --exclude-standard | sort -u)
missing=0
for f in "${files[@]}"; do
    [[ -f $f && ! -L $f ]] || continue
    case ${f##*/} in
        *.java | *.c | *.h) comment="// $id" ;;
        *.sh | *.zsh | *.fish | Makefile) comment="# $id" ;;
        pom.xml) comment="<!-- $id -->" ;;
        *.*) continue ;;
        *)
            # a script without an extension
            [[ $(head -c 2 "$f") == "#!" ]] || continue
            comment="# $id"
            ;;
    esac
    if head -n 3 "$f" | grep -qF "$id"; then
        continue
    fi
    missing=$((missing + 1))
    if $check; then
        echo "$f"
        continue
    fi
    first=$(head -n 1 "$f")
    tmp=$(mktemp "$f.spdx.XXXXXX")
    if [[ $first == "#!"* || $first == "<?xml"* ]]; then
        { printf '%s\n%s\n' "$first" "$comment"; tail -n +2 "$f"; } >"$tmp"
    else
        { printf '%s\n' "$comment"; cat "$f"; } >"$tmp"
    fi
    chmod --reference="$f" "$tmp"
    mv "$tmp" "$f"
done
if $check; then
    [[ $missing -eq 0 ]] || die "$missing source files without '$id' (run scripts/spdx.sh)"
    echo "every source file has '$id'"
else
    echo "added '$id' to $missing files"
fi
