/* coll_neighbor.c — the neighbourhood collectives (MPI-4.0 8.6, 8.7):
 * MPI_Neighbor_allgather(v) and MPI_Neighbor_alltoall(v,w), blocking, nonblocking
 * (MPI_Ineighbor_*) and persistent (*_init), with their large-count (_c) forms, on
 * Cartesian, graph and distributed-graph communicators.
 *
 * Every call is a schedule of the collective engine (coll_impl.h) with one round: a
 * receive of each in-neighbour's block in neighbour order, a send of each out-neighbour's
 * block in the topology's send order (topo_impl.h: it pairs blocks right when a peer is
 * a neighbour twice), a local copy for each edge to this process itself (its k-th send
 * to itself lands in its k-th receive block from itself), nothing for MPI_PROC_NULL.
 * The neighbour lists are derived once per communicator (mpii_topo_neighbors); the
 * blocking allgather and alltoall with predefined types keep their schedules in the
 * communicator's cache under their argument shape (kinds MPII_CK_NEIGHBOR_*), so a
 * repeated call only restarts its schedule. All five share one builder over per-neighbour
 * counts, byte displacements and types (the w form); the other forms are expressed in
 * it at their entry. MPI_IN_PLACE is not allowed (MPI_ERR_BUFFER); a communicator without
 * a topology gives MPI_ERR_TOPOLOGY, an intercommunicator MPI_ERR_COMM.
 *
 * The blocking allgather and alltoall on a Cartesian communicator whose edges the group
 * mailboxes carry (mpii_nbrs_t.mailbox_edges: every neighbour 2^k ranks away modulo the
 * size, as on a periodic 2x2 or 2x4 grid) with blocks of at most FMPL_COLL_SMALL bytes,
 * or a few times that (neighbor_group_fits: 32 KiB allgather blocks, 16 KiB alltoall blocks at
 * the defaults), run as group schedules instead (neighbor_group): the same
 * exchange with each block cut into mailbox messages of FMPL_COLL_SMALL bytes (stores
 * into the peer's cells, no matching), packed through a temporary when its type is not
 * contiguous. That is two copies instead of the rendezvous's one (CMA), but no
 * handshake: a process deposits all it sends without waiting for its peers to run and
 * takes what they sent whenever it runs, which is what counts when ranks outnumber CPUs
 * (4 ranks on 2 CPUs). Larger blocks take the single-copy rendezvous. The choice depends on the
 * topology and the block's byte size only, so every member makes the same one.
 *
 * The uniform allgather (MPI_Neighbor_allgather, MPI_Ineighbor_allgather, *_init and
 * _c, both builders) moves each block once per peer, not once per edge: a peer that is
 * an in-neighbour several times (a periodic dimension of size 2, as on the 2x2 grid,
 * or repeated graph edges) sends its block once, received into the first of its receive
 * blocks and copied into the others after the round. This holds on every process alike
 * because every block a process sends is the same bytes (its send buffer) and every
 * receive block has the same shape, and because in a valid program a peer is an
 * out-neighbour of ours exactly when we are an in-neighbour of its (the edge counts
 * agree; MPI-4.0 8.6). It saves a transfer (a rendezvous handshake and a copy across
 * processes, or a mailbox message) per repeated edge for a local copy. The v and w forms
 * keep one message per edge (their receive blocks may differ in shape). The uniform
 * alltoall on the group mailboxes sends a repeated peer its blocks as one message when
 * they fit one mailbox (neighbor_group). */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"
#include "mpi/topo_impl.h"

/* 1 when in[i] (a peer other than this process and MPI_PROC_NULL) is also in[k] for some
 * k < i: the index of the first such k goes to *first. */
static int neighbor_repeat(const int *list, int i, int *first)
{
    for (int k = 0; k < i; k++)
        if (list[k] == list[i]) {
            *first = k;
            return 1;
        }
    return 0;
}

