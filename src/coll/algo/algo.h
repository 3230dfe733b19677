/* algo.h — the collective algorithms, each written once, one file each (algo/<op>_<name>.c),
 * generic over the carrier that moves their messages.
 *
 * An algorithm adds its rounds to a schedule (coll.h, "schedules"): transfers, local copies
 * and reductions, fences. It knows nothing of cells, datatypes or contexts; the carrier
 * (coll_algo_t below) does:
 *   - members: the algorithm counts members 0 .. n-1 and is member `me`; member i is the
 *     schedule's peer ranks[i] (NULL: i), so one algorithm serves a whole group and any
 *     list of its ranks (the hierarchical paths, communicator creation);
 *   - elements: buffers hold count elements `extent` bytes apart, and every transfer
 *     carries the carrier's type word `word` (the MPI face's datatype word; the group
 *     mailboxes count bytes, extent 1);
 *   - cells: a mailbox carrier (`cells` set) takes, in place of `word`, the cell index the
 *     algorithm names for each transfer: round k of a tree or of recursive doubling uses
 *     cell k (members 2^k apart), a ring cell 0 (neighbours), and a carrier-wide step past
 *     the rounds (a fold, a forward) `spare` and `spare` + 1. Such a carrier only joins
 *     members 2^k apart, so an algorithm routes around other distances when `cells` is
 *     set (see coll_algo_reduce_binomial);
 *   - copies, scratch and reductions go through the carrier's ops.
 * Reductions combine operands in member order (the lower members' on the left), so
 * non-commutative operations get the same bits on every member.
 *
 * Every function below is called at build time only, by one thread, and never blocks:
 * it reads its arguments (arrays included) and adds steps; the buffers are touched when
 * the schedule runs. Out of memory is remembered by the schedule (coll_sched_start
 * refuses it), so the functions return nothing. Every member must make the same call
 * (the same n, root, counts), as for the collective itself. */
#ifndef FMPL_COLL_ALGO_H
#define FMPL_COLL_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"

typedef struct coll_algo coll_algo_t;

typedef struct coll_algo_ops {
    /* Adds "copy count elements from src to dst" (nothing when dst == src). */
    void (*copy)(const coll_algo_t *a, void *dst, const void *src, int64_t count);
    /* Room for count elements owned by the schedule; NULL when out of memory. */
    void *(*scratch)(const coll_algo_t *a, int64_t count);
    /* Adds "into = lower (op) upper" over count elements; into is lower or upper. The
     * carrier need not honour into == lower unless into_upper is 0 or the op commutes
     * (coll_algo_fold chooses). */
    void (*reduce)(const coll_algo_t *a, const void *lower, const void *upper, void *into,
                   int64_t count);
} coll_algo_ops_t;

struct coll_algo {
    coll_sched_t *s;
    const coll_algo_ops_t *ops;
    const int *ranks; /* member i is peer ranks[i]; NULL: peer i */
    int n, me;
    uintptr_t word; /* type word of every transfer, unless cells */
    int cells;      /* 1: a transfer's type word is the cell index the algorithm names */
    unsigned spare; /* with cells: the first cell index past the rounds */
    int64_t extent; /* bytes from one element to the next in the buffers */
    int commutative, into_upper; /* the op commutes; the carrier's reduce writes upper */
    const void *carrier;         /* the carrier's own (its op, datatype) */
};

/* ---- transfers and local steps, as the algorithms use them */
static inline int coll_algo_mod(int x, int n)
{
    return ((x % n) + n) % n;
}
static inline int coll_algo_peer(const coll_algo_t *a, int member)
{
    return a->ranks ? a->ranks[member] : member;
}
static inline void coll_algo_send(const coll_algo_t *a, const void *buf, int64_t count, int member,
                                  unsigned cell)
{
    coll_sched_send(a->s, buf, count, a->cells ? cell : a->word, coll_algo_peer(a, member));
}
static inline void coll_algo_recv(const coll_algo_t *a, void *buf, int64_t count, int member,
                                  unsigned cell)
{
    coll_sched_recv(a->s, buf, count, a->cells ? cell : a->word, coll_algo_peer(a, member));
}
static inline char *coll_algo_at(const coll_algo_t *a, const void *base, int64_t index)
{
    return (char *)base + index * a->extent;
}
/* Combines lower (op) upper into `want` (one of the two) when the carrier can, else into
 * the other one; returns the buffer that receives the result. */
void *coll_algo_fold(const coll_algo_t *a, void *lower, void *upper, void *want, int64_t count);

/* ---- the algorithms */

/* Barrier. Dissemination: ceil(log2 n) rounds; in round k an empty message to the member
 * 2^k ahead and one from the member as far behind (cell k). at_once: all n - 1 members
 * at once instead, distance k + 1 on cell k, in one round (few members: nobody waits for
 * a relay through a member that is not running). */
void coll_algo_barrier_dissemination(const coll_algo_t *a, int at_once);

/* Bcast of count elements at buf from member root: binomial tree in members relative to
 * the root; a member receives once (from 2^k behind, cell k) and sends to each child at
 * a different distance. */
void coll_algo_bcast_binomial(const coll_algo_t *a, void *buf, int64_t count, int root);

/* Allgather's passing steps over a ring: n - 1 rounds; in round t member r sends block
 * r - t to r + 1 and receives block r - 1 - t from r - 1 (cell 0), in pieces of at most seg
 * elements, one out and one in per round (seg 0: whole blocks). Block i: counts[i]
 * elements at displs[i] (elements of extent from buf); counts NULL: count elements each,
 * block i at i * count. own NULL: the member's own block is already in place in buf; else
 * own holds it (same count and layout), and round 0 sends it from there and copies it into
 * buf while its first transfers move (the copy does not hold up the first send). */
void coll_algo_allgather_ring(const coll_algo_t *a, void *buf, const void *own,
                              const int64_t *counts, const int64_t *displs, int64_t count,
                              int64_t seg);

/* Reduce of count elements of every member's `in` to member root's `out` by a binomial
 * tree. A commutative op roots the tree at root; otherwise at member 0, whose subtrees
 * cover consecutive members (operands in member order), and the result then goes on to
 * root: directly, or with cells along hops of powers of two (cell spare). in may be out
 * at the root. */
void coll_algo_reduce_binomial(const coll_algo_t *a, const void *in, void *out, int64_t count,
                               int root);

/* Allreduce of count elements in place in buf (every member's operand on entry, the
 * result on return) with tmp as scratch of count elements. On n not a power of two, the
 * first 2 * rem members (rem = n - p2, p2 the largest power of two <= n) pair up
 * first: an even member hands its operand to the next (cell spare) and gets the result
 * back at the end (cell spare + 1); the other p2 members run the algorithm.
 * recdbl: recursive doubling, round k exchanges the whole vector with the member 2^k
 * away (cell k). */
void coll_algo_allreduce_recdbl(const coll_algo_t *a, void *buf, void *tmp, int64_t count);
/* rabenseifner: recursive halving reduce-scatter, then recursive doubling allgather
 * (commutative ops, count >= p2; not for cells). */
void coll_algo_allreduce_rabenseifner(const coll_algo_t *a, void *buf, void *tmp, int64_t count);
/* The pairing of both (allreduce_recdbl.c): fold_in returns this member's index among the
 * p2 (-1: it handed its operand over) and sets *p2; fold_out gives the result back. */
int coll_algo_fold_in(const coll_algo_t *a, void *buf, void *tmp, int64_t count, int *p2);
void coll_algo_fold_out(const coll_algo_t *a, void *buf, int64_t count, int p2);

#endif
