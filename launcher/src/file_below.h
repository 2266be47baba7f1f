// SPDX-License-Identifier: Apache-2.0
/*
 * A file written whole into a directory of the host's git dir, for the host's apply
 * (ObjectImport.java and GitApply.java, through jvm_start.c and Native.java): every
 * directory below the given root is opened without following a symbolic link, a missing
 * one is made in the directory so opened, and the file is written under a temporary name
 * there and renamed over its own, so readers see the old file or the new one whole. The
 * JDK's directory streams do the same in an interpreted JVM at some ten times the cost.
 */
#ifndef AGENT_SANDBOX_FILE_BELOW_H
#define AGENT_SANDBOX_FILE_BELOW_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Writes the LENGTH bytes at DATA to a new file TEMP (created with MODE, less the umask) in
 * directory REL of directory ROOT, then renames it to NAME there. ROOT is opened as any path
 * is; each '/'-separated part of REL (empty for ROOT itself) is opened without following a
 * link (one there fails with ELOOP or ENOTDIR), and made where missing. TEMP and NAME are
 * single names. 0 when written; the negated errno of the first step that failed, with the
 * temporary file removed.
 */
int replace_file_below(const char *root, const char *rel, const char *temp, const char *name,
                       const unsigned char *data, size_t length, mode_t mode);

#endif
