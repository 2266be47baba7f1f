// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the launcher's own functions: `make check`. Linked with every file of
 * the launcher but main.c; every check prints what failed and the run exits 1.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/git_guard.h"
#include "../src/git_snapshot.h"
#include "../src/guard.h"
#include "../src/guard_client.h"
#include "../src/net_filter.h"
#include "../src/net_stack.h"
#include "../src/remove_tree.h"
#include "../src/sha1.h"
#include "../src/bytes.h"
#include "../src/file_below.h"
#include "../src/tree_watch.h"
#include "../src/spawn.h"
#include "../src/starter_request.h"
#include "../src/term_relay.h"
#include "../src/tool.h"
#include "../src/util.h"
#include "../src/wrapper.h"

static int failures;

#define CHECK(condition)                                                                  \
    do {                                                                                  \
        if (!(condition)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static void test_utf8(void)
{
    CHECK(is_utf8("plain"));
    CHECK(is_utf8("gr\xc3\xbc\xc3\x9f"));
    CHECK(is_utf8("\xf0\x9f\x98\x80"));
    CHECK(!is_utf8("\xc0\xaf"));         /* overlong */
    CHECK(!is_utf8("\xed\xa0\x80"));     /* surrogate */
    CHECK(!is_utf8("\xf4\x90\x80\x80")); /* above U+10FFFF */
    CHECK(!is_utf8("\xff"));
    CHECK(!is_utf8("\xc3"));
}

static void test_check_words(void)
{
    int quiet = 0;
    char *check[] = {(char *)"agent-sandbox", (char *)"check", NULL};
    char *check_q[] = {(char *)"agent-sandbox", (char *)"--check", (char *)"-q", NULL};
    char *other[] = {(char *)"agent-sandbox", (char *)"check", (char *)"-x", NULL};
    CHECK(is_check(2, check, &quiet) && quiet == 0);
    CHECK(is_check(3, check_q, &quiet) && quiet == 1);
    CHECK(!is_check(3, other, &quiet));
}

static void test_paths(void)
{
    char path[PATH_MAX] = "/a/b/c";
    strip_last_component(path);
    CHECK(strcmp(path, "/a/b") == 0);
    strcpy(path, "/a");
    strip_last_component(path);
    CHECK(strcmp(path, "/") == 0);
    char name[PATH_MAX];
    lookup_name(name, "/usr/bin/g%t");
    CHECK(strcmp(name, "%2Fusr%2Fbin%2Fg%25t") == 0);
}

static void test_rule_fields(void)
{
    char text[] = "git\tgit\treal/1/git\t-\t/home/u\t-";
    char *cursor = text;
    CHECK(strcmp(next_field(&cursor), "git") == 0);
    CHECK(strcmp(next_field(&cursor), "git") == 0);
    CHECK(strcmp(next_field(&cursor), "real/1/git") == 0);
    CHECK(strcmp(next_field(&cursor), "-") == 0);
    CHECK(strcmp(next_field(&cursor), "/home/u") == 0);
    CHECK(strcmp(next_field(&cursor), "-") == 0);
    CHECK(next_field(&cursor) == NULL);
}

static void test_sockets_forbidden(void)
{
    CHECK(sockets_forbidden(EPERM));
    CHECK(sockets_forbidden(EACCES));
    CHECK(sockets_forbidden(EAFNOSUPPORT));
    CHECK(!sockets_forbidden(ENOENT));
    CHECK(!sockets_forbidden(ECONNREFUSED));
}

static void test_parent_cmdline(void)
{
    static char text[GUARD_MAX_PARENT_CMDLINE + 1];
    size_t length = 0;
    size_t words = parent_cmdline(getpid(), text, GUARD_MAX_PARENT_CMDLINE, &length);
    CHECK(words >= 1);
    CHECK(length > 0 && text[length - 1] == '\0');
    CHECK(strstr(text, "launcher-test") != NULL);
    CHECK(parent_cmdline(999999999, text, GUARD_MAX_PARENT_CMDLINE, &length) == 0 && length == 0);
    /* a command line at the limit is unknown, never cut */
    CHECK(parent_cmdline(getpid(), text, 4, &length) == 0 && length == 0);
}

static void test_git_question(void)
{
    static char out[GUARD_MAX_GIT_OUTPUT + 32];
    char echo_args[] = "one\ttwo words";
    run_git_question("/bin/echo", echo_args, out, sizeof out);
    CHECK(strcmp(out, "0 one two words\n") == 0);
    char sh_args[] = "-c\texit 3";
    run_git_question("/bin/sh", sh_args, out, sizeof out);
    CHECK(strcmp(out, "3 ") == 0);
    /* endless output: bounded in size and in time, then no answer */
    long start = now_millis();
    char yes_args[] = "y";
    run_git_question("/usr/bin/yes", yes_args, out, sizeof out);
    long took = now_millis() - start;
    CHECK(strncmp(out, "-1 y\ny\n", 7) == 0);
    CHECK(strlen(out) <= GUARD_MAX_GIT_OUTPUT + 3);
    CHECK(took >= GUARD_GIT_MILLIS - 100 && took < GUARD_GIT_MILLIS + 2000);
    char missing_args[] = "x";
    run_git_question("/nonexistent/git", missing_args, out, sizeof out);
    CHECK(strcmp(out, "127 ") == 0);
}

static void test_request_and_lines(void)
{
    int to[2];
    int from[2];
    CHECK(pipe(to) == 0 && pipe(from) == 0);
    struct rule rule;
    memset(&rule, 0, sizeof rule);
    rule.name = "git";
    struct guard g;
    memset(&g, 0, sizeof g);
    g.out = to[1];
    g.in = from[0];
    g.deadline = now_millis() + 2000;
    setenv("GIT_DIR", "first", 1);
    char *argv[] = {(char *)"git", (char *)"status", NULL};
    send_request(&rule, &g, 2, argv);
    close(to[1]);
    static char request[1 << 20];
    size_t got = 0;
    ssize_t n;
    while ((n = read(to[0], request + got, sizeof request - got)) > 0) {
        got += (size_t)n;
    }
    CHECK(got > 5 && memcmp(request, GUARD_MAGIC "\0", 5) == 0);
    CHECK(memmem(request, got, "2\0git\0status\0", 13) != NULL);
    CHECK(memmem(request, got, "GIT_DIR=first\0", 14) != NULL);
    CHECK(request[got - 1] == '\0');

    const char *answer = "R /x\nA\n";
    CHECK(write(from[1], answer, strlen(answer)) == (ssize_t)strlen(answer));
    char line[GUARD_MAX_LINE];
    CHECK(read_line(&rule, &g, line) == 1 && strcmp(line, "R /x") == 0);
    CHECK(read_line(&rule, &g, line) == 1 && strcmp(line, "A") == 0);
    close(from[1]);
    CHECK(read_line(&rule, &g, line) == 0);
    close(to[0]);
    close(from[0]);
}

static void test_starter_request(void)
{
    unsigned long n[3];
    CHECK(parse_starter_header("2 1 17", n, STARTER_MAX_REQUEST) == 0 && n[0] == 2 && n[1] == 1 && n[2] == 17);
    CHECK(parse_starter_header("2 1", n, STARTER_MAX_REQUEST) != 0);
    CHECK(parse_starter_header("2 1 17 ", n, STARTER_MAX_REQUEST) != 0);
    CHECK(parse_starter_header("-2 1 17", n, STARTER_MAX_REQUEST) != 0);
    CHECK(parse_starter_header("2  1 17", n, STARTER_MAX_REQUEST) != 0);
    CHECK(parse_starter_header("2 1 67108865", n, STARTER_MAX_REQUEST) != 0);
    CHECK(parse_starter_header("99999999999999999999999 1 1", n, STARTER_MAX_REQUEST) != 0);

    /* the log file, two words, one variable */
    char good[] = "log\0/usr/bin/bwrap\0--\0A=b";
    char *log = NULL;
    char *words[3];
    char *variables[2];
    CHECK(split_starter_request(good, sizeof good, &log, words, 2, variables, 1) == 0);
    CHECK(log != NULL && strcmp(log, "log") == 0);
    CHECK(strcmp(words[0], "/usr/bin/bwrap") == 0 && strcmp(words[1], "--") == 0 && words[2] == NULL);
    CHECK(strcmp(variables[0], "A=b") == 0 && variables[1] == NULL);
    /* one string too many, one too few, an unterminated last one */
    CHECK(split_starter_request(good, sizeof good, &log, words, 1, variables, 1) != 0);
    CHECK(split_starter_request(good, sizeof good, &log, words, 2, variables, 2) != 0);
    CHECK(split_starter_request(good, sizeof good - 1, &log, words, 2, variables, 1) != 0);
}

static void test_split_strings(void)
{
    char two[] = "/a/b\0/c";
    char *paths[2];
    CHECK(split_strings(two, sizeof two, paths, 2) == 0 && strcmp(paths[0], "/a/b") == 0 &&
          strcmp(paths[1], "/c") == 0);
    CHECK(split_strings(two, sizeof two, paths, 1) != 0);
    CHECK(split_strings(two, sizeof two - 1, paths, 2) != 0);
    unsigned long n[2];
    CHECK(parse_numbers("2 9", n, 2, STARTER_MAX_REMOVE_BYTES) == 0 && n[0] == 2 && n[1] == 9);
    CHECK(parse_numbers("2 65537", n, 2, STARTER_MAX_REMOVE_BYTES) != 0);
}

static int exists_here(const char *path)
{
    struct stat info;
    return lstat(path, &info) == 0;
}

static void write_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, "x", 1) == 1);
        close(fd);
    }
}

