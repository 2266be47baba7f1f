#!/usr/bin/env bash
# Completes the app image once its launcher and jars are in place:
#
#   runtime/                  a Java runtime made by jlink with only the modules
#                             agent-sandbox uses, and its class data sharing archive
#   lib/agent-sandbox.aot     the startup cache (JEP 483), trained on this exact
#                             runtime and class path by agentsandbox.cli.Training
#
# then checks that the launcher really starts with the cache, and packs the image
# as agent-sandbox-VERSION-linux-ARCH.tar.gz beside it.
#
#   finish-image.sh IMAGE JDK VERSION
set -euo pipefail

die() {
    echo "agent-sandbox build: $*" >&2
    exit 1
}

[[ $# -eq 3 ]] || die "usage: finish-image.sh IMAGE JDK VERSION"
image=$1
jdk=$2
version=$3
[[ -x $jdk/bin/jlink ]] || die "no jlink in $jdk: a full JDK 25 is needed to build the image"
[[ -f $image/lib/agent-sandbox-cli.jar && -x $image/bin/agent-sandbox ]] ||
    die "$image lacks the launcher or the jars"

# java.base, plus jdk.unsupported for sun.misc.Signal (SIGINT/SIGTERM handling).
rm -rf "$image/runtime"
"$jdk/bin/jlink" \
    --add-modules java.base,jdk.unsupported \
    --strip-debug --no-man-pages --no-header-files \
    --generate-cds-archive \
    --output "$image/runtime"

# The JVM options must be the launcher's (see JVM_OPTIONS in launcher/src/launcher.c).
options=(-XX:+UseSerialGC -Xint -XX:-UsePerfData)
work=$(mktemp -d "${TMPDIR:-/tmp}/agent-sandbox-training.XXXXXX")
trap 'rm -rf "$work"' EXIT
cache=$image/lib/agent-sandbox.aot
rm -f "$cache"
(
    cd "$work"
    "$image/runtime/bin/java" "${options[@]}" \
        -XX:AOTCacheOutput="$cache" \
        -Dagentsandbox.launcher="$image/bin/agent-sandbox" -Dagentsandbox.home="$image" \
        -cp "$image/lib/agent-sandbox-cli.jar" agentsandbox.cli.Training "$work/training" \
        >"$work/training.log" 2>&1
) || die "the training run failed: $(tail -n 5 "$work/training.log" | tr '\n' ' ')"
[[ -s $cache ]] || die "the training run made no startup cache: $(tail -n 5 "$work/training.log" | tr '\n' ' ')"

# A cache the JVM silently ignores would only make agent-sandbox slow: require it once.
AGENT_SANDBOX_REQUIRE_CACHE=1 "$image/bin/agent-sandbox" --version >/dev/null ||
    die "the launcher does not start with the startup cache $cache"
archive=$(dirname "$image")/agent-sandbox-$version-linux-$(uname -m).tar.gz
tar -C "$(dirname "$image")" -czf "$archive" "$(basename "$image")"
echo "app image: $image (runtime $(du -sh "$image/runtime" | cut -f1), startup cache $(du -h "$cache" | cut -f1))"
echo "archive: $archive ($(du -h "$archive" | cut -f1))"
