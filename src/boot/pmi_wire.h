/* pmi_wire.h — private to boot and fmplrun: the PMI-1 wire format.
 *
 * A PMI-1 message is one line of space-separated key=value tokens ending in '\n',
 * the first token being cmd=<name>, e.g.
 *     cmd=put kvsname=fmpl-123-9f0c key=addr.0 value=0a1b\n
 *     cmd=get_result rc=0 msg=success value=0a1b\n
 * as spoken by MPICH's simple PMI client and Hydra's proxy. Newer MPICH escapes a
 * space or backslash inside a value with a backslash; this parser undoes that, and
 * the writer produces it, so both old and new peers are understood.
 *
 * Nothing here allocates, blocks or keeps state: these are pure string functions
 * shared by the client (boot.c) and the server (src/tools/fmplrun.c). */
#ifndef FMPL_BOOT_PMI_WIRE_H
#define FMPL_BOOT_PMI_WIRE_H

#include <stddef.h>

#define PMI_WIRE_LINE_MAX 8192 /* longest line either side accepts, with its '\n' */
/* Longest request line a client sends, with its '\n': the line limit of MPICH's simple
 * PMI client (PMIU_MAXLINE), which Slurm's PMI-1 server (srun --mpi=pmi2) relies on: it
 * takes each request from a single read of at most this many bytes, so a longer line
 * arrives cut in two and both halves are rejected. */
#define PMI_WIRE_REQUEST_MAX 1024
#define PMI_WIRE_TOKENS_MAX 32 /* most tokens in one message, cmd included */

typedef struct pmi_token {
    const char *key;
    const char *val; /* NULL for a bare word without '=' */
} pmi_token_t;

typedef struct pmi_msg {
    const char *cmd; /* the value of the leading cmd= token */
    int ntokens;     /* tokens after cmd */
    pmi_token_t tokens[PMI_WIRE_TOKENS_MAX];
} pmi_msg_t;

/* Parses one line in place (NUL-terminated, the '\n' already removed): the token
 * strings point into `line`, so the message lives as long as the line buffer.
 * Returns 0, or -1 when the line does not start with cmd= or has too many tokens. */
int pmi_wire_parse(char *line, pmi_msg_t *msg);

/* Value of the first token named `key`, or NULL when absent or bare. */
const char *pmi_wire_find(const pmi_msg_t *msg, const char *key);

/* Appends " key=value" (or "key=value" when *len is 0) to buf, escaping spaces and
 * backslashes in the value and turning newlines into spaces. Keeps buf
 * NUL-terminated. Returns 0, or -1 (buf unchanged) when it does not fit in cap. */
int pmi_wire_append(char *buf, size_t cap, size_t *len, const char *key, const char *val);

/* Appends "\n" and keeps buf NUL-terminated. Returns 0, or -1 when there is no room. */
int pmi_wire_end(char *buf, size_t cap, size_t *len);

#endif
