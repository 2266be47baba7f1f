#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the agent-sandbox app image this script sits in, or removes an install.
# Needs no JDK and no build tools: the image carries its own Java runtime.
#
#   install.sh [--prefix DIR]               install
#   install.sh --uninstall [--prefix DIR]   remove what an install put there
#
# The image goes to DIR/lib/agent-sandbox (an older install there is replaced at
# once, never half-copied), DIR/bin/agent-sandbox links to its launcher, and the man
# page and completions are linked into DIR/share. DIR defaults to ~/.local, or
# /usr/local as root; an installed copy of this script uninstalls from its own DIR.
set -euo pipefail

die() {
    echo "agent-sandbox: $*" >&2
    exit 1
}

usage() {
    cat <<'USAGE'
usage: install.sh [--prefix DIR] [--uninstall]

Installs agent-sandbox into DIR/lib/agent-sandbox, with the command DIR/bin/agent-sandbox,
the man page DIR/share/man/man1/agent-sandbox.1 and bash, zsh and fish completions under
DIR/share. DIR defaults to ~/.local, or /usr/local when run as root.
--uninstall removes all of it again.
USAGE
}

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=""
uninstall=false
while [[ $# -gt 0 ]]; do
    case $1 in
        --prefix)
            [[ $# -ge 2 && -n $2 ]] || die "--prefix needs a directory"
            prefix=$2
            shift 2
            ;;
        --prefix=*)
            prefix=${1#--prefix=}
            [[ -n $prefix ]] || die "--prefix needs a directory"
            shift
            ;;
        --uninstall)
            uninstall=true
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            die "unknown argument '$1' (usage: install.sh [--prefix DIR] [--uninstall])"
            ;;
    esac
done
if [[ -z $prefix && $uninstall == true && $self == */lib/agent-sandbox ]]; then
    prefix=${self%/lib/agent-sandbox}
    prefix=${prefix:-/}
fi
if [[ -z $prefix ]]; then
    if [[ $(id -u) -eq 0 ]]; then
        prefix=/usr/local
    else
        [[ -n ${HOME:-} ]] || die "HOME is not set; give the install location with --prefix DIR"
        prefix=$HOME/.local
    fi
fi

# The files linked into DIR/share, relative to the image's share/ and to DIR/share.
shared=(
    man/man1/agent-sandbox.1
    bash-completion/completions/agent-sandbox
    zsh/site-functions/_agent-sandbox
    fish/vendor_completions.d/agent-sandbox.fish
)
# Directories an install may create, deepest first: an uninstall removes those left empty
# that the install created (recorded in lib/agent-sandbox/created-directories).
directories=(
    share/man/man1 share/man share/bash-completion/completions share/bash-completion
    share/zsh/site-functions share/zsh share/fish/vendor_completions.d share/fish share bin lib
)

# ---------------------------------------------------------------- uninstall

if $uninstall; then
    [[ -d $prefix ]] || die "nothing to uninstall: $prefix does not exist"
    prefix=$(cd "$prefix" && pwd)
    target=$prefix/lib/agent-sandbox
    [[ -x $target/bin/agent-sandbox ]] || die "no agent-sandbox installed in $prefix (no $target)"
    created=()
    [[ -f $target/created-directories ]] && mapfile -t created <"$target/created-directories"
    # Only links that point into this install: a file of another package stays.
    for file in "${shared[@]}"; do
        link=$prefix/share/$file
        if [[ -L $link && $(readlink "$link") == *lib/agent-sandbox/share/$file ]]; then
            rm "$link"
        fi
    done
    if [[ -L $prefix/bin/agent-sandbox && $(readlink "$prefix/bin/agent-sandbox") == *lib/agent-sandbox/bin/agent-sandbox ]]; then
        rm "$prefix/bin/agent-sandbox"
    fi
    rm -rf "$target"
    for dir in "${directories[@]}"; do
        for c in "${created[@]}"; do
            if [[ $c == "$dir" ]]; then
                rmdir "$prefix/$dir" 2>/dev/null || true
            fi
        done
    done
    echo "removed agent-sandbox from $prefix"
    exit 0
fi

# ---------------------------------------------------------------- install

[[ -x $self/bin/agent-sandbox && -x $self/runtime/bin/java ]] ||
    die "$self is not an agent-sandbox app image (no bin/agent-sandbox or runtime/)"
mkdir -p "$prefix" || die "cannot create $prefix"
prefix=$(cd "$prefix" && pwd)
[[ $self != "$prefix/lib/agent-sandbox" ]] || die "this is the installed copy; to reinstall, run the install.sh of a new image"
target=$prefix/lib/agent-sandbox
staged=$prefix/lib/.agent-sandbox.new.$$
retired=$prefix/lib/.agent-sandbox.old.$$
trap 'rm -rf "$staged" "$retired"' EXIT

created=()
for dir in "${directories[@]}"; do
    [[ -d $prefix/$dir ]] || created+=("$dir")
done
if [[ -f $target/created-directories ]]; then
    mapfile -t -O "${#created[@]}" created <"$target/created-directories"
fi
mkdir -p "$prefix/lib" "$prefix/bin" || die "cannot create $prefix/lib and $prefix/bin"

# Copy next to the old install, then swap: users never see a half-copied one.
cp -a "$self" "$staged" || die "cannot copy the app image to $staged"
if [[ ${#created[@]} -gt 0 ]]; then
    printf '%s\n' "${created[@]}" | sort -u >"$staged/created-directories"
fi
if [[ -n $(find "$prefix" -maxdepth 0 -perm -o=rx) ]]; then
    chmod -R a+rX "$staged" # the prefix is shared: so is the install
fi
if [[ -e $target || -L $target ]]; then
    mv "$target" "$retired" || die "cannot move the old install $target aside"
fi
mv "$staged" "$target" || die "cannot move the new install into $target"
rm -rf "$retired"
ln -sfn ../lib/agent-sandbox/bin/agent-sandbox "$prefix/bin/agent-sandbox" ||
    die "cannot link $prefix/bin/agent-sandbox"
for file in "${shared[@]}"; do
    [[ -f $target/share/$file ]] || continue
    link=$prefix/share/$file
    mkdir -p "$(dirname "$link")" || die "cannot create $(dirname "$link")"
    # share/a/b/name: three levels up is the prefix
    up=$(dirname "share/$file" | sed 's|[^/]*|..|g')
    ln -sfn "$up/lib/agent-sandbox/share/$file" "$link" || die "cannot link $link"
done

version=$("$prefix/bin/agent-sandbox" --version 2>&1) ||
    die "installed, but $prefix/bin/agent-sandbox does not start: ${version//$'\n'/ }"

echo "installed ${version%%$'\n'*} in $target"
echo "  command:     $prefix/bin/agent-sandbox"
echo "  man page:    $prefix/share/man/man1/agent-sandbox.1"
echo "  completions: bash, zsh and fish under $prefix/share"
echo "  uninstall:   $target/install.sh --uninstall"
case ":${PATH:-}:" in
    *":$prefix/bin:"*) echo "$prefix/bin is on PATH: run agent-sandbox doctor" ;;
    *) echo "$prefix/bin is not on PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
