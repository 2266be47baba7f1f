// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The escape corpus: an adversarial proof of the security guarantees of spec section 11
 * under real bwrap, as an unprivileged user.
 *
 * <p>Each target (a read-only file and directory, an excluded file and directories, the
 * loaded config files, the repository's hooks and config, the detection entry point, a
 * blocked command) is attacked by every route in the lists below, all in one sandbox run
 * per target: a runner script tries each route in a fresh shell and reports, per route,
 * its exit status, how much it printed, whether the protected state changed and whether
 * the secret showed up anywhere. A route has succeeded, that is escaped, when the
 * protected state changed or the secret leaked; the host side is compared before and
 * after as well. Besides not escaping, every route must fail (a read route: fail or read
 * nothing), unless it is marked harmless with the reason why running without an error
 * changes nothing outside.
 *
 * <p>The protected state is watched through a descriptor the runner opened on the target
 * before the first route, so that it is the host's original file or directory that is
 * checked, wherever a route moved the names around it; where no route can move the names
 * (the parent is itself a mount point, or read-only), the path is checked as well.
 *
 * <p>At the end the class prints {@code escape attempts: N tried, 0 succeeded}.
 */
class EscapeIT {

    private static final AtomicInteger TRIED = new AtomicInteger();
    private static final List<String> ESCAPES = Collections.synchronizedList(new ArrayList<>());
    private static final List<String> NOT_TRIED = Collections.synchronizedList(new ArrayList<>());

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @AfterAll
    static void summary() {
        System.out.println("escape attempts: " + TRIED.get() + " tried, " + ESCAPES.size() + " succeeded");
        if (!NOT_TRIED.isEmpty()) {
            System.out.println("escape attempts not tried: " + NOT_TRIED.size() + " ("
                    + NOT_TRIED.stream().distinct().collect(Collectors.joining("; ")) + ")");
        }
        assertThat(ESCAPES).as("routes that escaped the sandbox").isEmpty();
    }

    // ------------------------------------------------------------------ routes

    /** What a route tries: change the protected state, or read the secret. */
    enum Goal {
        CHANGE, READ
    }

    /**
     * One route: a shell script run by {@code sh -c} in the working directory. A null
     * {@code harmless} means it must fail; otherwise it says why running without an error
     * is fine (it changes nothing outside the sandbox).
     *
     * <p>Variables: {@code T} the target, {@code P} its parent, {@code N} its name, {@code F}
     * a protected file (T itself, or {@code T/a} in a protected directory), {@code RF} F
     * relative to the working directory, {@code S} the secret file of an excluded target,
     * {@code RS} S relative to the working directory, {@code X} an empty scratch
     * directory under /tmp, {@code L} the host's agent-sandbox launcher, {@code PY} a
     * Python program for the new mount API (see {@link #MOUNT_API_PY}). File descriptor 7
     * is the runner's read-only descriptor on T.
     */
    record Route(Goal goal, String script, String harmless) {
        Route harmlessBecause(String why) {
            return new Route(goal, script, why);
        }
    }

    private static Route change(String script) {
        return new Route(Goal.CHANGE, script, null);
    }

    private static Route read(String script) {
        return new Route(Goal.READ, script, null);
    }

    /** Starts a sibling process in the same sandbox, its pid in $p; END_SIBLING stops it and keeps the status. */
    private static final String SIBLING = "sleep 60 & p=$!; ";

    private static final String SIBLING_IN_DIR_OF_F = siblingIn("F");

    private static final String SIBLING_IN_DIR_OF_S = siblingIn("S");

    /** A sibling whose working directory is the directory of $F or $S (which may be hidden from it). */
    private static String siblingIn(String variable) {
        String dir = "\"$(dirname \"$" + variable + "\")\"";
        return "(cd " + dir + " && exec sleep 60) & p=$!; n=0; until [ \"$(readlink /proc/$p/cwd)\" = " + dir
                + " ] || [ $n -gt 100 ]; do n=$((n+1)); sleep 0.02; done; ";
    }

    private static final String SIBLING_IN_OWN_NAMESPACE = "unshare -Urm sleep 60 & p=$!; n=0;"
            + " while [ \"$(readlink /proc/$p/ns/mnt)\" = \"$(readlink /proc/self/ns/mnt)\" ] && [ $n -lt 100 ];"
            + " do n=$((n+1)); sleep 0.02; done; ";

    private static final String END_SIBLING = "s=$?; kill $p; exit $s";

    /** Routes that try to change the contents or metadata of the protected file $F. */
    private static List<Route> fileRoutes(boolean setfacl) {
        List<Route> routes = new ArrayList<>(List.of(
                change("echo x > \"$F\""),
                change("echo x >> \"$F\""),
                change(": > \"$F\""),
                change("truncate -s 0 \"$F\""),
                change("truncate -s 1M \"$F\""),
                change("printf x | dd of=\"$F\" conv=notrunc status=none"),
                change("cp /etc/hostname \"$F\""),
                change("tee -a \"$F\" </etc/hostname"),
                change("sed -i s/^/x/ \"$F\""),
                // perl -i only warns when it cannot replace the file: the route checks its own result
                change("perl -pi -e s/^/x/ \"$F\" && grep -q ^x \"$F\""),
                change("python3 -c 'import sys; open(sys.argv[1], \"r+\").write(\"x\")' \"$F\""),
                change("exec 3<>\"$F\""),
                change("rm \"$F\""),
                change("rm -f \"$F\""),
                change("unlink \"$F\""),
                change("echo y > \"$X/other\" && mv -f \"$X/other\" \"$F\""),
                change("mv \"$F\" \"$F.moved\""),
                change("mv \"$F\" \"$X/\""),
                change("ln \"$F\" \"$X/hard\" && echo x >> \"$X/hard\""),
                change("ln \"$F\" \"$F.hard\" && echo x >> \"$F.hard\""),
                change("ln -sfT /etc/hostname \"$F\""),
                change("ln -s \"$F\" \"$X/link\" && echo x >> \"$X/link\""),
                change("d=$(dirname \"$F\"); echo x >> \"$d/../$(basename \"$d\")/./$(basename \"$F\")\""),
                change("echo x >> \"$RF\""),
                change("echo x >> \"/proc/self/root$F\""),
                change("echo x >> \"/proc/self/cwd/$RF\""),
                change("echo x >> \"/proc/$$/root$F\""),
                change("echo x >> \"/proc/1/root$F\""),
                change(SIBLING + "echo x >> \"/proc/$p/root$F\"; " + END_SIBLING),
                change(SIBLING_IN_DIR_OF_F + "echo x >> \"/proc/$p/cwd/$(basename \"$F\")\"; " + END_SIBLING),
                change(SIBLING_IN_OWN_NAMESPACE + "echo x >> \"/proc/$p/root$F\"; " + END_SIBLING),
                change("chmod 666 \"$F\""),
                change("chmod 000 \"$F\""),
                change("chown \"$(id -u):$(id -g)\" \"$F\""),
                change("chgrp \"$(id -g)\" \"$F\""),
                change("touch \"$F\""),
                change("touch -d 2000-01-01 \"$F\""),
                change("python3 -c 'import os, sys; os.setxattr(sys.argv[1], \"user.escape\", b\"1\")' \"$F\""),
                // an access ACL granting root rw (what setfacl -m u:0:rw writes), set as the raw xattr
                change("python3 -c 'import os, sys; os.setxattr(sys.argv[1], \"system.posix_acl_access\","
                        + " bytes.fromhex(\"02000000\" \"01000600ffffffff\" \"0200060000000000\""
                        + " \"04000400ffffffff\" \"10000600ffffffff\" \"20000400ffffffff\"))' \"$F\""),
                change("chattr +i \"$F\"")));
        if (setfacl) {
            routes.add(change("setfacl -m u:0:rw \"$F\""));
        }
        return routes;
    }

