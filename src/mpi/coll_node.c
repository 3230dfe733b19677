/* coll_node.c — node-aware collectives for intracommunicators whose members live on more
 * than one node (host): Barrier, Bcast, Reduce, Allreduce, Allgather(v), built as
 * schedules over the point-to-point engine like the flat ones (coll_impl.h), in all
 * three forms (blocking, nonblocking, persistent). Contract: coll_impl.h, "node-aware
 * collectives".
 *
 * Shape: every node has one leader among the communicator's members on it (the member
 * with the lowest rank; for a rooted call the root on the root's node). The intra-node
 * steps run between the members of a node (shared memory: the shm transport), the
 * inter-node step among the leaders only (the udp transport between hosts):
 *   barrier:   binomial fan-in to the leader, dissemination among the leaders, binomial
 *              fan-out (L * ceil(log2 L) inter-node messages for L nodes);
 *   bcast:     binomial tree among the leaders from the root, then a binomial tree inside
 *              each node from its leader (L - 1 inter-node messages);
 *   reduce:    binomial reduce inside each node to its leader, then among the leaders to
 *              the root (L - 1 inter-node messages; one more for a non-commutative op
 *              whose root is not on the node of rank 0: the leaders' result is formed at
 *              rank 0 and forwarded);
 *   allreduce: binomial reduce inside each node to its leader, the flat allreduce's
 *              algorithm among the leaders (mpii_build_allreduce_list: recursive doubling
 *              with the pairing fold, 2 (L - p2) + p2 log2 p2 inter-node messages, p2
 *              the largest power of two <= L; Rabenseifner for large commutative ones),
 *              binomial bcast inside each node;
 *   allgatherv: every member sends its block to its leader (into a packed stream: the
 *              nodes in order, each node's members in rank order), the leaders send
 *              their node's part to every other leader in one round, each leader bcasts
 *              the whole stream inside its node, every member unpacks it
 *              (L (L - 1) inter-node messages).
 * Non-commutative ops need their operands combined in rank order: that holds when every
 * node's members are consecutive ranks (the leaders, in node order, then hold the
 * partial results of consecutive rank ranges); on other layouts the entries keep the
 * flat algorithms for them (mpii_node_aware). Messages carry the caller's count x type, so
 * derived types and MPI_IN_PLACE work as in the flat builders; temporaries have the
 * type's own layout (mpii_sched_tmp).
 *
 * The node map of a communicator (which member is on which node) comes from the vnic
 * (vnic_nodes: boot's map of the job's ranks) through the group's world ranks; it is
 * computed at the first collective and kept in c->cnode.
 *
 * Why here and not in src/coll: these schedules address any peer over point-to-point,
 * while a coll group's mailboxes join members 2^k apart only (the leaders are arbitrary
 * ranks). Not node-aware (flat on every layout): gather, scatter, alltoall, the scans,
 * reduce_scatter, the native API's collectives (coll_gsched.c) and the local phases of
 * intercommunicators. Waiting: a member that waits for its leader's intra-node message
 * while the leaders talk udp sleeps, after FMPL_SPIN_US, in ppoll on its socket, which a
 * shm delivery does not interrupt (vnic.c); so a leaders' step longer than FMPL_SPIN_US
 * costs the members up to FMPL_SLEEP_US more. */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

/* The node map of a communicator. Nodes are numbered in the order of their lowest
 * member rank; members[first[k] .. first[k+1]) are node k's ranks, ascending. */
struct mpii_cnode {
    int nnodes;   /* nodes among the members; 1: the flat algorithms apply */
    int contig;   /* 1: every node's members are consecutive ranks */
    int *node_of; /* [size] node of each rank */
    int *idx_of;  /* [size] index of each rank among its node's members */
    int *first;   /* [nnodes + 1] */
    int *members; /* [size] */
};

/* The map of every communicator that lives on one node (nothing to free). */
mpii_cnode_t mpii_node_single = {.nnodes = 1, .contig = 1};

/* FMPL_MPI_NODE_AWARE: 0 never, 1 where the mailboxes do not serve the call, 2 always;
 * -1 until read. */
static int node_aware_mode = -1;

/* Contract: mpi_impl.h. */
void mpii_node_free(mpii_comm_t *c)
{
    if (c->cnode && c->cnode != &mpii_node_single) {
        free(c->cnode->node_of);
        free(c->cnode);
    }
    c->cnode = NULL;
}

