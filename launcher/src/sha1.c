// SPDX-License-Identifier: Apache-2.0
/*
 * SHA-1 as FIPS 180-4 defines it: see sha1.h.
 */
#include "sha1.h"

#include <stdint.h>
#include <string.h>

static uint32_t rotate(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

/* One 64-byte block into the state H. */
static void block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80];
    for (int t = 0; t < 16; t++) {
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8
               | (uint32_t)p[4 * t + 3];
    }
    for (int t = 16; t < 80; t++) {
        w[t] = rotate(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    }
    uint32_t a = h[0];
    uint32_t b = h[1];
    uint32_t c = h[2];
    uint32_t d = h[3];
    uint32_t e = h[4];
    for (int t = 0; t < 80; t++) {
        uint32_t f;
        uint32_t k;
        if (t < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999u;
        } else if (t < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1u;
        } else if (t < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdcu;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6u;
        }
        uint32_t next = rotate(a, 5) + f + e + k + w[t];
        e = d;
        d = c;
        c = rotate(b, 30);
        b = a;
        a = next;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1(const unsigned char *data, size_t length, unsigned char out[SHA1_LENGTH])
{
    uint32_t h[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
    size_t whole = length - length % 64;
    for (size_t i = 0; i < whole; i += 64) {
        block(h, data + i);
    }
    /* the rest, a 1 bit, zeros, and the length in bits: one or two blocks more */
    unsigned char tail[128];
    size_t rest = length - whole;
    memset(tail, 0, sizeof tail);
    memcpy(tail, data + whole, rest);
    tail[rest] = 0x80;
    size_t tail_length = rest + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)length * 8;
    for (int i = 0; i < 8; i++) {
        tail[tail_length - 1 - (size_t)i] = (unsigned char)(bits >> (8 * i));
    }
    for (size_t i = 0; i < tail_length; i += 64) {
        block(h, tail + i);
    }
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(h[i] >> 8);
        out[4 * i + 3] = (unsigned char)h[i];
    }
}
