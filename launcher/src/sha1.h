// SPDX-License-Identifier: Apache-2.0
/*
 * SHA-1 (FIPS 180-4), for the names git gives its objects and the checksum of its index:
 * the host's apply checks what a sandbox left against them (GitApply.java, through
 * jvm_start.c and Native.java), and the tool's JVM runs interpreted, where Java's own SHA-1 takes
 * about half a second for the index of a repository of 20 000 files.
 */
#ifndef AGENT_SANDBOX_SHA1_H
#define AGENT_SANDBOX_SHA1_H

#include <stddef.h>

#define SHA1_LENGTH 20

/* The SHA-1 of LENGTH bytes at DATA, into OUT. */
void sha1(const unsigned char *data, size_t length, unsigned char out[SHA1_LENGTH]);

#endif