/* Computes c's node map into c->cnode. MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int node_map_build(mpii_comm_t *c)
{
    const boot_nodes_t *vn = vnic_nodes(mpii.vnic);
    int other_jobs = 0; /* processes of another job (dpm.c) have no node of ours */
    for (int r = 0; r < c->size && vn && vn->nnodes > 1; r++)
        other_jobs |= c->group->world[r] >= mpii.world_size;
    if (!vn || vn->nnodes <= 1 || other_jobs) {
        c->cnode = &mpii_node_single;
        return MPI_SUCCESS;
    }
    int p = c->size, nn = 0;
    int *map = malloc((size_t)vn->nnodes * sizeof *map);
    mpii_cnode_t *n = calloc(1, sizeof *n);
    /* node_of, idx_of, members (p each) and first (up to p + 1) in one block */
    int *a = malloc((4 * (size_t)p + 1) * sizeof *a);
    if (!map || !n || !a) {
        free(map);
        free(n);
        free(a);
        return MPI_ERR_NO_MEM;
    }
    for (int w = 0; w < vn->nnodes; w++)
        map[w] = -1;
    n->node_of = a;
    n->idx_of = a + p;
    n->members = a + 2 * p;
    n->first = a + 3 * p;
    n->contig = 1;
    for (int r = 0; r < p; r++) {
        int w = vn->node_of[c->group->world[r]];
        if (map[w] < 0)
            map[w] = nn++;
        else if (n->node_of[r - 1] != map[w])
            n->contig = 0; /* a node seen before, not the previous rank's */
        n->node_of[r] = map[w];
    }
    free(map);
    n->nnodes = nn;
    if (nn == 1) {
        free(a);
        free(n);
        c->cnode = &mpii_node_single;
        return MPI_SUCCESS;
    }
    /* counting sort by node; ranks stay ascending inside a node */
    for (int k = 0; k <= nn; k++)
        n->first[k] = 0;
    for (int r = 0; r < p; r++)
        n->first[n->node_of[r] + 1]++;
    for (int k = 0; k < nn; k++)
        n->first[k + 1] += n->first[k];
    int *fill = malloc((size_t)nn * sizeof *fill);
    if (!fill) {
        free(a);
        free(n);
        return MPI_ERR_NO_MEM;
    }
    memcpy(fill, n->first, (size_t)nn * sizeof *fill);
    for (int r = 0; r < p; r++) {
        int k = n->node_of[r];
        n->idx_of[r] = fill[k] - n->first[k];
        n->members[fill[k]++] = r;
    }
    free(fill);
    c->cnode = n;
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_node_aware_map(mpii_comm_t *c, MPI_Op op, int before_mailbox)
{
    if (c->rgroup)
        return 0;
    if (BASE_UNLIKELY(!c->cnode)) {
        if (node_aware_mode < 0)
            node_aware_mode = (int)base_env_int(
                "FMPL_MPI_NODE_AWARE", 1, 0, 2,
                "MPI collectives on communicators spanning several nodes: 0 flat, 1 node-aware "
                "unless on the communicator's mailboxes, 2 node-aware always");
        if (node_map_build(c) != MPI_SUCCESS)
            return -1;
    }
    const mpii_cnode_t *n = c->cnode;
    if (n->nnodes <= 1 || node_aware_mode < (before_mailbox ? 2 : 1))
        return 0;
    return op == MPI_OP_NULL || n->contig || mpii_op_get(op)->commute;
}

/* ------------------------------------------------------------------ steps over a list
 * The helpers below run an algorithm among the n ranks rk[0..n) of the communicator
 * (a node's members, or the leaders), me being this process's index in rk. */

/* Binomial bcast of count x type at buf from index ri; empty messages move too. */
static void list_bcast(coll_sched_t *s, const int *rk, int n, int me, int ri, void *buf,
                       int64_t count, MPI_Datatype type)
{
    mpii_algo_t m;
    coll_algo_bcast_binomial(mpii_sched_algo(&m, s, rk, n, me, type, MPI_OP_NULL), buf, count, ri);
}

/* Binomial fan-in of empty messages to index 0: returns once every index of the subtree
 * arrived (the send to the parent is the last step). */
static void list_fanin(coll_sched_t *s, const int *rk, int n, int me)
{
    for (int mask = 1; mask < n && !(me & mask); mask <<= 1)
        if (me + mask < n)
            mpii_sched_recv(s, NULL, 0, MPI_BYTE, rk[me + mask]);
    mpii_sched_fence(s);
    if (me)
        mpii_sched_send(s, NULL, 0, MPI_BYTE, rk[me - (me & -me)]);
}

