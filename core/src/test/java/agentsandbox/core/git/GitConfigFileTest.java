// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The config parser against git itself: each case is written to a file, read by the
 * parser and by {@code git config --file F --list -z} on this machine, and both must
 * give the expected entries (the entries before the error, for a file git refuses).
 * The cases follow git's {@code config.c} ({@code get_next_char}, {@code parse_value},
 * {@code get_base_var}, {@code get_extended_base_var}, {@code git_parse_source}) and
 * {@code t/t1300-config.sh}.
 */
class GitConfigFileTest {
    @TempDir
    Path dir;

    /** The UTF-8 byte order mark, as the three bytes a file holds (the input is Latin-1: one char, one byte). */
    private static final String BOM = "\u00ef\u00bb\u00bf";

    /** A case that git refuses at some point: the entries before it. */
    private static final boolean REFUSED = false;
    private static final boolean READ = true;

    private static Arguments c(String name, String text, boolean complete, String... entries) {
        return Arguments.of(name, text, complete, List.of(entries));
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                c("a BOM before the section is skipped", BOM + "[core]fsmonitor = CMD\n", READ, "core.fsmonitor=CMD"),
                c("a BOM before a header on its own line", BOM + "[core]\n\tfsmonitor = CMD", READ, "core.fsmonitor=CMD"),
                c("a partial BOM is refused", "\u00ef\u00bb[core]\nfsmonitor = CMD\n", REFUSED),
                c("a BOM after the start is refused", "[a]\nx = 1\n" + BOM + "[core]\nfsmonitor = CMD\n", REFUSED, "a.x=1"),
                c("section and key names are lowered", "[CoRe]\n\tFsMonitor = x\n", READ, "core.fsmonitor=x"),
                c("a subsection keeps its case", "[Section \"SubSection\"]\n\tKey = 1\n", READ, "section.SubSection.key=1"),
                c("the deprecated [section.sub] form is lowered", "[Section.SubSection]\n\tkey = 1\n", READ,
                        "section.subsection.key=1"),
                c("a dotted section with a quoted subsection", "[a.B \"c\"]\n\td = 4\n", READ, "a.b.c.d=4"),
                c("escapes in a subsection take the next character", "[a \"b\\\"c\\\\d\\e\"]\n\tk = 1\n", READ,
                        "a.b\"c\\de.k=1"),
                c("white space before the quoted subsection", "[a \t \"b\"]\nk = 1\n", READ, "a.b.k=1"),
                c("an empty subsection", "[a \"\"]\nk = 1\n", READ, "a..k=1"),
                c("a subsection needs quotes", "[a b]\nk = 1\n", REFUSED),
                c("text after the closing quote is refused", "[a \"b\"x]\nk = 1\n", REFUSED),
                c("a subsection cannot span lines", "[a \"b\nc\"]\nk = 1\n", REFUSED),
                c("an unclosed header is refused", "[a\nk = 1\n", REFUSED),
                c("a section name with an underscore is refused", "[a_b]\nk = 1\n", REFUSED),
                c("a key on the header's line", "[a] k = v\n[b]k=w\n", READ, "a.k=v", "b.k=w"),
                c("a key without = is true", "[a]\n\tflag\n\tother\t\n", READ, "a.flag", "a.other"),
                c("a key without = at the end of the file", "[a]\n\tflag", READ, "a.flag"),
                c("a comment after a key without = is refused", "[a]\n\tflag ; no\n", REFUSED),
                c("digits and dashes in a key", "[a]\n\tk-1 = v\n", READ, "a.k-1=v"),
                c("a key must start with a letter", "[a]\n\t1k = v\n", REFUSED),
                c("an underscore in a key is refused", "[a]\n\tk_x = v\n", REFUSED),
                c("a key before any section", "k = v\n", READ, "k=v"),
                c("an empty value", "[a]\n\tk =\n\tl = \"\"\n", READ, "a.k=", "a.l="),
                c("comments with # and ;", "# one\n; two\n[a] ; three # four\n\tk = v ; five\n\tl = w#six\n", READ,
                        "a.k=v", "a.l=w"),
                c("comment characters inside quotes are kept", "[a]\n\tk = \"v # not ; a comment\" ; one\n", READ,
                        "a.k=v # not ; a comment"),
                c("quotes in the middle of a value", "[a]\n\tk = a\" b \"c\n", READ, "a.k=a b c"),
                c("a line that ends inside quotes is refused", "[a]\n\tk = \"abc\n\tl = 1\n", REFUSED),
                c("the escapes git knows", "[a]\n\tk = \"1\\t2\\n3\\\\4\\\"5\\b6\"\n", READ, "a.k=1\t2\n3\\4\"5\b6"),
                c("escapes outside quotes", "[a]\n\tk = 1\\t2\n", READ, "a.k=1\t2"),
                c("an unknown escape is refused", "[a]\n\tx = 1\n\tk = a\\qb\n", REFUSED, "a.x=1"),
                c("a backslash at the end of a line goes on on the next",
                        "[a]\n\tk = one \\\n two\n", READ, "a.k=one  two"),
                c("a continuation inside quotes", "[a]\n\tk = \"one\\\ntwo\"\n", READ, "a.k=onetwo"),
                c("a continuation with CR LF", "[a]\r\n\tk = one\\\r\ntwo\r\n", READ, "a.k=onetwo"),
                c("a continuation then a comment", "[a]\n\tk = one\\\n ; gone\n\tl = 2\n", READ, "a.k=one", "a.l=2"),
                c("a backslash in a comment joins nothing", "[a]\n\tk = one # c \\\n\tl = 2\n", READ, "a.k=one", "a.l=2"),
                c("a continuation at the end of the file", "[a]\n\tk = one\\", READ, "a.k=one"),
                c("CR LF line ends", "[a]\r\n\tk = v\r\n\tl\r\n", READ, "a.k=v", "a.l"),
                c("a lone CR is white space", "[a]\n\tk = v\rw\r\n", READ, "a.k=v\rw"),
                c("vertical tab and form feed are not white space to git", "[a]\n\u000bk = v\n", REFUSED),
                c("inner white space kept, outer dropped (t1300)",
                        "[section]\n\tsparse = big \t\t blue\n\tsparseAndTail = big \t\t blue \n"
                                + "\tsparseAndTailQuoted = \"big \t\t blue \"\n"
                                + "\tsparseAndBiggerTailQuotedPlus = \"big \t\t blue \t \"\t \n"
                                + "\theadAndTail = \tbig blue \n\theadAndTailQuoted = \"\tbig blue \"\n"
                                + "\tannotated = big blue\t# to be discarded\n"
                                + "\tannotatedQuoted = \"big blue\"\t# to be discarded\n",
                        READ, "section.sparse=big \t\t blue", "section.sparseandtail=big \t\t blue",
                        "section.sparseandtailquoted=big \t\t blue ",
                        "section.sparseandbiggertailquotedplus=big \t\t blue \t ", "section.headandtail=big blue",
                        "section.headandtailquoted=\tbig blue ", "section.annotated=big blue",
                        "section.annotatedquoted=big blue"),
                c("t1300's silly comments",
                        "[beta] ; silly comment # another comment\nnoIndent= sillyValue ; 'nother silly comment\n\n"
                                + "# empty line\n\t\t; comment\n\t\thaha   =\"beta\" # last silly comment\n"
                                + "haha = hello\n\thaha = bello\n[nextSection] noNewline = ouch",
                        READ, "beta.noindent=sillyValue", "beta.haha=beta", "beta.haha=hello", "beta.haha=bello",
                        "nextsection.nonewline=ouch"),
                c("UTF-8 in a value and a subsection", "[a \"\u00c3\u00a9\"]\n\tk = \u00c3\u00a9t\u00c3\u00a9\n", READ,
                        "a.\u00e9.k=\u00e9t\u00e9"),
                c("an include is an entry like any other", "[include]\n\tpath = x\n[includeIf \"gitdir:/\"]\n\tpath = y\n",
                        READ, "include.path=x", "includeif.gitdir:/.path=y"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void A_Config_File_Is_Read_As_Git_Reads_It(String name, String text, boolean complete, List<String> expected)
            throws Exception {
        byte[] data = text.getBytes(StandardCharsets.ISO_8859_1);
        GitConfigFile parsed = GitConfigFile.parse(data);
        List<String> mine = parsed.entries().stream()
                .map(s -> s.value() == null ? s.name() : s.name() + "=" + s.value()).toList();
        assertThat(mine).as("the parser").containsExactlyElementsOf(expected);
        assertThat(parsed.complete()).as("the parser read the whole file").isEqualTo(complete);

        Path file = Files.write(dir.resolve("config"), data);
        GitList git = gitList(file);
        List<String> fromGit = BEFORE_2_45.containsKey(name) && gitBefore245() ? BEFORE_2_45.get(name) : expected;
        assertThat(git.entries()).as("git config --list").containsExactlyElementsOf(fromGit);
        assertThat(git.complete()).as("git read the whole file").isEqualTo(complete);
    }

    /**
     * What git before 2.45 gives where the parser follows git since ("config: really keep
     * value-internal whitespace verbatim"): each white space character between words of an
     * unquoted value became one space. Which keys a file sets is the same.
     */
    private static final Map<String, List<String>> BEFORE_2_45 = Map.of(
            "a lone CR is white space", List.of("a.k=v w"),
            "inner white space kept, outer dropped (t1300)", List.of("section.sparse=big    blue",
                    "section.sparseandtail=big    blue", "section.sparseandtailquoted=big \t\t blue ",
                    "section.sparseandbiggertailquotedplus=big \t\t blue \t ", "section.headandtail=big blue",
                    "section.headandtailquoted=\tbig blue ", "section.annotated=big blue",
                    "section.annotatedquoted=big blue"));

    private static Boolean before245;

    /** Whether the git on this machine is older than 2.45. */
    static synchronized boolean gitBefore245() throws IOException, InterruptedException {
        if (before245 == null) {
            Process p = new ProcessBuilder("git", "--version").start();
            String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)\\.(\\d+)").matcher(v);
            assertThat(m.find()).as(v).isTrue();
            int major = Integer.parseInt(m.group(1));
            int minor = Integer.parseInt(m.group(2));
            before245 = major < 2 || major == 2 && minor < 45;
        }
        return before245;
    }

    /** What {@code git config --file F --list -z} prints, and whether it read the whole file. */
    record GitList(List<String> entries, boolean complete) {}

    static GitList gitList(Path file) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("git", "config", "--file", file.toString(), "--list", "-z");
        Map<String, String> env = pb.environment();
        env.put("GIT_CONFIG_NOSYSTEM", "1");
        env.put("HOME", file.getParent().toString());
        env.put("LC_ALL", "C");
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        List<String> entries = new ArrayList<>();
        String all = new String(out, StandardCharsets.UTF_8);
        for (String record : all.split("\0")) {
            if (record.isEmpty()) {
                continue;
            }
            int nl = record.indexOf('\n');
            entries.add(nl < 0 ? record : record.substring(0, nl) + "=" + record.substring(nl + 1));
        }
        return new GitList(entries, p.exitValue() == 0);
    }
}
