#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures what agent-sandbox adds to a sandboxed command's startup: hyperfine
# compares `agent-sandbox -- true` with raw bwrap given the very command line
# that `agent-sandbox --dry-run -- true` prints, in a temp git project with the
# default presets and a few lint files.
#
#   bench/run.sh [extra hyperfine arguments]
#
# The agent-sandbox measured is $AGENT_SANDBOX, else the one on PATH, else the
# image built in dist/target. As root, both commands run as an unprivileged
# user through setpriv (AGENT_SANDBOX_BENCH_UID, default 65534).
#
# Prints, after hyperfine's own report, medians of: raw bwrap, agent-sandbox -- true
# (and the ratio), the same with a trusted project config, the same in a large
# repository (the git metadata check before and after the run), --dry-run, check,
# and the peak RSS of one run,
# and then, measured inside one sandbox, what a command wrapper adds per call:
# the git guard (wrapped `git --version` and `git status` against the real git
# binary), a blocked command (against /usr/bin/true; its report of the call to the
# host's denial log, over the guard's socket, included) and a script wrapper that
# execs the real command (against the real command); and the git guard's
# fallback for processes that may not use Unix sockets (run under the launcher's
# no-unix-sockets seccomp helper, which `make -C launcher check` builds): the same
# rules in the bundled Java runtime, started inside the sandbox per call.
# Then the seccomp filter's cost per system call, and the socket guard's (--share-tmp) per
# connect(2), per sendto(2) with an address and per sendmsg(2).
# Last, the terminal relay (under util-linux script's pseudo-terminal): `-- true`
# with a terminal against the same with none, `cat` of 100 MB to the terminal through
# the relay against cat outside, and the round trip of a key through the relay
# against the same without a sandbox.
set -euo pipefail

