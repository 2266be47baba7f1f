// SPDX-License-Identifier: Apache-2.0
/*
 * The starter's requests taken apart: see starter_request.h.
 */
#define _GNU_SOURCE

#include "starter_request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "util.h"

/* Parses count space-separated decimal numbers, each at most max, and nothing else. */
int parse_numbers(const char *text, unsigned long *numbers, int count, unsigned long max)
{
    const char *cursor = text;
    for (int i = 0; i < count; i++) {
        if (*cursor < '0' || *cursor > '9') {
            return -1;
        }
        char *end = NULL;
        errno = 0;
        numbers[i] = strtoul(cursor, &end, 10);
        if (errno != 0 || numbers[i] > max || *end != (i < count - 1 ? ' ' : '\0')) {
            return -1;
        }
        cursor = end + (i < count - 1 ? 1 : 0);
    }
    return 0;
}

/* Parses "<words> <variables> <bytes>" (decimal, each at most max). */
int parse_starter_header(const char *header, unsigned long numbers[3], unsigned long max)
{
    return parse_numbers(header, numbers, 3, max);
}

/* The NUL-ended string at *cursor (before end), the cursor moved past it; NULL when
 * no NUL is left. */
static char *next_string(char **cursor, char *end)
{
    char *start = *cursor;
    char *nul = start < end ? memchr(start, '\0', (size_t)(end - start)) : NULL;
    if (nul == NULL) {
        return NULL;
    }
    *cursor = nul + 1;
    return start;
}

/* Takes count NUL-ended strings from *cursor; -1 when fewer are there. */
static int take_strings(char **cursor, char *end, char **strings, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if ((strings[i] = next_string(cursor, end)) == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Splits bytes into exactly count NUL-ended strings; -1 when they are not that. */
int split_strings(char *bytes, size_t length, char **strings, size_t count)
{
    char *cursor = bytes;
    return take_strings(&cursor, bytes + length, strings, count) == 0 && cursor == bytes + length ? 0 : -1;
}

/* Splits the request's bytes into the log file, bwrap's words and the variables;
 * -1 unless they are exactly that many NUL-ended strings. */
int split_starter_request(char *bytes, size_t length, char **log, char **words, size_t word_count,
                                 char **variables, size_t variable_count)
{
    char *cursor = bytes;
    char *end = bytes + length;
    if (take_strings(&cursor, end, log, 1) != 0 || take_strings(&cursor, end, words, word_count) != 0 ||
        take_strings(&cursor, end, variables, variable_count) != 0 || cursor != end) {
        return -1;
    }
    words[word_count] = NULL;
    variables[variable_count] = NULL;
    return 0;
}