/* The one round of a neighbourhood exchange (arguments checked). once (the uniform
 * allgather: every send block is the same bytes, every receive block the same shape): a
 * peer that is a neighbour several times gets one message and sends one, received into
 * its first block and copied into the others after the round (see the top). */
static int build_neighbor(coll_sched_t *s, mpii_comm_t *c, const mpii_nbrs_t *nb, const void *sbuf,
                          const int64_t *sc, const int64_t *sd, const MPI_Datatype *st, void *rbuf,
                          const int64_t *rc, const int64_t *rd, const MPI_Datatype *rt, int once)
{
    const char *sb = sbuf;
    char *rb = rbuf;
    int me = c->rank, self_in = 0, first;
    for (int i = 0; i < nb->indeg; i++) {
        int peer = nb->in[i];
        if (peer != MPI_PROC_NULL && peer != me && !(once && neighbor_repeat(nb->in, i, &first)))
            mpii_sched_recv(s, rb + rd[i], rc[i], rt[i], peer);
    }
    for (int k = 0; k < nb->outdeg; k++) {
        int j = nb->send_order[k], peer = nb->out[j];
        if (peer == MPI_PROC_NULL)
            continue;
        if (peer != me) {
            if (!(once && neighbor_repeat(nb->out, j, &first)))
                mpii_sched_send(s, sb + sd[j], sc[j], st[j], peer);
            continue;
        }
        /* the next receive block from this process itself */
        while (self_in < nb->indeg && nb->in[self_in] != me)
            self_in++;
        if (self_in == nb->indeg)
            return MPI_ERR_TOPOLOGY; /* (an edge to itself the topology does not receive) */
        int i = self_in++;
        mpii_sched_copy(s, sb + sd[j], sc[j], st[j], rb + rd[i], rc[i], rt[i]);
    }
    mpii_sched_fence(s);
    for (int i = 0; once && i < nb->indeg; i++)
        if (nb->in[i] != MPI_PROC_NULL && nb->in[i] != me && neighbor_repeat(nb->in, i, &first))
            mpii_sched_copy(s, rb + rd[first], rc[first], rt[first], rb + rd[i], rc[i], rt[i]);
    return MPI_SUCCESS;
}

/* Entry checks common to every form: comm an intracommunicator with a topology. *nbp
 * gets its neighbour lists. Returns MPI_SUCCESS or the error raised. */
static int neighbor_enter(MPI_Comm comm, const char *fname, mpii_comm_t **cp,
                          const mpii_nbrs_t **nbp)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (c->rgroup)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_COMM, fname,
                         "an intercommunicator has no topology");
    if (!c->topo)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_TOPOLOGY, fname,
                         "the communicator has no process topology");
    *nbp = mpii_topo_neighbors(c);
    if (!*nbp)
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
    *cp = c;
    return MPI_SUCCESS;
}

/* The per-neighbour arguments of the w form: counts, byte displacements and types of the
 * out-neighbours' blocks (s*) and the in-neighbours' (r*), in one allocation. */
typedef struct neighbor_args {
    int64_t *sc, *sd, *rc, *rd;
    MPI_Datatype *st, *rt;
} neighbor_args_t;

static int neighbor_args_alloc(neighbor_args_t *a, const mpii_nbrs_t *nb)
{
    size_t o = (size_t)nb->outdeg, i = (size_t)nb->indeg;
    char *m = malloc((2 * (o + i) + 1) * sizeof(int64_t) + (o + i + 1) * sizeof(MPI_Datatype));
    if (!m)
        return MPI_ERR_NO_MEM;
    a->sc = (int64_t *)(void *)m;
    a->sd = a->sc + o;
    a->rc = a->sd + o;
    a->rd = a->rc + i;
    a->st = (MPI_Datatype *)(void *)(a->rd + i + 1);
    a->rt = a->st + o;
    return MPI_SUCCESS;
}

