// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS filter's reading of messages: see net_filter.h. Every read is checked against
 * the message's length before it is made; nothing here follows a compression pointer
 * (a query has none, and the answers' owner names are skipped, never read).
 */
#include "net_filter.h"

#include <string.h>

static unsigned int u16(const uint8_t *p)
{
    return (unsigned int)p[0] << 8 | p[1];
}

int dns_query_name(const uint8_t *message, size_t n, char name[DNS_NAME_MAX], size_t *end)
{
    if (n < DNS_HEADER || n > DNS_MESSAGE_MAX) {
        return -1;
    }
    /* QR 0 (a query), opcode 0 (a standard one), one question */
    if ((message[2] & 0x80) != 0 || (message[2] & 0x78) != 0 || u16(message + 4) != 1) {
        return -1;
    }
    size_t at = DNS_HEADER;
    size_t used = 0;
    int odd = 0;
    for (;;) {
        if (at >= n) {
            return -1;
        }
        unsigned int length = message[at++];
        if (length == 0) {
            break;
        }
        if (length > 63) {
            return -1; /* a compression pointer, or a label type nobody uses */
        }
        /* the label, a dot before it, and the NUL must fit (253 characters at most) */
        if (at + length > n || used + length + (used > 0 ? 1 : 0) > 253) {
            return -1;
        }
        if (used > 0) {
            name[used++] = '.';
        }
        for (unsigned int i = 0; i < length; i++) {
            uint8_t c = message[at + i];
            if (c >= 'A' && c <= 'Z') {
                c = (uint8_t)(c - 'A' + 'a');
            }
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                c = '?';
                odd = 1;
            }
            name[used++] = (char)c;
        }
        at += length;
    }
    if (used == 0) {
        name[used++] = '.';
    }
    name[used] = '\0';
    if (at + 4 > n) {
        return -1; /* no type and class */
    }
    *end = at + 4;
    return odd;
}

int dns_name_allowed(const char *allow, const char *name)
{
    size_t name_length = strlen(name);
    const char *entry = allow;
    while (*entry != '\0') {
        const char *comma = strchr(entry, ',');
        size_t length = comma == NULL ? strlen(entry) : (size_t)(comma - entry);
        if (length > 2 && entry[0] == '*' && entry[1] == '.') {
            /* ".example.org": the name ends with it and has a label before it */
            size_t suffix = length - 1;
            if (name_length > suffix && memcmp(name + name_length - suffix, entry + 1, suffix) == 0) {
                return 1;
            }
        } else if (length == name_length && memcmp(entry, name, length) == 0) {
            return 1;
        }
        if (comma == NULL) {
            break;
        }
        entry = comma + 1;
    }
    return 0;
}

/* Skips a name (labels, maybe ending in a pointer) at *at; 0, or -1 past the end. */
static int skip_name(const uint8_t *message, size_t n, size_t *at)
{
    for (int labels = 0; labels < 128; labels++) {
        if (*at >= n) {
            return -1;
        }
        unsigned int length = message[*at];
        if (length == 0) {
            *at += 1;
            return 0;
        }
        if ((length & 0xc0) == 0xc0) {
            if (*at + 2 > n) {
                return -1;
            }
            *at += 2;
            return 0;
        }
        if (length > 63) {
            return -1;
        }
        *at += 1 + length;
    }
    return -1;
}

int dns_answer_addresses(const uint8_t *message, size_t n, uint8_t (*addresses)[4], int max)
{
    if (n < DNS_HEADER || n > DNS_MESSAGE_MAX || (message[2] & 0x80) == 0) {
        return -1;
    }
    unsigned int questions = u16(message + 4);
    unsigned int answers = u16(message + 6);
    size_t at = DNS_HEADER;
    for (unsigned int q = 0; q < questions; q++) {
        if (skip_name(message, n, &at) != 0 || at + 4 > n) {
            return -1;
        }
        at += 4;
    }
    int count = 0;
    for (unsigned int a = 0; a < answers; a++) {
        if (skip_name(message, n, &at) != 0 || at + 10 > n) {
            return -1;
        }
        unsigned int type = u16(message + at);
        unsigned int class = u16(message + at + 2);
        size_t length = u16(message + at + 8);
        at += 10;
        if (at + length > n) {
            return -1;
        }
        if (type == 1 && class == 1 && length == 4 && count < max) {
            memcpy(addresses[count++], message + at, 4);
        }
        at += length;
    }
    return count;
}

size_t dns_refuse(uint8_t *message, size_t end)
{
    message[2] = (uint8_t)(0x80 | (message[2] & 0x01)); /* a response; RD as asked */
    /* NXDOMAIN, not REFUSED: the C library reads REFUSED as a temporary failure
     * (EAI_AGAIN), which clients may wait and retry; no such name is a definite answer */
    message[3] = 0x80 | 3;                              /* RA, NXDOMAIN */
    memset(message + 6, 0, 6);                          /* no answer, authority or additional records */
    return end;
}
