#!/usr/bin/env bash
# Packs a finished app image (finish-image.sh) for users who do not build:
#
#   agent-sandbox-VERSION-linux-ARCH.tar.gz   the image as agent-sandbox/, with its
#                                             installer: agent-sandbox/install.sh
#   agent-sandbox_VERSION_DEBARCH.deb         a Debian package (made when dpkg-deb is
#                                             there): /usr/lib/agent-sandbox,
#                                             /usr/bin/agent-sandbox, the man page and
#                                             completions; depends on bubblewrap
#
# both beside the image.
#
#   package.sh IMAGE VERSION
set -euo pipefail

die() {
    echo "agent-sandbox build: $*" >&2
    exit 1
}

[[ $# -eq 2 ]] || die "usage: package.sh IMAGE VERSION"
image=$1
version=$2
[[ -x $image/bin/agent-sandbox && -x $image/install.sh && -d $image/share ]] ||
    die "$image is not a finished app image (run finish-image.sh first)"
out=$(dirname "$image")

archive=$out/agent-sandbox-$version-linux-$(uname -m).tar.gz
tar -C "$out" -czf "$archive" "$(basename "$image")"
echo "archive: $archive ($(du -h "$archive" | cut -f1))"

if ! command -v dpkg-deb >/dev/null; then
    echo "no dpkg-deb here: no .deb made"
    exit 0
fi
if command -v dpkg >/dev/null; then
    arch=$(dpkg --print-architecture)
else
    case $(uname -m) in
        x86_64) arch=amd64 ;;
        aarch64) arch=arm64 ;;
        *) arch=$(uname -m) ;;
    esac
fi
# Debian versions sort "~" before anything: 0.1.0-SNAPSHOT becomes 0.1.0~SNAPSHOT.
deb_version=${version//-/\~}
root=$(mktemp -d "${TMPDIR:-/tmp}/agent-sandbox-deb.XXXXXX")
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/DEBIAN" "$root/usr/lib" "$root/usr/bin" "$root/usr/share/man/man1" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/doc/agent-sandbox"
cp -a "$image" "$root/usr/lib/agent-sandbox"
# The package manager installs and removes it: no installer, and share/ goes where
# man and the shells look.
rm "$root/usr/lib/agent-sandbox/install.sh"
share=$root/usr/lib/agent-sandbox/share
gzip -9n <"$share/man/man1/agent-sandbox.1" >"$root/usr/share/man/man1/agent-sandbox.1.gz"
cp "$share/bash-completion/completions/agent-sandbox" "$root/usr/share/bash-completion/completions/"
cp "$share/zsh/site-functions/_agent-sandbox" "$root/usr/share/zsh/vendor-completions/"
cp "$share/fish/vendor_completions.d/agent-sandbox.fish" "$root/usr/share/fish/vendor_completions.d/"
rm -r "$share"
ln -s ../lib/agent-sandbox/bin/agent-sandbox "$root/usr/bin/agent-sandbox"
cat >"$root/usr/share/doc/agent-sandbox/README.Debian" <<'README'
agent-sandbox runs a command, typically a coding agent, in a bubblewrap sandbox.
Start with: agent-sandbox doctor, then agent-sandbox -- your-command.
See agent-sandbox(1) and agent-sandbox --help.
README
chmod -R u+rwX,go+rX,go-w "$root"

installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: agent-sandbox
Version: $deb_version
Architecture: $arch
Maintainer: agent-sandbox maintainers <agent-sandbox@users.noreply.github.com>
Depends: bubblewrap (>= 0.5.0)
Recommends: slirp4netns
Section: utils
Priority: optional
Installed-Size: $installed_size
Description: run coding agents' commands in a bubblewrap sandbox
 agent-sandbox runs a coding agent, or any command, in a bubblewrap sandbox
 where it can work on the project in the current directory but not damage the
 rest of the machine, read secrets such as ~/.ssh, or weaken the project's own
 guard rails (lint configs, git hooks). It carries its own Java runtime.
CONTROL

deb=$out/agent-sandbox_${deb_version}_$arch.deb
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "package: $deb ($(du -h "$deb" | cut -f1))"
