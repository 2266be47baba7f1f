#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes agent-sandbox's parsers with Jazzer (coverage-guided): the JSONC and config
# reader, the flag parser, the git guard's reading of command lines, path patterns.
#
#   scripts/fuzz.sh [--rounds N]
#
# Each round fuzzes every target for the time its @FuzzTest(maxDuration) gives
# (20 s). The corpus grows in <module>/.cifuzz-corpus/ from round to round, so a
# longer run is more rounds: scripts/fuzz.sh --rounds 30. An input that makes a
# target fail is saved under <module>/src/test/resources/.../<Class>Inputs/ and
# from then on runs with the ordinary unit tests: commit it with the fix.
# ./test.sh runs one round.
set -euo pipefail

die() {
    echo "agent-sandbox: $*" >&2
    exit 1
}

rounds=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --rounds)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive number"
            rounds=$2
            shift 2
            ;;
        *) die "unknown argument '$1' (usage: scripts/fuzz.sh [--rounds N])" ;;
    esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${JAVA_HOME:-} ]]; then
    JAVA_HOME=$("$repo/scripts/find-jdk.sh") || exit 1
    export JAVA_HOME
fi

targets=(
    "cli:JsoncFuzzTest#Any_Text_Parses_Or_Fails_With_A_Position"
    "cli:JsoncFuzzTest#Any_Config_Bytes_Load_Or_Fail_With_One_Clean_Line"
    "cli:FlagsFuzzTest#Any_Argument_List_Parses_Or_Is_A_Usage_Error"
    "core:GitGuardFuzzTest#Any_Git_Command_Line_Gets_A_Decision"
    "core:GitGuardFuzzTest#Any_Path_Pattern_Parses_Or_Is_Refused_With_A_Message"
    "core:NetworkProxyFuzzTest#Any_Request_Head_Gets_A_Destination_Or_A_Refusal"
)

cd "$repo"
for ((round = 1; round <= rounds; round++)); do
    for target in "${targets[@]}"; do
        module=${target%%:*}
        test=${target#*:}
        echo "fuzzing $test (round $round of $rounds)"
        log=$(mktemp)
        # -am: the module this build made (core with it), never an older one from ~/.m2
        if ! JAZZER_FUZZ=1 mvn -B -q -ntp -o test -pl "$module" -am -Dtest="$test" \
            -Dsurefire.failIfNoSpecifiedTests=false >"$log" 2>&1; then
            grep -E 'DEDUP_TOKEN|Exception|Error|crash-' "$log" | head -n 20 >&2 || true
            rm -f "$log"
            die "fuzzing $test found a failing input (saved under $module/src/test/resources)"
        fi
        grep -E '^Done [0-9]+ runs' "$log" | tail -n 1 | sed 's/^/  /' || true
        rm -f "$log"
    done
done
echo "fuzzing: ${#targets[@]} targets, $rounds round(s), no failing input"
