/* coll_watch.c — the watch on blocking collective runs (contract: coll_impl.h, "The
 * watch on a blocking run"): members that took different carriers for one call. */
#include "mpi/coll_impl.h"

void mpii_coll_watch_start(mpii_coll_watch_t *w, mpii_comm_t *c, int tag, int mailbox)
{
    *w = (mpii_coll_watch_t){0};
    if (!c->cgroup || c->rgroup)
        return; /* one carrier only: nothing to tell apart */
    w->c = c;
    w->tag = tag;
    w->path = mailbox ? COLL_PATH_MAILBOX : COLL_PATH_OTHER;
    coll_path_note(c->cgroup, tag, w->path);
}

int mpii_coll_watch_late(mpii_coll_watch_t *w)
{
    uint64_t now = base_time_ns();
    if (!w->since)
        w->since = now;
    return now - w->since >= MPII_WATCH_NS;
}

static const char *path_name(int path)
{
    return path == COLL_PATH_MAILBOX ? "the shared mailboxes" : "point-to-point messages";
}

void mpii_coll_watch_failed(const mpii_coll_watch_t *w)
{
    if (w->c)
        coll_path_note(w->c->cgroup, w->tag, COLL_PATH_FAILED);
}

void mpii_coll_watch_check(mpii_coll_watch_t *w, const char *fname)
{
    mpii_comm_t *c = w->c;
    int failed = -1; /* a member whose run failed */
    for (int m = 0; m < c->size; m++) {
        int path = m == c->rank ? 0 : coll_path_of(c->cgroup, m, w->tag);
        if (path == COLL_PATH_FAILED && failed < 0)
            failed = m;
        if (path && path != COLL_PATH_FAILED && path != w->path)
            mpii_err_abort(MPI_ERR_COUNT, fname,
                           "rank %d of the communicator runs this call over %s and rank %d "
                           "over %s: their count and datatype arguments give different "
                           "sizes. Neither carrier sees the other's messages, and the ranks "
                           "cannot be put back in step, so the job ends here "
                           "(FMPL_MPI_CHECK=1 makes such a call fail at its start with the "
                           "sizes named)",
                           c->rank, path_name(w->path), m, path_name(path));
    }
    if (failed >= 0 && ++w->failed_seen >= MPII_WATCH_FAILED_CHECKS)
        mpii_err_abort(MPI_ERR_COUNT, fname,
                       "rank %d of the communicator failed this call (its ranks disagree on "
                       "it), and rank %d waits for a message that its failure left unsent: "
                       "the job ends here although the error handler returns errors "
                       "(FMPL_MPI_CHECK=1 makes such a call fail at its start on every rank)",
                       failed, c->rank);
    w->since = 0;
}