/* Dissemination barrier. */
static void list_barrier(coll_sched_t *s, const int *rk, int n, int me)
{
    mpii_algo_t m;
    coll_algo_barrier_dissemination(mpii_sched_algo(&m, s, rk, n, me, MPI_BYTE, MPI_OP_NULL), 0);
}

/* ------------------------------------------------------------------ the collectives */

/* This rank's node's members: *rk, its count *n, this rank's index *me. */
static void node_members(const mpii_comm_t *c, const int **rk, int *n, int *me)
{
    const mpii_cnode_t *m = c->cnode;
    int k = m->node_of[c->rank];
    *rk = m->members + m->first[k];
    *n = m->first[k + 1] - m->first[k];
    *me = m->idx_of[c->rank];
}

/* The leaders, one per node in node order: the root on the root's node (root >= 0), the
 * lowest rank elsewhere. NULL: out of memory (the caller frees the array). */
static int *node_leaders(const mpii_comm_t *c, int root)
{
    const mpii_cnode_t *m = c->cnode;
    int *l = malloc((size_t)m->nnodes * sizeof *l);
    for (int k = 0; l && k < m->nnodes; k++)
        l[k] = m->members[m->first[k]];
    if (l && root >= 0)
        l[m->node_of[root]] = root;
    return l;
}

