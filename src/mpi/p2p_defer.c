/* p2p_defer.c — deferred sends: a nonblocking send whose receiver has no room waits
 * here instead of blocking its caller.
 *
 * Seed 002 bounds receive memory: a sender takes room in the receiver's inbox before
 * writing (shm: tickets against SendCNT/RecvCNT; udp: send slots freed by the peer's
 * acknowledgements). When there is none, vnic_send_am waits, progressing, until the
 * receiver drains its inbox, which a computing receiver does only at its next MPI call.
 * MPI_Isend must not wait for that (MPI-4.0 3.7: "the send start call is local"), so a
 * send with may_defer (the user's nonblocking and persistent sends) tries once
 * (vnic_send_am_try) and otherwise joins this queue. The data stays in the sender's
 * buffer, which the application may not touch until the request completes.
 *
 * Order. MPI's non-overtaking rule holds per receiver: once a send to world rank w is
 * deferred, every later send to w is deferred too (may_defer) or first waits until the
 * queue holds nothing for w (blocking sends, the library's own). The progress hook
 * (mpii_defer_work) walks the queue in posting order and skips, for the rest of a walk,
 * a receiver that had no room: later sends to it stay behind the one that did not go.
 * A deferred send counts in mpii_sends_pending, so MPI_Finalize waits for it, and a
 * user's MPI_Request_free leaves it to complete on its own. MPI_Cancel takes it out of
 * the queue unsent (mpii_defer_remove). */
#include <stdlib.h>

#include "mpi/p2p_impl.h"

typedef struct defer_peer {
    uint32_t count; /* deferred sends to this world rank */
    uint32_t walk;  /* the walk of mpii_defer_work that found no room at it */
} defer_peer_t;

static struct {
    mpii_link_t queue; /* deferred sends, in posting order (through r->link) */
    int up;
    defer_peer_t *peers; /* by world rank, grown on demand */
    int npeers;
    int waiting; /* world ranks with deferred sends: a walk ends once all had no room */
    uint32_t walk;
} defer;

uint32_t mpii_defer_total;

uint32_t mpii_defer_count_of(int world)
{
    return world >= 0 && world < defer.npeers ? defer.peers[world].count : 0;
}

static defer_peer_t *defer_peer(int world)
{
    if (world >= defer.npeers) {
        int n = BASE_MAX(world + 1, BASE_MAX(2 * defer.npeers, 64));
        defer_peer_t *p = realloc(defer.peers, (size_t)n * sizeof *p);
        if (!p)
            base_fatal("mpi: out of memory for the deferred-send table (%d peers)", n);
        for (int i = defer.npeers; i < n; i++)
            p[i] = (defer_peer_t){0, 0};
        defer.peers = p;
        defer.npeers = n;
    }
    return &defer.peers[world];
}

/* Puts r into the queue before `before`. */
static void defer_insert(mpii_req_t *r, mpii_link_t *before)
{
    if (defer_peer(r->peer_world)->count++ == 0)
        defer.waiting++;
    mpii_defer_total++;
    mpii_sends_pending++;
    r->deferred = 1;
    mpii_list_push(before, &r->link);
}

void mpii_defer_add(mpii_req_t *r)
{
    if (!defer.up) {
        mpii_list_init(&defer.queue);
        defer.up = 1;
    }
    defer_insert(r, &defer.queue);
    mpii_p2p_hook_arm();
}

void mpii_defer_remove(mpii_req_t *r)
{
    mpii_list_del(&r->link);
    r->deferred = 0;
    if (--defer.peers[r->peer_world].count == 0)
        defer.waiting--;
    mpii_defer_total--;
    mpii_sends_pending--;
}

static int defer_drained(void *arg)
{
    return mpii_defer_count_of(*(const int *)arg) == 0;
}

void mpii_defer_drain(int world)
{
    vnic_wait(mpii.vnic, defer_drained, &world, -1);
}

int mpii_defer_work(void)
{
    if (!mpii_defer_total)
        return 0;
    int sent = 0, full = 0; /* receivers found without room in this walk */
    uint32_t walk = ++defer.walk;
    mpii_link_t *e = defer.queue.next;
    while (e != &defer.queue && full < defer.waiting) {
        mpii_req_t *r = MPII_CONTAINER(e, mpii_req_t, link);
        mpii_link_t *prev = e->prev;
        e = e->next;
        int world = r->peer_world;
        if (defer.peers[world].walk == walk)
            continue; /* no room there: the later sends to it stay behind */
        /* Out of the queue before sending (an eager send completes in mpii_send_post),
         * and kept alive until this walk is done with it, even if the user freed it. */
        mpii_defer_remove(r);
        uint8_t user_freed = r->user_freed;
        r->user_freed = 0;
        int rc = mpii_send_post(r, 1);
        if (rc == MPII_AGAIN) {
            r->user_freed = user_freed;
            defer_insert(r, prev->next); /* back in its place */
            defer.peers[world].walk = walk;
            full++;
            continue;
        }
        sent++;
        if (rc != MPI_SUCCESS) { /* the error is the request's (a rendezvous one is done) */
            r->err = rc;
            if (!r->done)
                mpii_req_done(r);
        }
        if (user_freed) {
            r->user_freed = 1;
            if (r->done)
                mpii_req_free(r);
        }
    }
    return sent;
}

void mpii_defer_finalize(void)
{
    free(defer.peers);
    defer.peers = NULL;
    defer.npeers = 0;
    defer.up = 0;
}
