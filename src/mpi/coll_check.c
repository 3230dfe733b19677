/* coll_check.c — the argument checks every collective entry shares: a (buffer, count,
 * type) triple, the per-process counts of a v-collective, the root, a reduction's count,
 * type and op, and aliasing between a send and a receive buffer; each failed check
 * records what it found (the argument and its value) for the error that mpii_coll_fail
 * raises.
 *
 * Aliasing is checked on every rank for its own buffers, so that an erroneous call that
 * every rank makes (a send block inside the receive buffer, as in MPICH's errors/coll
 * noalias tests) fails everywhere instead of failing on one rank while the others wait
 * for it. The test must never reject a correct program: byte ranges are compared exactly
 * when both sides are contiguous; when either side has holes (a vector type interleaving
 * with the other side is legal), only equal start addresses count as aliasing. */
#include <stdarg.h>
#include <stdio.h>

#include "mpi/coll_impl.h"

static _Thread_local char why_text[160]; /* the thread's why (coll_impl.h), or "" */
static _Thread_local int why_class;      /* the class it explains */

/* Records why a check failed and returns its class. */
static int why(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why(int rc, const char *fmt, ...)
{
    why_class = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why_text, sizeof why_text, fmt, ap);
    va_end(ap);
    return rc;
}

/* A count and a datatype argument: MPI_ERR_COUNT or MPI_ERR_TYPE (with the why), or 0. */
static int check_count_type(int64_t count, MPI_Datatype type)
{
    if (BASE_UNLIKELY(count < 0))
        return why(MPI_ERR_COUNT, "count %lld < 0", (long long)count);
    if (BASE_UNLIKELY(mpii_type_check_comm(type) != MPI_SUCCESS))
        return why(MPI_ERR_TYPE, "datatype %#x is not a valid committed datatype", (unsigned)type);
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
void mpii_coll_why_clear(void)
{
    why_text[0] = 0;
}

/* Contract: coll_impl.h. */
int mpii_coll_fail(MPI_Comm comm, int rc, const char *fname)
{
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (!why_text[0] || why_class != rc) {
        why_text[0] = 0;
        return MPII_ERR_COMM(comm, rc, fname);
    }
    char detail[sizeof why_text];
    memcpy(detail, why_text, sizeof detail);
    why_text[0] = 0;
    return MPII_ERRF_COMM(comm, rc, fname, "%s", detail);
}

/* Contract: coll_impl.h. */
int mpii_coll_check_root(int root, int size)
{
    if (BASE_LIKELY(root >= 0 && root < size))
        return MPI_SUCCESS;
    return why(MPI_ERR_ROOT, "root %d is not in 0..%d", root, size - 1);
}

/* Contract: coll_impl.h. */
int mpii_coll_check_op(int64_t count, MPI_Datatype type, MPI_Op op)
{
    int rc = check_count_type(count, type);
    if (rc)
        return rc;
    if (!mpii_op_get(op) || op == MPI_REPLACE || op == MPI_NO_OP)
        return why(MPI_ERR_OP, "op %#x is not a reduction operation", (unsigned)op);
    rc = mpii_op_apply(op, NULL, NULL, 0, type);
    return rc ? why(rc, "op %#x is not defined for datatype %#x", (unsigned)op, (unsigned)type)
              : MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_coll_check_buf(const void *buf, int64_t count, MPI_Datatype type, int in_place_ok)
{
    int rc = check_count_type(count, type);
    if (BASE_UNLIKELY(rc))
        return rc;
    if (buf == MPI_IN_PLACE)
        return in_place_ok ? MPI_SUCCESS
                           : why(MPI_ERR_BUFFER, "MPI_IN_PLACE where this call takes none");
    dt_t *dt = mpii_type_get(type);
    if (BASE_UNLIKELY(!buf && count > 0 && FMPL_MPI_DT_IS_PREDEF(type) && dt_size(dt) > 0))
        return why(MPI_ERR_BUFFER, "buffer NULL with count %lld", (long long)count);
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_coll_check_counts(const int64_t *counts, const int64_t *displs, int n)
{
    if (!counts || !displs)
        return why(MPI_ERR_ARG, "%s array NULL", counts ? "displacements" : "counts");
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return why(MPI_ERR_COUNT, "counts[%d] = %lld < 0", i, (long long)counts[i]);
    return MPI_SUCCESS;
}

/* The bytes [lo, hi) that count elements of t at buf touch; dense: every byte of the
 * range is data. Empty (lo == hi) when nothing is touched. */
typedef struct byte_range {
    uintptr_t lo, hi;
    int dense;
} byte_range_t;

static byte_range_t byte_range(const void *buf, int64_t count, MPI_Datatype type)
{
    byte_range_t r = {0, 0, 1};
    dt_t *t = mpii_type_get(type);
    if (!buf || buf == MPI_IN_PLACE || count <= 0 || !t || dt_size(t) == 0)
        return r;
    int64_t ext = dt_extent(t), first = dt_true_lb(t);
    int64_t last = first + (count - 1) * ext; /* the last element's true lb */
    r.lo = (uintptr_t)buf + (uintptr_t)BASE_MIN(first, last);
    r.hi = (uintptr_t)buf + (uintptr_t)BASE_MAX(first, last) + (uintptr_t)dt_true_extent(t);
    r.dense = dt_is_contig(t, count);
    return r;
}

/* Contract: coll_impl.h. */
int mpii_coll_alias(const void *a, int64_t acount, MPI_Datatype atype, const void *b,
                    int64_t bcount, MPI_Datatype btype)
{
    byte_range_t x = byte_range(a, acount, atype), y = byte_range(b, bcount, btype);
    if (x.lo == x.hi || y.lo == y.hi || x.hi <= y.lo || y.hi <= x.lo)
        return 0;
    if (!(x.dense && y.dense) && x.lo != y.lo)
        return 0;
    why(MPI_ERR_BUFFER, "buffers %p and %p share memory (a send and a receive buffer must not)", a,
        b);
    return 1;
}

/* Contract: coll_impl.h. */
int mpii_coll_alias_blocks(const void *a, int64_t acount, MPI_Datatype atype, const void *base,
                           const int64_t *counts, const int64_t *displs, MPI_Datatype btype, int n)
{
    int64_t ext = dt_extent(mpii_type_get(btype));
    if (!base || base == MPI_IN_PLACE)
        return 0;
    for (int i = 0; i < n; i++)
        if (mpii_coll_alias(a, acount, atype, (const char *)base + displs[i] * ext, counts[i],
                            btype))
            return 1;
    return 0;
}
