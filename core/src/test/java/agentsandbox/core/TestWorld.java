// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** A small real directory tree: a home, a project inside it, and a temp dir. */
public final class TestWorld {
    public final Path root;
    public final Path home;
    public final Path project;
    public final Path tmp;

    public TestWorld(Path root) {
        try {
            this.root = root.toRealPath();
            this.home = Files.createDirectories(this.root.resolve("home"));
            this.project = Files.createDirectories(home.resolve("project"));
            this.tmp = Files.createDirectories(this.root.resolve("tmp"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Environment env() {
        return env(project);
    }

    public Environment env(Path workDir) {
        return new Environment(home, workDir, Map.of("PATH", "/usr/bin:/bin"), tmp, 1000, "Linux", null);
    }

    public Path dir(String relative) {
        try {
            return Files.createDirectories(root.resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path file(String relative) {
        try {
            Path p = root.resolve(relative);
            Files.createDirectories(p.getParent());
            return Files.exists(p) ? p : Files.createFile(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Plan plan(PolicyLayer... layers) {
        return plan(env(), layers);
    }

    public Plan plan(Environment env, PolicyLayer... layers) {
        Policy.Builder b = Policy.builder();
        for (PolicyLayer l : layers) {
            b.layer(l);
        }
        return Sandbox.plan(b.build(), env, List.of("true"));
    }

    public static PolicyLayer.Builder project() {
        return PolicyLayer.builder(Layer.PROJECT, "project.json");
    }

    public static PolicyLayer.Builder flags() {
        return PolicyLayer.builder(Layer.FLAG, "flags");
    }
}
