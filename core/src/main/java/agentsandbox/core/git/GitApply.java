// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the host takes from a run's copy-on-write view of a git dir ({@link GitViews}): the
 * layer holds every file the sandbox created or changed there, and the host applies, by
 * allow-list, only what normal git work produces, in an order a crash cannot break:
 * <ol>
 * <li>new objects: each loose object inflated and checked against its name, each pack
 * indexed by the host's own git ({@code index-pack --strict}); none is ever deleted;</li>
 * <li>the index, when it is a well-formed index file;</li>
 * <li>ref updates under {@code refs/heads}, {@code refs/tags}, {@code refs/remotes},
 * {@code refs/notes} and {@code refs/stash} that lose no commit: a new ref, or a move to a
 * descendant of the host's tip, written under git's own lock with the old value checked
 * ({@link #updateRef}), so a ref the user moved on the host meanwhile wins. A move that would lose
 * commits, or a deletion, is not applied: the sandbox's tip is kept at
 * {@code refs/agent-sandbox/<ref>}, and a line says so;</li>
 * <li>{@code HEAD}: a branch, or a commit the host has.</li>
 * </ol>
 * Nothing else reaches the host's git dir: config, hooks, {@code commondir}, {@code info/},
 * {@code worktrees/}, modules' configs, new files anywhere. The host's git runs with the
 * host's own config only (the layer is never its git dir).
 */
public final class GitApply {
    /** At most this many refs are applied from one view; more is said and nothing of them applied. */
    static final int MAX_REFS = 100_000;
    /** Where a tip the host did not take is kept. */
    static final String KEPT = "refs/agent-sandbox/";

    private final Path gitDir;
    private final BaseRefs base;
    private final Path upper;
    /** With {@code @git-strict}: the one branch the host takes (refs/heads/...); null for every ref. */
    private final String onlyBranch;
    private List<String> out = new ArrayList<>();
    /** Each ref's tip on the host before this run first updated it ("" for a ref it created). */
    private final Map<String, String> before = new java.util.HashMap<>();
    /** The tip this run last gave each ref on the host. */
    private final Map<String, String> lastApplied = new java.util.HashMap<>();

    /**
     * @param gitDir  the host's git dir the view showed
     * @param upper   the view's layer: what the sandbox created or changed
     * @param hostEnv the host's environment, for the host's git (its PATH, HOME)
     */
    public GitApply(Path gitDir, Path upper, Map<String, String> hostEnv) {
        this(gitDir, upper, hostEnv, null);
    }

    /**
     * @param onlyBranch with {@code @git-strict}, the branch checked out when the run began
     *                   ({@code refs/heads/NAME}): the only ref the host takes; null for all
     */
    public GitApply(Path gitDir, Path upper, Map<String, String> hostEnv, String onlyBranch) {
        this(gitDir, BaseRefs.NONE, upper, hostEnv, onlyBranch);
    }

    /**
     * @param base the refs of the view's lower layer, the run's copy of the git dir when it
     *             started, which git inside saw below its own changes
     */
    public GitApply(Path gitDir, BaseRefs base, Path upper, Map<String, String> hostEnv, String onlyBranch) {
        this(gitDir, null, base, upper, hostEnv, onlyBranch);
    }

    /**
     * @param pinned a name of the git dir that goes on naming it whatever the sandbox renames
     *               on the way to it ({@link agentsandbox.core.Native#pinned}), which every
     *               step of the apply uses; null when there is none, and then each apply first
     *               checks that {@code gitDir} is still the directory it was, reached through no
     *               link (a nested repository's parent is the sandbox's to rename: a link put in
     *               its place would lead the apply, and the host's git with its hooks, into a
     *               repository the sandbox wrote or one it cannot even see)
     */
    public GitApply(Path gitDir, Path pinned, BaseRefs base, Path upper, Map<String, String> hostEnv,
            String onlyBranch) {
        this.onlyBranch = onlyBranch;
        this.shown = gitDir;
        this.gitDir = pinned != null ? pinned : gitDir;
        this.pinned = pinned != null;
        this.base = base;
        this.upper = upper;
        this.host = new HostGit(this.gitDir, hostEnv);
        this.key = pinned != null ? null : key(gitDir);
        this.headAtStart = hostHead();
    }

    /**
     * The nested repositories of the work tree that have views of their own (paths relative
     * to it): no entry of an index the host takes may lie at or below one.
     */
    private List<String> nestedRepositories = List.of();

    /** Sets the nested repositories whose paths no entry of a taken index may take ({@link #nestedRepositories}). */
    public void nestedRepositories(List<String> paths) {
        this.nestedRepositories = List.copyOf(paths);
    }

    /** The gitlinks of the host's index before this run wrote one; null until the first index is applied. */
    private List<String> gitlinksAtStart;
    /** The host's entries marked assume-unchanged or skip-worktree before this run wrote an index. */
    private java.util.Set<String> hiddenAtStart;

    /** The host's index as it is now; null when there is none. */
    private byte[] hostIndexNow() {
        try {
            return Files.readAllBytes(gitDir.resolve("index"));
        } catch (IOException e) {
            return null;
        }
    }

    /** What the host's HEAD file said when the run began (its branch is never deleted). */
    private final String headAtStart;

    /** The git dir as the user knows it, for what is said. */
    private final Path shown;
    /** Whether {@link #gitDir} is a pinned name. */
    private final boolean pinned;
    /** Without a pinned name: the git dir's identity when the run began. */
    private final Object key;

    private static Object key(Path dir) {
        try {
            return Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /** Without a pinned name: whether {@link #gitDir} is still the directory it was, reached through no link. */
    private boolean samePlace() {
        Object now = key(gitDir);
        return now != null && now.equals(key) && gitDir.equals(agentsandbox.core.rules.Resolver.realPath(gitDir));
    }

    /** Why {@code deflated} is not the object {@code id}; null when it is (see {@link ObjectImport}). */
    static String checkObject(byte[] deflated, String id, boolean sha256) {
        return ObjectImport.checkObject(deflated, id, sha256);
    }

    private final HostGit host;
    /** Whether the apply under way is the one after the run. */
    private boolean last = true;
    /** Whether the last apply left a ref for later, unsaid ({@link #apply(boolean)}). */
    private boolean incomplete;

    /** Whether the last apply left something for a later one (a ref to an object not there yet). */
    public synchronized boolean incomplete() {
        return incomplete;
    }

    /** Another run that can write the git dir, found while an apply writes there: its words for the user. */
    static final class OtherWriter extends IOException {
        OtherWriter(String who) {
            super(who);
        }
    }

    /** When the other runs were last looked at ({@link #alone()}), System.nanoTime. */
    private long lookedAt;
    /** The most a look at the other runs may be old when the apply writes (a run needs far longer to start). */
    static final long FRESH_NANOS = 20_000_000L;

    /**
     * Before each write of the apply: throws when another run of the user's can now write the
     * git dir without a view (one started since the apply began). Looked at again when the last
     * look is older than {@link #FRESH_NANOS}: a run that was not there then cannot have made
     * its directory, set up its sandbox and started a command since.
     */
    void alone() throws OtherWriter {
        if (writerFound == null && runs != null && System.nanoTime() - lookedAt >= FRESH_NANOS) {
            Path where = whereNow();
            writerFound = where == null ? "its git dir was removed or cannot be found"
                    : agentsandbox.core.run.OtherRuns.now(runs, self).writerOf(where);
            lookedAt = System.nanoTime();
        }
        if (writerFound != null) {
            throw new OtherWriter(writerFound);
        }
    }

    /** The other run found by {@link #alone()} during the apply under way; null while none is. */
    private String writerFound;

    /** The user's runs dir and this run's name there: other runs that can write the git dir stop an apply. */
    private Path runs;
    private String self = "";

    /**
     * Another run of the user's that can write the git dir without a view, as words for the
     * user; null when none can. At the last apply, runs starting at that moment (whose records
     * cannot be read yet) are waited for a little: they count until they can be read.
     */
    private String otherWriter() {
        if (runs == null) {
            return null;
        }
        Path where = whereNow();
        if (where == null) {
            return "its git dir was removed or cannot be found";
        }
        agentsandbox.core.run.OtherRuns others = agentsandbox.core.run.OtherRuns.now(runs, self);
        for (int i = 0; last && i < 30 && !others.settled() && others.writerOf(where) != null; i++) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            others = agentsandbox.core.run.OtherRuns.now(runs, self);
        }
        return others.writerOf(where);
    }

    /**
     * Where the git dir is now: a sandbox may have moved a nested repository (its view moves
     * with it) into a directory another run writes, and the apply writes where it now lies.
     * The pinned name's target as the kernel tells it; null when it is gone.
     */
    private Path whereNow() {
        if (!pinned) {
            return shown;
        }
        try {
            String target = Files.readSymbolicLink(gitDir).toString();
            return target.startsWith("/") && !target.endsWith(" (deleted)") ? Path.of(target) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Looks, before each apply, for another run of the user's in {@code runs} that can write the git dir without a view. */
    public void watchOtherRuns(Path runs, String self) {
        this.runs = runs;
        this.self = self;
    }

    /** The host's objects, read without its git, during one apply. */
    private HostObjects hostObjects;

    private HostGit.Result git(String... args) {
        try {
            alone();
        } catch (OtherWriter e) {
            throw new OtherWriterNow(e);
        }
        return host.run(args);
    }

    /** {@link OtherWriter}, out of a call that throws no checked exception. */
    private static final class OtherWriterNow extends RuntimeException {
        OtherWriterNow(OtherWriter cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** Applies what the layer holds; one line per thing the user should know. Never throws. */
    public List<String> apply() {
        return apply(true);
    }

    /**
     * Applies what the layer holds, while the sandbox runs ({@code last} false) or after it.
     * While it runs, a ref may point at an object git inside is still writing: such a ref is
     * left for a later apply without a word ({@link #incomplete()}); after the run, it is said.
     */
    public synchronized List<String> apply(boolean last) {
        out = new ArrayList<>();
        this.last = last;
        incomplete = false;
        try {
            if (!hasFiles(upper)) {
                return List.of();
            }
            if (!pinned && !samePlace()) {
                out.add("git: " + shown + " is not the git dir the sandbox's view showed any more (it was renamed or"
                        + " replaced while the sandbox ran): nothing of the view was applied to it");
                return out;
            }
            if (Files.exists(gitDir.resolve("commondir"), LinkOption.NOFOLLOW_LINKS)) {
                // a view is of a common dir, which has none: one there now was planted (in a
                // repository a sandbox made in the work tree, say), and the host's git would
                // follow it to another repository's refs while this apply reads these
                out.add("git: " + shown + " has a commondir file, which git follows to another repository's refs and"
                        + " config: nothing of the view was applied to it; look at that file");
                return out;
            }
            String writer = otherWriter();
            writerFound = writer;
            lookedAt = System.nanoTime();
            if (writer != null) {
                // a run started since (without a view of this git dir) writes it directly, and
                // could lead this apply's writes elsewhere through a link
                if (!last) {
                    incomplete = true;
                } else {
                    out.add("git: the sandbox's changes to " + shown + " were not applied: another sandbox running now ("
                            + writer + ") can write that git dir without a view of its own; make them again once it"
                            + " has ended");
                }
                return out;
            }
            int objects = new ObjectImport(gitDir, upper, host, out, this).run(objectFormatSha256());
            if (objects < 0) {
                return out; // what failed is said; no ref may point at what is not there
            }
            hostObjects = new HostObjects(gitDir, objectFormatSha256());
            index();
            refs();
            head();
            if (last) {
                worktreesLeftOut();
            }
        } catch (OtherWriter | OtherWriterNow e) {
            // a run that can write the git dir began meanwhile: nothing more is written there
            if (!last) {
                incomplete = true;
            } else {
                out.add("git: the sandbox's changes to " + shown + " were not all applied: another sandbox that began"
                        + " meanwhile (" + e.getMessage() + ") can write that git dir without a view of its own; what"
                        + " was applied before stays, in order");
            }
        } catch (IOException | RuntimeException e) {
            out.add("git: the changes of the sandbox to " + shown + " could not all be applied (" + e.getMessage()
                    + "); the host's git dir has what was applied before, in order");
        } finally {
            if (hostObjects != null) {
                hostObjects.close();
                hostObjects = null;
            }
        }
        return out;
    }

    /**
     * What the sandbox's git has moved so far, cheaply: the names, sizes and times of the
     * layer's refs, {@code packed-refs}, {@code HEAD} and index. The same value twice means
     * there is nothing new to apply.
     */
    public String progress() {
        StringBuilder b = new StringBuilder();
        for (String name : new String[] {"HEAD", "packed-refs", "index"}) {
            stamp(upper.resolve(name), b);
        }
        java.util.Set<String> names = new java.util.TreeSet<>();
        try {
            looseNames(upper.resolve("refs"), "refs/", names);
        } catch (IOException | RuntimeException e) {
            b.append("refs: unreadable\n");
        }
        for (String name : names) {
            stamp(upper.resolve(name), b);
        }
        return b.toString();
    }

    private static void stamp(Path p, StringBuilder b) {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            // the time as a number: a FileTime's text costs the JDK's calendar classes
            b.append(p).append(' ').append(a.size()).append(' ')
                    .append(a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS)).append('\n');
        } catch (IOException e) {
            b.append(p).append(" -\n");
        }
    }

    // ------------------------------------------------------------------ the index

    private void index() throws IOException {
        Path index = upper.resolve("index");
        if (!Files.isRegularFile(index, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        byte[] bytes = Files.readAllBytes(index);
        int hash = objectFormatSha256() ? 32 : 20;
        // the host's index as it is now, read once for all that this apply compares with it
        // (none yet: every gitlink is new)
        byte[] hostIndex = hostIndexNow();
        if (entriesAreTheHosts(hostIndex, bytes, hash)) {
            // nothing to take (a commit after a git add that was taken in passing changes only
            // the index's caches): no look at each entry, which the interpreter does slowly
            return;
        }
        String problem = checkIndex(bytes, objectFormatSha256());
        if (problem == null) {
            problem = GitIndex.refusal(bytes, hash);
        }
        if (problem == null && gitlinksAtStart == null) {
            // the host's before this run wrote any index: one the sandbox emptied for a while
            // (a switch to an orphan branch, taken in passing) may have them back
            gitlinksAtStart = GitIndex.gitlinks(hostIndex, Integer.MAX_VALUE, hash);
        }
        List<String> kept = new ArrayList<>(nestedRepositories);
        if (gitlinksAtStart != null) {
            kept.addAll(gitlinksAtStart);
        }
        GitIndex.Entries entries = problem == null ? GitIndex.check(bytes, kept, hash) : null;
        if (entries != null && entries.refusedPath() != null) {
            problem = "holding a path git never writes there (" + printablePath(entries.refusedPath())
                    + "), which your next git checkout would write into the git dir or outside the project";
        } else if (entries != null && entries.overRepository() != null) {
            problem = "holding " + printablePath(entries.overRepository()) + " where a nested repository or"
                    + " submodule of the project is, or a directory above one, which your next git checkout -- ."
                    + " would replace, with its history";
        }
        if (entries != null && hiddenAtStart == null) {
            // the host's before this run wrote any index (a sparse checkout marks entries skip-worktree)
            hiddenAtStart = GitIndex.hidden(hostIndex, hash);
        }
        if (entries != null && problem == null) {
            java.util.Set<String> hidden = new java.util.LinkedHashSet<>(entries.hidden());
            hidden.removeAll(hiddenAtStart);
            if (!hidden.isEmpty()) {
                problem = "marking " + printablePath(hidden.iterator().next()) + (hidden.size() > 1 ? " and "
                        + (hidden.size() - 1) + " more" : "") + " assume-unchanged or skip-worktree, which would hide"
                        + " changes to them from your git status and git diff";
            }
        }
        if (problem != null) {
            out.add("git: the sandbox's index is " + problem + "; the host keeps its own");
            return;
        }
        // A gitlink is where the host's git status goes into another repository, whose config
        // the sandbox could write (a nested repository in the work tree is no part of the
        // view): an index with gitlinks the host's has not is not taken.
        List<String> sandboxLinks = entries.gitlinks();
        List<String> dropped = new ArrayList<>(gitlinksAtStart);
        dropped.removeAll(sandboxLinks);
        if (!dropped.isEmpty()) {
            // your next git checkout -- . would replace the submodule's directory, with its git
            // dir or its .git file, by what the index has there
            out.add("git: the sandbox's index drops " + gitlinks(dropped) + ": the host keeps its index; remove"
                    + " submodules outside the sandbox");
            return;
        }
        List<String> added = new ArrayList<>(sandboxLinks);
        added.removeAll(gitlinksAtStart);
        if (!added.isEmpty()) {
            added.removeAll(GitIndex.gitlinks(hostIndex, Integer.MAX_VALUE, hash));
        }
        if (!added.isEmpty()) {
            out.add("git: the sandbox's index adds " + gitlinks(added) + ", whose repositories your git status would"
                    + " enter: the host keeps its index; add submodules outside the sandbox");
            return;
        }
        // A file named HEAD is how git's discovery, run in its directory once checked out, takes
        // that directory for a git dir, whose config runs what it says: an index that adds one
        // the host's has not (the sandbox's blob of a config, say, beside it) is not taken.
        if (!entries.heads().isEmpty() || !entries.controls().isEmpty()) {
            GitIndex.Entries host = GitIndex.check(hostIndex, List.of(), hash);
            List<String> newHeads = new ArrayList<>(entries.heads());
            newHeads.removeAll(host.heads());
            if (!newHeads.isEmpty()) {
                out.add("git: the sandbox's index adds " + printablePath(newHeads.get(0)) + (newHeads.size() > 1
                        ? " and " + (newHeads.size() - 1) + " more files named HEAD" : "") + ", with which your git"
                        + " would take the directory, once checked out, for a repository of its own: the host keeps"
                        + " its index");
                return;
            }
            // a config, commondir or hook into a git dir the work tree holds (a bare repository
            // left there untracked): your next git checkout -- . or git restore would write it there
            List<String> newControls = new ArrayList<>(entries.controls());
            newControls.removeAll(host.controls());
            java.util.Set<String> checkedDirs = new java.util.HashSet<>();
            for (String control : newControls) {
                String into = gitDirInWorkTree(control, checkedDirs);
                if (into != null) {
                    out.add("git: the sandbox's index adds " + printablePath(control) + " to "
                            + printablePath(into.isEmpty() ? "." : into) + ", a git dir in your work tree, where your"
                            + " next git restore or checkout would write it: the host keeps its index");
                    return;
                }
            }
        }
        // its caches dropped: git rebuilds them from the entries, which were checked
        bytes = GitIndex.withoutCaches(bytes, hash);
        // and no stat data of the sandbox's where an entry is not the host's own: git compares
        // those files' content, so no stat data written beside an old object hides a change
        bytes = GitIndex.withStatOnlyWhereKnown(bytes, hostIndex, hash);
        if (bytes == null) {
            out.add("git: the sandbox's index does not read to its end; the host keeps its own");
            return;
        }
        if (hostIndex != null && (sameIndex(hostIndex, bytes) || sameEntries(hostIndex, bytes, hash))) {
            return; // taken already
        }
        alone();
        // written beside the index and renamed over it, in the git dir opened through no link,
        // created as git creates its index (what the umask leaves of 0666)
        LinkFree.replace(gitDir, "", "index.agent-sandbox-", bytes, "index", 0666);
    }

    /** "the gitlink a" or "the gitlinks a, b, …" (at most five named). */
    private static String gitlinks(List<String> paths) {
        return "the gitlink" + (paths.size() == 1 ? " " : "s ") + String.join(", ", paths.subList(0, Math.min(5,
                paths.size()))) + (paths.size() > 5 ? ", …" : "");
    }

    /** A path of the sandbox's as one printable line: control characters as {@code ?}, at most 200 characters. */
    private static String printablePath(String path) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < path.length() && b.length() < 200; i++) {
            char c = path.charAt(i);
            b.append(c < ' ' || c == 0x7f ? '?' : c);
        }
        return b.toString();
    }

    /**
     * Whether the host's index is the sandbox's, checked: by their checksums (the last 20
     * bytes, a hash of all the rest) where both have one, else byte by byte, which the
     * interpreter does slowly for a large index.
     */
    private static boolean sameIndex(byte[] host, byte[] sandbox) {
        int n = host.length;
        if (n != sandbox.length || n < 20) {
            return false;
        }
        boolean zero = true;
        for (int i = n - 20; i < n; i++) {
            zero &= sandbox[i] == 0;
        }
        return zero ? same(host, 0, sandbox, 0, n) : same(host, n - 20, sandbox, n - 20, 20);
    }

    /**
     * Whether the {@code length} bytes of {@code a} at {@code aFrom} are those of {@code b} at
     * {@code bFrom}: compared natively ({@link agentsandbox.core.Native#mismatch}).
     */
    private static boolean same(byte[] a, int aFrom, byte[] b, int bFrom, int length) {
        return agentsandbox.core.Native.mismatch(a, aFrom, b, bFrom, length) < 0;
    }

    /**
     * Whether the entries of the sandbox's index {@code sandbox}, and its header, are byte for
     * byte those of the host's index {@code host} (null: none): then the host has all the
     * sandbox's index could give it (its extensions are caches, or what the host would not
     * take). Equal bytes up to the end of the sandbox's entries are the host's entries up to
     * the same end.
     */
    private static boolean entriesAreTheHosts(byte[] host, byte[] sandbox, int hash) {
        if (host == null) {
            return false;
        }
        int end = GitIndex.entriesEnd(sandbox, hash);
        return end > 0 && end <= host.length && same(host, 0, sandbox, 0, end);
    }

    /**
     * Whether {@code sandbox} (its caches dropped) says nothing the host's index does not: the
     * same header and entries, byte for byte, and no extension. Taking it would only drop the
     * host's caches, which git would then rebuild.
     */
    private static boolean sameEntries(byte[] host, byte[] sandbox, int hash) {
        int end = GitIndex.entriesEnd(sandbox, hash);
        return end > 0 && end == sandbox.length - hash && end <= host.length && GitIndex.entriesEnd(host, hash) == end
                && same(host, 0, sandbox, 0, end);
    }

    /** Why {@code bytes} is not an index file git would read; null when it is one. */
    static String checkIndex(byte[] bytes, boolean sha256) {
        int hash = sha256 ? 32 : 20;
        if (bytes.length < 12 + hash || bytes[0] != 'D' || bytes[1] != 'I' || bytes[2] != 'R' || bytes[3] != 'C') {
            return "not an index file";
        }
        int version = ((bytes[4] & 0xff) << 24) | ((bytes[5] & 0xff) << 16) | ((bytes[6] & 0xff) << 8)
                | (bytes[7] & 0xff);
        if (version < 2 || version > 4) {
            return "of an index version git does not write (" + version + ")";
        }
        byte[] sum;
        if (sha256) {
            try {
                MessageDigest digest = MessageDigest.getInstance("SHA-256");
                digest.update(bytes, 0, bytes.length - hash);
                sum = digest.digest();
            } catch (NoSuchAlgorithmException e) {
                return "not checkable here";
            }
        } else {
            sum = agentsandbox.core.Native.sha1(bytes, bytes.length - hash);
        }
        boolean zero = true;
        for (int i = 0; i < hash; i++) {
            zero &= bytes[bytes.length - hash + i] == 0;
        }
        for (int i = 0; i < hash && !zero; i++) {
            if (sum[i] != bytes[bytes.length - hash + i]) {
                return "not whole (its checksum does not match)";
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ refs

    private void refs() throws IOException {
        Map<String, String> changed = changedRefs();
        if (changed.size() > MAX_REFS) {
            out.add("git: the sandbox changed " + changed.size() + " refs, more than " + MAX_REFS
                    + "; none of them was applied now" + (lastApplied.isEmpty() ? ""
                            : " (the " + lastApplied.size() + " taken while it ran stay as they were taken)"));
            return;
        }
        // updates first, then deletions: a branch deleted after a merge is contained in the merge
        for (Map.Entry<String, String> e : changed.entrySet()) {
            if (e.getValue() != null) {
                ref(e.getKey(), e.getValue());
            }
        }
        for (Map.Entry<String, String> e : changed.entrySet()) {
            if (e.getValue() == null) {
                ref(e.getKey(), null);
            }
        }
    }

    /**
     * The refs the sandbox touched, each with its value in the sandbox's view (null: gone
     * there): every loose ref the layer holds or deleted, and, when the sandbox rewrote
     * {@code packed-refs} (a {@code git gc}, say), every packed ref of either file. The view
     * is what git inside saw: the layer's loose ref, else the lower layer's loose ref (unless
     * the layer deleted it, or hid its directory), else the packed value of the layer's
     * {@code packed-refs} when it has one, else of the lower layer's ({@link BaseRefs}).
     */
    private Map<String, String> changedRefs() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        java.util.Set<String> touched = new java.util.LinkedHashSet<>();
        looseNames(upper.resolve("refs"), "refs/", touched);
        // and every ref this run gave the host: one the sandbox created and deleted again leaves
        // no trace in the layer (the lower layer never had it), yet the host has it
        touched.addAll(lastApplied.keySet());
        Path upperPacked = upper.resolve("packed-refs");
        boolean repacked = Files.exists(upperPacked, LinkOption.NOFOLLOW_LINKS);
        Map<String, String> packed = packedRefs(repacked ? upperPacked : base.packedRefs());
        if (repacked) {
            touched.addAll(packed.keySet());
            touched.addAll(packedRefs(base.packedRefs()).keySet());
        }
        for (String ref : touched) {
            out.put(ref, viewValue(ref, packed));
            if (out.size() > MAX_REFS) {
                break;
            }
        }
        return out;
    }

    /** Every name below {@code dir} of the layer: loose refs written or deleted there. */
    private void looseNames(Path dir, String prefix, java.util.Set<String> out) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                String name = prefix + e.getFileName();
                if (Files.isDirectory(e, LinkOption.NOFOLLOW_LINKS)) {
                    looseNames(e, name + "/", out);
                } else if (!name.endsWith(".lock")) {
                    // a ref git inside is writing now (no ref's name ends so): the next apply takes it
                    out.add(name);
                }
                if (out.size() > MAX_REFS) {
                    return;
                }
            }
        }
    }

    /** The value of {@code ref} in the sandbox's view; null when it has none there. */
    private String viewValue(String ref, Map<String, String> packed) throws IOException {
        Path inLayer = upper.resolve(ref);
        if (Files.exists(inLayer, LinkOption.NOFOLLOW_LINKS)) {
            BasicFileAttributes a = Files.readAttributes(inLayer, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (a.isRegularFile()) {
                return looseValue(inLayer);
            }
            return packed.get(ref); // the overlay's mark of a deleted file: the packed value shows
        }
        if (!hiddenBelow(ref)) {
            String below = base.loose(ref);
            if (below != null) {
                return looseValue(below);
            }
        }
        return packed.get(ref);
    }

    /** Whether a directory of the layer on the way to {@code ref} hides the host's (an opaque one). */
    private boolean hiddenBelow(String ref) {
        Path dir = upper.resolve(ref).getParent();
        while (dir != null && dir.startsWith(upper) && !dir.equals(upper)) {
            try {
                if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                    java.nio.file.attribute.UserDefinedFileAttributeView x = Files.getFileAttributeView(dir,
                            java.nio.file.attribute.UserDefinedFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
                    if (x != null && x.list().contains("overlay.opaque")) {
                        return true;
                    }
                } else if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                    return true; // a deleted directory
                }
            } catch (IOException | UnsupportedOperationException e) {
                // no extended attributes: no opaque directory either
            }
            dir = dir.getParent();
        }
        return false;
    }

    /** A loose ref's object id; null for a symbolic ref or anything else. */
    private static String looseValue(Path file) throws IOException {
        if (Files.size(file) > BaseRefs.REF_BYTES) {
            return null;
        }
        return looseValue(Files.readString(file, StandardCharsets.US_ASCII));
    }

    /** The object id a loose ref's content names; null for a symbolic ref or anything else. */
    private static String looseValue(String content) {
        String text = content.strip();
        return ObjectIds.isObjectId(text) ? text : null;
    }

    private static Map<String, String> packedRefs(Path file) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        // lines as git reads them: ended by '\n' only (a '\r' is part of a line, and of its name)
        for (String line : Files.readString(file, StandardCharsets.UTF_8).split("\n")) {
            int space = line.indexOf(' ');
            if (line.startsWith("#") || line.startsWith("^") || space < 0) {
                continue;
            }
            out.put(line.substring(space + 1), line.substring(0, space));
            if (out.size() > MAX_REFS) {
                break;
            }
        }
        return out;
    }

    /**
     * A ref the host takes has at most this many components and characters: a deeper one
     * would make the next run's copy of the git dir (which stops at 200 levels) refuse to start.
     */
    static final int MAX_REF_COMPONENTS = 64;
    static final int MAX_REF_LENGTH = 1024;

    /** Whether the host takes refs of this name from a sandbox at all. */
    static boolean applicable(String ref) {
        if (!(ref.startsWith("refs/heads/") || ref.startsWith("refs/tags/") || ref.startsWith("refs/remotes/")
                || ref.startsWith("refs/notes/") || ref.equals("refs/stash"))) {
            return false;
        }
        String[] parts = ref.split("/", -1);
        if (parts.length > MAX_REF_COMPONENTS || ref.length() > MAX_REF_LENGTH) {
            return false;
        }
        for (String part : parts) {
            if (part.isEmpty() || part.startsWith(".") || part.endsWith(".lock") || part.contains("..")) {
                return false;
            }
        }
        for (int i = 0; i < ref.length(); i++) {
            char c = ref.charAt(i);
            // and U+FFFD: a name of bytes that are no UTF-8, which would be written back as other bytes
            if (c <= ' ' || c == 0x7f || c == '~' || c == '^' || c == ':' || c == '?' || c == '*' || c == '['
                    || c == '\\' || c == '\ufffd') {
                return false;
            }
        }
        // git's check_refname_format: nor may a name end with '.', or hold "@{"
        return !ref.contains("@{") && !ref.endsWith(".");
    }

    private void ref(String ref, String sandboxTip) throws IOException {
        if (!applicable(ref)) {
            return;
        }
        // the reflogs too, whole: git appends to a reflog through a link at its last name
        if (!noLinkOnTheWay(ref) || !plainOrAbsent("logs/" + ref) || !noLinkOnTheWay(KEPT + ref.substring(5))
                || !plainOrAbsent("logs/" + KEPT + ref.substring(5))) {
            out.add("git: the host's git dir holds a symbolic link or a file on the way to " + ref
                    + " or its reflog: the sandbox's " + ref + " was not taken");
            return;
        }
        if (symbolicOnHost(ref)) {
            // the host's own symbolic ref (a clone's refs/remotes/origin/HEAD): git would follow
            // it and move or delete the branch it names, which the sandbox did not touch
            out.add("git: the sandbox changed " + ref + ", a symbolic ref on the host: the host keeps it");
            return;
        }
        String hostTip = resolve(ref);
        if (sandboxTip != null && sandboxTip.equals(hostTip)) {
            return;
        }
        if (onlyBranch != null && !ref.equals(onlyBranch)) {
            if (sandboxTip != null && !ref.equals("refs/stash")) {
                keepAside(ref, sandboxTip);
            }
            out.add("git: @git-strict: the sandbox changed " + ref + "; the host takes only " + onlyBranch);
            return;
        }
        if (sandboxTip == null) {
            delete(ref, hostTip);
            return;
        }
        if (hostTip == null && before.get(ref) == null && shadows(ref)) {
            keepAside(ref, sandboxTip);
            out.add("git: the sandbox made " + ref + ", whose short name is the host's HEAD or one of its branches or"
                    + " tags (git would take it for that one): not taken; it is kept at " + KEPT + ref.substring(5));
            return;
        }
        if (ref.startsWith("refs/tags/") && hostTip != null && !hostTip.equals(lastApplied.get(ref))) {
            // a tag the host had names one commit for good (git itself moves none without
            // --force, and the guard refuses that): the sandbox's is kept beside it
            String kept = keepAside(ref, sandboxTip);
            out.add("git: the sandbox moved the tag " + ref.substring("refs/tags/".length()) + " to "
                    + shortId(sandboxTip) + ": the host keeps its own at " + shortId(hostTip)
                    + (kept != null ? "; the sandbox's is kept at " + kept : ""));
            return;
        }
        if (!hostHas(sandboxTip)) {
            if (!last) {
                incomplete = true; // git inside may be writing it still: the next apply looks again
                return;
            }
            out.add("git: the sandbox's " + ref + " points at " + shortId(sandboxTip)
                    + ", an object it did not leave in its git dir: not taken");
            return;
        }
        String type = objectType(sandboxTip);
        if (!ref.startsWith("refs/tags/") && !"commit".equals(type)) {
            // a branch, remote-tracking ref, note or stash names a commit: the host's git log
            // fails on notes that name a blob, say
            out.add("git: the sandbox's " + ref + " points at " + shortId(sandboxTip) + ", which is no commit: not taken");
            return;
        }
        String peeled = "tag".equals(type) ? peeledType(sandboxTip) : type;
        if (!"commit".equals(peeled) && !"blob".equals(peeled)) {
            // a tag of a tree: the user's `git checkout <tag> -- .` would put its gitlinks in the
            // index, and no walk of commits looks at a tree
            String kept = keepAside(ref, sandboxTip);
            out.add("git: the sandbox's " + ref + " names " + (peeled == null ? "an object the host cannot read"
                    : "a " + peeled) + ", not a commit or a file: not taken" + (kept != null ? "; it is kept at " + kept
                            : ""));
            return;
        }
        // A gitlink is where the host's git goes into another repository, whose config a
        // sandbox can write (a repository in the work tree is no part of the view): a commit
        // that adds one would put it in the index at the user's next checkout of it
        String link = addedGitlink(sandboxTip, hostTip);
        if (link != null && link.isEmpty() && !last) {
            // while the sandbox runs, its git may be writing the commit's objects still (this
            // apply listed them before the last were written): the next apply looks again
            incomplete = true;
            return;
        }
        if (link != null) {
            String kept = keepAside(ref, sandboxTip);
            out.add("git: the sandbox's " + ref + " " + (link.isEmpty() ? "holds commits the host could not check for"
                    + " submodules" : "holds a commit that adds " + whatIsAdded(link))
                    + ": not taken" + (kept != null ? "; it is kept at " + kept : "")
                    + (link.startsWith(GIT_DIR) ? "" : "; add submodules outside the sandbox"));
            return;
        }
        // What may not be lost is what the host had: its tip before this run's first update
        // of the ref, while the host's tip is still the one this run set (a commit the sandbox
        // amends after it was taken in passing is its own work, kept recoverable below); the
        // host's current tip once the user moved it. The stash's earlier entries are its
        // reflog, which the host keeps: any new entry is taken.
        boolean ours = hostTip != null && hostTip.equals(lastApplied.get(ref));
        String base = ours ? before.get(ref) : hostTip;
        if (hostTip == null && before.get(ref) != null) {
            // a ref the host had, deleted by this run: made again, it must still hold the tip it had
            base = before.get(ref);
        }
        if (base == null || base.isEmpty() || ref.equals("refs/stash") || isAncestor(base, sandboxTip)) {
            if (ours && !isAncestor(hostTip, sandboxTip)) {
                // the sandbox rewrote what it had given (an amend, a rebase): still recoverable,
                // as long as no commit a branch or tag held when the run began is left on none
                // (a branch this run made may be all that holds one, after a deletion it allowed)
                if (!losesNothingHeldAtStart(ref, sandboxTip)) {
                    String kept = keepAside(ref, sandboxTip);
                    out.add("git: the sandbox rewrote " + ref + ", without whose tip " + shortId(hostTip)
                            + " commits the host's branches and tags held when the run began would be on none: the host"
                            + " keeps it" + (kept != null ? "; the sandbox's tip is kept at " + kept : ""));
                    return;
                }
                String kept = keepAside(ref, hostTip);
                out.add("git: the sandbox rewrote " + ref + " after the host had taken it: the host follows it, and"
                        + (kept != null ? " keeps the tips it replaced at " + kept + " (git reflog " + kept + ")"
                                : " could not keep the tip it replaced, " + shortId(hostTip)));
            }
            String message = reflogMessage(ref, sandboxTip);
            HostGit.Result r = updateRef(ref, sandboxTip, hostTip, message);
            if (r.status() != 0) {
                if (!last) {
                    incomplete = true; // a git of the host's held the ref: the next apply looks again
                    return;
                }
                // the sandbox's commits stay on a ref, not only in the object store
                String kept = keepAside(ref, sandboxTip);
                out.add("git: " + ref + " was not taken from the sandbox (" + r.firstLine() + ")"
                        + (kept != null ? "; the sandbox's tip is kept at " + kept : ""));
                return;
            }
            before.putIfAbsent(ref, hostTip == null ? "" : hostTip);
            lastApplied.put(ref, sandboxTip);
            return;
        }
        String kept = keepAside(ref, sandboxTip);
        if (hostTip == null) {
            out.add("git: the sandbox made " + ref + " again at " + shortId(sandboxTip) + ", which does not hold "
                    + shortId(base) + ", its tip when the sandbox deleted it: not taken"
                    + (kept != null ? "; both tips are in the reflog of " + kept + " (git reflog " + kept + ")" : ""));
            return;
        }
        out.add("git: the sandbox moved " + ref + " to " + shortId(sandboxTip) + ", which would lose commits of "
                + shortId(base) + ": the host keeps " + shortId(hostTip)
                + (kept != null ? "; the sandbox's tip is kept at " + kept : ""));
    }

    /**
     * A ref the sandbox deleted: deleted on the host too when its tip stays reachable from
     * another branch, tag or remote-tracking ref (a merged branch), else kept and said.
     */
    private void delete(String ref, String hostTip) {
        if (hostTip == null) {
            return;
        }
        // A deletion loses nothing where every commit the host's branches, tags and
        // remote-tracking refs held when the run began stays on one of them without this ref
        // (`git branch -d` after a merge, or a branch this run made for commits of its own),
        // whatever other runs or the user did meanwhile. A tag the host had is never deleted,
        // nor the branch checked out on the host (now or when the run began); the deleted tip
        // is kept aside, and a later ref of the same name is judged against it.
        String headNow = hostHead();
        // a HEAD that cannot be read (now or when the run began) may name this very branch
        boolean checkedOut = headNow == null || headAtStart == null || ("ref: " + ref).equals(headNow)
                || ("ref: " + ref).equals(headAtStart) || checkedOutInAWorktree(ref);
        String atStart = startValue(ref);
        if (!hostTip.equals(lastApplied.get(ref)) && atStart != null && !hostTip.equals(atStart)) {
            // moved on the host since the run began (by you, or another run): yours wins
            out.add("git: the sandbox deleted " + ref + ", which moved on the host since the run began: the host keeps it"
                    + " at " + shortId(hostTip));
            return;
        }
        boolean losesNothing = !ref.equals("refs/stash") && !ref.startsWith("refs/tags/") && !checkedOut
                && losesNothingHeldAtStart(ref, null);
        if (losesNothing && keepAside(ref, hostTip) != null && keepReflog(ref)
                && git("update-ref", "--no-deref", "-d", ref, hostTip).status() == 0) {
            before.putIfAbsent(ref, hostTip);
            lastApplied.remove(ref);
            return;
        }
        out.add("git: the sandbox deleted " + ref + "; the host keeps it at " + shortId(hostTip)
                + (losesNothing || checkedOut || ref.startsWith("refs/tags/") || ref.equals("refs/stash") ? ""
                        : ", without which commits the host's branches and tags held when the run began would be on"
                                + " none"));
    }

    /**
     * Whether every commit that the host's branches, tags and remote-tracking refs held when
     * this run began (the refs the view started from) stays reachable from those of them the
     * host still has, with {@code ref} at {@code newTip} (null: deleted). A ref made since, by
     * this run, another or the user, vouches for nothing (a sandbox could make one, have a
     * deletion rest on it, then take it away); one moved since does, as every later move of
     * it that would leave such a commit on none is judged here too. One walk of the host's
     * git; false when it cannot tell.
     */
    private boolean losesNothingHeldAtStart(String ref, String newTip) {
        Map<String, String> atStart = new LinkedHashMap<>();
        try {
            Map<String, String> packed = packedRefs(base.packedRefs());
            if (packed.size() > MAX_REFS) {
                return false; // not all read
            }
            for (Map.Entry<String, String> e : packed.entrySet()) {
                if (heldRef(e.getKey()) && ObjectIds.isObjectId(e.getValue())) {
                    atStart.put(e.getKey(), e.getValue());
                }
            }
            for (Map.Entry<String, String> e : base.looseRefs().entrySet()) {
                String value = e.getValue().strip();
                if (heldRef(e.getKey())) {
                    atStart.remove(e.getKey());
                    if (ObjectIds.isObjectId(value)) {
                        atStart.put(e.getKey(), value);
                    }
                }
            }
        } catch (IOException e) {
            return false;
        }
        List<String> args = new ArrayList<>(List.of("rev-list", "--count"));
        args.addAll(new java.util.LinkedHashSet<>(atStart.values()));
        HostGit.Result now = git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags",
                "refs/remotes");
        if (now.status() != 0) {
            return false;
        }
        for (String line : now.output().split("\n")) {
            int space = line.indexOf(' ');
            String name = space > 0 ? line.substring(space + 1) : "";
            if (space > 0 && !name.equals(ref) && atStart.containsKey(name)) {
                args.add("^" + line.substring(0, space));
            }
        }
        if (newTip != null) {
            args.add("^" + newTip);
        }
        if (args.size() > 40_000) {
            return false; // beyond what one command line carries: not told, so not taken
        }
        HostGit.Result lost = git(args.toArray(new String[0]));
        return lost.status() == 0 && lost.output().strip().equals("0");
    }

    /**
     * The first path where a commit of {@code tip} that none of the host's refs has yet (but
     * those kept aside, under {@value #KEPT}; nor HEAD, which a sandbox may have detached there)
     * adds a gitlink, against its first parent (or as a
     * root commit); null when none does, "" when the host's git cannot tell (its answer cut
     * short, say). One walk of the host's git over the new commits.
     */
    private String addedGitlink(String tip, String hostTip) {
        // the usual case, a line of new commits on a branch's tip, without the host's git
        java.util.Set<String> stops = new java.util.HashSet<>();
        if (hostTip != null) {
            stops.add(hostTip);
        }
        String head = hostHead();
        if (head != null && head.startsWith("ref: refs/heads/")) {
            String branch = resolve(head.substring("ref: ".length()));
            if (branch != null) {
                stops.add(branch);
            }
        }
        if (hostObjects != null && !stops.isEmpty() && noReplacements()) {
            AddedGitlinks walk = new AddedGitlinks(hostObjects, objectFormatSha256(), workTree());
            if (walk.noneAdded(tip, stops)) {
                return null;
            }
            if (walk.gitDirShaped != null) {
                return GIT_DIR + walk.gitDirShaped;
            }
        }
        HostGit.Result r = git("log", "--format=", "--raw", "-r", "--no-renames", "--no-abbrev", "--diff-filter=AT",
                "--diff-merges=first-parent", "--root", tip, "--not", "--exclude=" + KEPT + "*", "--glob=refs/*");
        if (r.status() != 0 || r.output().length() >= HostGit.OUTPUT_MAX - 4096) {
            return "";
        }
        java.util.Set<String> heads = new java.util.LinkedHashSet<>();
        java.util.Set<String> checkedDirs = new java.util.HashSet<>();
        for (String line : r.output().split("\n")) {
            int tab = line.indexOf('\t');
            if (!line.startsWith(":") || tab < 0) {
                continue;
            }
            String[] modes = line.substring(1, tab).split(" ");
            if (modes.length >= 2 && modes[1].equals("160000") && !modes[0].equals("160000")) {
                return line.substring(tab + 1);
            }
            String path = line.substring(tab + 1);
            if ((path.equals("HEAD") || path.endsWith("/HEAD")) && heads.size() < 16) {
                heads.add(path.length() == 4 ? "" : path.substring(0, path.length() - 5));
            }
            String intoGitDir = gitDirInWorkTree(path, checkedDirs);
            if (intoGitDir != null) {
                return GIT_DIR + intoGitDir;
            }
        }
        // a new HEAD: is its directory a git dir's shape in the tip?
        for (String dir : heads) {
            HostGit.Result listed = git("ls-tree", "--name-only", tip + ":" + dir);
            if (listed.status() != 0) {
                return "";
            }
            java.util.List<String> names = List.of(listed.output().split("\n"));
            if (names.contains("objects") && names.contains("refs") || names.contains("commondir")) {
                return GIT_DIR + dir;
            }
        }
        return null;
    }

    /**
     * The work tree of this git dir where it is the usual {@code .git} of one (the project's,
     * a nested repository's); null otherwise.
     */
    private Path workTree() {
        // by the git dir's own path, not the descriptor it is held by (which names no work tree)
        Path name = shown.getFileName();
        return name != null && name.toString().equals(".git") ? shown.getParent() : null;
    }

    /**
     * The directory above {@code path} (a file a new commit or index adds) that is a git dir
     * in the work tree (it holds a {@code HEAD}: a bare repository a sandbox left there
     * untracked, into which a checkout would write the file), or null.
     */
    private String gitDirInWorkTree(String path, java.util.Set<String> checked) {
        Path work = workTree();
        if (work == null) {
            return null;
        }
        String dir = path;
        while (true) {
            int slash = dir.lastIndexOf('/');
            dir = slash < 0 ? "" : dir.substring(0, slash);
            if (!checked.add(dir)) {
                return null; // it and those above it looked at already
            }
            if (Files.exists((dir.isEmpty() ? work : work.resolve(dir)).resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)) {
                return dir;
            }
            if (dir.isEmpty()) {
                return null;
            }
        }
    }

    /**
     * The start of what {@link #addedGitlink} returns for a directory shaped as a git dir (a
     * {@code HEAD} with {@code objects/} and {@code refs/}, or a {@code commondir}), which git's
     * discovery, run in it once it is checked out, takes for a repository of its own.
     */
    private static final String GIT_DIR = "\0";

    /** What a commit {@link #addedGitlink} found adds, for a line. */
    private String whatIsAdded(String link) {
        return link.startsWith(GIT_DIR) ? "files in a directory your git would take for a repository of its own at "
                + printablePath(link.substring(GIT_DIR.length()).isEmpty() ? "." : link.substring(GIT_DIR.length()))
                + " (a HEAD with objects and refs, in the commit or in your work tree): its config would run what it"
                + " says"
                : "a submodule at " + printablePath(link) + ", a repository your git would enter";
    }

    /**
     * Whether the host's git sees its commits as they are written: no replace refs, no
     * grafts, not shallow (each makes git's walk or trees others than {@link AddedGitlinks} reads).
     */
    private boolean noReplacements() {
        try {
            Path packed = gitDir.resolve("packed-refs");
            return !Files.exists(gitDir.resolve("refs/replace"), LinkOption.NOFOLLOW_LINKS)
                    && !Files.exists(gitDir.resolve("info/grafts"), LinkOption.NOFOLLOW_LINKS)
                    && !Files.exists(gitDir.resolve("shallow"), LinkOption.NOFOLLOW_LINKS)
                    && (!Files.exists(packed, LinkOption.NOFOLLOW_LINKS)
                            || !Files.readString(packed, StandardCharsets.ISO_8859_1).contains(" refs/replace/"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The identity of the host's reflog entries the apply writes: agent-sandbox moved the ref, not the user. */
    static final String REFLOG_NAME = "agent-sandbox";
    static final String REFLOG_EMAIL = "agent-sandbox";

    /**
     * Sets {@code ref} to {@code tip} where it is {@code old} (null: where it does not exist),
     * with a reflog entry: written here as git's files backend writes it where that is plain
     * ({@link #writeLooseRef}), else by the host's git ({@code update-ref}).
     */
    private HostGit.Result updateRef(String ref, String tip, String old, String message) {
        String written = writeLooseRef(ref, tip, old, message);
        if (written == null) {
            return new HostGit.Result(0, "");
        }
        if (!written.isEmpty()) {
            return new HostGit.Result(1, written);
        }
        return old == null
                ? git("update-ref", "--no-deref", "--create-reflog", "-m", message, ref, tip, "")
                : git("update-ref", "--no-deref", "--create-reflog", "-m", message, ref, tip, old);
    }

    /**
     * Writes loose ref {@code ref} as git's files backend does: its lock file
     * ({@code <ref>.lock}, created exclusively, the lock every git takes), the old value
     * checked under the lock, the reflog entry appended (and HEAD's, when HEAD names the ref),
     * then the lock renamed into place. Null when written; a reason when it failed after the
     * lock was taken; "" when it was not tried (refs in a reftable, a shared repository, a
     * ref in the way, a lock held, the stash), for the host's git to do.
     */
    private String writeLooseRef(String ref, String tip, String old, String message) {
        if (ref.equals("refs/stash") || !plainRefStore()) {
            return "";
        }
        int slash = ref.lastIndexOf('/');
        String name = ref.substring(slash + 1);
        String lockName = name + ".lock";
        java.nio.file.Path nameP = Path.of(name);
        java.nio.file.Path lockP = Path.of(lockName);
        try {
            if (old == null && !roomFor(ref, packedRefs(gitDir.resolve("packed-refs")))) {
                return ""; // a ref in the way: git says which
            }
            alone();
            // every write below is made in directories opened without following a link, so a
            // directory of the git dir swapped for one leads none of them elsewhere
            try (java.nio.file.SecureDirectoryStream<Path> dir = directory(ref.substring(0, slash))) {
                java.nio.channels.SeekableByteChannel lock;
                try {
                    lock = dir.newByteChannel(lockP, java.util.Set.of(java.nio.file.StandardOpenOption.CREATE_NEW,
                            java.nio.file.StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS));
                } catch (java.nio.file.FileAlreadyExistsException held) {
                    return ""; // a git of the host's holds it: git waits for it, or says so
                }
                boolean moved = false;
                try {
                    // under the lock: the value now, loose or packed, must be the one this update replaces
                    String now;
                    BasicFileAttributes a;
                    try {
                        a = dir.getFileAttributeView(nameP, java.nio.file.attribute.BasicFileAttributeView.class,
                                LinkOption.NOFOLLOW_LINKS).readAttributes();
                    } catch (java.nio.file.NoSuchFileException none) {
                        a = null;
                    }
                    if (a == null) {
                        now = packedRefs(gitDir.resolve("packed-refs")).get(ref);
                    } else if (a.isRegularFile() && a.size() <= BaseRefs.REF_BYTES) {
                        try (java.nio.channels.SeekableByteChannel c = dir.newByteChannel(nameP,
                                java.util.Set.of(java.nio.file.StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
                            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(BaseRefs.REF_BYTES + 1);
                            while (c.read(b) > 0 && b.hasRemaining()) {
                                // all of it
                            }
                            now = looseValue(new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII));
                        }
                        if (now == null) {
                            return ""; // a symbolic ref, or something git reads otherwise
                        }
                    } else {
                        return "";
                    }
                    if (!java.util.Objects.equals(now, old)) {
                        return ""; // moved meanwhile: git says how
                    }
                    write(lock, tip + "\n");
                    lock.close();
                    String entry = (old == null ? "0".repeat(tip.length()) : old) + " " + tip + " " + REFLOG_NAME
                            + " <" + REFLOG_EMAIL + "> " + (System.currentTimeMillis() / 1000) + " +0000\t" + message
                            + "\n";
                    // git logs a move of HEAD's branch in HEAD's reflog too: both logs plain files (or
                    // none yet) before either is written, so that no entry stands for a move not made
                    boolean headToo = ("ref: " + ref).equals(hostHead());
                    if (!plainOrAbsent("logs/" + ref) || headToo && !plainOrAbsent("logs/HEAD")) {
                        return "a reflog of it, or HEAD's, is not a plain file";
                    }
                    alone(); // the last look before anything of the move is written: the rename follows no link
                    appendReflog("logs/" + ref, entry);
                    if (headToo) {
                        appendReflog("logs/HEAD", entry);
                    }
                    dir.move(lockP, dir, nameP);
                    moved = true;
                    return null;
                } finally {
                    lock.close();
                    if (!moved) {
                        try {
                            dir.deleteFile(lockP);
                        } catch (java.nio.file.NoSuchFileException gone) {
                            // not there
                        }
                    }
                }
            }
        } catch (OtherWriter e) {
            throw new OtherWriterNow(e);
        } catch (IOException | RuntimeException e) {
            return "cannot write " + ref + ": " + e.getMessage();
        }
    }

    private static void write(java.nio.channels.WritableByteChannel c, String text) throws IOException {
        java.nio.ByteBuffer bytes = java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
            c.write(bytes);
        }
    }

    /** Directory {@code rel} of the host's git dir, opened through no link ({@link LinkFree#open}). */
    private java.nio.file.SecureDirectoryStream<Path> directory(String rel) throws IOException {
        return LinkFree.open(gitDir, rel);
    }

    /** Whether {@code rel} in the host's git dir is a regular file or nothing, with no link on the way. */
    private boolean plainOrAbsent(String rel) {
        Path p = gitDir.resolve(rel);
        return noLinkOnTheWay(rel) && (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)
                || !Files.exists(p, LinkOption.NOFOLLOW_LINKS));
    }

    /** A reflog larger than this is not copied: the ref it belongs to is not deleted. */
    static final int MAX_REFLOG = 16 << 20;

    /**
     * Copies the host's reflog of {@code ref}, which git deletes with the ref, to the end of
     * the reflog of the ref that keeps its tip aside ({@link #keepAside}): a commit that only
     * that reflog still held (a branch reset, then deleted) stays reachable for git's gc, as
     * it was. False when it cannot be copied (too large, not a plain file): the ref stays.
     */
    private boolean keepReflog(String ref) {
        String rel = "logs/" + ref;
        if (!plainOrAbsent(rel)) {
            return false;
        }
        byte[] log;
        try (java.io.InputStream in = Files.newInputStream(gitDir.resolve(rel), LinkOption.NOFOLLOW_LINKS)) {
            log = in.readNBytes(MAX_REFLOG + 1);
        } catch (java.nio.file.NoSuchFileException none) {
            return true; // no reflog: nothing only it holds
        } catch (IOException | RuntimeException e) {
            return false;
        }
        if (log.length > MAX_REFLOG) {
            return false;
        }
        if (log.length == 0) {
            return true;
        }
        if (log[log.length - 1] != '\n') {
            log = java.util.Arrays.copyOf(log, log.length + 1);
            log[log.length - 1] = '\n';
        }
        try {
            appendReflog("logs/" + KEPT + ref.substring("refs/".length()), log);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Appends one line to a reflog of the host's, made where missing; never through a link. */
    private void appendReflog(String rel, String entry) throws IOException {
        appendReflog(rel, entry.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #appendReflog(String, String)} of lines as they are (a reflog's messages may be in any encoding). */
    private void appendReflog(String rel, byte[] lines) throws IOException {
        int slash = rel.lastIndexOf('/');
        try (java.nio.file.SecureDirectoryStream<Path> dir = directory(rel.substring(0, slash));
                java.nio.channels.SeekableByteChannel c = dir.newByteChannel(Path.of(rel.substring(slash + 1)),
                        java.util.Set.of(java.nio.file.StandardOpenOption.CREATE,
                                java.nio.file.StandardOpenOption.APPEND, java.nio.file.StandardOpenOption.WRITE,
                                LinkOption.NOFOLLOW_LINKS))) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(lines);
            while (b.hasRemaining()) {
                c.write(b);
            }
        }
    }

    /**
     * Whether no ref of the host's is in the way of new ref {@code ref}: none at a directory
     * on its way (loose or packed), and none below it.
     */
    private boolean roomFor(String ref, Map<String, String> packed) {
        if (Files.exists(gitDir.resolve(ref), LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        for (int slash = ref.indexOf('/', 5); slash > 0; slash = ref.indexOf('/', slash + 1)) {
            String above = ref.substring(0, slash);
            if (packed.containsKey(above) || Files.isRegularFile(gitDir.resolve(above), LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
        }
        for (String name : packed.keySet()) {
            if (name.startsWith(ref + "/")) {
                return false;
            }
        }
        return true;
    }

    /**
     * Says which worktrees the sandbox made ({@code git worktree add} inside): their files in
     * the git dir are never taken (a worktree's {@code commondir} and {@code gitdir} could send
     * your git elsewhere), so their directories in the project lead to no repository on the
     * host. At most five are named.
     */
    private void worktreesLeftOut() {
        Path made = upper.resolve("worktrees");
        if (!Files.isDirectory(made, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<String> paths = new ArrayList<>();
        int more = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(made)) {
            for (Path e : entries) {
                if (!Files.isDirectory(e, LinkOption.NOFOLLOW_LINKS)
                        || Files.exists(gitDir.resolve("worktrees").resolve(e.getFileName()), LinkOption.NOFOLLOW_LINKS)) {
                    continue; // the host's own worktree, which the sandbox used
                }
                if (paths.size() == 5) {
                    more++;
                    continue;
                }
                String where = e.getFileName().toString();
                Path gitdirFile = e.resolve("gitdir");
                if (Files.isRegularFile(gitdirFile, LinkOption.NOFOLLOW_LINKS) && Files.size(gitdirFile) < 4096) {
                    String named = Files.readString(gitdirFile, StandardCharsets.UTF_8).strip();
                    where = named.endsWith("/.git") ? named.substring(0, named.length() - 5) : named;
                }
                paths.add(printablePath(where));
            }
        } catch (IOException | RuntimeException e) {
            return; // nothing to say with certainty
        }
        if (!paths.isEmpty()) {
            out.add("git: the sandbox made the worktree" + (paths.size() + more > 1 ? "s " : " ")
                    + String.join(", ", paths) + (more > 0 ? " and " + more + " more" : "") + ", which the host does not"
                    + " take: " + (paths.size() + more > 1 ? "their directories lead" : "its directory leads")
                    + " to no repository of yours; remove " + (paths.size() + more > 1 ? "them" : "it")
                    + " and make worktrees outside the sandbox");
        }
    }

    /**
     * Whether the host's refs are loose files and packed-refs, written with the default
     * permissions: its config names no other ref storage (reftable) and no shared repository.
     */
    private boolean plainRefStore() {
        if (plainRefStore == null) {
            String config;
            try {
                config = Files.readString(gitDir.resolve("config"), StandardCharsets.ISO_8859_1)
                        .toLowerCase(java.util.Locale.ROOT);
            } catch (IOException | RuntimeException e) {
                config = "refstorage"; // not known: the host's git
            }
            plainRefStore = !config.contains("refstorage") && !config.contains("sharedrepository");
        }
        return plainRefStore;
    }

    private Boolean plainRefStore;

    /** The value of {@code ref} when the run began (the view's start), or null when it had none. */
    private String startValue(String ref) {
        try {
            String loose = base.loose(ref);
            if (loose != null) {
                String value = loose.strip();
                return ObjectIds.isObjectId(value) ? value : null;
            }
            return packedRefs(base.packedRefs()).get(ref);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Whether git counts {@code ref} as checked out in git dir {@code dir} beyond its HEAD: a
     * rebase or a bisect under way there names the branch it goes back to.
     */
    private static boolean inUseIn(Path dir, String ref) {
        for (String name : new String[] {"rebase-merge/head-name", "rebase-apply/head-name", "BISECT_START"}) {
            Path f = dir.resolve(name);
            try {
                if (Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS) && Files.size(f) <= 4096) {
                    String named = Files.readString(f, StandardCharsets.UTF_8).strip();
                    if (named.equals(ref) || ("refs/heads/" + named).equals(ref)) {
                        return true;
                    }
                }
            } catch (IOException | RuntimeException e) {
                return true; // cannot tell: as if in use
            }
        }
        return false;
    }

    /** Whether a linked worktree of the host's has {@code ref} checked out (its HEAD names it), or the main one a rebase or bisect of it under way. */
    private boolean checkedOutInAWorktree(String ref) {
        if (inUseIn(gitDir, ref)) {
            return true;
        }
        Path worktrees = gitDir.resolve("worktrees");
        if (!Files.isDirectory(worktrees, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        int looked = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(worktrees)) {
            for (Path w : entries) {
                if (++looked > 1000) {
                    return true; // more than are looked at: as if checked out
                }
                Path head = w.resolve("HEAD");
                if (Files.isRegularFile(head, LinkOption.NOFOLLOW_LINKS) && Files.size(head) <= 4096
                        && Files.readString(head, StandardCharsets.UTF_8).strip().equals("ref: " + ref)
                        || inUseIn(w, ref)) {
                    return true;
                }
            }
        } catch (IOException e) {
            return true; // cannot tell: as if checked out
        }
        return false;
    }

    /** Whether a ref of this name is a branch, tag or remote-tracking ref (what history is kept on). */
    private static boolean heldRef(String name) {
        return name.startsWith("refs/heads/") || name.startsWith("refs/tags/") || name.startsWith("refs/remotes/");
    }


    /** The sandbox's tip of a ref the host did not take, at {@code refs/agent-sandbox/...}; its name, or null. */
    private String keepAside(String ref, String tip) {
        String kept = KEPT + ref.substring("refs/".length());
        if (!noLinkOnTheWay(kept) || !plainOrAbsent("logs/" + kept)) {
            return null; // git would append to a reflog through a link
        }
        // with a reflog: a second tip kept there leaves the first recoverable too
        return git("update-ref", "--no-deref", "--create-reflog", "-m", "agent-sandbox: a tip the host did not take",
                kept, tip)
                .status() == 0
                ? kept : null;
    }

    /**
     * The message of the host's reflog entry: for the stash, the stash commit's subject (what
     * {@code git stash list} shows), read from the object the host now has; a plain one
     * otherwise. Never a file of the layer: a link there could make the host copy a line of
     * any file it can read into its reflog, which the sandbox's view shows.
     */
    private String reflogMessage(String ref, String tip) {
        if (ref.equals("refs/stash")) {
            HostGit.Result r = git("log", "-1", "--format=%s", tip);
            String subject = r.firstLine();
            if (r.status() == 0 && !subject.isEmpty()) {
                return subject;
            }
        }
        return "agent-sandbox: from the sandbox";
    }

    private void head() throws IOException {
        if (onlyBranch != null) {
            return; // @git-strict: the host's HEAD stays on its branch
        }
        Path head = upper.resolve("HEAD");
        if (!Files.isRegularFile(head, LinkOption.NOFOLLOW_LINKS) || Files.size(head) > 4096) {
            return;
        }
        // leniently: bytes that are no UTF-8 give a name no rule takes
        String text = new String(Files.readAllBytes(head), StandardCharsets.UTF_8).strip();
        if (text.startsWith("ref: ")) {
            String target = text.substring("ref: ".length());
            // a branch the host has (after the refs above): never an unborn or odd name
            if (target.startsWith("refs/heads/") && applicable(target) && !symbolicOnHost(target)
                    && resolve(target) != null) {
                String now = hostHead();
                if (!("ref: " + target).equals(now) && headLogPlain()) {
                    git("symbolic-ref", "-m", "agent-sandbox: from the sandbox", "HEAD", target);
                }
            }
        } else if (ObjectIds.isObjectId(text)
                && git("cat-file", "-e", text + "^{commit}").status() == 0) {
            String link = addedGitlink(text, null);
            if (link != null && link.isEmpty() && !last) {
                incomplete = true; // its objects may be being written still: the next apply looks again
                return;
            }
            if (link != null) {
                out.add("git: the sandbox's HEAD is detached at " + shortId(text) + (link.isEmpty()
                        ? ", whose commits the host could not check for submodules"
                        : ", a commit that adds " + whatIsAdded(link)) + ": the host's HEAD stays");
                return;
            }
            if (headLogPlain()) {
                git("update-ref", "--no-deref", "-m", "agent-sandbox: from the sandbox", "HEAD", text);
            }
        }
    }

    /** Whether HEAD's reflog, which the host's git appends to, is a plain file or none yet (else said). */
    private boolean headLogPlain() {
        if (plainOrAbsent("logs/HEAD")) {
            return true;
        }
        out.add("git: the host's git dir holds a symbolic link or something else at logs or logs/HEAD: its HEAD stays");
        return false;
    }

    // ------------------------------------------------------------------ the host's git

    // Read as git reads them where that is plain (a loose ref, packed-refs, HEAD, the object
    // format in the config): each call of the host's git costs a process, several milliseconds.

    /** Whether the host's repository uses SHA-256 object names; asked once. */
    private boolean objectFormatSha256() {
        if (sha256 == null) {
            String config;
            try {
                config = Files.readString(gitDir.resolve("config"), StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                config = "";
            }
            // only a repository that says "objectformat" anywhere is asked: most never do
            sha256 = config.toLowerCase(java.util.Locale.ROOT).contains("objectformat")
                    && git("rev-parse", "--show-object-format").output().strip().equals("sha256");
        }
        return sha256;
    }

    private Boolean sha256;

    /** The host's value of {@code ref}: its loose file, else its line in packed-refs; null when it has none. */
    private String resolve(String ref) {
        Path loose = gitDir.resolve(ref);
        try {
            if (Files.isRegularFile(loose, LinkOption.NOFOLLOW_LINKS)) {
                String v = looseValue(loose);
                if (v != null) {
                    return v;
                }
                HostGit.Result r = git("rev-parse", "-q", "--verify", ref); // a symbolic ref: git follows it
                return r.status() == 0 ? r.output().strip() : null;
            } else if (Files.exists(loose, LinkOption.NOFOLLOW_LINKS)) {
                return null;
            }
            return packedRefs(gitDir.resolve("packed-refs")).get(ref);
        } catch (IOException e) {
            HostGit.Result r = git("rev-parse", "-q", "--verify", ref);
            return r.status() == 0 ? r.output().strip() : null;
        }
    }

    /** Whether the host's loose file for {@code ref} is a symbolic ref (or anything but a plain file). */
    private boolean symbolicOnHost(String ref) {
        Path loose = gitDir.resolve(ref);
        try {
            if (Files.isSymbolicLink(loose)) {
                return true;
            }
            if (!Files.isRegularFile(loose, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
            if (Files.size(loose) > 4096) {
                return true;
            }
            return Files.readString(loose, StandardCharsets.US_ASCII).startsWith("ref:");
        } catch (IOException | RuntimeException e) {
            return true; // not plain: not touched
        }
    }

    /** What the host's HEAD file says, stripped; null when unreadable. */
    private String hostHead() {
        try {
            if (Files.isSymbolicLink(gitDir.resolve("HEAD"))) {
                // core.preferSymlinkRefs: HEAD a link to its branch's file
                String target = Files.readSymbolicLink(gitDir.resolve("HEAD")).toString();
                return target.startsWith("refs/") ? "ref: " + target : null;
            }
            // UTF-8, as git writes a branch's name (and as the layer's ref names read); one that
            // does not read as that is no branch this apply could tell apart: null
            return Files.readString(gitDir.resolve("HEAD"), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Whether new ref {@code ref} has the short name of the host's HEAD or of one of its
     * branches or tags in another namespace: git resolves a short name to the tag first, so
     * a tag {@code main} would be what the user's next {@code git reset --hard main} takes.
     */
    private boolean shadows(String ref) throws IOException {
        String[] spaces = {"refs/heads/", "refs/tags/", "refs/remotes/"};
        for (String space : spaces) {
            if (ref.startsWith(space)) {
                String name = ref.substring(space.length());
                if (name.equals("HEAD") || (space.equals("refs/remotes/") && name.endsWith("/HEAD"))) {
                    return true; // a remote's HEAD the host has not: git takes the remote's name for it
                }
                if (!space.equals("refs/remotes/") && remoteNamed(name)) {
                    return true; // git takes a short name for a branch or tag before a remote's HEAD
                }
                int slash = name.indexOf('/');
                if (!space.equals("refs/remotes/") && slash > 0 && remoteNamed(name.substring(0, slash))) {
                    return true; // origin/x: the remote-tracking ref a fetch makes later would be ambiguous
                }
                if (name.length() >= 4 && name.length() <= 64
                        && ObjectIds.isHex(name.toLowerCase(java.util.Locale.ROOT))) {
                    return true; // git takes a name like an object's (abbreviated) id for the ref
                }
                for (String other : spaces) {
                    // git takes a short name for a tag before a branch, and either before a
                    // remote-tracking ref: a new one of those shadows the host's of that name
                    if (!other.equals(space) && !space.equals("refs/remotes/") && resolve(other + name) != null) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * Whether the host has remote-tracking refs of a remote of this name (loose, or in its
     * packed-refs), whose HEAD the name stands for in git's commands, or may once a fetch or
     * {@code git remote set-head} makes it.
     */
    private boolean remoteNamed(String name) throws IOException {
        if (Files.exists(gitDir.resolve("refs/remotes").resolve(name), LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        Path packed = gitDir.resolve("packed-refs");
        if (!Files.isRegularFile(packed, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        return Files.readString(packed, StandardCharsets.ISO_8859_1).contains(" refs/remotes/" + name + "/");
    }

    /**
     * Whether every directory on the way to {@code rel} in the host's git dir is a directory
     * of its own or absent: the host's git, writing a ref or its reflog there, would follow a
     * link out of the git dir (into another repository, say) that a process able to write
     * the git dir put there.
     */
    private boolean noLinkOnTheWay(String rel) {
        Path p = gitDir;
        String[] parts = rel.split("/");
        for (int i = 0; i < parts.length - 1; i++) {
            p = p.resolve(parts[i]);
            if (!ObjectImport.realDirOrAbsent(p)) {
                return false;
            }
        }
        return true;
    }

    /** The type of object {@code id} on the host: from its loose file, else the host's git is asked. */
    private String objectType(String id) {
        String type = ObjectImport.looseType(gitDir, id);
        if (type != null) {
            return type;
        }
        HostGit.Result r = git("cat-file", "-t", id);
        return r.status() == 0 ? r.firstLine() : null;
    }

    /** The type of the object an annotated tag names in the end (tags of tags followed); null when not known. */
    private String peeledType(String tag) {
        HostGit.Result r = git("cat-file", "-t", tag + "^{}");
        return r.status() == 0 ? r.firstLine() : null;
    }

    /** Whether the host has object {@code id}: its loose file, else the host's git is asked. */
    private boolean hostHas(String id) {
        return Files.isRegularFile(gitDir.resolve("objects").resolve(id.substring(0, 2)).resolve(id.substring(2)),
                LinkOption.NOFOLLOW_LINKS) || git("cat-file", "-e", id).status() == 0;
    }

    private boolean isAncestor(String ancestor, String descendant) {
        return reachedThroughLooseCommits(ancestor, descendant)
                || git("merge-base", "--is-ancestor", ancestor, descendant).status() == 0;
    }

    /** At most this many commits are read by {@link #reachedThroughLooseCommits} before git is asked. */
    static final int LOOSE_WALK = 64;

    /**
     * Whether {@code ancestor} is reached from {@code descendant} through the parents of at
     * most {@link #LOOSE_WALK} loose commits of the host's git dir: the usual case, where the
     * sandbox's new commits (just brought in, loose) sit on the host's tip, answered without
     * starting the host's git. Only a yes is sure: a commit that is not loose (packed, or
     * missing in a shallow clone), or a longer walk, leaves the answer to git.
     */
    private boolean reachedThroughLooseCommits(String ancestor, String descendant) {
        java.util.ArrayDeque<String> next = new java.util.ArrayDeque<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        next.add(descendant);
        seen.add(descendant);
        for (int read = 0; !next.isEmpty() && read < LOOSE_WALK; read++) {
            String id = next.poll();
            if (id.equals(ancestor)) {
                return true;
            }
            List<String> parents = ObjectImport.looseCommitParents(gitDir, id);
            if (parents == null) {
                return false;
            }
            for (String p : parents) {
                if (seen.add(p)) {
                    next.add(p);
                }
            }
        }
        return next.contains(ancestor);
    }

    // ------------------------------------------------------------------ small things

    /**
     * Whether {@code dir} holds anything but directories: the layer starts with the empty
     * directories of its object stores' views, which are nothing to apply.
     */
    private static boolean hasFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                if (!Files.isDirectory(e, LinkOption.NOFOLLOW_LINKS) || hasFiles(e)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String shortId(String id) {
        return id.length() > 12 ? id.substring(0, 12) : id;
    }
}
