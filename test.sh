#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test of agent-sandbox: unit tests, then the end-to-end tests
# against the packaged app image under real bwrap, then one short round of
# fuzzing of the parsers (scripts/fuzz.sh).
#
#   ./test.sh [extra Maven arguments]
#
# As root, the end-to-end tests run agent-sandbox as an unprivileged user
# through setpriv (AGENT_SANDBOX_TEST_UID, default 65534).
set -euo pipefail

die() {
    echo "agent-sandbox: $*" >&2
    exit 1
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

command -v bwrap >/dev/null ||
    die "bwrap not found; the tests need bubblewrap: sudo apt-get install -y bubblewrap"
if [[ $(id -u) -eq 0 ]]; then
    command -v setpriv >/dev/null ||
        die "setpriv not found; as root the tests need it to drop privileges: apt-get install -y util-linux"
fi
command -v mvn >/dev/null || die "mvn not found; install Maven: sudo apt-get install -y maven"
command -v cc >/dev/null || die "cc not found; the launcher needs a C compiler: sudo apt-get install -y gcc"
command -v make >/dev/null || die "make not found: sudo apt-get install -y make"
jdk=$("$repo/scripts/find-jdk.sh") || exit 1

cd "$repo"
export JAVA_HOME=$jdk
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
echo "testing with the JDK in $jdk"
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
mvn -B -ntp verify "$@" 2>&1 | tee "$log" || status=$?

# Sums the "Tests run" lines of one module's reports: prints "run skipped".
count() {
    cat "$@" 2>/dev/null | sed -n 's/^Tests run: \([0-9]*\), Failures: [0-9]*, Errors: [0-9]*, Skipped: \([0-9]*\).*/\1 \2/p' |
        awk '{ run += $1; skipped += $2 } END { printf "%d %d\n", run, skipped }'
}
read -r unit_run unit_skipped < <(count "$repo"/*/target/surefire-reports/*.txt)
read -r e2e_run e2e_skipped < <(count "$repo"/dist/target/failsafe-reports/*.txt)
echo "unit tests: $unit_run run, $unit_skipped skipped"
echo "end-to-end tests (real bwrap, unprivileged user): $e2e_run run, $e2e_skipped skipped"
grep -h '^escape attempts' "$log" || true
if [[ $status -eq 0 ]]; then
    # A suite whose end-to-end part did not run, or skipped tests, proves nothing.
    [[ $e2e_run -gt 0 ]] || die "no end-to-end test ran"
    # The whole suite (no Maven arguments narrowing it) includes the escape corpus.
    [[ $# -gt 0 ]] || grep -q '^escape attempts: [0-9]* tried, 0 succeeded' "$log" ||
        die "the escape corpus did not report; every test must run"
    # As root (as in CI) every test can run; as a normal user, only the tests that
    # need root cannot (starting agent-sandbox as root, installing the .deb with dpkg).
    if [[ $(id -u) -eq 0 ]]; then
        [[ $e2e_skipped -eq 0 && $unit_skipped -eq 0 ]] || die "tests were skipped; every test must run"
    fi
fi
# A short coverage-guided fuzzing round over the parsers (scripts/fuzz.sh for longer runs).
if [[ $status -eq 0 ]]; then
    "$repo/scripts/fuzz.sh" || status=$?
fi
# The .deb at Debian's standard: reproducible, lintian clean, stripped and still starting
# (only for the whole suite: Maven arguments that narrow it leave the packages unbuilt).
if [[ $status -eq 0 && $# -eq 0 ]]; then
    "$repo/dist/src/image/deb-check.sh" "$repo/dist/target/agent-sandbox" \
        "$(sed -n 's/^version=//p' "$repo/cli/target/classes/agentsandbox/version.properties")" || status=$?
fi
exit "$status"
