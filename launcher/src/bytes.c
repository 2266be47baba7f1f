// SPDX-License-Identifier: Apache-2.0
#include "bytes.h"

#include <string.h>

/* Blocks of this many bytes are compared by memcmp; only the first block that differs byte by byte. */
#define BLOCK 4096

size_t first_difference(const unsigned char *a, const unsigned char *b, size_t length)
{
    size_t at = 0;
    while (at < length) {
        size_t n = length - at < BLOCK ? length - at : BLOCK;
        if (memcmp(a + at, b + at, n) != 0) {
            while (a[at] == b[at]) {
                at++;
            }
            return at;
        }
        at += n;
    }
    return length;
}