    /** Routes through mounts: a new user and mount namespace, the new mount API, a nested bwrap or agent-sandbox. */
    private static final List<Route> MOUNT_ROUTES = List.of(
            change("unshare -Urm sh -c 'mount -o remount,rw \"$T\" && echo x >> \"$F\"'"),
            change("unshare -Urm sh -c 'mount -o remount,bind,rw \"$T\" && echo x >> \"$F\"'"),
            change("unshare -Urm sh -c 'umount \"$T\" && echo x >> \"$F\"'"),
            change("unshare -Urm sh -c 'umount -l \"$T\" && echo x >> \"$F\"'"),
            change("unshare -Urm sh -c 'mount --bind \"$T\" \"$T\" && mount -o remount,bind,rw \"$T\""
                    + " && echo x >> \"$F\"'"),
            change("unshare -Urm sh -c 'mkdir \"$X/m\" && mount --bind \"$P\" \"$X/m\""
                    + " && echo x >> \"$X/m/${F#\"$P\"/}\"'"),
            change("unshare -Urm python3 -c \"$PY\" write \"$T\""),
            change("unshare -Urm python3 -c \"$PY\" write-below \"$T\" \"$F\""),
            change("python3 -c \"$PY\" write \"$T\""),
            change("bwrap --dev-bind / / --bind \"$T\" \"$T\" sh -c 'echo x >> \"$F\"'"),
            change("bwrap --dev-bind / / --bind \"$P\" \"$P\" sh -c 'echo x >> \"$F\"'"),
            change("bwrap --bind / / --dev /dev sh -c 'echo x >> \"$F\"'"),
            change("/run/agent-sandbox/agent-sandbox --rw \"$T\" -- sh -c 'echo x >> \"$F\"'"),
            change("\"$L\" --rw \"$P\" --rw \"$T\" -- sh -c 'echo x >> \"$F\"'"));

    /** Routes only a protected file has: its read-only descriptor reopened for writing, a sibling renamed over it. */
    private static final List<Route> FILE_ONLY_ROUTES = List.of(
            change("echo x >> /proc/self/fd/7"),
            change("echo y > \"$P/.escape-other\" && mv -f \"$P/.escape-other\" \"$T\""));

    /** Routes only a protected directory has: its entries, and the directory itself. */
    private static final List<Route> DIR_ONLY_ROUTES = List.of(
            change("echo x > \"$T/escape-new\""),
            change("mkdir \"$T/escape-dir\""),
            change("touch \"$T/escape-new\""),
            change("mkfifo \"$T/escape-fifo\""),
            change("ln -s x \"$T/escape-link\""),
            change("cp /etc/hostname \"$T/\""),
            change("echo x > /proc/self/fd/7/escape-new"),
            change("rm \"$T/sub/b\""),
            change("rm -rf \"$T/sub\""),
            change("rmdir \"$T/sub\""),
            change("mv \"$T/sub\" \"$T/sub-moved\""),
            change("mv -f \"$T/sub/b\" \"$F\""),
            change("mv \"$T\" \"$T.moved\""),
            change("mv \"$T\" \"$X/\""),
            change("ln -sfT \"$X\" \"$T\""),
            change("mkdir \"$X/d\" && mv -T \"$X/d\" \"$T\""),
            change("chmod 777 \"$T\""),
            change("chmod 000 \"$T\""),
            change("touch \"$T\""),
            change("rm -rf \"$T\""));

    /**
     * Known limit (spec section 11, README threat model): rules protect contents, not the
     * names around them. A protected file or directory in a writable directory that is not
     * itself a mount point (pkg/lint.json, .git/hooks, .git/config) cannot be changed, but
     * the writable parent can be renamed away and a new one made, so the host later finds
     * another file at the path; for a repository that means a fresh .git with writable
     * hooks. The route is allowed to run; the original, watched by inode, must not change.
     */
    private static final String KNOWN_LIMIT = "known limit (spec section 11): a writable parent can be renamed"
            + " away and a new file put at the path; the protected original is unchanged";

    /** Last, because they change what the names around the target mean: the parent removed, and renamed away. */

    private static List<Route> parentRoutes(boolean directory) {
        return List.of(
                change("rm -rf \"$P\""),
                change("mv \"$P\" \"$P.away\" && mkdir \"$P\" && "
                        + (directory ? "mkdir \"$T\" && echo replaced > \"$T/a\"" : "echo replaced > \"$T\""))
                        .harmlessBecause(KNOWN_LIMIT));
    }

    /** Every route against a protected (read-only) file or directory. */
    private static List<Route> protectedRoutes(boolean directory, boolean setfacl) {
        List<Route> routes = new ArrayList<>(fileRoutes(setfacl));
        routes.addAll(MOUNT_ROUTES);
        routes.addAll(directory ? DIR_ONLY_ROUTES : FILE_ONLY_ROUTES);
        routes.addAll(parentRoutes(directory));
        return routes;
    }