/* Checks the w-form arguments, then builds and runs as m says (kb: the cache key of a
 * blocking call, or NULL; once: as build_neighbor). Takes a->sc's allocation over. */
static int neighbor_run(mpii_comm_t *c, MPI_Comm comm, const mpii_nbrs_t *nb, const void *sbuf,
                        void *rbuf, neighbor_args_t *a, const mpii_cmode_t *m,
                        const mpii_ckey_t *kb, int once)
{
    int rc = MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
        rc = MPI_ERR_BUFFER;
    for (int j = 0; !rc && j < nb->outdeg; j++)
        rc = mpii_coll_check_buf(sbuf, a->sc[j], a->st[j], 0);
    for (int i = 0; !rc && i < nb->indeg; i++)
        rc = mpii_coll_check_buf(rbuf, a->rc[i], a->rt[i], 0);
    if (rc) {
        free(a->sc);
        return mpii_coll_fail(comm, rc, m->fname);
    }
    const mpii_ckey_t *k = mpii_sched_key(m, kb);
    coll_sched_t *s = mpii_sched_lookup(c, k);
    if (s) {
        free(a->sc);
        return mpii_sched_run_cached(c, comm, s, m->fname);
    }
    s = mpii_sched_new(c);
    rc = s ? build_neighbor(s, c, nb, sbuf, a->sc, a->sd, a->st, rbuf, a->rc, a->rd, a->rt, once)
           : 0;
    free(a->sc);
    return mpii_sched_run(c, comm, s, m, k, rc);
}

/* Whether blocks of n bytes go through the group mailboxes of c (see the top), in
 * pieces of FMPL_COLL_SMALL bytes: always up to one piece; more while a call sends each
 * peer at most a quarter of FMPL_COLL_DEPTH messages (a neighbour at most twice on a
 * Cartesian grid; an allgather sends it one block, so allgather blocks up to 32 KiB and
 * alltoall blocks up to 16 KiB at the defaults). Beyond that the two copies through the
 * cells cost more than the rendezvous's one: on the AMD EPYC guest whose two vCPUs
 * sometimes share no cache, 64 KiB allgather blocks took 27 us a call through the cells
 * and 40 by rendezvous when they share one, 84-87 and 54-67 when they do not (Open MPI:
 * 61-75); writers waiting on their readers' acknowledgements cost more again
 * (docs/performance.md). The same on every member (settings and sizes are). */
static int neighbor_group_fits(mpii_comm_t *c, int alltoall, int64_t n)
{
    int64_t small = (int64_t)coll_group_small(c->cgroup);
    int64_t pieces = (n + small - 1) / small;
    return pieces <= BASE_MAX(1, (int64_t)coll_group_depth(c->cgroup) / (alltoall ? 8 : 4));
}

/* How many entries of list (deg of them) are peer. */
static int neighbor_edges(const int *list, int deg, int peer)
{
    int m = 0;
    for (int k = 0; k < deg; k++)
        m += list[k] == peer;
    return m;
}

/* The one round of a uniform neighbourhood exchange (alltoall: block j of sbuf to
 * out-neighbour j, else sbuf to every one) over the group mailboxes of c, n bytes a
 * block (arguments checked, n > 0), each block in messages of up to FMPL_COLL_SMALL
 * bytes (pieces), both ends cutting alike. A peer's messages may be consumed out of
 * order within the round: a reader acknowledges only what it has freed in order
 * (coll_impl.h, coll_freed), so its writer may run any number of messages ahead.
 * An alltoall to a peer that is an out-neighbour m > 1 times (a periodic dimension of
 * size 2) sends it one message of its m blocks, in send order, when they fit one piece
 * (m x n <= FMPL_COLL_SMALL): the peer receives it as its m blocks from this process in
 * neighbour order (the k-th send to a peer is its k-th receive from us: topo_impl.h),
 * straight into its receive buffer when those blocks are adjacent there. Both ends
 * decide alike (a pair's edge counts agree). It halves the messages, wake-ups and
 * acknowledgements of a 2x2 grid's alltoall for a copy of the small blocks into one. */
