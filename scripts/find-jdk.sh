#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the home of a JDK 25 (or newer) to build agent-sandbox with.
#
#   scripts/find-jdk.sh             prints the JDK home, or an error and exit 1
#   source scripts/find-jdk.sh      defines find_jdk (same output), changes nothing else
#
# Looks at JAVA_HOME first, then the usual install places, then `java` on PATH.

# The feature release of a java binary ("25" for 25.0.1, "8" for 1.8.0), or nothing.
java_feature_version() {
    local version
    version=$("$1" -version 2>&1 | sed -n 's/^[^ ]* version "\([^"]*\)".*/\1/p' | head -n 1) || return 0
    version=${version#1.}
    printf '%s\n' "${version%%[.+-]*}"
}

# True when DIR is a JDK (java and javac) whose java reports version 25 or newer.
is_jdk25() {
    local dir=$1 feature
    [[ -x "$dir/bin/java" && -x "$dir/bin/javac" ]] || return 1
    feature=$(java_feature_version "$dir/bin/java")
    [[ "$feature" =~ ^[0-9]+$ ]] && ((feature >= 25))
}

find_jdk() {
    local candidate java
    if [[ -n "${JAVA_HOME:-}" ]] && is_jdk25 "$JAVA_HOME"; then
        printf '%s\n' "$JAVA_HOME"
        return 0
    fi
    for candidate in /usr/lib/jvm/temurin-25* /usr/lib/jvm/*25* /usr/lib/jvm/*-2[5-9]* \
        /opt/java/*25* /opt/jdk*25* /usr/local/lib/jvm/*25* /usr/java/*25*; do
        if [[ -d "$candidate" ]] && is_jdk25 "$candidate"; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    if java=$(command -v java 2>/dev/null); then
        candidate=$(dirname "$(dirname "$(readlink -f "$java")")")
        if is_jdk25 "$candidate"; then
            printf '%s\n' "$candidate"
            return 0
        fi
    fi
    echo "agent-sandbox: no JDK 25 found (set JAVA_HOME to a JDK 25, or install one, e.g. apt-get install temurin-25-jdk)" >&2
    return 1
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    find_jdk
fi