/* A tree as a sandbox may leave its /tmp: links out (to a file and a directory that
 * must survive), a directory without rights, nesting; all of it goes, nothing else. The
 * same cases as RunDir.removeTree's in Java (RunDirTest: Removes_A_Tree_As_The_Launcher_Does,
 * Removes_A_Tree_Far_Deeper_Than_It_Holds_Directories_Open). */
static void test_remove_tree(void)
{
    char base[] = "/tmp/launcher-test-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    char path[PATH_MAX];
    char outside[PATH_MAX];
    char kept[PATH_MAX];
    snprintf(outside, sizeof outside, "%s/outside", base);
    CHECK(mkdir(outside, 0700) == 0);
    snprintf(kept, sizeof kept, "%s/outside/kept", base);
    write_file(kept);
    snprintf(path, sizeof path, "%s/run", base);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/run/file", base);
    write_file(path);
    snprintf(path, sizeof path, "%s/run/to-dir", base);
    CHECK(symlink(outside, path) == 0);
    snprintf(path, sizeof path, "%s/run/to-file", base);
    CHECK(symlink(kept, path) == 0);
    snprintf(path, sizeof path, "%s/run/a", base);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/run/a/b", base);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/run/a/b/deep", base);
    write_file(path);
    snprintf(path, sizeof path, "%s/run/a/b", base);
    CHECK(chmod(path, 0) == 0);
    snprintf(path, sizeof path, "%s/run/a", base);
    CHECK(chmod(path, 0) == 0);

    snprintf(path, sizeof path, "%s/run", base);
    CHECK(remove_tree(path) == 0);
    CHECK(!exists_here(path));
    CHECK(exists_here(kept));
    CHECK(remove_tree(path) == 0); /* already gone */
    /* a link as the tree itself is removed, not followed */
    snprintf(path, sizeof path, "%s/link", base);
    CHECK(symlink(outside, path) == 0);
    CHECK(remove_tree(path) == 0);
    CHECK(!exists_here(path) && exists_here(kept));
    CHECK(remove_tree("relative/path") != 0);
    CHECK(remove_tree("/") != 0);

    CHECK(remove_tree(outside) == 0);

    /* far deeper than a removal holds directories open (RunDir's test of the same name
     * in Java: Removes_A_Tree_Far_Deeper_Than_It_Holds_Directories_Open), its path far
     * longer than PATH_MAX: built a level at a time from inside */
    snprintf(path, sizeof path, "%s/deep", base);
    CHECK(mkdir(path, 0700) == 0);
    int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(here >= 0 && chdir(path) == 0);
    for (int depth = 0; depth < REMOVE_MAX_DEPTH * 10 + 7; depth++) {
        if (mkdir("d", 0700) != 0 || chdir("d") != 0) {
            CHECK(!"a level of the deep tree");
            break;
        }
    }
    write_file("bottom");
    CHECK(here >= 0 && fchdir(here) == 0);
    if (here >= 0) {
        close(here);
    }
    CHECK(remove_tree(path) == 0);
    CHECK(!exists_here(path));
    CHECK(rmdir(base) == 0);
}