static int neighbor_group(coll_sched_t *s, mpii_comm_t *c, const mpii_nbrs_t *nb, int alltoall,
                          const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                          int64_t rcount, MPI_Datatype rtype, int64_t n)
{
    dt_t *st = mpii_type_get(stype), *rt = mpii_type_get(rtype);
    int sblocks = alltoall ? nb->outdeg : 1, me = c->rank;
    int64_t piece = (int64_t)coll_group_small(c->cgroup);
    const char *in = (const char *)sbuf + dt_true_lb(st);
    if (!dt_is_contig(st, scount * sblocks)) { /* packed first */
        char *tmp = mpii_sched_bytes(s, n * sblocks);
        mpii_sched_copy(s, sbuf, scount * sblocks, stype, tmp, n * sblocks, MPI_BYTE);
        in = tmp;
    }
    int direct = dt_is_contig(rt, rcount * nb->indeg);
    char *out = direct ? (char *)rbuf + dt_true_lb(rt) : mpii_sched_bytes(s, n * nb->indeg);
    /* land[i]: where receive block i's data arrives (allgather: the first block from the
     * same peer, build_neighbor's once; a merged alltoall message: its part of it) */
    char **land = calloc((size_t)nb->indeg + 1, sizeof *land);
    if (!in || !out || !land) {
        free(land);
        return MPI_ERR_NO_MEM;
    }
    int self_in = 0, first;
    for (int i = 0; i < nb->indeg; i++)
        land[i] = out + i * n;
    for (int i = 0; i < nb->indeg; i++) {
        int peer = nb->in[i];
        if (peer == MPI_PROC_NULL || peer == me)
            continue;
        int m = neighbor_edges(nb->in, nb->indeg, peer),
            merged = alltoall && m > 1 && m * n <= piece;
        if (neighbor_repeat(nb->in, i, &first) && (!alltoall || merged)) {
            if (!alltoall)
                land[i] = land[first];
            continue; /* (merged: it lands with the first block's message) */
        }
        if (merged) { /* one message of the m blocks */
            int adjacent = direct;
            for (int k = i, q = 0; k < nb->indeg && q < m; k++)
                if (nb->in[k] == peer)
                    adjacent &= k == i + q++;
            char *at = adjacent ? out + i * n : mpii_sched_bytes(s, m * n);
            if (!at) {
                free(land);
                return MPI_ERR_NO_MEM;
            }
            for (int k = i, q = 0; k < nb->indeg; k++)
                if (nb->in[k] == peer)
                    land[k] = at + q++ * n;
            coll_sched_recv(s, at, m * n, 0, peer);
            continue;
        }
        for (int64_t at = 0; at < n; at += piece)
            coll_sched_recv(s, out + i * n + at, BASE_MIN(piece, n - at), 0, peer);
    }
    for (int k = 0; k < nb->outdeg; k++) {
        int j = nb->send_order[k], peer = nb->out[j];
        const char *blk = in + (alltoall ? j * n : 0);
        if (peer == MPI_PROC_NULL)
            continue;
        if (peer != me) {
            int m = neighbor_edges(nb->out, nb->outdeg, peer), seen = 0;
            for (int q = 0; q < k; q++)
                seen |= nb->out[nb->send_order[q]] == peer;
            if (alltoall && m > 1 && m * n <= piece) { /* the merged message (above) */
                if (seen)
                    continue;
                char *tmp = mpii_sched_bytes(s, m * n);
                if (!tmp) {
                    free(land);
                    return MPI_ERR_NO_MEM;
                }
                for (int q = k, at = 0; q < nb->outdeg; q++)
                    if (nb->out[nb->send_order[q]] == peer)
                        coll_sched_copy(s, tmp + at++ * n, in + nb->send_order[q] * n, (size_t)n);
                coll_sched_send(s, tmp, m * n, 0, peer);
            } else if (alltoall || !seen) {
                for (int64_t at = 0; at < n; at += piece)
                    coll_sched_send(s, blk + at, BASE_MIN(piece, n - at), 0, peer);
            }
            continue;
        }
        while (self_in < nb->indeg && nb->in[self_in] != me)
            self_in++;
        if (self_in == nb->indeg) {
            free(land);
            return MPI_ERR_TOPOLOGY;
        }
        coll_sched_copy(s, out + self_in++ * n, blk, (size_t)n);
    }
    mpii_sched_fence(s);
    /* (blocks from MPI_PROC_NULL stay untouched: only received blocks move) */
    for (int i = 0; i < nb->indeg; i++) {
        if (nb->in[i] == MPI_PROC_NULL)
            continue;
        if (!direct)
            mpii_sched_copy(s, land[i], n, MPI_BYTE,
                            (char *)rbuf + i * rcount * mpii_coll_ext(rtype), rcount, rtype);
        else if (land[i] != out + i * n)
            coll_sched_copy(s, out + i * n, land[i], (size_t)n);
    }
    free(land);
    return MPI_SUCCESS;
}

