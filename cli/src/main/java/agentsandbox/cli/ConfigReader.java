// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.Bounds;
import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.text.DidYouMean;
import agentsandbox.core.Environment;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.PathPattern;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.rules.Presets;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Finds, reads and validates the config files: the global one
 * ({@code $XDG_CONFIG_HOME/agent-sandbox/config.json[c]}, else
 * {@code ~/.config/agent-sandbox/}) and the project one ({@code .agent-sandbox.json[c]}
 * in the working directory) or, instead of the project one, the file given with {@code -c}.
 *
 * <p>Validation is strict: unknown keys, wrong types, unknown presets, invalid globs and
 * invalid command rules are errors naming the file, line, column and key path.
 */
final class ConfigReader {
    private ConfigReader() {}

    /** No sensible config comes near this; larger files are refused before reading. */
    static final long MAX_BYTES = 1024 * 1024;

    /**
     * @param layers the global and project layers that exist, lowest priority first
     * @param files  the files they were read from
     * @param notes  what was looked for and found, for {@code --debug}
     * @param project      the project config found in the working directory (not one given
     *                     with {@code -c}), or null; untrusted until the user trusts it
     * @param projectBytes the content {@code project} was read from, or null
     */
    record Loaded(List<PolicyLayer> layers, List<Path> files, List<String> notes, PolicyLayer project,
            byte[] projectBytes) {}

    /**
     * @param explicit the {@code -c} argument, or {@code null}
     */
    static Loaded load(Environment env, String explicit) {
        List<PolicyLayer> layers = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        List<String> notes = new ArrayList<>();

        Optional<Path> globalDir = globalDir(env);
        if (globalDir.isEmpty()) {
            notes.add("global config: none (neither XDG_CONFIG_HOME nor HOME is set)");
        } else {
            Optional<Path> global = pick(globalDir.get(), "config.json", "config.jsonc");
            if (global.isPresent()) {
                layers.add(read(global.get(), Layer.GLOBAL));
                files.add(global.get());
                notes.add("global config: " + global.get() + " (loaded)");
            } else {
                notes.add("global config: " + globalDir.get().resolve("config.json[c]") + " (not found)");
            }
        }

        if (explicit != null) {
            Path file = explicitFile(env, explicit);
            if (inProject(env, file)) {
                // in the project, which every sandbox started there writes (its directory renamed
                // away and made anew, the file with it): trusted as the project config is
                byte[] data = bytes(file);
                PolicyLayer project = parse(file, data, Layer.PROJECT);
                layers.add(project);
                files.add(file);
                notes.add("project config: " + file + " (loaded, given with -c; it is in the project, which sandboxes"
                        + " write, so it is trusted only as a project config is)");
                return new Loaded(List.copyOf(layers), List.copyOf(files), List.copyOf(notes), project, data);
            }
            layers.add(read(file, Layer.PROJECT));
            files.add(file);
            notes.add("project config: " + file + " (loaded, given with -c)");
        } else {
            Optional<Path> found = projectFile(env);
            if (found.isPresent()) {
                byte[] data = bytes(found.get());
                PolicyLayer project = parse(found.get(), data, Layer.PROJECT);
                layers.add(project);
                files.add(found.get());
                notes.add("project config: " + found.get() + " (loaded)");
                return new Loaded(List.copyOf(layers), List.copyOf(files), List.copyOf(notes), project, data);
            }
            notes.add("project config: " + env.workDir().resolve(".agent-sandbox.json[c]") + " (not found)");
        }
        return new Loaded(List.copyOf(layers), List.copyOf(files), List.copyOf(notes), null, null);
    }