/* What the terminal filter lets through of text written in pieces of step bytes. */
static const char *filtered(struct term_filter *f, const char *text, size_t step)
{
    static unsigned char out[4 * TERM_FILTER_MAX];
    static char result[4 * TERM_FILTER_MAX];
    size_t n = strlen(text);
    size_t o = 0;
    for (size_t at = 0; at < n; at += step) {
        size_t piece = n - at < step ? n - at : step;
        o += term_filter(f, (const unsigned char *)text + at, piece, out + o);
    }
    memcpy(result, out, o);
    result[o] = '\0';
    return result;
}

static int filters_to(const char *text, const char *expected)
{
    /* whole, and byte by byte: a sequence split across reads is judged the same */
    static struct term_filter f;
    memset(&f, 0, sizeof f);
    int whole = strcmp(filtered(&f, text, 4096), expected) == 0;
    memset(&f, 0, sizeof f);
    int bytes = strcmp(filtered(&f, text, 1), expected) == 0;
    if (!whole || !bytes) {
        memset(&f, 0, sizeof f);
        fprintf(stderr, "filtered: [%s]\n", filtered(&f, text, 4096));
    }
    return whole && bytes;
}

static void test_term_filter(void)
{
    /* drawing passes */
    CHECK(filters_to("plain gr\xc3\xbc\xc3\x9f \xe2\x82\xac\r\n", "plain gr\xc3\xbc\xc3\x9f \xe2\x82\xac\r\n"));
    CHECK(filters_to("\033[1;31mred\033[0m\033[2J\033[H\033[10;5H\033[K", "\033[1;31mred\033[0m\033[2J\033[H\033[10;5H\033[K"));
    CHECK(filters_to("\033[?1049h\033[?1000;1006h\033[?2004h\033[?25l\033[5 q", "\033[?1049h\033[?1000;1006h\033[?2004h\033[?25l\033[5 q"));
    CHECK(filters_to("\033(B\033(0\0337\0338\033=\033>\033M", "\033(B\033(0\0337\0338\033=\033>\033M"));
    CHECK(filters_to("\033]8;;https://example.org/\033\\link\033]8;;\033\\", "\033]8;;https://example.org/\033\\link\033]8;;\033\\"));
    CHECK(filters_to("\033]11;?\007", "\033]11;?\007"));
    /* queries whose answer TUIs wait for pass */
    CHECK(filters_to("\033[c\033[>c\033[>0q\033[6n\033[?u\033[?2004$p", "\033[c\033[>c\033[>0q\033[6n\033[?u\033[?2004$p"));
    /* the clipboard, titles, window operations, strings and answerback do not */
    CHECK(filters_to("a\033]52;c;Y3VybCBldmlsfHNoCg==\007b", "ab"));
    CHECK(filters_to("a\033]52;c;?\033\\b", "ab"));
    CHECK(filters_to("a\033]0;title\007\033]2;title\033\\\033]1;icon\007b", "ab"));
    CHECK(filters_to("a\033kname\033\\b", "ab"));
    CHECK(filters_to("a\033[21t\033[8;100;100t\033[2tb", "ab"));
    CHECK(filters_to("a\033Ptmux;\033\033]52;c;eA==\007\033\\b", "ab"));
    CHECK(filters_to("a\033P+q544e\033\\\033_Gf=100;AAAA\033\\\033^pm\033\\b", "ab"));
    CHECK(filters_to("a\005\033Zb", "ab"));
    CHECK(filters_to("a\033]7;file:///etc\007\033]9;hi\007\033]777;notify;x;y\007b", "ab"));
    CHECK(filters_to("a\033[?2lb\033[2hc\033[5id", "abcd"));
    CHECK(filters_to("a\033 Gb", "ab"));
    /* nothing takes the terminal out of UTF-8 or to 8-bit controls, and no byte of a C1
     * control passes as part of a character UTF-8 would not decode (E0 9D is overlong): the
     * lead byte alone stays, which a terminal shows as a broken character */
    CHECK(filters_to("a\033%@\033%Gb", "ab"));
    CHECK(filters_to("a\033[62;0\"pb", "ab"));
    CHECK(filters_to("a\xe0\x9d" "2;t\x07" "\xe0\x9b" "21tb", "a\xe0" "2;t\x07" "\xe0" "21tb"));
    CHECK(filters_to("a\xed\xa0\x80\xf0\x80\x80\x80\xf4\x90\x80\x80\xc0\x9d\xf5\x9d" "b", "a\xed\xa0\xf0\xf4" "b"));
    CHECK(filters_to("\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\xc4\x80",
                     "\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\xc4\x80"));
    /* private modes by an allow-list: in-band resize and palette reports, unknown ones, do not pass */
    CHECK(filters_to("a\033[?2048h\033[?2031h\033[?99999h\033[?7;2048hb", "ab"));
    CHECK(filters_to("a\033[?7h\033[?12;25hb", "a\033[?7h\033[?12;25hb"));
    /* C1 controls, raw or in UTF-8, never start a sequence */
    CHECK(filters_to("a\x9d" "52;c;eA==\x07" "b", "a52;c;eA==\x07" "b"));
    CHECK(filters_to("a\xc2\x9d" "2;t\xc2\x9c" "b", "a2;tb"));
    /* an OSC with a byte a terminal could end it with is dropped whole */
    CHECK(filters_to("a\033]8;;http://x\xc2\x9c\033]52;c;eA==\007b", "ab"));
    /* an ESC inside an OSC ends it, and what follows is judged anew */
    CHECK(filters_to("a\033]8;;\033]52;c;eA==\007b", "ab"));
    /* CAN cancels a sequence */
    CHECK(filters_to("a\033]52;c;\030b", "a\030b"));
    /* a sequence over the bound is dropped */
    {
        static char longer[TERM_FILTER_MAX + 64];
        strcpy(longer, "a\033]8;;");
        size_t at = strlen(longer);
        memset(longer + at, 'x', TERM_FILTER_MAX);
        strcpy(longer + at + TERM_FILTER_MAX, "\007b");
        CHECK(filters_to(longer, "ab"));
    }

    /* what the sandbox left on is turned off; queries are counted */
    struct term_filter f;
    memset(&f, 0, sizeof f);
    filtered(&f, "\033[?1000;1006h\033[?1049h\033[?25l\033[>1u\033[c\033[0c\033[?1000l", 4096);
    unsigned char reset[256];
    size_t n = term_filter_reset(&f, reset, sizeof reset);
    reset[n] = '\0';
    CHECK(strcmp((const char *)reset, "\033[?1006l\033[?1049l\033[?25h\033[<1u") == 0);
    CHECK(f.da1_queries == 2);
    CHECK(f.answers_possible);
    memset(&f, 0, sizeof f);
    filtered(&f, "\033[31mplain\033[0m", 4096);
    CHECK(term_filter_reset(&f, reset, sizeof reset) == 0);
    CHECK(!f.answers_possible);

    /* the answers to device attributes are counted in the terminal's input */
    struct term_answers a;
    memset(&a, 0, sizeof a);
    const char *input = "x\033[?1;2c\033[>84;0;0c\033P>|tmux\033\\\033[?6";
    term_answers_scan(&a, (const unsigned char *)input, strlen(input));
    term_answers_scan(&a, (const unsigned char *)"2;c", 3);
    CHECK(a.seen == 2);
}