/* Contract: coll_impl.h. */
int mpii_node_barrier(coll_sched_t *s, mpii_comm_t *c)
{
    const mpii_cnode_t *m = c->cnode;
    const int *rk;
    int n, me;
    node_members(c, &rk, &n, &me);
    list_fanin(s, rk, n, me);
    if (me == 0) { /* a leader: its node arrived */
        int *l = node_leaders(c, -1);
        if (!l)
            return MPI_ERR_NO_MEM;
        mpii_sched_fence(s);
        list_barrier(s, l, m->nnodes, m->node_of[c->rank]);
        free(l);
    } /* others wait for the fan-out in the round of their fan-in send */
    list_bcast(s, rk, n, me, 0, NULL, 0, MPI_BYTE);
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_node_bcast(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type,
                    int root)
{
    mpii_coll_note(MPII_TOOL_COLL(MPII_CK_BCAST), MPII_ALG_NODE_AWARE);
    if (count == 0)
        return MPI_SUCCESS;
    const mpii_cnode_t *m = c->cnode;
    const int *rk;
    int n, me, rn = m->node_of[root], mynode = m->node_of[c->rank];
    node_members(c, &rk, &n, &me);
    int li = mynode == rn ? m->idx_of[root] : 0; /* my node's leader, as an index in rk */
    if (me == li) {
        int *l = node_leaders(c, root);
        if (!l)
            return MPI_ERR_NO_MEM;
        list_bcast(s, l, m->nnodes, mynode, rn, buf, count, type);
        free(l);
    }
    list_bcast(s, rk, n, me, li, buf, count, type);
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_node_reduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                     MPI_Datatype type, MPI_Op op, int root)
{
    int r = c->rank;
    if (count == 0) {
        if (sbuf != rbuf && r == root)
            mpii_sched_copy(s, sbuf, count, type, rbuf, count, type);
        return MPI_SUCCESS;
    }
    const mpii_cnode_t *m = c->cnode;
    const int *rk;
    int n, me, rn = m->node_of[root], mynode = m->node_of[r];
    node_members(c, &rk, &n, &me);
    int li = mynode == rn ? m->idx_of[root] : 0;
    /* the node's partial result: in rbuf at the root, a temporary at other leaders */
    void *part = r == root ? rbuf : me == li ? mpii_sched_tmp(s, type, count) : NULL;
    mpii_build_reduce_list(s, rk, n, me, li, sbuf, part, count, type, op);
    if (me == li) {
        int *l = node_leaders(c, root);
        if (!l)
            return MPI_ERR_NO_MEM;
        mpii_sched_fence(s);
        mpii_build_reduce_list(s, l, m->nnodes, mynode, rn, part, rbuf, count, type, op);
        free(l);
    }
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_node_allreduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                        int64_t count, MPI_Datatype type, MPI_Op op)
{
    mpii_coll_note(MPII_TOOL_COLL(MPII_CK_ALLREDUCE), MPII_ALG_NODE_AWARE);
    if (count == 0)
        return MPI_SUCCESS;
    const mpii_cnode_t *m = c->cnode;
    const int *rk;
    int n, me;
    node_members(c, &rk, &n, &me);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    mpii_build_reduce_list(s, rk, n, me, 0, in, rbuf, count, type, op);
    mpii_sched_fence(s);
    if (me == 0) {
        int *l = node_leaders(c, -1);
        if (!l)
            return MPI_ERR_NO_MEM;
        mpii_build_allreduce_list(s, l, m->nnodes, m->node_of[c->rank], rbuf,
                                  mpii_sched_tmp(s, type, count), count, type, op);
        free(l);
        mpii_sched_fence(s);
    }
    list_bcast(s, rk, n, me, 0, rbuf, count, type);
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_node_allgatherv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                         MPI_Datatype stype, void *rbuf, const int64_t *counts,
                         const int64_t *displs, MPI_Datatype rtype)
{
    const mpii_cnode_t *m = c->cnode;
    int p = c->size, r = c->rank, mynode = m->node_of[r];
    int64_t ext = mpii_coll_ext(rtype), esize = dt_size(mpii_type_get(rtype));
    char *rb = rbuf;
    /* The packed stream: the nodes in order, each its members' blocks in rank order. */
    int64_t *off = malloc(((size_t)p + (size_t)m->nnodes + 1) * sizeof *off);
    int *l = node_leaders(c, -1);
    if (!off || !l) {
        free(off);
        free(l);
        return MPI_ERR_NO_MEM;
    }
    int64_t *noff = off + p, total = 0; /* noff[k]: node k's start; noff[nnodes]: total */
    for (int k = 0; k < m->nnodes; k++) {
        noff[k] = total;
        for (int i = m->first[k]; i < m->first[k + 1]; i++) {
            off[m->members[i]] = total;
            total += counts[m->members[i]] * esize;
        }
    }
    noff[m->nnodes] = total;
    const void *mine = sbuf == MPI_IN_PLACE ? rb + displs[r] * ext : sbuf;
    int64_t mcount = sbuf == MPI_IN_PLACE ? counts[r] : scount;
    MPI_Datatype mtype = sbuf == MPI_IN_PLACE ? rtype : stype;
    if (sbuf != MPI_IN_PLACE)
        mpii_sched_copy(s, sbuf, scount, stype, rb + displs[r] * ext, counts[r], rtype);
    /* direct: this rank's receive layout is the packed stream itself (a contiguous type,
     * the blocks one after the other in node order: allgather on nodes of consecutive
     * ranks), so the stream moves in rbuf, without packing or unpacking. A local choice:
     * the messages are the same either way. */
    dt_t *rt = mpii_type_get(rtype);
    int direct = ext == esize && dt_is_contig(rt, total / (esize ? esize : 1));
    for (int q = 0; direct && q < p; q++)
        direct = displs[q] * ext == off[q];
    char *full = direct ? rb + dt_true_lb(rt) : mpii_sched_bytes(s, total);
    if (!full) {
        free(off);
        free(l);
        return MPI_ERR_NO_MEM;
    }
    const int *rk;
    int n, me;
    node_members(c, &rk, &n, &me);
    if (me == 0) { /* the leader: its node's blocks, then the other nodes' */
        if (!direct)
            mpii_sched_copy(s, mine, mcount, mtype, full + off[r], counts[r] * esize, MPI_BYTE);
        for (int i = 1; i < n; i++)
            mpii_sched_recv(s, full + off[rk[i]], counts[rk[i]] * esize, MPI_BYTE, rk[i]);
        mpii_sched_fence(s);
        for (int k = 0; k < m->nnodes; k++)
            if (k != mynode)
                mpii_sched_recv(s, full + noff[k], noff[k + 1] - noff[k], MPI_BYTE, l[k]);
        for (int k = 0; k < m->nnodes; k++)
            if (k != mynode)
                mpii_sched_send(s, full + noff[mynode], noff[mynode + 1] - noff[mynode], MPI_BYTE,
                                l[k]);
        mpii_sched_fence(s);
    } else {
        mpii_sched_send(s, mine, mcount, mtype, rk[0]);
        if (direct)
            mpii_sched_fence(s); /* mine may lie in the stream the bcast overwrites */
    }
    list_bcast(s, rk, n, me, 0, full, total, MPI_BYTE);
    mpii_sched_fence(s);
    for (int q = 0; !direct && q < p; q++)
        if (q != r)
            mpii_sched_copy(s, full + off[q], counts[q] * esize, MPI_BYTE, rb + displs[q] * ext,
                            counts[q], rtype);
    free(off);
    free(l);
    return MPI_SUCCESS;
}