    /**
     * The project config in the working directory. Both names present is an error whose
     * line says which of them the user trusted: a sandbox can create the second file, and
     * the cause must be plain.
     */
    static Optional<Path> projectFile(Environment env) {
        Path json = env.workDir().resolve(".agent-sandbox.json");
        Path jsonc = env.workDir().resolve(".agent-sandbox.jsonc");
        boolean hasJson = Files.exists(json);
        boolean hasJsonc = Files.exists(jsonc);
        if (hasJson && hasJsonc) {
            boolean trustedJson = trusted(env, json);
            boolean trustedJsonc = trusted(env, jsonc);
            String which = trustedJson == trustedJsonc
                    ? (trustedJson ? "both are trusted" : "neither is trusted")
                    : (trustedJson ? jsonc.getFileName() : json.getFileName())
                            + " is not trusted (it may have been created inside a sandbox)";
            throw new ConfigException(trustedJson == trustedJsonc ? jsonc : trustedJson ? jsonc : json,
                    "both .agent-sandbox.json and .agent-sandbox.jsonc exist in " + env.workDir() + "; " + which,
                    "delete the one you did not write, then run agent-sandbox trust if the other loosens the policy");
        }
        return hasJson ? Optional.of(json) : hasJsonc ? Optional.of(jsonc) : Optional.empty();
    }

    private static boolean trusted(Environment env, Path file) {
        try {
            return Trust.status(env, file, bytes(file)) == Trust.Status.TRUSTED;
        } catch (ConfigException e) {
            return false;
        }
    }

    /** The directory of the global config, or empty when neither XDG_CONFIG_HOME nor HOME is set. */
    static Optional<Path> globalDir(Environment env) {
        String xdg = env.hostEnv().get("XDG_CONFIG_HOME");
        // The XDG base directory spec says relative values are to be ignored.
        if (xdg != null && xdg.startsWith("/")) {
            return Optional.of(Path.of(xdg, "agent-sandbox"));
        }
        if (env.home() == null) {
            return Optional.empty();
        }
        return Optional.of(env.home().resolve(".config").resolve("agent-sandbox"));
    }

    /** The one of the two names that exists; both is an error. */
    private static Optional<Path> pick(Path dir, String json, String jsonc) {
        Path a = dir.resolve(json);
        Path b = dir.resolve(jsonc);
        boolean hasA = Files.exists(a);
        boolean hasB = Files.exists(b);
        if (hasA && hasB) {
            throw new ConfigException(b, "both " + json + " and " + jsonc + " exist in " + dir,
                    "keep one of them");
        }
        return hasA ? Optional.of(a) : hasB ? Optional.of(b) : Optional.empty();
    }

    /**
     * Whether {@code file} lies where a sandbox writes: in the working directory or the
     * repository around it (as given, or where its links lead), or in the sandboxes' own
     * layers of the home. A file there named with {@code -c} is no more the user's own than the
     * project config is.
     */
    static boolean inProject(Environment env, Path file) {
        try {
            Path real = file.toRealPath();
            Path work = env.workDir().toRealPath();
            // the sandboxes' own copy-on-write layers of the home: written inside, at a known path
            Path layers = agentsandbox.core.homes.HomeLayers.root(env);
            if (layers != null && (real.startsWith(layers) || (Files.exists(layers) && real.startsWith(layers.toRealPath())))) {
                return true;
            }
            if (work.getParent() == null) {
                return false; // the host root, read-only in every sandbox
            }
            // the path as given as well as where it leads: a link the sandbox put in the project
            // may lead anywhere it writes
            Path given = file.toAbsolutePath().normalize();
            if (real.startsWith(work) || given.startsWith(env.workDir().toAbsolutePath().normalize())
                    || given.startsWith(work)) {
                return true;
            }
            Optional<agentsandbox.core.git.GitLayout> git = agentsandbox.core.git.GitLayout.discover(work);
            return git.isPresent() && git.get().workTree() != null && (real.startsWith(git.get().workTree().toRealPath())
                    || given.startsWith(git.get().workTree()));
        } catch (IOException | RuntimeException e) {
            return true; // not told: not trusted for being named
        }
    }

    static Path explicitFile(Environment env, String explicit) {
        String expanded = explicit;
        if (env.home() != null && (explicit.equals("~") || explicit.startsWith("~/"))) {
            expanded = env.home() + explicit.substring(1);
        }
        Path file = env.workDir().resolve(expanded).normalize();
        if (!Files.exists(file)) {
            throw new ConfigException(file, "config file given with -c does not exist");
        }
        return file;
    }