/* Allgather (alltoall: 1) with uniform blocks: block j of sbuf (alltoall) or sbuf itself
 * (allgather) to out-neighbour j, block i of rbuf from in-neighbour i. */
static int neighbor_uniform_entry(int alltoall, const void *sbuf, int64_t scount,
                                  MPI_Datatype stype, void *rbuf, int64_t rcount,
                                  MPI_Datatype rtype, MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_ckey_t kb = {.kind = alltoall ? MPII_CK_NEIGHBOR_ALLTOALL : MPII_CK_NEIGHBOR_ALLGATHER,
                      .stype = stype,
                      .rtype = rtype,
                      .scount = scount,
                      .rcount = rcount,
                      .sbuf = sbuf,
                      .rbuf = rbuf};
    mpii_comm_t *c = mpii_comm_get(comm);
    coll_sched_t *hit = c ? mpii_sched_hit(c, m, &kb) : NULL;
    if (hit) /* (a cached schedule passed every check: coll_impl.h) */
        return mpii_sched_run_cached(c, comm, hit, m->fname);
    const mpii_nbrs_t *nb;
    int rc = neighbor_enter(comm, m->fname, &c, &nb);
    if (rc)
        return rc;
    if (mpii_type_check_comm(stype) != MPI_SUCCESS || mpii_type_check_comm(rtype) != MPI_SUCCESS)
        return mpii_coll_fail(comm, MPI_ERR_TYPE, m->fname);
    if (scount < 0 || rcount < 0)
        return mpii_coll_fail(comm, MPI_ERR_COUNT, m->fname);
    int64_t n = rcount * dt_size(mpii_type_get(rtype));
    if (m->kind == MPII_CM_BLOCK && nb->mailbox_edges && n > 0 && mpii_comm_cgroup(c) &&
        neighbor_group_fits(c, alltoall, n)) {
        if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, m->fname);
        if (scount * dt_size(mpii_type_get(stype)) != n)
            return mpii_coll_fail(comm, MPI_ERR_TRUNCATE, m->fname);
        if ((rc = mpii_coll_check_buf(sbuf, scount, stype, 0)) ||
            (rc = mpii_coll_check_buf(rbuf, rcount, rtype, 0)))
            return mpii_coll_fail(comm, rc, m->fname);
        MPII_BUILD_RUN_WITH(
            c, comm, m, &kb, mpii_mailbox_new(c),
            neighbor_group(s, c, nb, alltoall, sbuf, scount, stype, rbuf, rcount, rtype, n));
    }
    neighbor_args_t a;
    if (neighbor_args_alloc(&a, nb))
        return mpii_coll_fail(comm, MPI_ERR_NO_MEM, m->fname);
    int64_t se = mpii_coll_ext(stype), re = mpii_coll_ext(rtype);
    for (int j = 0; j < nb->outdeg; j++) {
        a.sc[j] = scount;
        a.sd[j] = alltoall ? j * scount * se : 0;
        a.st[j] = stype;
    }
    for (int i = 0; i < nb->indeg; i++) {
        a.rc[i] = rcount;
        a.rd[i] = i * rcount * re;
        a.rt[i] = rtype;
    }
    return neighbor_run(c, comm, nb, sbuf, rbuf, &a, m, &kb, !alltoall);
}

