#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
#
# The .deb follows Debian's policy as far as a package built outside Debian can: our own
# ELF programs stripped, Depends from the C library the dynamic programs need, a
# machine-readable copyright file, a changelog, md5sums, and reproducible: every time stamp
# is SOURCE_DATE_EPOCH (default: the time of the last commit), so two builds of one image give
# the same bytes (dist/src/image/deb-check.sh compares two, and runs lintian; the tags it
# still reports are explained in docs/install.md).
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

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
if [[ -z ${SOURCE_DATE_EPOCH-} ]]; then
    SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null) || SOURCE_DATE_EPOCH=0
fi
[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH must be seconds since 1970 (got '$SOURCE_DATE_EPOCH')"
export SOURCE_DATE_EPOCH

archive=$out/agent-sandbox-$version-linux-$(uname -m).tar.gz
tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    --clamp-mtime -cf - "$(basename "$image")" | gzip -9n >"$archive"
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
# Who answers for the package: AGENT_SANDBOX_MAINTAINER ("Name <address>") for a real build.
maintainer=${AGENT_SANDBOX_MAINTAINER:-agent-sandbox maintainers <agent-sandbox@users.noreply.github.com>}
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
# The licenses: Debian's copyright file names them all; the texts stay in the image too.
doc=$root/usr/share/doc/agent-sandbox
lib=$root/usr/lib/agent-sandbox
rm -f "$lib/LICENSE" "$lib/NOTICE"
libc_name=musl
libc_license=Expat
[[ -d $lib/legal/musl ]] || { libc_name=glibc; libc_license=LGPL-2.1+; }
{
    cat <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: agent-sandbox
Source: https://github.com/agent-sandbox/agent-sandbox

Files: *
Copyright: 2026 The agent-sandbox authors
License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.

Files: usr/lib/agent-sandbox/runtime/*
Copyright: Oracle and/or its affiliates, and the other contributors to the OpenJDK
License: GPL-2 with Classpath exception
 The Java runtime made by jlink from the OpenJDK (Eclipse Temurin). Its license
 texts, with the Classpath exception and the notices of what it includes, are
 in /usr/lib/agent-sandbox/runtime/legal/. On Debian systems, the GPL version 2
 is in /usr/share/common-licenses/GPL-2.

Files: usr/lib/agent-sandbox/bin/agent-sandbox
Copyright: 2026 The agent-sandbox authors; the $libc_name authors
License: Apache-2.0 and $libc_license
 The launcher is linked statically with $libc_name, whose copyright file is in
 /usr/lib/agent-sandbox/legal/$libc_name/COPYRIGHT.
COPYRIGHT
    printf '\nNOTICE:\n'
    sed 's/^/ /; s/^ $/ ./' "$repo/NOTICE"
} >"$doc/copyright"
# lintian's tags that do not apply here, each with the reason (also in docs/install.md).
mkdir -p "$root/usr/share/lintian/overrides"
cat >"$root/usr/share/lintian/overrides/agent-sandbox" <<'OVERRIDES'
# The launcher is static on purpose: it starts in front of every wrapped command, and a
# static musl program starts about 1 ms sooner than a dynamic one (launcher/Makefile).
agent-sandbox: statically-linked-binary [usr/lib/agent-sandbox/bin/agent-sandbox]
# The bundled Java runtime is Temurin's, made by jlink: its zlib is the JDK's own copy.
agent-sandbox: embedded-library zlib [usr/lib/agent-sandbox/runtime/lib/libjli.so]
agent-sandbox: embedded-library zlib [usr/lib/agent-sandbox/runtime/lib/libzip.so]
# The jars are the program's private class path and the runtime's own, not libraries for
# others: they belong beside the runtime that runs them.
agent-sandbox: jar-not-in-usr-share [usr/lib/agent-sandbox/lib/agent-sandbox-cli.jar]
agent-sandbox: jar-not-in-usr-share [usr/lib/agent-sandbox/lib/agent-sandbox-core.jar]
agent-sandbox: jar-not-in-usr-share [usr/lib/agent-sandbox/runtime/lib/jrt-fs.jar]
# Java 25 class files (version 69), run by the bundled Java 25 runtime only.
agent-sandbox: unknown-java-class-version *
OVERRIDES
# A native package's changelog: this version, dated by the build's time stamp.
changelog_date=$(date -u -d "@$SOURCE_DATE_EPOCH" -R)
commit=$(sed -n 's/^commit=//p' "$lib/lib/build.properties" 2>/dev/null || true)
printf 'agent-sandbox (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- %s  %s\n' \
    "$deb_version" "${commit:-unknown}" "$maintainer" "$changelog_date" | gzip -9n >"$doc/changelog.gz"
# Every program and library without its symbols, as Debian ships them. The startup cache
# and the class data sharing archive check the JVM's version, not the bytes of libjvm:
# deb-check.sh starts the installed files with the cache required.
while IFS= read -r -d '' elf; do
    if [[ $(head -c 4 "$elf") == $'\x7fELF' ]]; then
        strip --strip-unneeded --remove-section=.comment --remove-section=.note "$elf"
    fi
done < <(find "$lib" -type f \( -name '*.so' -o -perm -u+x \) -print0 | LC_ALL=C sort -z)
cat >"$root/usr/share/doc/agent-sandbox/README.Debian" <<'README'
agent-sandbox runs a command, typically a coding agent, in a bubblewrap sandbox.
Start with: agent-sandbox doctor, then agent-sandbox -- your-command.
See agent-sandbox(1) and agent-sandbox --help.
README
chmod -R u+rwX,go+rX,go-w "$root"
# The C library the dynamic programs (the JDK's and agent-sandbox-jvm) need, at the newest
# symbol version any of them uses.
glibc=$({ find "$lib" -type f \( -name '*.so' -o -perm -u+x \) -exec objdump -T {} + 2>/dev/null || true; } |
    grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1) || true
[[ -n $glibc ]] || die "cannot tell which C library the runtime needs (objdump, from binutils, is needed)"

installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: agent-sandbox
Version: $deb_version
Architecture: $arch
Maintainer: $maintainer
Depends: bubblewrap (>= 0.5.0), libc6 (>= $glibc)
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

(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"
find "$root" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch -h -d "@$SOURCE_DATE_EPOCH"

deb=$out/agent-sandbox_${deb_version}_$arch.deb
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "package: $deb ($(du -h "$deb" | cut -f1))"