    private static PolicyLayer read(Path file, Layer layer) {
        return parse(file, bytes(file), layer);
    }

    /**
     * Decodes, parses and validates the content of one config file.
     *
     * @throws ConfigException naming {@code file} and the position of the problem
     */
    static PolicyLayer parse(Path file, byte[] data, Layer layer) {
        String text = decode(file, data);
        Jsonc.Value root;
        try {
            root = Jsonc.parse(text);
        } catch (Jsonc.SyntaxError e) {
            throw new ConfigException(file, e.line, e.column, "invalid JSONC: " + e.getMessage());
        }
        PolicyLayer.Builder b = PolicyLayer.builder(layer, file.toString());
        new Schema(file, b).document(root);
        return b.build();
    }

    static byte[] bytes(Path file) {
        if (Files.isDirectory(file)) {
            throw new ConfigException(file, "is a directory, not a config file");
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            // a FIFO or a device would block or never end: a sandbox can create either here
            throw new ConfigException(file, "is not a regular file");
        }
        try {
            long size = Files.size(file);
            if (size > MAX_BYTES) {
                throw new ConfigException(file, "too large (" + size + " bytes; the limit is " + MAX_BYTES + ")");
            }
            try (InputStream in = Files.newInputStream(file)) {
                byte[] data = in.readNBytes((int) MAX_BYTES + 1);
                if (data.length > MAX_BYTES) {
                    throw new ConfigException(file, "too large (more than " + MAX_BYTES + " bytes)");
                }
                return data;
            }
        } catch (AccessDeniedException e) {
            throw new ConfigException(file, "cannot read: permission denied");
        } catch (NoSuchFileException e) {
            throw new ConfigException(file, "cannot read: no such file (a dangling symlink?)");
        } catch (IOException e) {
            throw new ConfigException(file, "cannot read: " + e.getMessage());
        }
    }