    /** Routes that try to read the secret file $S of an excluded target $T, or list an excluded directory. */
    private static List<Route> readRoutes(boolean directory) {
        List<Route> routes = new ArrayList<>(List.of(
                read("cat \"$S\""),
                read("head -c 100 \"$S\""),
                read("dd if=\"$S\" status=none"),
                read("cat <\"$S\""),
                read("base64 \"$S\""),
                read("python3 -c 'import sys; sys.stdout.write(open(sys.argv[1]).read())' \"$S\""),
                read("cp \"$S\" \"$X/copy\" && cat \"$X/copy\""),
                read("tar -cf \"$X/t.tar\" \"$S\" && tar -xOf \"$X/t.tar\""),
                read("d=$(dirname \"$S\"); cat \"$d/../$(basename \"$d\")/./$(basename \"$S\")\""),
                read("cat \"$RS\""),
                read("cat \"/proc/self/root$S\""),
                read("cat \"/proc/self/cwd/$RS\""),
                read("cat \"/proc/1/root$S\""),
                read(SIBLING + "cat \"/proc/$p/root$S\"; " + END_SIBLING),
                read(SIBLING_IN_DIR_OF_S + "cat \"/proc/$p/cwd/$(basename \"$S\")\"; " + END_SIBLING),
                read(SIBLING_IN_OWN_NAMESPACE + "cat \"/proc/$p/root$S\"; " + END_SIBLING),
                read("ln \"$S\" \"$X/hard\" && cat \"$X/hard\""),
                read("ln -s \"$S\" \"$X/link\" && cat \"$X/link\""),
                read("chmod 644 \"$S\" && cat \"$S\""),
                read("find \"$P\" -path \"$S\" -exec cat {} +"),
                read("grep -r . \"$T\""),
                read("unshare -Urm cat \"$S\""),
                read("unshare -Urm sh -c 'umount \"$T\" && cat \"$S\"'"),
                read("unshare -Urm sh -c 'umount -l \"$T\" && cat \"$S\"'"),
                read("unshare -Urm sh -c 'mkdir \"$X/m\" && mount --bind \"$P\" \"$X/m\" && cat \"$X/m/${S#\"$P\"/}\"'"),
                read("unshare -Urm sh -c 'mkdir \"$X/m\" && mount --rbind \"$P\" \"$X/m\" && cat \"$X/m/${S#\"$P\"/}\"'"),
                read("unshare -Urm python3 -c \"$PY\" read-below \"$T\" \"$S\""),
                read("bwrap --dev-bind / / cat \"$S\""),
                read("bwrap --dev-bind / / --bind \"$P\" \"$P\" cat \"$S\""),
                read("/run/agent-sandbox/agent-sandbox --rw \"$T\" -- cat \"$S\""),
                read("\"$L\" --ro \"$P\" --ro \"$T\" -- cat \"$S\""),
                read("cat /tmp/agent-sandbox-*/hidden"),
                read("for d in /dev/*; do [ -b \"$d\" ] && exec head -c 4096 \"$d\"; done; exit 1")));
        if (directory) {
            routes.addAll(List.of(
                    read("ls -A \"$T\""),
                    read("find \"$T\" -mindepth 1"),
                    read("ls -A \"/proc/self/root$T\""),
                    read("python3 -c 'import os, sys; sys.stdout.write(\" \".join(os.listdir(sys.argv[1])))' \"$T\""),
                    read("unshare -Urm python3 -c \"$PY\" list-below \"$T\"")));
        }
        return routes;
    }

    /** Routes that try to change an excluded target on the host. */
    private static final List<Route> EXCLUDED_CHANGE_ROUTES = List.of(
            change("echo x > \"$S\""),
            change("echo x >> \"$S\""),
            change(": > \"$S\""),
            change("truncate -s 0 \"$S\""),
            change("rm \"$S\""),
            change("echo y > \"$X/other\" && mv -f \"$X/other\" \"$S\""),
            change("mv \"$S\" \"$X/\""),
            change("chmod 666 \"$S\""),
            change("ln -sfT /etc/hostname \"$S\""),
            change("echo x >> \"/proc/self/root$S\""),
            change("unshare -Urm sh -c 'umount \"$T\" && echo x >> \"$S\"'"),
            change("bwrap --dev-bind / / --bind \"$P\" \"$P\" sh -c 'echo x >> \"$S\"'"),
            change("mv \"$T\" \"$T.moved\""),
            change("rm -rf \"$T\""));

    // ------------------------------------------------------------------ the protected targets

    @Test
    void A_Read_Only_File_In_A_Writable_Directory_Cannot_Be_Changed_By_Any_Route() {
        Path file = sandbox.write("pkg/lint.json", "{\"rules\": \"strict\"}\n");
        sandbox.write("pkg/other.txt", "writable neighbour\n");

        attack(Campaign.of("read-only file", List.of("--ro", "pkg/lint.json"), file)
                .routes(protectedRoutes(false, setfacl()))
                .watchOriginalOnly());
    }

    @Test
    void A_Read_Only_Directory_Cannot_Be_Changed_By_Any_Route() {
        Path dir = sandbox.mkdirs("ro-dir");
        sandbox.write("ro-dir/a", "protected a\n");
        sandbox.write("ro-dir/sub/b", "protected b\n");

        attack(Campaign.of("read-only directory", List.of("--ro", "ro-dir"), dir)
                .routes(protectedRoutes(true, setfacl())));
    }

    @Test
    void The_Project_Config_File_Cannot_Be_Changed_By_Any_Route() {
        Path config = sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"ro\": [\"docs\"]}}\n");
        sandbox.mkdirs("docs");

