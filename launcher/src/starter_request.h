// SPDX-License-Identifier: Apache-2.0
/*
 * The starter's requests taken apart: a header of decimal numbers, then NUL-ended strings.
 */
#ifndef AGENT_SANDBOX_STARTER_REQUEST_H
#define AGENT_SANDBOX_STARTER_REQUEST_H

#include <stddef.h>

/* Parses count space-separated decimal numbers, each at most max, and nothing else. */
int parse_numbers(const char *text, unsigned long *numbers, int count, unsigned long max);

/* Parses "<words> <variables> <bytes>" (decimal, each at most max). */
int parse_starter_header(const char *header, unsigned long numbers[3], unsigned long max);

/* Splits bytes into exactly count NUL-ended strings; -1 when they are not that. */
int split_strings(char *bytes, size_t length, char **strings, size_t count);

/* Splits the request's bytes into the log file, bwrap's words and the variables;
 * -1 unless they are exactly that many NUL-ended strings. */
int split_starter_request(char *bytes, size_t length, char **log, char **words, size_t word_count,
                          char **variables, size_t variable_count);

#endif
