// SPDX-License-Identifier: Apache-2.0
/*
 * Byte comparison for the host's apply (GitApply.java, through jvm_start.c and Native.java):
 * the tool's JVM runs interpreted, where comparing two indexes of a repository of 20 000
 * files (1.6 MB each) byte by byte takes some 20 ms; memcmp takes a fraction of one.
 */
#ifndef AGENT_SANDBOX_BYTES_H
#define AGENT_SANDBOX_BYTES_H

#include <stddef.h>

/* The offset of the first byte in which the LENGTH bytes at A and at B differ; LENGTH when none does. */
size_t first_difference(const unsigned char *a, const unsigned char *b, size_t length);

#endif
