// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every setting with which git runs a command is found, in any spelling git accepts; no other. */
class GitConfigScanTest {
    private static List<String> running(String text) {
        return GitConfigScan.running(text.getBytes(StandardCharsets.UTF_8)).stream()
                .map(GitConfigScan.Setting::name).toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "[core]\n\tfsmonitor = evil|core.fsmonitor",
        "\u00ef\u00bb\u00bf[core]fsmonitor = evil|core.fsmonitor",
        "[CORE]\n\tFsMonitor=evil|core.fsmonitor",
        "[core] fsMonitor = \"ev\\\"il\" ; comment|core.fsmonitor",
        "[core]\n\tfsmon\\\nitor = evil|",
        "[core]\n\tfsmonitor = ev\\\nil|core.fsmonitor",
        "[core]\n\thooksPath = /tmp/h|core.hookspath",
        "[core]\n\tsshCommand = ssh -i k|core.sshcommand",
        "[core]\n\tpager = less|core.pager",
        "[core]\n\teditor = vim|core.editor",
        "[core]\n\tgitProxy = evil|core.gitproxy",
        "[core]\n\taskPass = evil|core.askpass",
        "[core]\n\talternateRefsCommand = evil|core.alternaterefscommand",
        "[sequence]\n\teditor = evil|sequence.editor",
        "[interactive]\n\tdiffFilter = evil|interactive.difffilter",
        "[diff]\n\texternal = evil|diff.external",
        "[diff \"x\"]\n\ttextconv = evil|diff.x.textconv",
        "[diff.x]\n\tcommand = evil|diff.x.command",
        "[filter \"lfs\"]\n\tclean = evil|filter.lfs.clean",
        "[Filter \"X\"]\n\tsmudge = evil|filter.X.smudge",
        "[filter \"x\"]\n\tprocess = evil|filter.x.process",
        "[merge \"x\"]\n\tdriver = evil|merge.x.driver",
        "[credential]\n\thelper = !evil|credential.helper",
        "[credential \"https://example.com\"]\n\thelper = evil|credential.https://example.com.helper",
        "[gpg]\n\tprogram = evil|gpg.program",
        "[gpg \"ssh\"]\n\tprogram = evil|gpg.ssh.program",
        "[gpg \"ssh\"]\n\tdefaultKeyCommand = evil|gpg.ssh.defaultkeycommand",
        "[alias]\n\tst = !sh -c evil|alias.st",
        "[alias]\n\tst = -c core.fsmonitor=evil status|alias.st",
        "[submodule \"x\"]\n\tupdate = !evil|submodule.x.update",
        "[remote \"o\"]\n\turl = ext::sh -c evil|remote.o.url",
        "[remote \"o\"]\n\tpushurl = fd::3|remote.o.pushurl",
        "[remote \"o\"]\n\tuploadpack = evil|remote.o.uploadpack",
        "[remote \"o\"]\n\treceivePack = evil|remote.o.receivepack",
        "[remote \"o\"]\n\tvcs = evil|remote.o.vcs",
        "[protocol \"ext\"]\n\tallow = always|protocol.ext.allow",
        "[protocol]\n\tallow = always|protocol.allow",
        "[url \"ext::sh -c evil \"]\n\tinsteadOf = https://|url.ext::sh -c evil .insteadof",
        "[pager]\n\tlog = evil|pager.log",
        "[hook \"x\"]\n\tcommand = evil|hook.x.command",
        "[uploadpack]\n\tpackObjectsHook = evil|uploadpack.packobjectshook",
        "[gc]\n\trecentObjectsHook = evil|gc.recentobjectshook",
        "[imap]\n\ttunnel = evil|imap.tunnel",
        "[help]\n\tbrowser = evil|help.browser",
        "[web]\n\tbrowser = evil|web.browser",
        "[browser \"x\"]\n\tcmd = evil|browser.x.cmd",
        "[man \"x\"]\n\tcmd = evil|man.x.cmd",
        "[difftool \"x\"]\n\tcmd = evil|difftool.x.cmd",
        "[mergetool \"x\"]\n\tpath = evil|mergetool.x.path",
        "[guitool \"x\"]\n\tcmd = evil|guitool.x.cmd",
        "[sendemail]\n\tsendmailCmd = evil|sendemail.sendmailcmd",
        "[trailer \"x\"]\n\tcommand = evil|trailer.x.command",
        "[tar \"x\"]\n\tcommand = evil|tar.x.command",
        "[init]\n\ttemplateDir = /tmp/t|init.templatedir",
        "[include]\n\tpath = /tmp/x|include.path",
        "[includeIf \"gitdir:/\"]\n\tpath = /tmp/x|includeif.gitdir:/.path",
    })
    void A_Setting_That_Runs_A_Command_Is_Found_In_Any_Spelling(String row) {
        String[] parts = row.split("\\|", -1);
        // one char, one byte: the \u00ef\u00bb\u00bf above are the three bytes of a byte order mark
        List<String> found = GitConfigScan.running(parts[0].getBytes(StandardCharsets.ISO_8859_1)).stream()
                .map(GitConfigScan.Setting::name).toList();
        assertThat(found).as(parts[0]).containsExactlyElementsOf(parts[1].isEmpty() ? List.of() : List.of(parts[1]));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "[core]\n\tfsmonitor = false",
        "[core]\n\tfsmonitor",
        "[core]\n\tfsmonitor = TRUE",
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = true",
        "[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*",
        "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main",
        "[submodule \"a\"]\n\tpath = a\n\turl = ../a.git\n\tupdate = rebase",
        "[user]\n\tname = x\n\temail = x@example.com",
        "[core]\n\t# fsmonitor = evil\n\t; pager = evil",
        "[core]\n\tname = \"fsmonitor = evil\"",
    })
    void Ordinary_Settings_Are_Not_Reported(String text) {
        assertThat(running(text)).as(text).isEmpty();
    }

    /**
     * Ten files that each include the next ten times, ten deep, as git follows them ten
     * billion reads: each file is read once, the scan ends at once, and the setting at the
     * bottom is found.
     */
    @org.junit.jupiter.api.Test
    void Includes_That_Fan_Out_Are_Each_Read_Once_And_Found(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        for (int level = 1; level <= 9; level++) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < 10; i++) {
                b.append("[include]\n\tpath = L").append(level + 1).append('\n');
            }
            java.nio.file.Files.writeString(dir.resolve("L" + level), b);
        }
        java.nio.file.Files.writeString(dir.resolve("L10"), "[core]\n\tfsmonitor = touch pwned\n");
        StringBuilder top = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            top.append("[include]\n\tpath = L1\n");
        }
        java.nio.file.Path config = java.nio.file.Files.writeString(dir.resolve("config"), top);
        GitConfigScan.Scan scan = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                java.time.Duration.ofSeconds(10), () -> GitConfigScan.scan(config, null));
        assertThat(scan.running()).anySatisfy(f -> assertThat(f.file()).isEqualTo(dir.resolve("L10")));
    }

    /**
     * A file included through many hard links is one file, read once; distinct included files
     * past the bound on what one config leads to reading are a limit.
     */
    @org.junit.jupiter.api.Test
    void A_File_Included_Through_Many_Names_Is_Read_Once_And_Reading_Is_Bounded(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String big = "[a]\n" + "\tk = v\n".repeat(15_000) + "[core]\n\tfsmonitor = touch pwned\n"; // about 100 KB
        java.nio.file.Path one = java.nio.file.Files.writeString(dir.resolve("one"), big);
        StringBuilder links = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            java.nio.file.Files.createLink(dir.resolve("l" + i), one);
            links.append("[include]\n\tpath = l").append(i).append('\n');
        }
        GitConfigScan.Scan linked = GitConfigScan.scan(java.nio.file.Files.writeString(dir.resolve("a"), links), null);
        assertThat(linked.limits()).isEmpty();
        assertThat(linked.running()).isNotEmpty();

        StringBuilder distinct = new StringBuilder();
        for (int i = 0; i < 50; i++) {
            java.nio.file.Files.writeString(dir.resolve("d" + i), big);
            distinct.append("[include]\n\tpath = d").append(i).append('\n');
        }
        GitConfigScan.Scan many = GitConfigScan.scan(java.nio.file.Files.writeString(dir.resolve("b"), distinct), null);
        assertThat(many.limits()).anySatisfy(l -> assertThat(l.toString()).contains("bytes of config"));
    }
}
