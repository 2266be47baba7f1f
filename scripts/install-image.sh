#!/usr/bin/env bash
# Installs a built agent-sandbox app image: IMAGE goes to PREFIX/lib/agent-sandbox
# and PREFIX/bin/agent-sandbox links to its launcher. An older install at the same
# place is replaced atomically. When PREFIX is readable by everyone (/usr/local),
# so is the install.
#
#   scripts/install-image.sh IMAGE PREFIX
set -euo pipefail

die() {
    echo "agent-sandbox: $*" >&2
    exit 1
}

[[ $# -eq 2 ]] || die "usage: scripts/install-image.sh IMAGE PREFIX"
image=$1
prefix=$2
[[ -x $image/bin/agent-sandbox ]] || die "no app image at $image (build it with ./install.sh or mvn package)"

mkdir -p "$prefix/lib" "$prefix/bin" || die "cannot create $prefix/lib and $prefix/bin"
prefix=$(cd "$prefix" && pwd)
target=$prefix/lib/agent-sandbox
staged=$prefix/lib/.agent-sandbox.new.$$
retired=$prefix/lib/.agent-sandbox.old.$$
trap 'rm -rf "$staged" "$retired"' EXIT

# Copy next to the old install, then swap: users never see a half-copied one.
cp -a "$image" "$staged" || die "cannot copy the app image to $staged"
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

version=$("$prefix/bin/agent-sandbox" --version 2>&1) ||
    die "installed, but $prefix/bin/agent-sandbox does not start: ${version//$'\n'/ }"

echo "installed $version in $target"
echo "command: $prefix/bin/agent-sandbox"
case ":${PATH:-}:" in
    *":$prefix/bin:"*) echo "$prefix/bin is on PATH: run agent-sandbox --help" ;;
    *) echo "$prefix/bin is not on PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" ;;
esac