    private static String decode(Path file, byte[] data) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer buf = ByteBuffer.wrap(data);
        try {
            return decoder.decode(buf).toString();
        } catch (MalformedInputException e) {
            int offset = buf.position();
            int line = 1;
            int lineStart = 0;
            for (int k = 0; k < offset; k++) {
                if (data[k] == '\n') {
                    line++;
                    lineStart = k + 1;
                }
            }
            throw new ConfigException(file, line, offset - lineStart + 1,
                    "not valid UTF-8 (byte offset " + offset + ")");
        } catch (CharacterCodingException e) {
            throw new ConfigException(file, "not valid UTF-8");
        }
    }

    /** Walks the parsed document, checking every key and type, filling the builder. */
    private static final class Schema {
        private final Path file;
        private final PolicyLayer.Builder b;

        Schema(Path file, PolicyLayer.Builder b) {
            this.file = file;
            this.b = b;
        }

        private ConfigException at(Jsonc.Value v, String message) {
            return new ConfigException(file, v.line(), v.column(), message);
        }

        private ConfigException at(Jsonc.Member m, String message) {
            return new ConfigException(file, m.line(), m.column(), message);
        }

        void document(Jsonc.Value root) {
            Jsonc.Obj top = object(root, "the top level");
            for (Jsonc.Member m : top.members().values()) {
                switch (m.key()) {
                    case "filesystem" -> filesystem(m.value());
                    case "commands" -> commands(m.value());
                    case "network" -> network(m.value());
                    case "docker" -> b.docker(bool(m.value(), "docker"));
                    case "shareTmp" -> b.shareTmp(bool(m.value(), "shareTmp"));
                    case "sshAgent" -> sshAgent(m.value());
                    case "gpgAgent" -> b.gpgAgent(bool(m.value(), "gpgAgent"));
                    case "hostPorts" -> hostPorts(m.value());
                    case "tmpSize", "maxProcs", "maxMemory" -> bound(m.key(), m.value());
                    default -> throw unknown(m, "", "filesystem, commands, network, docker, hostPorts, shareTmp,"
                            + " sshAgent, gpgAgent, tmpSize, maxProcs, maxMemory");
                }
            }
        }

        /** {@code true}, {@code false}, or {@code {"allow": [hosts]}} (on, for those hosts only). */
        private void network(Jsonc.Value v) {
            if (v instanceof Jsonc.Bool bool) {
                b.network(bool.value());
                return;
            }
            if (!(v instanceof Jsonc.Obj o)) {
                throw at(v, "network: expected true, false or {\"allow\": [\"example.org\"]}, got " + v.kind());
            }
            for (Jsonc.Member m : o.members().values()) {
                if (!m.key().equals("allow")) {
                    throw unknown(m, "network.", "allow");
                }
                if (!(m.value() instanceof Jsonc.Arr a)) {
                    throw at(m.value(), "network.allow: expected an array of host names such as \"*.example.org\", got "
                            + m.value().kind());
                }
                if (a.items().isEmpty()) {
                    throw at(a, "network.allow: an empty list names no host; use \"network\": false for no network");
                }
                for (Jsonc.Value item : a.items()) {
                    String host = string(item, "network.allow").value();
                    try {
                        b.allowHost(host);
                    } catch (IllegalArgumentException e) {
                        throw at(item, "network.allow: " + host + ": " + e.getMessage());
                    }
                }
            }
            b.network(true);
        }

        /** {@code true}, {@code false}, or the comments of the only keys the sandbox may use. */
        private void sshAgent(Jsonc.Value v) {
            if (!(v instanceof Jsonc.Arr a)) {
                b.sshAgent(bool(v, "sshAgent"));
                return;
            }
            List<String> keys = new ArrayList<>();
            for (Jsonc.Value item : a.items()) {
                String c = string(item, "sshAgent").value();
                if (c.isEmpty() || keys.contains(c)) {
                    throw at(item, "sshAgent: expected true, false, or the comments of keys in your agent, each"
                            + " once (ssh-add -l shows them)");
                }
                keys.add(c);
            }
            if (keys.isEmpty()) {
                throw at(v, "sshAgent: an empty list names no key; use true for every key, or false");
            }
            b.sshAgent(true).sshAgentKeys(keys);
        }

        /** A bound: a number, or (sizes) a string such as "2G". */
        private void bound(String key, Jsonc.Value v) {
            String text = v instanceof Jsonc.Num n ? n.text() : v instanceof Jsonc.Str str ? str.value() : null;
            if (text == null) {
                throw at(v, key + ": expected " + (key.equals("maxProcs") ? "a number" : "a size such as \"2G\"")
                        + ", got " + v.kind());
            }
            try {
                b.bounds(switch (key) {
                    case "tmpSize" -> new Bounds(Bounds.parseSize(key, text, Bounds.MIN_TMP_SIZE), null, null);
                    case "maxProcs" -> new Bounds(null, Bounds.parseCount(key, text), null);
                    default -> new Bounds(null, null, Bounds.parseSize(key, text, Bounds.MIN_MEMORY));
                });
            } catch (IllegalArgumentException e) {
                throw at(v, e.getMessage());
            }
        }

        private void hostPorts(Jsonc.Value v) {
            if (!(v instanceof Jsonc.Arr a)) {
                throw at(v, "hostPorts: expected an array of port numbers, got " + v.kind());
            }
            for (Jsonc.Value item : a.items()) {
                int port = item instanceof Jsonc.Num n ? Ports.parse(n.text()) : -1;
                if (port < 0) {
                    String got = item instanceof Jsonc.Num n2 ? n2.text() : item.kind();
                    throw at(item, "hostPorts: " + Ports.PROBLEM + " (got " + got + ")");
                }
                b.hostPort(port);
            }
        }

        private void filesystem(Jsonc.Value v) {
            Jsonc.Obj fs = object(v, "filesystem");
            for (Jsonc.Member m : fs.members().values()) {
                String key = "filesystem." + m.key();
                switch (m.key()) {
                    case "presets" -> {
                        for (Jsonc.Value each : strings(m.value(), key)) {
                            Jsonc.Str item = string(each, key);
                            try {
                                Presets.validateToggle(item.value());
                            } catch (IllegalArgumentException e) {
                                throw at(item, key + ": " + e.getMessage());
                            }
                            b.preset(item.value());
                        }
                    }
                    case "ro" -> {
                        for (Jsonc.Value each : strings(m.value(), key)) {
                            Jsonc.Str item = string(each, key);
                            b.ro(pattern(item, key, item.value()));
                        }
                    }
                    case "rw" -> {
                        for (Jsonc.Value each : strings(m.value(), key)) {
                            Jsonc.Str item = string(each, key);
                            b.rw(pattern(item, key, item.value()));
                        }
                    }
                    case "exclude" -> {
                        for (Jsonc.Value each : strings(m.value(), key)) {
                            Jsonc.Str item = string(each, key);
                            b.exclude(pattern(item, key, item.value()));
                        }
                    }
                    default -> throw unknown(m, "filesystem.", "presets, ro, rw, exclude");
                }
            }
        }

        private String pattern(Jsonc.Value item, String key, String s) {
            try {
                PathPattern.validate(s);
            } catch (IllegalArgumentException e) {
                throw at(item, key + ": \"" + s + "\": " + e.getMessage());
            }
            return s;
        }

        private void commands(Jsonc.Value v) {
            Jsonc.Obj cmds = object(v, "commands");
            for (Jsonc.Member m : cmds.members().values()) {
                String key = "commands." + m.key();
                try {
                    CommandRule.validateName(m.key());
                } catch (IllegalArgumentException e) {
                    throw at(m, key + ": " + e.getMessage());
                }
                CommandRule rule;
                if (m.value() instanceof Jsonc.Bool bool) {
                    rule = bool.value() ? new CommandRule.Unwrapped() : new CommandRule.Blocked();
                } else if (m.value() instanceof Jsonc.Str str) {
                    if (str.value().equals("true") || str.value().equals("false")) {
                        throw at(str, key + ": write " + str.value() + " without quotes (a JSON boolean)");
                    }
                    try {
                        rule = CommandRule.parse(str.value());
                    } catch (IllegalArgumentException e) {
                        throw at(str, key + ": " + e.getMessage());
                    }
                } else {
                    throw at(m.value(), key + ": expected \"@git\", true, false or a script path, got "
                            + m.value().kind());
                }
                b.command(m.key(), rule);
            }
        }

        private Jsonc.Obj object(Jsonc.Value v, String key) {
            if (v instanceof Jsonc.Obj o) {
                return o;
            }
            throw at(v, key + ": expected an object, got " + v.kind());
        }

        private boolean bool(Jsonc.Value v, String key) {
            if (v instanceof Jsonc.Bool bool) {
                return bool.value();
            }
            throw at(v, key + ": expected true or false, got " + v.kind());
        }

        /** The items of the array of strings {@code v} must be (each checked by {@link #string}). */
        private List<Jsonc.Value> strings(Jsonc.Value v, String key) {
            if (!(v instanceof Jsonc.Arr arr)) {
                throw at(v, key + ": expected an array of strings, got " + v.kind());
            }
            return arr.items();
        }

        /** An item of such an array, which must be a string. */
        private Jsonc.Str string(Jsonc.Value item, String key) {
            if (!(item instanceof Jsonc.Str s)) {
                throw at(item, key + ": expected an array of strings, got " + item.kind() + " in it");
            }
            return s;
        }

        private ConfigException unknown(Jsonc.Member m, String prefix, String known) {
            String meant = agentsandbox.core.text.DidYouMean.closest(m.key(), List.of(known.split(", *")));
            return at(m, "unknown key \"" + prefix + m.key() + "\" (" + (meant == null ? ""
                    : "did you mean \"" + prefix + meant + "\"? ") + "known here: " + known + ")");
        }
    }
}