die() {
    echo "agent-sandbox: $*" >&2
    exit 1
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

command -v hyperfine >/dev/null || die "hyperfine not found: sudo apt-get install -y hyperfine"
command -v bwrap >/dev/null || die "bwrap not found: sudo apt-get install -y bubblewrap"
command -v git >/dev/null || die "git not found: sudo apt-get install -y git"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (for the peak memory): sudo apt-get install -y time"

if [[ -n ${AGENT_SANDBOX:-} ]]; then
    launcher=$AGENT_SANDBOX
elif ! launcher=$(command -v agent-sandbox); then
    launcher=$repo/dist/target/agent-sandbox/bin/agent-sandbox
fi
[[ -x $launcher ]] ||
    die "no agent-sandbox at $launcher: set AGENT_SANDBOX, put agent-sandbox on PATH, or build it (./install.sh)"
launcher=$(readlink -f "$launcher")

work=$(mktemp -d "${TMPDIR:-/tmp}/agent-sandbox-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir "$work/home" "$work/tmp" "$work/project"
# A cache with a large file, for the first write through the home's view (the copy-up).
mkdir "$work/home/.cache"
head -c 268435456 /dev/zero > "$work/home/.cache/big"
: > "$work/home/.cache/small"

# A small project of the kind agents work in: a git repository with lint configs.
project=$work/project
git -C "$project" -c init.defaultBranch=main init -q
echo '{ "formatter": { "enabled": true } }' >"$project/biome.json"
printf '[tool.ruff]\nline-length = 100\n' >"$project/pyproject.toml"
printf 'linters:\n  enable:\n    - govet\n' >"$project/.golangci.yml"
echo '{ "compilerOptions": { "strict": true } }' >"$project/tsconfig.json"
echo 'console.log("hi")' >"$project/index.js"

as_user=()
user=$(id -un)
if [[ $(id -u) -eq 0 ]]; then
    command -v setpriv >/dev/null || die "setpriv not found (needed as root): apt-get install -y util-linux"
    uid=${AGENT_SANDBOX_BENCH_UID:-65534}
    [[ $uid =~ ^[1-9][0-9]*$ ]] || die "AGENT_SANDBOX_BENCH_UID must be the number of an unprivileged user"
    user=$(getent passwd "$uid" | cut -d: -f1) || user=nobody
    # The image may sit below a directory that user cannot enter: measure a readable copy.
    cp -a "$(dirname "$(dirname "$launcher")")" "$work/image"
    chmod -R a+rX "$work/image"
    launcher=$work/image/bin/agent-sandbox
    chown -R "$uid:$uid" "$work/home" "$work/tmp" "$project"
    as_user=(setpriv "--reuid=$uid" "--regid=$uid" --clear-groups --)
fi

environment=(env -i "HOME=$work/home" "TMPDIR=$work/tmp" "PATH=/usr/local/bin:/usr/bin:/bin"
    "LANG=C.UTF-8" "USER=$user" "LOGNAME=$user")

run() {
    (cd "$project" && "${environment[@]}" "${as_user[@]}" "$@")
}

dry_run=$(run "$launcher" --dry-run -- true 2>"$work/dry-run.err") ||
    die "agent-sandbox --dry-run -- true failed: $(tr '\n' ' ' <"$work/dry-run.err")"
[[ -n $dry_run ]] || die "agent-sandbox --dry-run -- true printed nothing"
# The printed line binds files of the per-run directory that agent-sandbox creates
# when it really runs (and that --dry-run leaves uncreated): make it for raw bwrap.
# (its directory with the private /tmp and the stand-in file, and its sockets' one).
run_id=$(grep -o "agent-sandbox/run/[0-9a-f]\{16\}" <<<"$dry_run" | head -n 1 | sed 's|.*/||' || true)
if [[ -n $run_id ]]; then
    runtime_dir=$work/home/.local/state/agent-sandbox/run/$run_id
    sockets_dir=$(grep -o "[^ ]*/$run_id/guard" <<<"$dry_run" | head -n 1 | sed 's|/guard$||' || true)
    run sh -c 'mkdir -p -m 700 "$1/tmp" && : >"$1/hidden" && chmod 000 "$1/hidden" && : >"$1/policy" && : >"$1/mounts" && if [ -n "$2" ]; then
        mkdir -p -m 700 "$2/guard" "$2/net"; fi' sh "$runtime_dir" "$sockets_dir"
    # the git dir's copy-on-write view (when the line has one): its layer, and what the
    # first program mounts
    if grep -q -- "--cap-add" <<<"$dry_run"; then
        # (the first program copies the git dir into its lower dir itself, in memory of the
        # sandbox's own, and checks that it mounts on the very directory the record names)
        run sh -c 'l=$1/git-layers/0 && mkdir -p -m 700 "$l/lower" "$l/upper" "$l/work" &&
            i=/run/agent-sandbox-git/0 &&
            printf "%s\0%s\0g\0%s\0%s\0%s\0%s\0%s\0" "$(id -u)" "$(id -g)" "$2/.git" "$i/lower" \
                "$i/upper" "$i/work" "$(stat -c %d:%i "$2/.git")" >"$1/git-views"' \
            sh "$runtime_dir" "$project"
    fi
    # the store of the home's layers, which the line binds (its views are not in the records
    # above: raw bwrap mounts no overlay of the home)
    run mkdir -p -m 700 "$work/home/.local/share/agent-sandbox/homes"
    # the sockets' directory lies outside $work (in the sockets' short base): remove it too
    [[ -z $sockets_dir ]] || trap 'rm -rf "$work" "$sockets_dir"' EXIT
fi
run bash -c "$dry_run" >/dev/null 2>"$work/raw.err" ||
    die "the bwrap command line from --dry-run does not run: $(tr '\n' ' ' <"$work/raw.err")"

# The same project with a project config, for the run that reads one.
configured=$work/configured
cp -a "$project" "$configured"
cat >"$configured/.agent-sandbox.jsonc" <<'JSON'
{
  // a typical project policy
  "filesystem": {
    "presets": ["!@lint/go"],
    "ro": ["docs"],
    "exclude": [".env", "secrets"],
  },
  "commands": {"rm": false},
}
JSON
mkdir -p "$configured/docs" "$configured/secrets"
[[ -z ${as_user[*]} ]] || chown -R "$uid:$uid" "$configured"
# It loosens the policy (.golangci.yml becomes writable): the user trusts it once.
(cd "$configured" && "${environment[@]}" "${as_user[@]}" "$launcher" trust >/dev/null) ||
    die "agent-sandbox trust failed in $configured"

# A large repository, for the check of git metadata before and after every run:
# 20 000 tracked files and 20 submodules (gitlinks with their own repositories).
large=$work/large
mkdir -p "$large"
git -C "$large" -c init.defaultBranch=main init -q
for d in $(seq 1 100); do
    mkdir "$large/d$d"
    for f in $(seq 1 200); do : >"$large/d$d/f$f"; done
done
for s in $(seq 1 20); do
    git -C "$large" -c init.defaultBranch=main init -q "sub$s"
    git -C "$large/sub$s" -c user.name=b -c user.email=b@b commit -q --allow-empty -m s
    printf '[submodule "sub%s"]\n\tpath = sub%s\n\turl = ./sub%s\n' "$s" "$s" "$s" >>"$large/.gitmodules"
done
git -C "$large" add -A >/dev/null 2>&1
git -C "$large" -c user.name=b -c user.email=b@b commit -q -m large
[[ -z ${as_user[*]} ]] || chown -R "$uid:$uid" "$large"

in_dir() {
    printf 'cd %q && %s' "$1" "$(printf '%q ' "${environment[@]}" "${as_user[@]}")"
}
prefix=$(in_dir "$project")
tool=$(printf '%q' "$launcher")
# Directories with 1 000 and 20 000 files, for the planning of --exclude '*'.
for n in 1000 20000; do
    mkdir -p "$work/many$n"
    (cd "$work/many$n" && seq 1 "$n" | xargs touch)
done
[[ -z ${as_user[*]} ]] || chown -R "$uid:$uid" "$work/many1000" "$work/many20000"
java=$(dirname "$(dirname "$launcher")")/runtime/bin/java

hyperfine --shell=bash --warmup 3 --export-json "$work/result.json" -i "$@" \
    --command-name "raw bwrap" "$prefix$dry_run" \
    --command-name "agent-sandbox -- true" "$prefix$tool -- true" \
    --command-name "agent-sandbox -- true, git view off" "${prefix}env AGENT_SANDBOX_GIT_VIEW=off $tool -- true" \
    --command-name "agent-sandbox --network=false -- true" "$prefix$tool --network=false -- true" \
    --command-name "bundled java -version" "$prefix$(printf '%q' "$java") -Xshare:auto -version 2>/dev/null" \
    --command-name "plan --exclude '*', 1 000 files" "$(in_dir "$work/many1000")$tool --dry-run --exclude '*' -- true >/dev/null 2>&1" \
    --command-name "plan --exclude '*', 20 000 files" "$(in_dir "$work/many20000")$tool --dry-run --exclude '*' -- true >/dev/null 2>&1" \
    --command-name "agent-sandbox -- true, project config" "$(in_dir "$configured")$tool -- true" \
    --command-name "agent-sandbox -- true, large repository" "$(in_dir "$large")$tool -- true" \
    --command-name "agent-sandbox --dry-run -- true" "$prefix$tool --dry-run -- true >/dev/null" \
    --command-name "agent-sandbox check" "$prefix$tool check >/dev/null" \
    --command-name "agent-sandbox -- true, home views off" "${prefix}env AGENT_SANDBOX_HOME_VIEW=off $tool -- true" \
    --command-name "first write to a 256 MB cache file" "$prefix$tool -- sh -c 'echo >> ~/.cache/big'" \
    --command-name "first write to a small cache file" "$prefix$tool -- sh -c 'echo >> ~/.cache/small'" \
    --command-name "agent-sandbox -- true, large repository, git view off" \
    "$(in_dir "$large")env AGENT_SANDBOX_GIT_VIEW=off $tool -- true"

# hyperfine writes one "median" (seconds) per command, in the order given.
mapfile -t medians < <(grep -o '"median": *[0-9.eE+-]*' "$work/result.json" | sed 's/.*: *//')
[[ ${#medians[@]} -eq 15 ]] || die "cannot read the medians from hyperfine's JSON report"

# Peak memory of one run: the JVM that plans, starts and waits for the sandbox.
rss_kb=$(cd "$project" && "${environment[@]}" "${as_user[@]}" /usr/bin/time -f '%M' "$launcher" -- true 2>&1 >/dev/null | tail -n 1)

awk -v raw="${medians[0]}" -v run="${medians[1]}" -v noview="${medians[2]}" -v off="${medians[3]}" \
    -v jv="${medians[4]}" -v p1="${medians[5]}" -v p20="${medians[6]}" -v cfg="${medians[7]}" -v big="${medians[8]}" \
    -v dry="${medians[9]}" -v chk="${medians[10]}" -v homeoff="${medians[11]}" -v bigfile="${medians[12]}" \
    -v small="${medians[13]}" -v bignoview="${medians[14]}" -v rss="$rss_kb" 'BEGIN {
    printf "raw bwrap: %.1f ms\n", raw * 1000
    printf "agent-sandbox: %.1f ms\n", run * 1000
    printf "ratio: %.2f\n", run / raw
    printf "the git view: %.1f ms (agent-sandbox with AGENT_SANDBOX_GIT_VIEW=off: %.1f ms)\n",
        (run - noview) * 1000, noview * 1000
    printf "the home views: %.1f ms (agent-sandbox with AGENT_SANDBOX_HOME_VIEW=off: %.1f ms)\n",
        (run - homeoff) * 1000, homeoff * 1000
    printf "first write to a cache file through the home view: 256 MB %.1f ms, small %.1f ms (copy-up: %.1f ms)\n",
        bigfile * 1000, small * 1000, (bigfile - small) * 1000
    printf "agent-sandbox --network=false: %.1f ms\n", off * 1000
    printf "bundled java -version: %.1f ms; agent-sandbox minus (raw bwrap + java -version): %.1f ms\n", jv * 1000,
        (run - raw - jv) * 1000
    printf "--dry-run --exclude *: 1 000 files %.1f ms, 20 000 files %.1f ms\n", p1 * 1000, p20 * 1000
    printf "agent-sandbox with a project config: %.1f ms (ratio %.2f)\n", cfg * 1000, cfg / raw
    printf "agent-sandbox in a large repository (20 000 files, 20 submodules): %.1f ms\n", big * 1000
    printf "its 21 git views (each a copy of a git dir and two overlays): %.1f ms (git view off: %.1f ms)\n",
        (big - bignoview) * 1000, bignoview * 1000
    printf "agent-sandbox --dry-run: %.1f ms\n", dry * 1000
    printf "agent-sandbox check: %.1f ms\n", chk * 1000
    printf "peak RSS of agent-sandbox -- true: %.1f MB\n", rss / 1024
}'

# ---------------------------------------------------------------- wrappers

guard_script=$work/home/touch-guard.sh
printf '#!/bin/sh\nexec "$AGENT_SANDBOX_REAL" "$@"\n' >"$guard_script"
chmod 755 "$guard_script"
[[ -z ${as_user[*]} ]] || chown "$uid:$uid" "$guard_script"

# Inside the sandbox: git is wrapped first (real/1), rm is blocked (no real binary),
# touch is script-wrapped (real/2).
run "$launcher" --cmd rm=false --cmd "touch=$guard_script" -- \
    hyperfine -N --warmup 20 --runs 300 -i --export-json "$project/.bench-wrappers.json" --style basic \
    --command-name "git --version, wrapped" "git --version" \
    --command-name "git --version, real" "/run/agent-sandbox/real/1/git --version" \
    --command-name "rm, blocked" "rm /tmp/nothing" \
    --command-name "true, real" "/usr/bin/true" \
    --command-name "touch, script-wrapped" "touch /tmp/t" \
    --command-name "touch, real" "/run/agent-sandbox/real/2/touch /tmp/t" >/dev/null ||
    die "the wrapper benchmark inside the sandbox failed"

mapfile -t wm < <(grep -o '"median": *[0-9.eE+-]*' "$project/.bench-wrappers.json" | sed 's/.*: *//')
[[ ${#wm[@]} -eq 6 ]] || die "cannot read the wrapper medians from hyperfine's JSON report"
awk -v gw="${wm[0]}" -v gr="${wm[1]}" -v bw="${wm[2]}" -v br="${wm[3]}" -v sw="${wm[4]}" -v sr="${wm[5]}" 'BEGIN {
    printf "git --version: %.2f ms wrapped, %.2f ms real, +%.2f ms per call\n", gw * 1000, gr * 1000, (gw - gr) * 1000
    printf "blocked rm (reported to the denial log): %.2f ms (true: %.2f ms), +%.2f ms per call\n", bw * 1000, br * 1000, (bw - br) * 1000
    printf "script-wrapped touch: %.2f ms, real %.2f ms, +%.2f ms per call\n", sw * 1000, sr * 1000, (sw - sr) * 1000
}'

# ---------------------------------------------------------------- git guard: socket and fallback

helper=$repo/launcher/target/no-unix-sockets
[[ -x $helper ]] || make -s -C "$repo/launcher" target/no-unix-sockets >/dev/null ||
    die "cannot build the no-unix-sockets helper: make -C launcher check"
cp "$helper" "$work/home/no-unix-sockets"
[[ -z ${as_user[*]} ]] || chown "$uid:$uid" "$work/home/no-unix-sockets"

run "$launcher" -- \
    hyperfine -N --warmup 20 --runs 300 -i --export-json "$project/.bench-guard.json" --style basic \
    --command-name "git status, wrapped" "git status --short" \
    --command-name "git status, real" "/run/agent-sandbox/real/1/git status --short" \
    --command-name "git log -1, wrapped" "git log -1 --format=%h" \
    --command-name "git log -1, real" "/run/agent-sandbox/real/1/git log -1 --format=%h" >/dev/null ||
    die "the git guard benchmark inside the sandbox failed"
run "$launcher" -- "$work/home/no-unix-sockets" \
    hyperfine -N --warmup 3 --runs 30 -i --export-json "$project/.bench-fallback.json" --style basic \
    --command-name "git status, wrapped, no Unix sockets" "git status --short" \
    --command-name "git status, real, no Unix sockets" "/run/agent-sandbox/real/1/git status --short" >/dev/null ||
    die "the git guard fallback benchmark inside the sandbox failed"

mapfile -t gm < <(grep -o '"median": *[0-9.eE+-]*' "$project/.bench-guard.json" | sed 's/.*: *//')
mapfile -t fm < <(grep -o '"median": *[0-9.eE+-]*' "$project/.bench-fallback.json" | sed 's/.*: *//')
[[ ${#gm[@]} -eq 4 && ${#fm[@]} -eq 2 ]] || die "cannot read the git guard medians from hyperfine's JSON report"
awk -v sw="${gm[0]}" -v sr="${gm[1]}" -v lw="${gm[2]}" -v lr="${gm[3]}" -v fw="${fm[0]}" -v fr="${fm[1]}" 'BEGIN {
    printf "git status, socket path: %.2f ms wrapped, %.2f ms real, +%.2f ms per call\n", sw * 1000, sr * 1000, (sw - sr) * 1000
    printf "git log -1, socket path: %.2f ms wrapped, %.2f ms real, +%.2f ms per call\n", lw * 1000, lr * 1000, (lw - lr) * 1000
    printf "git status, fallback (no Unix sockets): %.2f ms wrapped, %.2f ms real, +%.2f ms per call\n", fw * 1000, fr * 1000, (fw - fr) * 1000
}'

# ---------------------------------------------------------------- network

# What the network costs at the start: the sandbox's own network stack (the default where
# slirp4netns and a usable /dev/net/tun are there), its fallback the proxy, and none.
if ! run "$launcher" --debug -- true 2>&1 | grep -q "network: on, through a network stack"; then
    echo "note: no network stack here (see agent-sandbox doctor): 'the stack' below is the proxy too"
fi
hyperfine --shell=bash --warmup 3 --export-json "$work/net.json" -i "$@" --style basic \
    --command-name "network off" "$prefix$tool --network=false -- true" \
    --command-name "network on, the stack" "$prefix$tool -- true" \
    --command-name "network on, the proxy" "${prefix}env AGENT_SANDBOX_NETWORK_STACK=proxy $tool -- true" \
    --command-name "network on, the stack with an allow-list" "$prefix$tool --allow-host example.org -- true" \
    >/dev/null
mapfile -t nm < <(grep -o '"median": *[0-9.eE+-]*' "$work/net.json" | sed 's/.*: *//')
[[ ${#nm[@]} -eq 4 ]] || die "cannot read the network medians from hyperfine's JSON report"
awk -v off="${nm[0]}" -v stack="${nm[1]}" -v proxy="${nm[2]}" -v allow="${nm[3]}" 'BEGIN {
    printf "-- true: network off %.1f ms, the stack %.1f ms (+%.1f ms), the proxy %.1f ms (+%.1f ms)\n",
        off * 1000, stack * 1000, (stack - off) * 1000, proxy * 1000, (proxy - off) * 1000
    printf "-- true with an allow-list (the DNS filter and its routes): %.1f ms (+%.1f ms on the stack)\n",
        allow * 1000, (allow - stack) * 1000
}'

# Throughput from a granted host port: 300 MB from a server on the host's loopback,
# read inside through --host-port (the median of 5 downloads).
command -v python3 >/dev/null || die "python3 not found (for the network figures): sudo apt-get install -y python3"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
chunk = bytes(1 << 20)
while True:
    c, _ = s.accept()
    try:
        for _ in range(300):
            c.sendall(chunk)
    except OSError:
        pass
    c.close()
' "$port" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work" ${sockets_dir:+"$sockets_dir"}' EXIT
python3 -c '
import socket, sys, time
for _ in range(400):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1]))).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.025)
sys.exit("the host port server did not start")
' "$port" || die "the host port server did not start"
run "$launcher" --host-port "$port" -- python3 -c '
import socket, statistics, sys, time
rates = []
buffer = bytearray(1 << 20)
for _ in range(5):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    start, got = time.monotonic(), 0
    while True:
        n = s.recv_into(buffer)
        if not n:
            break
        got += n
    rates.append(got / (time.monotonic() - start) / 1e6)
    if got != 300 << 20:
        sys.exit("short download: %d bytes" % got)
print("300 MB from a granted host port: %.0f MB/s (median of 5)" % statistics.median(rates))
' "$port" || die "the host port download failed"
kill "$server" 2>/dev/null || true

# DNS lookups: the npm registry's name (as npm names it), looked up 20 times inside and on
# the host (the median; nothing caches in between but the resolvers themselves), and inside
# through the DNS filter of an allow-list that names it.
if command -v npm >/dev/null && registry=$(run npm config get registry 2>/dev/null) &&
    name=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlparse(sys.argv[1]).hostname or "")' "$registry") &&
    [[ -n $name ]]; then
    lookup='
import socket, statistics, sys, time
times = []
for _ in range(20):
    start = time.monotonic()
    socket.getaddrinfo(sys.argv[1], 443, proto=socket.IPPROTO_TCP)
    times.append((time.monotonic() - start) * 1000)
print("%.2f" % statistics.median(times))
'
    inside=$(run "$launcher" -- python3 -c "$lookup" "$name") || die "the DNS lookups inside failed"
    host=$(run python3 -c "$lookup" "$name") || die "the DNS lookups on the host failed"
    # with an allow-list naming it: through the DNS filter, which adds a route for each answer
    filtered=$(run "$launcher" --allow-host "$name" -- python3 -c "$lookup" "$name") ||
        die "the DNS lookups through the allow-list's filter failed"
    echo "DNS lookup of the npm registry's name: ${inside} ms inside, ${filtered} ms through the allow-list's" \
        "DNS filter, ${host} ms on the host (median of 20)"
else
    echo "DNS lookup: not measured (no npm to name its registry)"
fi

# ---------------------------------------------------------------- the seccomp filter

cost=$repo/launcher/target/syscall-cost
[[ -x $cost ]] || make -s -C "$repo/launcher" target/syscall-cost >/dev/null ||
    die "cannot build the syscall-cost helper: make -C launcher target/syscall-cost"
cp "$cost" "$work/home/syscall-cost"
[[ -z ${as_user[*]} ]] || chown "$uid:$uid" "$work/home/syscall-cost"
outside=$(run "$work/home/syscall-cost") || die "the syscall-cost helper failed outside"
inside=$(run "$launcher" -- "$work/home/syscall-cost") || die "the syscall-cost helper failed inside the sandbox"
awk -v outside="$outside" -v inside="$inside" 'BEGIN {
    n = split(outside, o, "\n"); split(inside, s, "\n")
    for (i = 1; i <= n; i++) {
        split(o[i], a, " "); split(s[i], b, " ")
        printf "seccomp filter, %s: %.0f ns outside, %.0f ns inside, %+.0f ns per call\n", a[1], a[2], b[2], b[2] - a[2]
    }
}'
# The socket guard of --share-tmp: every connect(2), sendmsg(2) and sendmmsg(2), and
# sendto(2) with an address, is answered by the guard (the Unix socket in the shared /tmp is the sandbox's own: the check
# of the sandbox's sockets is in the figure).
shared=$(run "$launcher" --share-tmp -- env TMPDIR=/tmp "$work/home/syscall-cost") ||
    die "the syscall-cost helper failed inside the sandbox with --share-tmp"
awk -v inside="$inside" -v shared="$shared" 'BEGIN {
    n = split(inside, s, "\n"); split(shared, t, "\n")
    for (i = 1; i <= n; i++) {
        split(s[i], a, " "); split(t[i], b, " ")
        if (a[1] ~ /^(connect|sendto|sendmsg)/) {
            printf "socket guard (--share-tmp), %s: %.0f ns without, %.0f ns with, %+.0f ns per call\n", a[1], a[2], b[2], b[2] - a[2]
        }
    }
}'

# ---------------------------------------------------------------- git view: the host's apply

# What the host's apply of the view costs, end to end: a commit of one changed file inside
# a packed project of 200 files, and a fetch of a
# pack of 1 000 objects, each with the view and with AGENT_SANDBOX_GIT_VIEW=off (the
# difference is the view's mount and the apply). Each run starts from a fresh copy of the
# repository (hyperfine's --prepare, not measured), so every object is new to the host.
applybase=$work/applybase
remote=$work/remote
git -C "$work" -c init.defaultBranch=main init -q applybase
# a small project, packed as after a clone: the commit inside changes one file in it
mkdir -p "$applybase/src/main"
seq 1 200 | xargs -n 50 sh -c 'for i do echo "$i" >"$0/src/main/f$i.txt"; done' "$applybase"
git -C "$applybase" add src
git -C "$applybase" -c user.name=b -c user.email=b@b commit -q -m base
git -C "$applybase" gc -q
git clone -q "$applybase" "$remote"
mkdir "$remote/many"
# fetched from inside the project (the sandbox has a /tmp of its own): an untracked bare copy
# 998 blobs, their tree and a commit: 1 000 objects
(cd "$remote/many" && seq 1 998 | xargs -n 100 sh -c 'for i do echo "$i" >"$i"; done' sh)
git -C "$remote" add many && git -C "$remote" -c user.name=b -c user.email=b@b commit -q -m many
git clone -q --bare "$remote" "$applybase/remote.git"
applyrun=$work/applyrun
[[ -z ${as_user[*]} ]] || chown -R "$uid:$uid" "$applybase"
# synced after the copy: else the copy's own writeback stalls the apply's renames (the
# journal's commit), a cost of the benchmark's, not of the apply
fresh="rm -rf $(printf '%q' "$applyrun") && cp -a $(printf '%q' "$applybase") $(printf '%q' "$applyrun") && sync"
inrun=$(in_dir "$applyrun")
commit="sh -c 'echo changed >>src/main/f7.txt && git -c user.name=b -c user.email=b@b -c commit.gpgsign=false commit -qam next'"
fetch="git fetch -q ./remote.git main:refs/remotes/r/main"
hyperfine --shell=bash --warmup 2 --export-json "$work/apply.json" -i \
    --prepare "$fresh" \
    --command-name "commit inside, git view" "$inrun$tool -- $commit" \
    --command-name "commit inside, git view off" "${inrun}env AGENT_SANDBOX_GIT_VIEW=off $tool -- $commit" \
    --command-name "fetch of 1 000 objects, git view" "$inrun$tool -- $fetch" \
    --command-name "fetch of 1 000 objects, git view off" "${inrun}env AGENT_SANDBOX_GIT_VIEW=off $tool -- $fetch" \
    >/dev/null || die "the git view's apply benchmark failed"
mapfile -t am < <(grep -o '"median": *[0-9.eE+-]*' "$work/apply.json" | sed 's/.*: *//')
[[ ${#am[@]} -eq 4 ]] || die "cannot read the apply medians from hyperfine's JSON report"
awk -v cv="${am[0]}" -v co="${am[1]}" -v fv="${am[2]}" -v fo="${am[3]}" 'BEGIN {
    printf "the git view with a commit inside (its mount and the apply): %.1f ms (%.1f ms with the view, %.1f without)\n",
        (cv - co) * 1000, cv * 1000, co * 1000
    printf "the git view with a fetch of 1 000 objects inside: %.1f ms (%.1f ms with the view, %.1f without)\n",
        (fv - fo) * 1000, fv * 1000, fo * 1000
}'

# The same commit with the state dir, where the view's layer lies, in memory (/dev/shm):
# what the tool's own work costs, apart from what a disk adds to the layer's writes.
if [[ -d /dev/shm && -w /dev/shm && $(stat -f -c %T /dev/shm) == tmpfs ]]; then
    shm_state=$(mktemp -d /dev/shm/agent-sandbox-bench.XXXXXX)
    [[ -z ${as_user[*]} ]] || chown "$uid:$uid" "$shm_state"
    in_memory="env XDG_STATE_HOME=$(printf '%q' "$shm_state")"
    hyperfine --shell=bash --warmup 2 --export-json "$work/apply-memory.json" -i \
        --prepare "$fresh" \
        --command-name "commit inside, git view, state dir in memory" "$inrun$in_memory $tool -- $commit" \
        --command-name "commit inside, git view off, state dir in memory" \
        "$inrun$in_memory AGENT_SANDBOX_GIT_VIEW=off $tool -- $commit" \
        >/dev/null || die "the git view's apply benchmark with the state dir in memory failed"
    rm -rf "$shm_state"
    mapfile -t mm < <(grep -o '"median": *[0-9.eE+-]*' "$work/apply-memory.json" | sed 's/.*: *//')
    [[ ${#mm[@]} -eq 2 ]] || die "cannot read the in-memory apply medians from hyperfine's JSON report"
    awk -v cv="${mm[0]}" -v co="${mm[1]}" 'BEGIN {
        printf "the same with the state dir in memory (the tool'"'"'s own work): %.1f ms (%.1f ms with the view, %.1f without)\n",
            (cv - co) * 1000, cv * 1000, co * 1000
    }'
else
    echo "the git view with a commit inside, state dir in memory: not measured (no tmpfs at /dev/shm)"
fi

# ---------------------------------------------------------------- terminal relay

if ! command -v script >/dev/null || ! command -v python3 >/dev/null; then
    echo "terminal relay: not measured (needs script from util-linux and python3)"
    exit 0
fi
# 100 MB of text with colours, as a build log or an agent's TUI writes it
run sh -c 'yes "compiling src/module.c \033[32mok\033[0m \033[1mwarnings: 0\033[0m" | head -c 100000000 >.bench-100mb'
in_pty() {
    printf 'script -qec %q /dev/null >/dev/null' "$1"
}
hyperfine --shell=bash --warmup 3 --export-json "$work/relay.json" -i --style basic \
    --command-name "agent-sandbox -- true, terminal relayed" "$(in_pty "$prefix$tool -- true")" \
    --command-name "agent-sandbox -- true, no terminal" "$(in_pty "$prefix$tool -- true </dev/null >/dev/null 2>&1")" >/dev/null
hyperfine --shell=bash --warmup 1 --runs 5 --export-json "$work/relay-cat.json" -i --style basic \
    --command-name "cat 100 MB through the relay" "$(in_pty "$prefix$tool -- cat .bench-100mb")" \
    --command-name "cat 100 MB, no sandbox" "$(in_pty "${prefix}cat .bench-100mb")" >/dev/null
mapfile -t rm < <(grep -o '"median": *[0-9.eE+-]*' "$work/relay.json" "$work/relay-cat.json" | sed 's/.*: *//')
[[ ${#rm[@]} -eq 4 ]] || die "cannot read the relay medians from hyperfine's JSON report"
# A key's round trip: one byte written to the terminal, read back from a raw cat
# inside (and outside, for the base), 2 000 times; median and 99th percentile.
cat >"$work/latency.py" <<'PY'
import os, pty, sys, time, select
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
def read_until(marker):
    seen = b""
    while marker not in seen:
        select.select([fd], [], [], 10)
        seen += os.read(fd, 4096)
read_until(b"ready")
times = []
for i in range(2000):
    start = time.perf_counter()
    os.write(fd, b"k")
    got = b""
    while not got:
        select.select([fd], [], [], 10)
        got = os.read(fd, 64)
    times.append(time.perf_counter() - start)
os.write(fd, b"\x04")
os.kill(pid, 15)
os.waitpid(pid, 0)
times.sort()
print("%.1f %.1f" % (times[len(times) // 2] * 1e6, times[len(times) * 99 // 100] * 1e6))
PY
echo_raw='stty raw -echo; echo ready; exec cat'
read -r sandboxed_median sandboxed_p99 < <(run python3 "$work/latency.py" "$launcher" -- sh -c "$echo_raw")
read -r plain_median plain_p99 < <(run python3 "$work/latency.py" sh -c "$echo_raw")
awk -v t="${rm[0]}" -v n="${rm[1]}" -v c="${rm[2]}" -v d="${rm[3]}" -v sm="$sandboxed_median" -v sp="$sandboxed_p99" \
    -v pm="$plain_median" -v pp="$plain_p99" 'BEGIN {
    printf "agent-sandbox -- true with the terminal relayed: %.1f ms, without a terminal: %.1f ms, relay +%.2f ms\n",
        t * 1000, n * 1000, (t - n) * 1000
    printf "cat 100 MB to the terminal: %.0f MB/s through the relay (%.2f s), %.0f MB/s without a sandbox (%.2f s)\n",
        100 / c, c, 100 / d, d
    printf "key round trip: %.0f us median, %.0f us p99 through the relay; %.0f us, %.0f us without a sandbox\n",
        sm, sp, pm, pp
}'