/* The count and displacement arrays of the v and w forms, as given: int, MPI_Count or
 * MPI_Aint entries (a conversion reads entry i of whichever it is). */
typedef struct neighbor_array {
    const void *p;
    int width; /* 'i' int, 'c' MPI_Count, 'a' MPI_Aint */
} neighbor_array_t;

static inline int64_t neighbor_at(neighbor_array_t x, int i)
{
    return x.width == 'i'   ? ((const int *)x.p)[i]
           : x.width == 'c' ? (int64_t)((const MPI_Count *)x.p)[i]
                            : (int64_t)((const MPI_Aint *)x.p)[i];
}
#define NB_I(p) ((neighbor_array_t){(p), 'i'})
#define NB_C(p) ((neighbor_array_t){(p), 'c'})
#define NB_A(p) ((neighbor_array_t){(p), 'a'})

/* The v forms (allgatherv: scounts.p NULL, every out-neighbour gets scount x stype at
 * sbuf) and the w form (types arrays; displacements in bytes: the ext multipliers are
 * 1). stypes/rtypes NULL: stype/rtype for every neighbour. */
static int neighbor_general_entry(const void *sbuf, int64_t scount, neighbor_array_t scounts,
                                  neighbor_array_t sdispls, MPI_Datatype stype,
                                  const MPI_Datatype *stypes, void *rbuf, neighbor_array_t rcounts,
                                  neighbor_array_t rdispls, MPI_Datatype rtype,
                                  const MPI_Datatype *rtypes, MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c;
    const mpii_nbrs_t *nb;
    int rc = neighbor_enter(comm, m->fname, &c, &nb);
    if (rc)
        return rc;
    int w = stypes || rtypes;
    if ((nb->outdeg > 0 && scounts.p == NULL && w) || (nb->outdeg > 0 && w && !stypes) ||
        (nb->indeg > 0 && (!rcounts.p || !rdispls.p || (w && !rtypes))) ||
        (nb->outdeg > 0 && scounts.p && !sdispls.p))
        return mpii_coll_fail(comm, MPI_ERR_ARG, m->fname);
    if (!w &&
        (mpii_type_check_comm(rtype) != MPI_SUCCESS || mpii_type_check_comm(stype) != MPI_SUCCESS))
        return mpii_coll_fail(comm, MPI_ERR_TYPE, m->fname);
    for (int j = 0; w && j < nb->outdeg; j++)
        if (mpii_type_check_comm(stypes[j]) != MPI_SUCCESS)
            return mpii_coll_fail(comm, MPI_ERR_TYPE, m->fname);
    for (int i = 0; w && i < nb->indeg; i++)
        if (mpii_type_check_comm(rtypes[i]) != MPI_SUCCESS)
            return mpii_coll_fail(comm, MPI_ERR_TYPE, m->fname);
    neighbor_args_t a;
    if (neighbor_args_alloc(&a, nb))
        return mpii_coll_fail(comm, MPI_ERR_NO_MEM, m->fname);
    int64_t se = w ? 1 : mpii_coll_ext(stype), re = w ? 1 : mpii_coll_ext(rtype);
    for (int j = 0; j < nb->outdeg; j++) {
        a.sc[j] = scounts.p ? neighbor_at(scounts, j) : scount;
        a.sd[j] = scounts.p ? neighbor_at(sdispls, j) * se : 0;
        a.st[j] = w ? stypes[j] : stype;
    }
    for (int i = 0; i < nb->indeg; i++) {
        a.rc[i] = neighbor_at(rcounts, i);
        a.rd[i] = neighbor_at(rdispls, i) * re;
        a.rt[i] = w ? rtypes[i] : rtype;
    }
    return neighbor_run(c, comm, nb, sbuf, rbuf, &a, m, NULL, 0);
}