/* A query for name (dotted) into m; its length. */
static size_t dns_query(uint8_t *m, const char *name)
{
    static const uint8_t header[DNS_HEADER] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    memcpy(m, header, sizeof header);
    size_t at = DNS_HEADER;
    const char *label = name;
    while (*label != '\0') {
        const char *dot = strchr(label, '.');
        size_t length = dot == NULL ? strlen(label) : (size_t)(dot - label);
        m[at++] = (uint8_t)length;
        memcpy(m + at, label, length);
        at += length;
        label += length + (dot == NULL ? 0 : 1);
    }
    m[at++] = 0;
    static const uint8_t a_in[4] = {0, 1, 0, 1};
    memcpy(m + at, a_in, 4);
    return at + 4;
}

static void test_dns_filter(void)
{
    uint8_t m[DNS_MESSAGE_MAX];
    char name[DNS_NAME_MAX];
    size_t end = 0;
    size_t n = dns_query(m, "Registry.Example.ORG");
    CHECK(dns_query_name(m, n, name, &end) == 0 && strcmp(name, "registry.example.org") == 0 && end == n);
    const char *allow = "example.org,*.example.org,other.net";
    CHECK(dns_name_allowed(allow, "registry.example.org"));
    CHECK(dns_name_allowed(allow, "a.b.example.org"));
    CHECK(dns_name_allowed(allow, "example.org"));
    CHECK(dns_name_allowed(allow, "other.net"));
    CHECK(!dns_name_allowed(allow, "x.other.net"));
    CHECK(!dns_name_allowed(allow, "badexample.org"));
    CHECK(!dns_name_allowed(allow, "example.org.evil.net"));
    CHECK(!dns_name_allowed(allow, "."));
    CHECK(!dns_name_allowed("*.example.org", "example.org"));

    /* a byte no host name has: read, but never on the list */
    n = dns_query(m, "a b.example.org");
    CHECK(dns_query_name(m, n, name, &end) == 1 && strcmp(name, "a?b.example.org") == 0);
    /* a dot inside a label cannot pass for two labels */
    n = dns_query(m, "x");
    m[DNS_HEADER + 1] = '.';
    CHECK(dns_query_name(m, n, name, &end) == 1);

    /* not queries the filter reads */
    n = dns_query(m, "example.org");
    CHECK(dns_query_name(m, DNS_HEADER - 1, name, &end) == -1);
    CHECK(dns_query_name(m, n - 1, name, &end) == -1); /* no room for the class */
    m[2] |= 0x80;                                       /* a response */
    CHECK(dns_query_name(m, n, name, &end) == -1);
    n = dns_query(m, "example.org");
    m[5] = 2; /* two questions */
    CHECK(dns_query_name(m, n, name, &end) == -1);
    n = dns_query(m, "example.org");
    m[DNS_HEADER] = 0xc0; /* a pointer */
    CHECK(dns_query_name(m, n, name, &end) == -1);
    /* a name of more than 253 characters */
    char longest[300];
    memset(longest, 'a', sizeof longest);
    for (size_t i = 63; i < sizeof longest; i += 64) {
        longest[i] = '.';
    }
    longest[254] = '\0';
    n = dns_query(m, longest);
    CHECK(dns_query_name(m, n, name, &end) == -1);
    longest[253] = '\0';
    n = dns_query(m, longest);
    CHECK(dns_query_name(m, n, name, &end) == 0 && strlen(name) == 253);

    /* the refusal: a response, NXDOMAIN, the question only */
    n = dns_query(m, "nope.org");
    CHECK(dns_query_name(m, n, name, &end) == 0);
    CHECK(dns_refuse(m, end) == n && (m[2] & 0x80) != 0 && (m[3] & 0x0f) == 3 && m[7] == 0 && m[11] == 0);

    /* an answer: a CNAME, then two A records named by pointers */
    n = dns_query(m, "example.org");
    m[2] = 0x81;
    m[3] = 0x80;
    m[7] = 3;
    static const uint8_t records[] = {
        0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 4, 1, 'c', 0xc0, 12,
        0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 7,
        0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 51, 100, 9,
    };
    memcpy(m + n, records, sizeof records);
    n += sizeof records;
    uint8_t addresses[4][4];
    CHECK(dns_answer_addresses(m, n, addresses, 4) == 2);
    CHECK(addresses[0][0] == 192 && addresses[0][3] == 7 && addresses[1][0] == 198 && addresses[1][3] == 9);
    CHECK(dns_answer_addresses(m, n, addresses, 1) == 1);
    CHECK(dns_answer_addresses(m, n - 1, addresses, 4) == -1); /* the last record cut short */

    /* any bytes at all: read within bounds or refused (mutations of the messages above) */
    uint64_t state = 88172645463325252ULL;
    uint8_t fuzz[DNS_MESSAGE_MAX];
    for (int round = 0; round < 200000; round++) {
        memcpy(fuzz, m, n);
        size_t length = n;
        for (int k = 0; k < 1 + round % 8; k++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            size_t at = (size_t)(state % (length + 1));
            if (at < length) {
                fuzz[at] = (uint8_t)(state >> 32);
            }
            if ((state >> 40) % 5 == 0) {
                length = (size_t)((state >> 20) % (n + 1));
            }
        }
        int count = dns_answer_addresses(fuzz, length, addresses, 4);
        CHECK(count >= -1 && count <= 4);
        fuzz[2] &= 0x7f;
        int kind = dns_query_name(fuzz, length, name, &end);
        CHECK(kind >= -1 && kind <= 1);
        CHECK(kind < 0 || (end <= length && strlen(name) <= 253));
    }
}