        attack(Campaign.of("project config", List.of(), config)
                .routes(protectedRoutes(false, setfacl())));
    }

    @Test
    void The_Global_Config_File_Cannot_Be_Changed_By_Any_Route() {
        Path xdg = sandbox.mkdirs("xdg");
        Path config = sandbox.write(xdg.resolve("agent-sandbox/config.json"), "{\"network\": true}\n");

        attack(Campaign.of("global config", List.of(), config)
                .env("XDG_CONFIG_HOME", xdg.toString())
                .routes(protectedRoutes(false, setfacl()))
                .watchOriginalOnly());
    }

    @Test
    void Git_Hooks_Cannot_Be_Changed_By_Any_Route() {
        sandbox.write("a.txt", "tracked\n");
        sandbox.git("init", "-q");
        Path hooks = sandbox.project(".git/hooks");
        sandbox.write(hooks.resolve("a"), "#!/bin/sh\nexit 0\n");
        sandbox.write(hooks.resolve("sub/b"), "protected b\n");
        List<Route> routes = new ArrayList<>(List.of(
                change("cp /bin/true \"$T/pre-commit\""),
                change("git config core.hooksPath \"$X\""),
                change("git init -q"),
                change("git init -q --template=\"$X\"")));
        routes.addAll(protectedRoutes(true, setfacl()));

        // .git itself is writable (commits write objects there): renaming it away is the
        // known limit, so only the original hooks directory is watched.
        attackGit(Campaign.of("git hooks", List.of(), hooks).routes(routes).watchOriginalOnly());
    }

    @Test
    void Git_Config_Cannot_Be_Changed_By_Any_Route() {
        sandbox.write("a.txt", "tracked\n");
        sandbox.git("init", "-q");
        Path config = sandbox.project(".git/config");
        List<Route> routes = new ArrayList<>(List.of(
                change("git config core.hooksPath \"$X\""),
                change("git config alias.st '!sh -c true'"),
                change("git remote add evil \"$X\""),
                change("git config --file \"$F\" core.hooksPath \"$X\"")));
        routes.addAll(protectedRoutes(false, setfacl()));

        attackGit(Campaign.of("git config", List.of(), config).routes(routes).watchOriginalOnly());
    }

    /** A submodule: its git dir is under the repository's .git/modules/, its work tree at lib/. */
    private void repositoryWithSubmodule() {
        Path upstream = sandbox.mkdirs(sandbox.world().resolve("upstream"));
        sandbox.runOnHost("git", "-C", upstream.toString(), "init", "-q").succeeds();
        sandbox.runOnHost("git", "-C", upstream.toString(), "-c", "user.name=a", "-c", "user.email=a@a", "commit",
                "-q", "--allow-empty", "-m", "x").succeeds();
        sandbox.write("a.txt", "tracked\n");
        sandbox.git("init", "-q");
        sandbox.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream.toString(), "lib");
    }

    @Test
    void A_Submodules_Git_Config_Cannot_Be_Changed_By_Any_Route() {
        repositoryWithSubmodule();
        Path config = sandbox.project(".git/modules/lib/config");
        List<Route> routes = new ArrayList<>(List.of(
                change("git -C lib config core.fsmonitor \"$X/run\""),
                change("git -C lib config alias.st '!sh -c true'"),
                change("git config --file \"$F\" core.hooksPath \"$X\"")));
        routes.addAll(protectedRoutes(false, setfacl()));

        attackGit(Campaign.of("submodule git config", List.of(), config).routes(routes).watchOriginalOnly());
    }

    @Test
    void A_Submodules_Git_Hooks_Cannot_Be_Changed_By_Any_Route() {
        repositoryWithSubmodule();
        Path hooks = sandbox.project(".git/modules/lib/hooks");
        sandbox.write(hooks.resolve("a"), "#!/bin/sh\nexit 0\n");
        sandbox.write(hooks.resolve("sub/b"), "protected b\n");
        List<Route> routes = new ArrayList<>(List.of(change("cp /bin/true \"$T/post-checkout\"")));
        routes.addAll(protectedRoutes(true, setfacl()));

        attackGit(Campaign.of("submodule git hooks", List.of(), hooks).routes(routes).watchOriginalOnly());
    }

    @Test
    void A_Nested_Repositorys_Git_Config_Cannot_Be_Changed_By_Any_Route() {
        sandbox.write("a.txt", "tracked\n");
        sandbox.git("init", "-q");
        sandbox.mkdirs("zz");
        sandbox.runOnHost("git", "-C", "zz", "init", "-q").succeeds();
        sandbox.runOnHost("git", "-C", "zz", "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q",
                "--allow-empty", "-m", "x").succeeds();
        String sha = sandbox.runOnHost("git", "-C", "zz", "rev-parse", "HEAD").succeeds().stdout().strip();
        sandbox.git("update-index", "--add", "--cacheinfo", "160000," + sha + ",zz");
        Path config = sandbox.project("zz/.git/config");
        List<Route> routes = new ArrayList<>(List.of(
                change("git -C zz config core.fsmonitor \"$X/run\""),
                change("git config --file \"$F\" core.pager \"$X/run\"")));
        routes.addAll(protectedRoutes(false, setfacl()));

        // a copy-on-write view of its own (judged on the host), and path by path without the view
        attackGit(Campaign.of("nested repository git config", List.of(), config).routes(routes).watchOriginalOnly());
    }

    // ------------------------------------------------------------------ the excluded targets

    @Test
    void An_Excluded_File_Cannot_Be_Read_Or_Changed_By_Any_Route() {
        String token = token();
        Path file = sandbox.write(".env", "API_KEY=" + token + "\n");
        List<Route> routes = new ArrayList<>(readRoutes(false));
        routes.addAll(EXCLUDED_CHANGE_ROUTES);

        attack(Campaign.of("excluded file", List.of("--exclude", ".env"), file)
                .secret(file, token)
                .routes(routes));
    }

    @Test
    void An_Excluded_Directory_Cannot_Be_Read_Or_Changed_By_Any_Route() {
        String token = token();
        Path dir = sandbox.mkdirs("secrets");
        Path key = sandbox.write("secrets/key", "PRIVATE " + token + "\n");
        sandbox.write("secrets/sub/deeper", "deeper " + token + "\n");
        List<Route> routes = new ArrayList<>(readRoutes(true));
        // An excluded directory is an empty tmpfs: changes inside land there and vanish.
        String tmpfs = "an excluded directory is an empty tmpfs; the change lands there and vanishes";
        EXCLUDED_CHANGE_ROUTES.forEach(r -> routes.add(r.script().startsWith("rm -rf") ? r : r.harmlessBecause(tmpfs)));

        attack(Campaign.of("excluded directory", List.of("--exclude", "secrets"), dir)
                .secret(key, token)
                .cleanup("find \"$T\" -mindepth 1 -delete 2>/dev/null")
                .routes(routes));
    }

    @Test
    void The_Default_Excluded_Ssh_Directory_Cannot_Be_Read_By_Any_Route() {
        String token = token();
        Path ssh = sandbox.mkdirs(sandbox.home(".ssh"));
        Path key = sandbox.write(ssh.resolve("id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\n" + token + "\n");

        attack(Campaign.of("excluded ~/.ssh", List.of(), ssh)
                .secret(key, token)
                .routes(readRoutes(true)));
    }

    // ------------------------------------------------------------------ detection and blocked commands

    @Test
    void The_Detection_Entry_Point_Cannot_Be_Replaced_Or_Hidden_From_The_Sandbox() {
        String privateNamespace = "a process may mount over /run/agent-sandbox in a mount namespace of its own;"
                + " only what runs in that namespace is fooled, the sandbox's own check stays 'inside'";
        List<Route> routes = List.of(
                change("rm -f \"$T\""),
                change("rm -rf /run/agent-sandbox"),
                change("echo '#!/bin/sh' > \"$T\""),
                change("echo 'echo outside sandbox' >> \"$T\""),
                change(": > \"$T\""),
                change("truncate -s 0 \"$T\""),
                change("chmod 000 \"$T\""),
                change("touch -d 2000-01-01 \"$T\""),
                change("mv \"$T\" \"$X/\""),
                change("mv \"$T\" /run/agent-sandbox/moved"),
                change("cp /bin/false \"$X/fake\" && mv -f \"$X/fake\" \"$T\""),
                change("ln -sfT /bin/false \"$T\""),
                change("mv /run/agent-sandbox /run/moved"),
                change("touch /run/agent-sandbox/new-file"),
                change("mkdir /run/agent-sandbox/new-dir"),
                change("echo x >> \"/proc/self/root$T\""),
                change("echo x >> \"/proc/1/root$T\""),
                change("echo x >> /proc/self/fd/7"),
                change("unshare -Urm sh -c 'umount \"$T\" && rm -f \"$T\"'"),
                change("unshare -Urm sh -c 'umount -l /run/agent-sandbox && rm -rf /run/agent-sandbox'"),
                change("unshare -Urm sh -c 'mount -o remount,rw /run/agent-sandbox && rm -f \"$T\"'"),
                change("unshare -Urm sh -c 'mount -o remount,bind,rw \"$T\" && echo x >> \"$T\"'"),
                change("unshare -Urm python3 -c \"$PY\" write \"$T\""),
                change("unshare -Urm python3 -c \"$PY\" write /run/agent-sandbox"),
                change("bwrap --dev-bind / / --bind /run/agent-sandbox /run/agent-sandbox rm -f \"$T\""),
                change("\"$T\" --rw /run/agent-sandbox -- rm -f \"$T\""),
                change("unshare -Urm sh -c 'mount -t tmpfs none /run/agent-sandbox && ! \"$L\" check -q'")
                        .harmlessBecause(privateNamespace),
                change("unshare -Urm sh -c 'mount --bind /bin/false \"$T\" && ! \"$T\" check'")
                        .harmlessBecause(privateNamespace),
                change("bwrap --dev-bind / / --tmpfs /run/agent-sandbox sh -c '! \"$L\" check -q'")
                        .harmlessBecause(privateNamespace));

        Report report = attack(Campaign.of("detection entry point", List.of(), Path.of("/run/agent-sandbox/agent-sandbox"))
                .existsOnlyInside()
                .state("\"$T\" check; \"$L\" check; ls -A /run/agent-sandbox; tree \"$T\"")
                .routes(routes));

        assertThat(report.result().stdout()).as(report.describe("the state watched: inside, both ways of asking"))
                .contains("\n@@ state inside sandbox inside sandbox agent-sandbox app cmd exec git-views guard mounts net policy"
                        + " real ");

        // What `check` says inside a mount namespace the process made itself: it was fooled
        // there (the tmpfs hides the entry point), while the sandbox's own check, run after
        // every route, kept saying "inside sandbox" (the state above did not change).
        assertThat(report.status(routes.size() - 3)).as(report.describe("a private tmpfs over the runtime fools"
                + " check in that namespace")).isZero();
    }

    @Test
    void A_Blocked_Command_Cannot_Run_Through_Any_Path() {
        sandbox.write("victim.txt", "keep me\n");
        String stalled = "mkfifo \"$X/full\" && exec 5<>\"$X/full\" && head -c 65536 /dev/zero >&5"
                + " && { rm \"$T\" 2>&5 & p=$!; } && n=0;"
                + " until [ \"$(readlink /proc/$p/exe)\" = /usr/bin/rm ] || [ $n -gt 100 ]; do n=$((n+1)); sleep 0.02; done; ";
        String loader = "ld=$(ls /lib64/ld-linux*.so.* /lib/ld-linux*.so.* 2>/dev/null | head -n 1); ";
        List<Route> routes = List.of(
                change("rm \"$T\""),
                change("/usr/bin/rm \"$T\""),
                change("/bin/rm \"$T\""),
                change("/usr/bin/../bin/rm \"$T\""),
                change("//usr///bin//rm \"$T\""),
                change("/proc/self/root/usr/bin/rm \"$T\""),
                change("/proc/1/root/usr/bin/rm \"$T\""),
                change("env rm \"$T\""),
                change("env -i /usr/bin/rm \"$T\""),
                change("PATH=/bin rm \"$T\""),
                change("command rm \"$T\""),
                change("echo \"$T\" | xargs rm"),
                change("find . -name victim.txt -exec rm {} +"),
                change("bash -c 'exec -a rm /usr/bin/rm \"$T\"'"),
                change("bash -c 'exec -a ls /usr/bin/rm \"$T\"'"),
                change("python3 -c 'import os, sys; os.execv(\"/usr/bin/rm\", [\"rm\", sys.argv[1]])' \"$T\""),
                change("perl -e 'exec {\"/usr/bin/rm\"} \"rm\", @ARGV' \"$T\""),
                change(loader + "\"$ld\" /usr/bin/rm \"$T\""),
                change(loader + "\"$ld\" --argv0 rm /usr/bin/rm \"$T\""),
                change("ls /run/agent-sandbox/real/*/rm"),
                change("for n in $(seq 0 64); do f=/run/agent-sandbox/real/$n/rm;"
                        + " [ -e \"$f\" ] && exec \"$f\" \"$T\"; done; exit 1"),
                change("cp /usr/bin/rm \"$X/rm\" && \"$X/rm\" \"$T\""),
                change("cp /usr/bin/rm \"$X/rm\" && \"$X/rm\" -- rm \"$T\""),
                change("ln -s /usr/bin/rm \"$X/rm\" && \"$X/rm\" \"$T\""),
                change(stalled + "cp /proc/$p/exe \"$X/rm\"; kill $p; \"$X/rm\" -- rm \"$T\""),
                change(stalled + "/proc/$p/exe \"$T\"; s=$?; kill $p; exit $s"),
                change("unshare -Urm sh -c 'umount /usr/bin/rm; rm \"$T\"'"),
                change("unshare -Urm sh -c 'umount -l /usr/bin/rm; /usr/bin/rm \"$T\"'"),
                change("unshare -Urm sh -c 'mount -t tmpfs none /run/agent-sandbox; rm \"$T\"'"),
                change("bwrap --dev-bind / / rm \"$T\""),
                change("bwrap --dev-bind / / --tmpfs /run/agent-sandbox /usr/bin/rm \"$T\""),
                change("/run/agent-sandbox/agent-sandbox --cmd rm=true -- rm \"$T\""),
                change("\"$L\" --cmd rm=true -- /usr/bin/rm \"$T\""));

        attack(Campaign.of("blocked rm", List.of("--cmd", "rm=false"), sandbox.project("victim.txt"))
                .state("cat \"$T\"")
                .cleanup("[ -e \"$T\" ] || echo 'keep me' > \"$T\"")
                .routes(routes));
    }

    // ------------------------------------------------------------------ descriptors of the caller

    @Test
    void Descriptors_The_Caller_Opened_Do_Not_Reach_The_Sandbox_Beyond_Stdio() {
        Path outside = sandbox.write(sandbox.world().resolve("outside/kept"), "outside the sandbox\n");
        String before = hostState(outside.getParent());
        // The caller opens fd 3 read-write on a file the sandbox shows read-only, and fd 4 on
        // its directory; agent-sandbox's JVM starts bwrap with only stdin, stdout, stderr.
        List<String> routes = List.of(
                "echo x >&3",
                "cat <&3",
                "echo x >> /proc/self/fd/3",
                "echo x >> /proc/$PPID/fd/3",
                "echo x >> /proc/1/fd/3",
                "ls /proc/self/fd/4/",
                "echo x > /proc/self/fd/4/new",
                "echo x > /proc/$PPID/fd/4/new");
        String inside = """
                echo "descriptors on the caller's files: $(ls -l /proc/$$/fd /proc/1/fd | grep -c -F "$1")"
                shift
                for c do
                  if sh -c "$c" >/dev/null 2>&1; then echo "$c: ok"; else echo "$c: failed"; fi
                done
                """;
        List<String> command = new ArrayList<>(List.of("sh", "-c",
                "exec 3<>\"$1\" 4<\"$2\"; shift 2; exec \"$@\"", "caller", outside.toString(),
                outside.getParent().toString(), sandbox.launcher().toString(), "--", "sh", "-c", inside, "inside",
                outside.getParent().toString()));
        command.addAll(routes);
        Result result = sandbox.runOnHost(command.toArray(String[]::new)).succeeds();

        List<String> escapes = result.stdout().lines().filter(l -> l.endsWith(": ok"))
                .map(l -> "caller's descriptor: " + l).toList();
        count(escapes, routes.size());
        List<String> expected = new ArrayList<>(List.of("descriptors on the caller's files: 0"));
        routes.forEach(r -> expected.add(r + ": failed"));
        assertThat(result.stdout().lines().toList()).as(result.describe("no route through the caller's descriptors"))
                .isEqualTo(expected);
        assertThat(hostState(outside.getParent())).isEqualTo(before);
    }

    /**
     * Documents, not an escape: stdin, stdout and stderr are the caller's own (spec section
     * 4), and Linux lets a process reopen its descriptors through /proc/self/fd with any
     * access the file's permissions allow. So a file the caller gives as stdin, even one
     * the sandbox shows read-only, can be written through /proc/self/fd/0. The caller chose
     * to hand it over; docs/security.md says so.
     */
    @Test
    void A_File_The_Caller_Gives_As_Stdin_Is_The_Callers_Own_Capability() {
        Path file = sandbox.write("pkg/lint.json", "{}\n");

        Result result = sandbox.runOnHost("sh", "-c", "exec \"$1\" --ro pkg/lint.json -- sh -c"
                        + " 'echo direct >> pkg/lint.json; echo reopened >> /proc/self/fd/0' < pkg/lint.json",
                "caller", sandbox.launcher().toString());

        result.succeeds().stderrContains("Read-only file system");
        assertThat(sandbox.read(file)).isEqualTo("{}\nreopened\n");
    }

    // ------------------------------------------------------------------ the machinery

    /** A Python program for the new mount API (open_tree, mount_setattr), used from a namespace of its own. */
    private static final String MOUNT_API_PY = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            OPEN_TREE, MOUNT_SETATTR = 428, 442
            AT_FDCWD, AT_EMPTY_PATH, OPEN_TREE_CLONE, MOUNT_ATTR_RDONLY = -100, 0x1000, 1, 1

            class MountAttr(ctypes.Structure):
                _fields_ = [("set", ctypes.c_uint64), ("clr", ctypes.c_uint64),
                            ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]

            def call(name, *args):
                result = libc.syscall(*args)
                if result < 0:
                    sys.exit(name + ": " + os.strerror(ctypes.get_errno()))
                return result

            def clone(path):
                # a detached copy of the mount at path, without the mounts below it
                return "/proc/self/fd/%d" % call("open_tree", OPEN_TREE, AT_FDCWD, path.encode(), OPEN_TREE_CLONE)

            mode, target = sys.argv[1], sys.argv[2]
            if mode == "write":
                # the copy made writable, then written through
                copy = clone(target)
                fd = int(copy.rsplit("/", 1)[1])
                attr = MountAttr(0, MOUNT_ATTR_RDONLY, 0, 0)
                call("mount_setattr", MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr))
                with open(copy + "/escape-new" if os.path.isdir(copy) else copy, "a") as f:
                    f.write("escaped\\n")
            else:
                # the parent's mount copied without the mount on target: what lies beneath it
                parent = os.path.dirname(target)
                below = clone(parent) + "/" + os.path.basename(target)
                inner = below + sys.argv[3][len(target):] if len(sys.argv) > 3 else below
                if mode == "write-below":
                    with open(inner, "a") as f:
                        f.write("escaped\\n")
                elif mode == "read-below":
                    sys.stdout.write(open(inner).read())
                else:
                    sys.stdout.write(" ".join(os.listdir(below)))
            """;

    /**
     * Runs in the sandbox: tries each route in a fresh shell with a new scratch dir (never
     * removed: the runner must not need a command a campaign blocks) and
     * prints {@code @@INDEX STATUS STDOUT-BYTES CHANGED LEAKED LAST-ERROR}. CHANGED: the
     * state snippet printed something else than before the route. LEAKED: the secret
     * token appeared in the route's output or scratch dir.
     */
    private static final String RUNNER = """
            state=$1 cleanup=$2 token=$3 T=$4 F=$5 S=$6 L=$7 PY=$8
            shift 8
            P=$(dirname "$T") N=$(basename "$T")
            RF=$(realpath -m --relative-to=. "$F") RS=$(realpath -m --relative-to=. "$S")
            O=/tmp/escape-out E=/tmp/escape-err
            export T F S L PY P N RF RS X
            tree() {
              if [ -d "$1" ]; then
                (cd "$1" && find . -printf '%p %y %i %m %u %g %s %T@ %C@\\n' | LC_ALL=C sort && find . -type f -exec cat {} +)
              else
                stat -L -c '%i %a %u %g %s %Y %Z' "$1" && cat "$1"
              fi 2>&1
            }
            fingerprint() { eval "$state" 2>&1 | md5sum; }
            if [ -r "$T" ]; then exec 7<"$T"; else exec 7</dev/null; fi
            before=$(fingerprint)
            i=0
            for route do
              X=/tmp/escape-scratch/$i; mkdir -p "$X"
              timeout -s KILL 20 sh -c "$route" >"$O" 2>"$E" </dev/null; s=$?
              after=$(fingerprint); changed=0; [ "$after" = "$before" ] || changed=1; before=$after
              leaked=0
              if [ -n "$token" ] && grep -rqsF -D skip -e "$token" "$O" "$E" "$X"; then leaked=1; fi
              err=$(tail -n 1 "$E"); err=${err##*: }
              printf '@@%d %d %d %d %d %s\\n' "$i" "$s" "$(wc -c <"$O")" "$changed" "$leaked" "$err"
              if [ -n "$cleanup" ]; then eval "$cleanup"; before=$(fingerprint); fi
              i=$((i + 1))
            done
            echo "@@ state $(eval "$state" | head -c 300 | tr '\\n' ' ')"
            """;

    /** One target and the routes against it. */
    private record Campaign(String title, List<String> flags, Map<String, String> env, Path target, Path secret,
            String token, String state, String cleanup, boolean originalOnly, boolean inSandboxOnly,
            List<Route> routes, boolean hostOnly) {

        static Campaign of(String title, List<String> flags, Path target) {
            return new Campaign(title, flags, Map.of(), target, target, "", null, "", false, false, List.of(), false);
        }

        Campaign routes(List<Route> all) {
            return new Campaign(title, flags, env, target, secret, token, state, cleanup, originalOnly,
                    inSandboxOnly, List.copyOf(all), hostOnly);
        }

        Campaign env(String name, String value) {
            return new Campaign(title, flags, Map.of(name, value), target, secret, token, state, cleanup,
                    originalOnly, inSandboxOnly, routes, hostOnly);
        }

        /** An excluded target: nothing to watch inside, but the secret must not show up. */
        Campaign secret(Path file, String secretToken) {
            return new Campaign(title, flags, env, target, file, secretToken, "", cleanup, originalOnly,
                    inSandboxOnly, routes, hostOnly);
        }

        Campaign state(String snippet) {
            return new Campaign(title, flags, env, target, secret, token, snippet, cleanup, originalOnly,
                    inSandboxOnly, routes, hostOnly);
        }

        Campaign cleanup(String snippet) {
            return new Campaign(title, flags, env, target, secret, token, state, snippet, originalOnly,
                    inSandboxOnly, routes, hostOnly);
        }

        /**
         * The target lies in a writable directory that is not a mount point, so the known
         * limit lets a route rename the names around it: watch the original (through the
         * runner's descriptor inside, by inode on the host), not the path.
         */
        Campaign watchOriginalOnly() {
            return new Campaign(title, flags, env, target, secret, token, state, cleanup, true, inSandboxOnly,
                    routes, hostOnly);
        }

        /**
         * With the git dir's copy-on-write view: the routes may change what the sandbox sees
         * (its own view), and the host's file must stay as it was.
         */
        Campaign judgedOnTheHost() {
            return new Campaign(title, flags, env, target, secret, token, state, cleanup, originalOnly,
                    inSandboxOnly, routes, true);
        }

        /** The target exists only inside the sandbox (the runtime under /run/agent-sandbox). */
        Campaign existsOnlyInside() {
            return new Campaign(title, flags, env, target, secret, token, state, cleanup, originalOnly, true,
                    routes, hostOnly);
        }

        String stateSnippet() {
            if (state != null) {
                return state;
            }
            return originalOnly ? "tree /proc/$$/fd/7" : "tree /proc/$$/fd/7; tree \"$T\"";
        }

        Path protectedFile() {
            return Files.isDirectory(target) ? target.resolve("a") : target;
        }
    }

    /** What the runner reported, route by route. */
    record Report(Campaign campaign, List<String[]> lines, Result result) {
        int status(int index) {
            return Integer.parseInt(lines.get(index)[0]);
        }

        String describe(String expectation) {
            StringBuilder table = new StringBuilder("expected " + expectation + " (" + campaign.title() + ")\n");
            for (int i = 0; i < lines.size(); i++) {
                String[] l = lines.get(i);
                table.append(String.format("%3d status=%s out=%s changed=%s leaked=%s err=%s | %s%n", i, l[0], l[1],
                        l[2], l[3], l[4], campaign.routes().get(i).script()));
            }
            return table + result.toString();
        }
    }

    private static final Pattern LINE = Pattern.compile("(?m)^@@(\\d+) (\\d+) (\\d+) ([01]) ([01]) ?(.*)$");

    /** Attacks one target with every route of the campaign, in one sandbox run, and checks the outcome. */
    private Report attack(Campaign campaign) {
        Optional<Path> hostTarget = campaign.inSandboxOnly() ? Optional.empty() : Optional.of(campaign.target());
        Object inode = hostTarget.map(EscapeIT::inode).orElse(null);
        String hostBefore = hostTarget.map(EscapeIT::hostState).orElse("");

        List<String> args = new ArrayList<>(campaign.flags());
        args.addAll(List.of("--", "sh", "-c", RUNNER, "escape-runner", campaign.stateSnippet(), campaign.cleanup(),
                campaign.token(), campaign.target().toString(), campaign.protectedFile().toString(),
                campaign.secret().toString(), sandbox.launcher().toString(), MOUNT_API_PY));
        campaign.routes().forEach(r -> args.add(r.script()));
        Result result = sandbox.command(args.toArray(String[]::new)).env(campaign.env()).run().succeeds();

        List<String[]> lines = new ArrayList<>();
        Matcher m = LINE.matcher(result.stdout());
        while (m.find()) {
            assertThat(Integer.parseInt(m.group(1))).as(result::toString).isEqualTo(lines.size());
            lines.add(new String[] {m.group(2), m.group(3), m.group(4), m.group(5), m.group(6)});
        }
        Report report = new Report(campaign, lines, result);
        assertThat(lines).as(() -> report.describe("one line per route")).hasSize(campaign.routes().size());

        List<String> escapes = new ArrayList<>();
        List<String> notFailed = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Route route = campaign.routes().get(i);
            String[] l = lines.get(i);
            boolean ran = l[0].equals("0") && (route.goal() == Goal.CHANGE || !l[1].equals("0"));
            if (campaign.hostOnly() && l[3].equals("0")) {
                continue; // the view changed, which is the view's to do: the host is checked below
            }
            if (l[2].equals("1") || l[3].equals("1")) {
                escapes.add(campaign.title() + ": " + route.script() + (l[2].equals("1") ? " (changed it)" : "")
                        + (l[3].equals("1") ? " (read the secret)" : ""));
            } else if (ran && route.harmless() == null) {
                notFailed.add(i + ": " + route.script());
            }
        }
        String hostAfter = hostBefore;
        if (hostTarget.isPresent()) {
            Path now = campaign.originalOnly() ? findByInode(inode) : campaign.target();
            hostAfter = now == null ? "(the original is gone)" : hostState(now);
            if (!hostAfter.equals(hostBefore) && escapes.isEmpty()) {
                escapes.add(campaign.title() + ": the host side changed, by a route not seen inside");
            }
        }
        count(escapes, campaign.routes().size());
        assertThat(hostAfter).as(() -> report.describe("the host side unchanged")).isEqualTo(hostBefore);
        assertThat(escapes).as(() -> report.describe("no route escaping")).isEmpty();
        assertThat(notFailed).as(() -> report.describe("every route failing")).isEmpty();
        return report;
    }

    /**
     * A campaign against the project's git dir, twice: without the copy-on-write view, where
     * the git dir is protected path by path and every route must fail inside; and with it,
     * where a route may change the sandbox's own view and the host's files must stay as they were.
     */
    private void attackGit(Campaign campaign) {
        // the view first: it must leave the repository as it was, for the fallback's campaign
        // (in which renaming the writable .git away is the known limit)
        attack(campaign.judgedOnTheHost());
        attack(campaign.env("AGENT_SANDBOX_GIT_VIEW", "off"));
    }

    private static void count(List<String> escapes, int tried) {
        TRIED.addAndGet(tried);
        ESCAPES.addAll(escapes);
    }

    /** setfacl is tried where the host has it; otherwise each skipped route is counted as not tried. */
    private boolean setfacl() {
        boolean present = sandbox.runOnHost("sh", "-c", "command -v setfacl").exitCode() == 0;
        if (!present) {
            NOT_TRIED.add("setfacl is not installed on this host");
        }
        return present;
    }

    private static String token() {
        return "TOKEN-" + Long.toHexString(Double.doubleToLongBits(Math.random()));
    }

    private static Object inode(Path path) {
        try {
            return Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new AssertionError("cannot stat " + path + ": " + e.getMessage(), e);
        }
    }

    /** The path below the project (or home) that now carries the original inode, wherever it was renamed to. */
    private Path findByInode(Object inode) {
        for (Path root : List.of(sandbox.project(), sandbox.home())) {
            try (Stream<Path> paths = Files.walk(root)) {
                Optional<Path> found = paths.filter(p -> inode.equals(inode(p))).findFirst();
                if (found.isPresent()) {
                    return found.get();
                }
            } catch (IOException e) {
                throw new AssertionError("cannot walk " + root + ": " + e.getMessage(), e);
            }
        }
        return null;
    }

    /**
     * A file or a tree as the host sees it: for every entry its relative path, type, inode,
     * mode, owner, size, modification and change times, and the hash of its contents.
     */
    private static String hostState(Path root) {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return "(missing)";
        }
        try (Stream<Path> paths = Files.walk(root)) {
            StringBuilder state = new StringBuilder();
            for (Path p : (Iterable<Path>) paths.sorted()::iterator) {
                Map<String, Object> a = Files.readAttributes(p, "unix:*", LinkOption.NOFOLLOW_LINKS);
                state.append(root.relativize(p)).append(' ').append(a.get("ino")).append(' ')
                        .append(Integer.toOctalString((Integer) a.get("mode"))).append(' ').append(a.get("uid"))
                        .append(' ').append(a.get("gid")).append(' ').append(a.get("size")).append(' ')
                        .append(a.get("lastModifiedTime")).append(' ').append(a.get("ctime"));
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    state.append(' ').append(sha256(Files.readAllBytes(p)));
                }
                state.append('\n');
            }
            return state.toString();
        } catch (IOException e) {
            throw new AssertionError("cannot read " + root + ": " + e.getMessage(), e);
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

}
