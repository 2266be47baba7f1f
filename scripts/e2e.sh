#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs end-to-end test classes against an app image that is already built, and
# nothing else: no unit tests, no image build (no startup cache training), no
# packages, no fuzzing. For the whole suite, run ./test.sh.
#
#   scripts/e2e.sh [--image DIR] TESTS [extra Maven arguments]
#
# TESTS is what Failsafe's -Dit.test takes: SmokeIT, 'SmokeIT,ErrorsIT',
# 'SmokeIT#Version*'. DIR is the app image, by default dist/target/agent-sandbox
# as `mvn -DskipTests package` (or ./test.sh) leaves it. The tests run the image
# as it is: rebuild it after changing the code. PackagesIT also needs the
# .tar.gz and .deb that a full `mvn package` puts beside the default image.
#
# Example: scripts/e2e.sh SmokeIT -o     (-o: Maven offline)
set -euo pipefail

die() {
    echo "agent-sandbox: $*" >&2
    exit 1
}

usage="usage: scripts/e2e.sh [--image DIR] TESTS [extra Maven arguments]"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=$repo/dist/target/agent-sandbox
if [[ ${1:-} == --image ]]; then
    [[ $# -ge 2 ]] || die "--image needs a directory ($usage)"
    image=$(cd "$2" 2>/dev/null && pwd) || die "no directory $2"
    shift 2
fi
[[ $# -ge 1 && $1 != -* ]] || die "name the test classes to run ($usage)"
tests=$1
shift

[[ -x $image/bin/agent-sandbox ]] ||
    die "no app image at $image: build one first with 'mvn -DskipTests package' (about a minute) or ./test.sh"
command -v bwrap >/dev/null ||
    die "bwrap not found; the tests need bubblewrap: sudo apt-get install -y bubblewrap"
if [[ $(id -u) -eq 0 ]]; then
    command -v setpriv >/dev/null ||
        die "setpriv not found; as root the tests need it to drop privileges: apt-get install -y util-linux"
fi
command -v mvn >/dev/null || die "mvn not found; install Maven: sudo apt-get install -y maven"
if [[ -z ${JAVA_HOME:-} ]]; then
    JAVA_HOME=$("$repo/scripts/find-jdk.sh") || exit 1
fi
export JAVA_HOME
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"

cd "$repo"
echo "end-to-end tests $tests against the image in $image"
# Up to test-compile only (the end-to-end classes and what they depend on), then
# Failsafe's goals by name: the package phase, which builds the image, never runs.
exec mvn -B -ntp -pl dist -am test-compile failsafe:integration-test failsafe:verify \
    -Dit.test="$tests" -Dfailsafe.failIfNoSpecifiedTests=false -Dimage.dir="$image" "$@"
