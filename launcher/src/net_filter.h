// SPDX-License-Identifier: Apache-2.0
/*
 * The network's allow-list with the sandbox's own stack: a DNS filter that answers only
 * names on the list, and routes only the addresses of those answers (net_filter.c).
 */
#ifndef AGENT_SANDBOX_NET_FILTER_H
#define AGENT_SANDBOX_NET_FILTER_H

#include <stddef.h>
#include <stdint.h>

/* The longest name in text (253 characters and the terminating NUL, with room to spare). */
#define DNS_NAME_MAX 256
/* The largest DNS message over UDP the filter relays. */
#define DNS_MESSAGE_MAX 4096
/* A query's header. */
#define DNS_HEADER 12

/*
 * Reads the one question of a query of n bytes: its name into name (lower case, dotted,
 * no trailing dot; "." for the root), and where the question ends into *end.
 * Returns 0 for a name of letters, digits, '-' and '_', 1 for a name with any other byte
 * (written there as '?': never on the list), -1 for a message that is no query with one
 * question (too short, a response, another opcode, a compressed or overlong name).
 */
int dns_query_name(const uint8_t *message, size_t n, char name[DNS_NAME_MAX], size_t *end);

/* Whether name is on allow, the list as the tool passes it: entries separated by ',',
 * each a lower-case host name (only itself) or "*." and one (every name below it). */
int dns_name_allowed(const char *allow, const char *name);

/*
 * The IPv4 addresses of the A records (class IN) in the answer section of a response of n
 * bytes, at most max of them, into addresses; their count, or -1 for a malformed response.
 */
int dns_answer_addresses(const uint8_t *message, size_t n, uint8_t (*addresses)[4], int max);

/* Makes the query of the first end bytes (end as dns_query_name says) its own refusal
 * (NXDOMAIN, no records) in place; the refusal's length. */
size_t dns_refuse(uint8_t *message, size_t end);

#endif