/* Writes TEXT to BASE/REL, making the directories on the way. */
static void put(const char *base, const char *rel, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", base, rel);
    for (char *slash = path + strlen(base) + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
        *slash = '\0';
        CHECK(mkdir(path, 0755) == 0 || errno == EEXIST);
        *slash = '/';
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
    }
}

/* Whether BASE/REL holds exactly TEXT. */
static int holds(const char *base, const char *rel, const char *text)
{
    char path[PATH_MAX];
    char got[256];
    snprintf(path, sizeof path, "%s/%s", base, rel);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return 0;
    }
    ssize_t n = read(fd, got, sizeof got - 1);
    close(fd);
    return n >= 0 && (size_t)n == strlen(text) && memcmp(got, text, (size_t)n) == 0;
}

static int is_empty_dir(const char *base, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", base, rel);
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && rmdir(path) == 0 && mkdir(path, 0755) == 0;
}

static int has_store(const struct git_snapshot *s, const char *rel)
{
    for (int i = 0; i < s->store_count; i++) {
        if (strcmp(s->stores[i], rel) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The lower layer of a git view: everything but locks, sample hooks and object stores
 * (left empty and listed), modes and times kept; the loose refs recorded for the host. */
static void test_git_snapshot(void)
{
    char base[] = "/tmp/launcher-test-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    char git[64];
    char copy[64];
    char path[PATH_MAX];
    snprintf(git, sizeof git, "%s/git", base);
    snprintf(copy, sizeof copy, "%s/copy", base);
    CHECK(mkdir(git, 0700) == 0);
    put(git, "HEAD", "ref: refs/heads/main\n");
    put(git, "refs/heads/main", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
    put(git, "refs/heads/main.lock", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n");
    put(git, "refs/tags/v1", "cccccccccccccccccccccccccccccccccccccccc\n");
    put(git, "index.lock", "");
    put(git, "packed-refs", "# pack-refs\n");
    put(git, "hooks/pre-commit", "#!/bin/sh\n");
    snprintf(path, sizeof path, "%s/hooks/pre-commit", git);
    CHECK(chmod(path, 0755) == 0);
    put(git, "hooks/pre-commit.sample", "#!/bin/sh\n");
    put(git, "info/exclude.sample", "kept: not a hook\n");
    put(git, "index", "DIRC");
    snprintf(path, sizeof path, "%s/index", git);
    struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    CHECK(utimensat(AT_FDCWD, path, times, 0) == 0);
    put(git, "objects/ab/cdef", "object");
    put(git, "lfs/objects/x", "large");
    snprintf(path, sizeof path, "%s/link", git);
    CHECK(symlink("refs", path) == 0);
    /* a submodule's git dir: its objects are a store of its own; a linked worktree's is not a git dir */
    put(git, "modules/sub/HEAD", "ref: refs/heads/main\n");
    put(git, "modules/sub/objects/12/3456", "object");
    put(git, "modules/sub/config", "[core]\n");
    put(git, "modules/sub/refs/heads/main", "dddddddddddddddddddddddddddddddddddddddd\n");
    put(git, "worktrees/wt/HEAD", "ref: refs/heads/wt\n");
    put(git, "worktrees/wt/objects", "not a directory");
    CHECK(mkdir(copy, 0700) == 0);

    struct git_snapshot s;
    char reason[512];
    int source = open(git, O_RDONLY | O_DIRECTORY);
    CHECK(source >= 0);
    CHECK(git_snapshot_copy(source, copy, &s, reason, sizeof reason) == 0);
    CHECK(s.store_count == 3 && has_store(&s, "objects") && has_store(&s, "lfs") && has_store(&s, "modules/sub/objects"));
    CHECK(holds(copy, "refs/heads/main", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"));
    snprintf(path, sizeof path, "%s/refs/heads/main.lock", copy);
    CHECK(!exists_here(path));
    snprintf(path, sizeof path, "%s/index.lock", copy);
    CHECK(!exists_here(path));
    CHECK(holds(copy, "packed-refs", "# pack-refs\n"));
    snprintf(path, sizeof path, "%s/hooks/pre-commit", copy);
    CHECK(access(path, X_OK) == 0);
    snprintf(path, sizeof path, "%s/hooks/pre-commit.sample", copy);
    CHECK(!exists_here(path));
    CHECK(holds(copy, "info/exclude.sample", "kept: not a hook\n"));
    struct stat st;
    snprintf(path, sizeof path, "%s/index", copy);
    CHECK(lstat(path, &st) == 0 && st.st_mtim.tv_sec == 1000000000);
    char link[64];
    snprintf(path, sizeof path, "%s/link", copy);
    ssize_t n = readlink(path, link, sizeof link - 1);
    CHECK(n == 4 && memcmp(link, "refs", 4) == 0);
    CHECK(is_empty_dir(copy, "objects") && is_empty_dir(copy, "lfs") && is_empty_dir(copy, "modules/sub/objects"));
    CHECK(holds(copy, "modules/sub/config", "[core]\n"));
    CHECK(holds(copy, "worktrees/wt/objects", "not a directory"));
    /* the top git dir's loose refs, named and with their content, for the host's apply;
     * not a lock, not a submodule's */
    const char *main_ref = "refs/heads/main\0aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
    const char *tag_ref = "refs/tags/v1\0cccccccccccccccccccccccccccccccccccccccc\n";
    CHECK(memmem(s.refs, s.refs_length, main_ref, 16 + 41 + 1) != NULL);
    CHECK(memmem(s.refs, s.refs_length, tag_ref, 13 + 41 + 1) != NULL);
    CHECK(s.refs_length == 16 + 41 + 1 + 13 + 41 + 1);
    git_snapshot_free(&s);

    /* beyond the limits: a reason that says which */
    snprintf(copy, sizeof copy, "%s/copy2", base);
    CHECK(mkdir(copy, 0700) == 0);
    char *big = malloc((GIT_SNAPSHOT_MAX_BYTES >> 1) + 1);
    CHECK(big != NULL);
    if (big != NULL) {
        memset(big, 'x', GIT_SNAPSHOT_MAX_BYTES >> 1);
        big[GIT_SNAPSHOT_MAX_BYTES >> 1] = '\0';
        put(git, "logs/HEAD", big);
        put(git, "logs/refs/heads/main", big);
        put(git, "logs/refs/heads/other", "x");
        free(big);
    }
    CHECK(git_snapshot_copy(source, copy, &s, reason, sizeof reason) != 0);
    CHECK(strcmp(reason, "more than 256 MiB outside its objects") == 0);
    git_snapshot_free(&s);
    close(source);
    CHECK(remove_tree(base) == 0);
}

/* The first differing byte: none, the first, the last, in the block after a whole equal one. */
static void test_first_difference(void)
{
    static unsigned char a[10000];
    static unsigned char b[10000];
    memset(a, 'x', sizeof a);
    memset(b, 'x', sizeof b);
    CHECK(first_difference(a, b, sizeof a) == sizeof a);
    CHECK(first_difference(a, b, 0) == 0);
    b[0] = 'y';
    CHECK(first_difference(a, b, sizeof a) == 0);
    b[0] = 'x';
    b[9999] = 'y';
    CHECK(first_difference(a, b, sizeof a) == 9999);
    CHECK(first_difference(a, b, 9999) == 9999);
    b[5000] = 'y';
    CHECK(first_difference(a, b, sizeof a) == 5000);
    CHECK(first_difference(a + 5001, b + 5001, 4999) == 4998);
}

/* A file written below a root: missing directories made, the file whole under its name with
 * its mode, no temporary file left; a link on the way, a name that is not one, or a
 * temporary name taken fails with nothing written. */
static void test_replace_file_below(void)
{
    char base[] = "/tmp/agent-sandbox-test-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    char path[PATH_MAX];
    mode_t mask = umask(022);
    CHECK(replace_file_below(base, "objects/ab", "tmp_1", "cdef", (const unsigned char *)"hello", 5, 0444) == 0);
    snprintf(path, sizeof path, "%s/objects/ab/cdef", base);
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0444 && st.st_size == 5);
    char got[8] = {0};
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, got, sizeof got) == 5 && memcmp(got, "hello", 5) == 0);
    close(fd);
    snprintf(path, sizeof path, "%s/objects/ab/tmp_1", base);
    CHECK(lstat(path, &st) != 0 && errno == ENOENT);
    /* replaced whole, in the root itself too */
    CHECK(replace_file_below(base, "", "index.t", "index", (const unsigned char *)"one", 3, 0666) == 0);
    CHECK(replace_file_below(base, "", "index.t", "index", (const unsigned char *)"two!", 4, 0666) == 0);
    snprintf(path, sizeof path, "%s/index", base);
    CHECK(lstat(path, &st) == 0 && st.st_size == 4 && (st.st_mode & 0777) == 0644);
    /* a link on the way, to a directory elsewhere: nothing written there */
    char elsewhere[PATH_MAX];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", base);
    CHECK(mkdir(elsewhere, 0755) == 0);
    snprintf(path, sizeof path, "%s/objects/cd", base);
    CHECK(symlink(elsewhere, path) == 0);
    int r = replace_file_below(base, "objects/cd", "tmp_2", "ef", (const unsigned char *)"x", 1, 0444);
    CHECK(r == -ELOOP || r == -ENOTDIR);
    snprintf(path, sizeof path, "%s/elsewhere/ef", base);
    CHECK(lstat(path, &st) != 0);
    snprintf(path, sizeof path, "%s/elsewhere/tmp_2", base);
    CHECK(lstat(path, &st) != 0);
    /* names that are not single names, and a temporary name taken */
    CHECK(replace_file_below(base, "objects/../elsewhere", "t", "n", (const unsigned char *)"x", 1, 0444) == -EINVAL);
    CHECK(replace_file_below(base, "", "a/b", "n", (const unsigned char *)"x", 1, 0444) == -EINVAL);
    CHECK(replace_file_below(base, "", "t", "..", (const unsigned char *)"x", 1, 0444) == -EINVAL);
    CHECK(replace_file_below(base, "objects/ab", "cdef", "other", (const unsigned char *)"x", 1, 0444) == -EEXIST);
    snprintf(path, sizeof path, "%s/objects/ab/other", base);
    CHECK(lstat(path, &st) != 0);
    umask(mask);
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", base);
    CHECK(system(command) == 0);
}

/* Whether RECORDS hold one for PATH with FLAGS, and its watch descriptor in *WD. */
static int has_record(const struct tree_records *records, const char *path, unsigned char flags, int *wd)
{
    size_t at = 0;
    while (at + 5 < records->used) {
        const unsigned char *r = records->data + at;
        const char *name = (const char *)r + 5;
        if (strcmp(name, path) == 0 && r[4] == flags) {
            *wd = (int)((unsigned int)r[0] << 24 | (unsigned int)r[1] << 16 | (unsigned int)r[2] << 8 | r[3]);
            return 1;
        }
        at += 5 + strlen(name) + 1;
    }
    return 0;
}

/* The walk finds every directory holding a HEAD, through no link and past no skipped path,
 * watches what it lists, and what is made afterwards is told. */
static void test_tree_watch_walk(void)
{
    char base[] = "/tmp/agent-sandbox-test-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    char path[PATH_MAX];
    char outside[] = "/tmp/agent-sandbox-outside-XXXXXX";
    CHECK(mkdtemp(outside) != NULL);
    const char *dirs[] = {"src", "src/main", "src/main/deep", "src/main/deep/.git", "skipped", "skipped/x", "bare"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", base, dirs[i]);
        CHECK(mkdir(path, 0755) == 0);
    }
    const char *heads[] = {"src/main/deep/.git/HEAD", "skipped/x/HEAD", "bare/HEAD"};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", base, heads[i]);
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        CHECK(fd >= 0);
        close(fd);
    }
    /* a link to a directory with a HEAD outside: never followed */
    snprintf(path, sizeof path, "%s/HEAD", outside);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0);
    close(fd);
    snprintf(path, sizeof path, "%s/src/away", base);
    CHECK(symlink(outside, path) == 0);

    int inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    CHECK(inotify >= 0);
    struct tree_records records = {NULL, 0, 0};
    static const char skip[] = "skipped\0other";
    CHECK(tree_watch_walk(base, "", inotify, skip, sizeof skip, 1000, 0, &records) == 0);
    int wd = -1;
    CHECK(has_record(&records, "src/main/deep/.git", TREE_WATCH_HEAD, &wd) && wd >= 0);
    CHECK(has_record(&records, "bare", TREE_WATCH_HEAD, &wd) && wd >= 0);
    CHECK(has_record(&records, "", 0, &wd) && wd >= 0);
    int main_wd = -1;
    CHECK(has_record(&records, "src/main", 0, &main_wd) && main_wd >= 0);
    CHECK(!has_record(&records, "skipped", 0, &wd) && !has_record(&records, "skipped/x", TREE_WATCH_HEAD, &wd));
    CHECK(!has_record(&records, "src/away", TREE_WATCH_HEAD, &wd) && !has_record(&records, "src/away", 0, &wd));

    /* a directory made afterwards is told by the watch on its parent */
    snprintf(path, sizeof path, "%s/src/main/new", base);
    CHECK(mkdir(path, 0755) == 0);
    char events[4096];
    ssize_t n = read(inotify, events, sizeof events);
    CHECK(n >= (ssize_t)sizeof(struct inotify_event));
    if (n >= (ssize_t)sizeof(struct inotify_event)) {
        struct inotify_event event;
        memcpy(&event, events, sizeof event);
        CHECK(event.wd == main_wd && (event.mask & IN_CREATE) != 0 && (event.mask & IN_ISDIR) != 0);
        CHECK(strcmp(events + sizeof event, "new") == 0);
    }

    /* a directory its owner may not read is named (root reads every directory: not checked as root) */
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "%s/src/main/deep", base);
        CHECK(chmod(path, 0300) == 0);
        records.used = 0;
        CHECK(tree_watch_walk(base, "src", -1, skip, sizeof skip, 1000, 0, &records) == 0);
        CHECK(has_record(&records, "src/main/deep", TREE_WATCH_UNLISTED, &wd));
        CHECK(chmod(path, 0755) == 0);
    }

    /* without watches only the directories holding a HEAD; a walk from below the root; a bound */
    records.used = 0;
    CHECK(tree_watch_walk(base, "src", -1, skip, sizeof skip, 1000, 0, &records) == 0);
    CHECK(has_record(&records, "src/main/deep/.git", TREE_WATCH_HEAD, &wd) && wd == -1);
    CHECK(!has_record(&records, "src/main", 0, &wd) && !has_record(&records, "bare", TREE_WATCH_HEAD, &wd));
    records.used = 0;
    CHECK(tree_watch_walk(base, "", -1, skip, sizeof skip, 2, 0, &records) == TREE_WATCH_TOO_MANY);
    /* idle for its start: the same result, and the thread's scheduling as before after it */
    records.used = 0;
    CHECK(tree_watch_walk(base, "src", -1, skip, sizeof skip, 1000, 50, &records) == 0);
    CHECK(has_record(&records, "src/main/deep/.git", TREE_WATCH_HEAD, &wd));
    CHECK(sched_getscheduler(0) == SCHED_OTHER);
    /* a start that is a link, or above the root: not opened */
    records.used = 0;
    CHECK(tree_watch_walk(base, "src/away", -1, "", 0, 1000, 0, &records) < 0);
    CHECK(tree_watch_walk(base, "..", -1, "", 0, 1000, 0, &records) < 0);
    CHECK(records.used == 0);
    free(records.data);
    /* held by a process of its own, fd 3 there and no other of this process's */
    int holder = tree_watch_hold(inotify);
    CHECK(holder > 0);
    if (holder > 0) {
        char link[PATH_MAX];
        char target[64] = {0};
        snprintf(link, sizeof link, "/proc/%d/fd/3", holder);
        for (int i = 0; i < 200 && (readlink(link, target, sizeof target - 1) < 0 || strstr(target, "inotify") == NULL); i++) {
            usleep(5000); /* until it has started */
        }
        CHECK(strcmp(target, "anon_inode:inotify") == 0);
        snprintf(link, sizeof link, "/proc/%d/fd/4", holder);
        CHECK(readlink(link, target, sizeof target - 1) < 0);
        CHECK(getpgid(holder) == holder);
        kill(holder, SIGTERM);
        CHECK(waitpid(holder, NULL, 0) == holder);
    }
    close(inotify);
    char command[2 * PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s' '%s'", base, outside);
    CHECK(system(command) == 0);
}

/* SHA-1 against the examples of FIPS 180 and git's own object names. */
static void test_sha1(void)
{
    static const struct {
        const char *text;
        const char *hex;
    } cases[] = {
        {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
        {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
        /* an empty blob as git names it: "blob 0" and a NUL */
        {"blob 0", "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char digest[SHA1_LENGTH];
        size_t length = strlen(cases[i].text) + (strncmp(cases[i].text, "blob", 4) == 0 ? 1 : 0);
        sha1((const unsigned char *)cases[i].text, length, digest);
        char hex[2 * SHA1_LENGTH + 1];
        for (int k = 0; k < SHA1_LENGTH; k++) {
            snprintf(hex + 2 * k, 3, "%02x", digest[k]);
        }
        CHECK(strcmp(hex, cases[i].hex) == 0);
    }
    /* a million 'a's: many blocks, and every length of the last one around the padding */
    size_t million = 1000000;
    unsigned char *a = malloc(million);
    CHECK(a != NULL);
    if (a != NULL) {
        memset(a, 'a', million);
        unsigned char digest[SHA1_LENGTH];
        sha1(a, million, digest);
        static const unsigned char expected[SHA1_LENGTH] = {0x34, 0xaa, 0x97, 0x3c, 0xd4, 0xc4, 0xda, 0xa4, 0xf6, 0x1e,
                                                            0xeb, 0x2b, 0xdb, 0xad, 0x27, 0x31, 0x65, 0x34, 0x01, 0x6f};
        CHECK(memcmp(digest, expected, SHA1_LENGTH) == 0);
        free(a);
    }
}

/* Joins argv's words with single spaces into buffer. */
static const char *joined(char *const *argv, char *buffer, size_t size)
{
    buffer[0] = '\0';
    for (size_t i = 0; argv[i] != NULL; i++) {
        size_t used = strlen(buffer);
        snprintf(buffer + used, size - used, "%s%s", i == 0 ? "" : " ", argv[i]);
    }
    return buffer;
}

/* argv of the space-separated words of text (changed in place); at most 31 words. */
static char *const *split_words(char *text, char *argv[32])
{
    size_t n = 0;
    for (char *word = strtok(text, " "); word != NULL && n < 31; word = strtok(NULL, " ")) {
        argv[n++] = word;
    }
    argv[n] = NULL;
    return argv;
}

/* net_stack_argv of the words of tool, joined again into out ("NULL" when there is none). */
static const char *rewritten(const char *tool, char *out, size_t size)
{
    char text[512];
    char *argv[32];
    snprintf(text, sizeof text, "%s", tool);
    char **result = net_stack_argv(split_words(text, argv));
    if (result == NULL) {
        snprintf(out, size, "NULL");
        return out;
    }
    joined(result, out, size);
    free(result);
    return out;
}

static void test_net_stack_argv(void)
{
    char out[512];
    /* only the leading --unshare-all changes; a later word is some option's value, or the command */
    CHECK(strcmp(rewritten("bwrap --die-with-parent --unshare-all --new-session --uid 0 --setenv X --unshare-net --"
                           " sh --unshare-all", out, sizeof out),
                 "bwrap --die-with-parent --cap-drop ALL --unshare-user --unshare-ipc --unshare-pid --unshare-uts"
                 " --unshare-cgroup-try --new-session --uid 0 --setenv X --unshare-net -- sh --unshare-all") == 0);
    CHECK(strcmp(rewritten("bwrap --unshare-all --unshare-net --ro-bind / /", out, sizeof out),
                 "bwrap --cap-drop ALL --unshare-user --unshare-ipc --unshare-pid --unshare-uts --unshare-cgroup-try"
                 " --ro-bind / /") == 0);
    /* without the tool's --unshare-all up front, no command line for the holder's namespaces */
    CHECK(strcmp(rewritten("bwrap --ro-bind / / --unshare-all", out, sizeof out), "NULL") == 0);
    CHECK(strcmp(rewritten("bwrap", out, sizeof out), "NULL") == 0);
}

static void test_spawn(void)
{
    char out[64];
    size_t used;
    char *env[] = {(char *)"PATH=/usr/bin:/bin", (char *)"X=y z", NULL};
    /* a name looked up in env's PATH, env exactly, the directory, stdout and stderr together */
    char *shell[] = {(char *)"sh", (char *)"-c", (char *)"printf '%s|%s|' \"$X\" \"$(pwd)\"; echo err >&2; exit 3", NULL};
    CHECK(spawn_and_wait(shell, env, "/tmp", 5000, out, sizeof out, &used) == 3);
    CHECK(used == strlen("y z|/tmp|err\n") && memcmp(out, "y z|/tmp|err\n", used) == 0);
    /* stdin is /dev/null; no descriptor of the caller's but 0, 1 and 2 */
    char *fds[] = {(char *)"sh", (char *)"-c", (char *)"cat; ls /proc/self/fd | wc -l", NULL};
    CHECK(spawn_and_wait(fds, env, "/", 5000, out, sizeof out, &used) == 0);
    CHECK(used >= 2 && out[0] == '4' && out[1] == '\n'); /* 0, 1, 2 and ls's own directory */
    /* only capacity bytes kept, the rest read to the end */
    char *many[] = {(char *)"sh", (char *)"-c", (char *)"yes | head -c 100000", NULL};
    CHECK(spawn_and_wait(many, env, "/", 5000, out, 10, &used) == 0 && used == 10);
    /* a signal's end, a program that is not there, one that does not end in time */
    char *killed[] = {(char *)"sh", (char *)"-c", (char *)"kill -9 $$", NULL};
    CHECK(spawn_and_wait(killed, env, "/", 5000, out, sizeof out, &used) == 128 + 9);
    char *missing[] = {(char *)"no-such-program-here", NULL};
    CHECK(spawn_and_wait(missing, env, "/", 5000, out, sizeof out, &used) == SPAWN_NOT_RUN && errno == ENOENT);
    char *slow[] = {(char *)"sleep", (char *)"5", NULL};
    CHECK(spawn_and_wait(slow, env, "/", 100, out, sizeof out, &used) == SPAWN_TIMED_OUT);
}

int main(void)
{
    test_spawn();
    test_net_stack_argv();
    test_dns_filter();
    test_utf8();
    test_check_words();
    test_paths();
    test_rule_fields();
    test_sockets_forbidden();
    test_parent_cmdline();
    test_git_question();
    test_request_and_lines();
    test_starter_request();
    test_split_strings();
    test_remove_tree();
    test_term_filter();
    test_git_snapshot();
    test_sha1();
    test_first_difference();
    test_replace_file_below();
    test_tree_watch_walk();
    if (failures > 0) {
        fprintf(stderr, "launcher tests: %d failed\n", failures);
        return 1;
    }
    puts("launcher tests: all passed");
    return 0;
}
