#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Completes the app image once its launcher and jars are in place:
#
#   runtime/                  a Java runtime made by jlink with only the modules
#                             agent-sandbox uses, its own security provider among them
#                             (agentsandbox.urandom, the jar PROVIDER), and its class
#                             data sharing archive
#   lib/agent-sandbox.aot     the startup cache (JEP 483), trained on this exact
#                             runtime and class path by agentsandbox.cli.Training,
#                             run through the launcher (its --internal-train)
#   lib/build.properties      the commit the image was built from (--version)
#   share/                    the man page and the bash, zsh and fish completions,
#                             made from the source of --help by agentsandbox.cli.Manual
#   install.sh                the installer (install.sh --help)
#
# then checks that the launcher really starts with the cache. A successful build
# prints two lines; the JVM's own chatter goes to a log that is shown only when a
# step fails. package.sh then packs the image as a tar.gz and a .deb.
#
#   finish-image.sh IMAGE JDK VERSION PROVIDER
set -euo pipefail

die() {
    echo "agent-sandbox build: $*" >&2
    exit 1
}

[[ $# -eq 4 ]] || die "usage: finish-image.sh IMAGE JDK VERSION PROVIDER"
image=$1
jdk=$2
version=$3
provider=$4
[[ -x $jdk/bin/jlink ]] || die "no jlink in $jdk: a full JDK 25 is needed to build the image"
[[ -f $image/lib/agent-sandbox-cli.jar && -x $image/bin/agent-sandbox ]] ||
    die "$image lacks the launcher or the jars"
[[ -f $provider ]] || die "no security provider module at $provider (build the whole project)"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/agent-sandbox-training.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Runs a step with its output in a log, shown (the end of it) only when the step fails.
quietly() {
    local what=$1
    shift
    "$@" >"$work/step.log" 2>&1 || die "$what failed: $(tail -n 20 "$work/step.log")"
}

# java.base, plus jdk.unsupported for sun.misc.Signal (SIGINT/SIGTERM handling), plus
# agent-sandbox's security provider (see below).
rm -rf "$image/runtime"
quietly jlink "$jdk/bin/jlink" \
    --module-path "$provider" \
    --add-modules java.base,jdk.unsupported,agentsandbox.urandom \
    --strip-debug --no-man-pages --no-header-files \
    --output "$image/runtime"
# The program the launcher starts the JVM with (launcher/src/jvm_start.c), beside java:
# it finds libjvm from there.
jvm_start=$(sed -n 's/^#define JVM_START "\(.*\)"$/\1/p' "$repo/launcher/src/guard.h")
[[ -n $jvm_start && -x $repo/launcher/target/$jvm_start ]] ||
    die "no launcher/target/${jvm_start:-JVM_START}: build the whole project"
install -m 755 "$repo/launcher/target/$jvm_start" "$image/runtime/bin/$jvm_start"
# The runtime's class data sharing archive, for a start without the startup cache. Made
# here rather than by jlink's --generate-cds-archive: the JDK's default class list names
# classes of modules this runtime leaves out (java.logging), and the dump warns about
# each of them; -Xlog:cds=off keeps those expected warnings out of the build's output.
quietly "the class data sharing archive" "$image/runtime/bin/java" -Xshare:dump -Xlog:cds=off

# Whether a properties line goes on in the next (ends in an odd number of backslashes).
ends_continued='
    function ends_continued(line,    n) {
        n = 0
        while (n < length(line) && substr(line, length(line) - n, 1) == "\\") n++
        return n % 2 == 1
    }
'

# The runtime's security properties, for agent-sandbox's JVM alone: the JDK's settings
# without their comments (every start reads this file, interpreted), and first among the
# providers AgentSandboxUrandom (agentsandbox.urandom.UrandomProvider), which answers the
# random-number request of the JVM's first Unix-domain socket from /dev/urandom without
# registering the JDK's hundreds of services (see that class). It is named by its name and
# is a module of the runtime: the JDK finds such a provider among the runtime's modules'
# services, where a provider on the class path is looked for by opening every jar of it
# (reading their indexes, interpreted, cost every start some 3 ms of CPU). The JDK's
# providers follow, in their order.
security=$image/runtime/conf/security/java.security
[[ -f $security ]] || die "no $security in the runtime made by jlink"
awk "$ends_continued"'
    BEGIN { print "security.provider.1=AgentSandboxUrandom" }
    continued { print; continued = ends_continued($0); next }
    /^[ \t]*([#!].*)?$/ { next }
    match($0, /^security\.provider\.[0-9]+=/) {
        number = substr($0, 19, RLENGTH - 19) + 1
        print "security.provider." number "=" substr($0, RLENGTH + 1)
        next
    }
    { print; continued = ends_continued($0) }
' "$security" >"$work/java.security" || die "cannot rewrite $security"
grep -q '^security\.provider\.2=SUN$' "$work/java.security" ||
    die "$security does not name the JDK's SUN provider first; agent-sandbox's build expects it to"
install -m 644 "$work/java.security" "$security"

# The runtime's network properties, read by the first Unix-domain socket: the same
# settings without their comments.
net=$image/runtime/conf/net.properties
[[ -f $net ]] || die "no $net in the runtime made by jlink"
awk "$ends_continued"'
    continued { print; continued = ends_continued($0); next }
    /^[ \t]*([#!].*)?$/ { next }
    { print; continued = ends_continued($0) }
' "$net" >"$work/net.properties" || die "cannot rewrite $net"
grep -q '^jdk\.net\.unixdomain\.tmpdir=' "$work/net.properties" ||
    die "$net does not set jdk.net.unixdomain.tmpdir; agent-sandbox's build expects it to"
install -m 644 "$work/net.properties" "$net"
[[ -s $image/runtime/lib/server/classes.jsa ]] || die "no class data sharing archive in $image/runtime"

# What --version reports as the build's commit ("-modified" when the checkout had changes).
commit=unknown
if command -v git >/dev/null && git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
    commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null) || commit=unknown
    if [[ $commit != unknown && -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
        commit=$commit-modified
    fi
fi
printf 'commit=%s\n' "$commit" >"$image/lib/build.properties"

# The man page and completions, from the command line reference of the jar just built.
rm -rf "$image/share"
quietly "making the man page and completions" "$image/runtime/bin/java" -Xshare:auto -Xlog:disable \
    -cp "$image/lib/agent-sandbox-cli.jar" agentsandbox.cli.Manual "$image/share"
install -m 755 "$(dirname "${BASH_SOURCE[0]}")/install.sh" "$image/install.sh"

# The licenses: agent-sandbox's own, and those of what the image bundles (the runtime's are
# in runtime/legal, put there by jlink). The launcher is linked statically with musl when
# musl-gcc is there (launcher/Makefile), else with glibc: the C library's terms go with it.
install -m 644 "$repo/LICENSE" "$repo/NOTICE" "$image/"
rm -rf "$image/legal"
mkdir -p "$image/legal"
if command -v musl-gcc >/dev/null; then
    libc_copyright=/usr/share/doc/musl/copyright
    libc_dir=$image/legal/musl
else
    libc_copyright=/usr/share/doc/libc6/copyright
    libc_dir=$image/legal/glibc
fi
[[ -f $libc_copyright ]] || die "no $libc_copyright: the launcher's C library's license must go into the image"
mkdir -p "$libc_dir"
install -m 644 "$libc_copyright" "$libc_dir/COPYRIGHT"

# The JVM options must be the launcher's (see JVM_OPTIONS in launcher/src/tool.c), and
# so must the class path: the jars through the descriptor APP_LIB_FD of the lib directory
# (launcher/src/guard.h), the same text wherever the image is installed later.
options=(-XX:+UseSerialGC -Xint -XX:-UsePerfData
    -Djava.nio.channels.spi.SelectorProvider=sun.nio.ch.EPollSelectorProvider)
guard_h=$repo/launcher/src/guard.h
lib_fd=$(sed -n 's/^#define APP_LIB_FD \([0-9][0-9]*\)$/\1/p' "$guard_h")
class_path=$(sed -n 's/^#define APP_CLASS_PATH "\(.*\)"$/\1/p' "$guard_h")
[[ -n $lib_fd && $class_path == "/proc/self/fd/$lib_fd/agent-sandbox-cli.jar" ]] ||
    die "cannot read APP_LIB_FD and APP_CLASS_PATH from $guard_h"
cache=$image/lib/agent-sandbox.aot
rm -f "$cache"
# The training includes real runs under bwrap (the run directory, the git guard, the
# network proxy, the checks after the run), which agent-sandbox refuses as root. A
# build as root trains as an unprivileged user (AGENT_SANDBOX_TRAINING_UID, default
# 65534), on a copy of the image that user can read; the cache is made for the copy and
# fits the image, which is the same files at another path.
trained=$image
as_trainer=()
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
    trainer=${AGENT_SANDBOX_TRAINING_UID:-65534}
    [[ $trainer =~ ^[1-9][0-9]*$ ]] || die "AGENT_SANDBOX_TRAINING_UID must be the number of an unprivileged user"
    chmod 755 "$work"
    trained=$work/image
    cp -a "$image" "$trained"
    chmod -R a+rX "$trained"
    mkdir -m 700 "$work/trainer"
    chown "$trainer:$trainer" "$work/trainer"
    as_trainer=(setpriv "--reuid=$trainer" "--regid=$trainer" --clear-groups --)
    output=$work/trainer/agent-sandbox.aot
else
    mkdir -m 700 "$work/trainer"
    output=$cache
fi
# Two steps, recording then creating, each with the lib directory at APP_LIB_FD (a JVM
# that creates the cache in one step starts its second step without the descriptor).
# The launcher records (TRAIN_FLAG in guard.h): with its JVM options, its class path and
# its starter, the way every run starts.
train_flag=$(sed -n 's/^#define TRAIN_FLAG "\(.*\)"$/\1/p' "$guard_h")
# The training sees a fixed environment, not the build's: what a run loads depends on it
# (no LANG, say, brings the ASCII charset's classes), and the cache must not depend on the
# machine or the shell that built it. PATH stays: the real run needs bwrap and git.
training_env=(env -i "PATH=$PATH" LANG=C.UTF-8)
[[ -n $train_flag ]] || die "cannot read TRAIN_FLAG from $guard_h"
(
    cd "$work/trainer"
    "${as_trainer[@]}" "${training_env[@]}" HOME="$work/trainer" "$trained/bin/agent-sandbox" "$train_flag" \
        "$work/trainer/agent-sandbox.aotconf" "$work/trainer/training" >"$work/training.log" 2>&1 &&
    eval "exec $lib_fd<\"\$trained/lib\"" &&
    "${as_trainer[@]}" "${training_env[@]}" HOME="$work/trainer" "$trained/runtime/bin/java" "${options[@]}" \
        -XX:AOTMode=create -XX:AOTConfiguration="$work/trainer/agent-sandbox.aotconf" \
        -XX:AOTCache="$output" -cp "$class_path" >>"$work/training.log" 2>&1
) || die "the training run failed: $(tail -n 5 "$work/training.log" | tr '\n' ' ')"
if [[ $output != "$cache" && -s $output ]]; then
    cp "$output" "$cache"
fi
[[ -s $cache ]] || die "the training run made no startup cache: $(tail -n 5 "$work/training.log" | tr '\n' ' ')"

# Without the provider the runtime still works, but every run pays for the JDK's: require it.
grep -q '^training: NativePRNGNonBlocking from AgentSandboxUrandom$' "$work/training.log" ||
    die "the runtime does not take AgentSandboxUrandom from $security: $(grep '^training: Native' "$work/training.log")"
# A cache the JVM silently ignores would only make agent-sandbox slow: require it once.
AGENT_SANDBOX_REQUIRE_CACHE=1 "$image/bin/agent-sandbox" --version >/dev/null ||
    die "the launcher does not start with the startup cache $cache"
# Without the real run (no bwrap, no user namespaces here) the cache still works, but
# runs start slower: say so.
trained_run=""
grep -q '^training: \[--, sh, -c, .*\]: exit 0$' "$work/training.log" ||
    trained_run=", trained without a real run: $(grep '^agent-sandbox: ' "$work/training.log" | tail -n 1)"
echo "app image: $image (runtime $(du -sh "$image/runtime" | cut -f1), startup cache $(du -h "$cache" | cut -f1)$trained_run)"
