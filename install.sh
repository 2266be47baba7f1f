#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds agent-sandbox from this checkout and installs it.
#
#   ./install.sh [--prefix DIR]
#
# Installs the app image into DIR/lib/agent-sandbox/, links DIR/bin/agent-sandbox
# to its launcher and the man page and completions into DIR/share (the image's own
# install.sh does this part; the tar.gz and the .deb carry the same image). DIR
# defaults to ~/.local, or /usr/local when run as root. A successful install prints
# a few lines; the build's output goes to a log shown only when the build fails.
#
# Missing packages: as root, bubblewrap and the build tools (maven, gcc, libc6-dev,
# make, musl-tools) are installed with apt-get. As a normal user, missing build
# tools stop the install with the command to run (musl-tools only gets a note: it
# makes the launcher start faster, nothing depends on it); a missing bubblewrap
# does not stop it (the build and install go on), but the script ends with the command to run and
# exit status 1, because agent-sandbox cannot sandbox anything without it.
set -euo pipefail

die() {
    echo "agent-sandbox: $*" >&2
    exit 1
}

usage() {
    cat <<'USAGE'
usage: ./install.sh [--prefix DIR]

Builds agent-sandbox (needs a JDK 25, Maven, gcc, make) and installs it into
DIR/lib/agent-sandbox, with the command DIR/bin/agent-sandbox, its man page and
bash, zsh and fish completions.
DIR defaults to ~/.local, or /usr/local when run as root.
USAGE
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
is_root=false
[[ $(id -u) -eq 0 ]] && is_root=true

prefix=""
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
        -h | --help)
            usage
            exit 0
            ;;
        *)
            die "unknown argument '$1' (usage: ./install.sh [--prefix DIR])"
            ;;
    esac
done
if [[ -z $prefix ]]; then
    if $is_root; then
        prefix=/usr/local
    else
        [[ -n ${HOME:-} ]] || die "HOME is not set; give the install location with --prefix DIR"
        prefix=$HOME/.local
    fi
fi

# ---------------------------------------------------------------- packages

apt_install() {
    echo "installing with apt-get: $*"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" </dev/null >/dev/null
}

missing_build=()
command -v mvn >/dev/null || missing_build+=(maven)
command -v cc >/dev/null || missing_build+=(gcc)
command -v make >/dev/null || missing_build+=(make)
[[ -e /usr/include/stdio.h ]] || missing_build+=(libc6-dev)
# the seccomp filter is generated with libseccomp at build time (launcher/Makefile)
[[ -e /usr/include/seccomp.h ]] || missing_build+=(libseccomp-dev)
missing_bwrap=()
command -v bwrap >/dev/null || missing_bwrap+=(bubblewrap)
# optional: the launcher linked with musl starts about 1 ms faster (launcher/Makefile)
if ! command -v musl-gcc >/dev/null; then
    if $is_root && command -v apt-get >/dev/null; then
        missing_build+=(musl-tools)
    else
        echo "note: musl-gcc not found; the launcher is linked with glibc, about 1 ms slower at every wrapped command (sudo apt-get install -y musl-tools)"
    fi
fi

bwrap_missing_at_end=false
if [[ ${#missing_build[@]} -gt 0 || ${#missing_bwrap[@]} -gt 0 ]]; then
    if $is_root && command -v apt-get >/dev/null; then
        apt_install "${missing_build[@]}" "${missing_bwrap[@]}" ||
            die "apt-get could not install ${missing_build[*]} ${missing_bwrap[*]}"
    elif [[ ${#missing_build[@]} -gt 0 ]]; then
        if command -v apt-get >/dev/null; then
            die "missing build tools; install them with: sudo apt-get install -y ${missing_build[*]} ${missing_bwrap[*]}"
        fi
        die "missing build tools: ${missing_build[*]} (install them with your package manager)"
    else
        bwrap_missing_at_end=true
    fi
fi

jdk=$("$repo/scripts/find-jdk.sh") || exit 1

# ---------------------------------------------------------------- build

echo "building agent-sandbox with the JDK in $jdk (about a minute; the first build also fills ~/.m2)"
log=$(mktemp "${TMPDIR:-/tmp}/agent-sandbox-build.XXXXXX")
trap 'rm -f "$log"' EXIT
# Tests are neither compiled nor run (./test.sh does that), and the tar.gz and .deb
# are not made: this needs the app image only.
if ! (
    cd "$repo"
    export JAVA_HOME=$jdk
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
    mvn -B -ntp -q -Dstyle.color=never -Dmaven.test.skip=true -Dagentsandbox.skipPackages=true package
) >"$log" 2>&1 </dev/null; then
    echo "agent-sandbox: the build failed; the end of its output:" >&2
    sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -v '^WARNING: .*sun.misc.Unsafe\|^WARNING: Please consider reporting\|^WARNING: A terminally deprecated' |
        tail -n 40 >&2
    exit 1
fi

image=$repo/dist/target/agent-sandbox
[[ -x $image/install.sh ]] || die "build produced no app image at $image"

# ---------------------------------------------------------------- install

"$image/install.sh" --prefix "$prefix" || exit 1

if $bwrap_missing_at_end; then
    if command -v apt-get >/dev/null; then
        die "bubblewrap is missing and agent-sandbox needs it to run; install it with: sudo apt-get install -y bubblewrap"
    fi
    die "bubblewrap is missing and agent-sandbox needs it to run; install the bubblewrap package"
fi