/* ------------------------------------------------------------------ entry points */

MPII_COLL_ENTRIES(Neighbor_allgather, Ineighbor_allgather, Neighbor_allgather_init,
                  neighbor_uniform_entry,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

MPII_COLL_ENTRIES(Neighbor_allgather_c, Ineighbor_allgather_c, Neighbor_allgather_init_c,
                  neighbor_uniform_entry,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

MPII_COLL_ENTRIES(Neighbor_allgatherv, Ineighbor_allgatherv, Neighbor_allgatherv_init,
                  neighbor_general_entry,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm),
                  (sendbuf, sendcount, NB_I(NULL), NB_I(NULL), sendtype, NULL, recvbuf,
                   NB_I(recvcounts), NB_I(displs), recvtype, NULL, comm))

MPII_COLL_ENTRIES(Neighbor_allgatherv_c, Ineighbor_allgatherv_c, Neighbor_allgatherv_init_c,
                  neighbor_general_entry,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   MPI_Comm comm),
                  (sendbuf, sendcount, NB_I(NULL), NB_I(NULL), sendtype, NULL, recvbuf,
                   NB_C(recvcounts), NB_A(displs), recvtype, NULL, comm))

MPII_COLL_ENTRIES(Neighbor_alltoall, Ineighbor_alltoall, Neighbor_alltoall_init,
                  neighbor_uniform_entry,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (1, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

MPII_COLL_ENTRIES(Neighbor_alltoall_c, Ineighbor_alltoall_c, Neighbor_alltoall_init_c,
                  neighbor_uniform_entry,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (1, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

MPII_COLL_ENTRIES(Neighbor_alltoallv, Ineighbor_alltoallv, Neighbor_alltoallv_init,
                  neighbor_general_entry,
                  (const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, 0, NB_I(sendcounts), NB_I(sdispls), sendtype, NULL, recvbuf,
                   NB_I(recvcounts), NB_I(rdispls), recvtype, NULL, comm))

MPII_COLL_ENTRIES(Neighbor_alltoallv_c, Ineighbor_alltoallv_c, Neighbor_alltoallv_init_c,
                  neighbor_general_entry,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, 0, NB_C(sendcounts), NB_A(sdispls), sendtype, NULL, recvbuf,
                   NB_C(recvcounts), NB_A(rdispls), recvtype, NULL, comm))

MPII_COLL_ENTRIES(Neighbor_alltoallw, Ineighbor_alltoallw, Neighbor_alltoallw_init,
                  neighbor_general_entry,
                  (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
                  (sendbuf, 0, NB_I(sendcounts), NB_A(sdispls), MPI_DATATYPE_NULL, sendtypes,
                   recvbuf, NB_I(recvcounts), NB_A(rdispls), MPI_DATATYPE_NULL, recvtypes, comm))

MPII_COLL_ENTRIES(Neighbor_alltoallw_c, Ineighbor_alltoallw_c, Neighbor_alltoallw_init_c,
                  neighbor_general_entry,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
                  (sendbuf, 0, NB_C(sendcounts), NB_A(sdispls), MPI_DATATYPE_NULL, sendtypes,
                   recvbuf, NB_C(recvcounts), NB_A(rdispls), MPI_DATATYPE_NULL, recvtypes, comm))
