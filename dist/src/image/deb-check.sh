#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the .deb the way Debian would: packs the finished app image twice (package.sh)
# and requires the same bytes, runs lintian (no error or warning may be left), and starts
# the packaged launcher with its startup cache required (the programs are stripped).
#
#   deb-check.sh IMAGE VERSION
set -euo pipefail

die() {
    echo "agent-sandbox deb check: $*" >&2
    exit 1
}

[[ $# -eq 2 ]] || die "usage: deb-check.sh IMAGE VERSION"
image=$(cd "$1" && pwd)
version=$2
command -v lintian >/dev/null || die "lintian not found: apt-get install -y lintian"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/agent-sandbox-deb-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

for build in 1 2; do
    mkdir -p "$work/$build"
    cp -a "$image" "$work/$build/agent-sandbox"
    bash "$here/package.sh" "$work/$build/agent-sandbox" "$version" >/dev/null
done
first=$(ls "$work"/1/*.deb)
second=$(ls "$work"/2/*.deb)
cmp "$first" "$second" || die "two builds of one image differ: $(basename "$first")"
cmp "$work"/1/*.tar.gz "$work"/2/*.tar.gz || die "two builds of one image give different archives"
echo "reproducible: two builds give the same $(basename "$first") ($(sha256sum <"$first" | cut -c1-16)...)"

lintian --fail-on error,warning --tag-display-limit 0 "$first" || die "lintian reports the tags above"
echo "lintian: no error, no warning"

mkdir "$work/x"
dpkg-deb -x "$first" "$work/x"
if [[ $(id -u) -eq 0 ]]; then
    chmod -R a+rX "$work"
    run=(setpriv "--reuid=${AGENT_SANDBOX_TEST_UID:-65534}" "--regid=${AGENT_SANDBOX_TEST_UID:-65534}" --clear-groups --)
else
    run=()
fi
"${run[@]}" env AGENT_SANDBOX_REQUIRE_CACHE=1 "$work/x/usr/lib/agent-sandbox/bin/agent-sandbox" --version >/dev/null ||
    die "the packaged, stripped launcher does not start with its startup cache"
echo "the packaged launcher starts with its startup cache"
