/* group.c — MPI groups (MPI-4.0 section 7.3): refcounted mpii_group_t objects holding
 * the world rank of each member, the group constructors and accessors.
 *
 * A group object may be referenced by several handles (each MPI_Comm_group call makes
 * a new handle) and by communicators; every handle and every communicator holds one
 * reference. MPI_GROUP_EMPTY is a static object at index 1 that is never freed;
 * constructors that produce an empty group return MPI_GROUP_EMPTY. Since every member
 * is a process of MPI_COMM_WORLD (no spawn), set operations use an inverse map indexed
 * by world rank: O(size) per call. */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

mpii_group_t mpii_group_empty = {.refs = 1, .size = 0, .rank = MPI_UNDEFINED, .world = NULL};

mpii_group_t *mpii_group_new(int size)
{
    if (size == 0) {
        mpii_group_empty.refs++;
        return &mpii_group_empty;
    }
    mpii_group_t *g = malloc(sizeof *g + (size_t)size * sizeof(int));
    if (!g)
        return NULL;
    g->refs = 1;
    g->size = size;
    g->rank = MPI_UNDEFINED;
    g->world = (int *)(g + 1);
    return g;
}

void mpii_group_finish(mpii_group_t *g)
{
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == mpii.world_rank) {
            g->rank = i;
            break;
        }
}

void mpii_group_release(mpii_group_t *g)
{
    if (!g || --g->refs > 0)
        return;
    if (g == &mpii_group_empty) {
        g->refs = 1; /* never freed */
        return;
    }
    free(g);
}

mpii_group_t *mpii_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &mpii_group_empty;
    return (mpii_group_t *)mpii_handle_get(FMPL_MPI_KIND_GROUP, h);
}

int mpii_group_handle(mpii_group_t *g, MPI_Group *out)
{
    if (g == &mpii_group_empty) {
        mpii_group_release(g);
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int h = mpii_handle_new(FMPL_MPI_KIND_GROUP, g);
    if (h == MPI_GROUP_NULL) {
        mpii_group_release(g);
        *out = MPI_GROUP_NULL;
        return MPI_ERR_NO_MEM;
    }
    *out = h;
    return MPI_SUCCESS;
}

/* inv[world rank] = rank in g + 1 (0: not a member); NULL when out of memory. */
static int *group_inverse(const mpii_group_t *g)
{
    int *inv = calloc((size_t)mpii_peer_bound(), sizeof *inv);
    if (!inv)
        return NULL;
    for (int i = 0; i < g->size; i++)
        inv[g->world[i]] = i + 1;
    return inv;
}

/* Finishes a constructor: g (already filled, or NULL: out of memory) becomes *newgroup. */
static int group_out(mpii_group_t *g, MPI_Group *newgroup, const char *fname)
{
    if (!g)
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    mpii_group_finish(g);
    int rc = mpii_group_handle(g, newgroup);
    return rc == MPI_SUCCESS ? rc : MPII_ERR(rc, fname);
}

/* Group argument arg = h of fn: the group, or NULL with MPI_ERR_GROUP raised (*rc its
 * code). */
static mpii_group_t *group_arg(MPI_Group h, const char *arg, const char *fn, int *rc)
{
    mpii_group_t *g = mpii_group_get(h);
    if (!g)
        *rc = mpii_err_handle(0, 0, MPI_ERR_GROUP, fn, arg, h);
    return g;
}

/* g: group argument group of fn, or return the error. */
#define GET_GROUP(g, group, arg, fn)                                                               \
    int rc_##g;                                                                                    \
    mpii_group_t *g = group_arg(group, arg, fn, &rc_##g);                                          \
    if (!g)                                                                                        \
    return rc_##g

int PMPI_Group_size(MPI_Group group, int *size)
{
    MPII_CHECK_INIT("MPI_Group_size");
    GET_GROUP(g, group, "group", "MPI_Group_size");
    if (!size)
        return MPII_ERR_NULL(MPI_COMM_NULL, "size", "MPI_Group_size");
    *size = g->size;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Group_size, PMPI_Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    MPII_CHECK_INIT("MPI_Group_rank");
    GET_GROUP(g, group, "group", "MPI_Group_rank");
    if (!rank)
        return MPII_ERR_NULL(MPI_COMM_NULL, "rank", "MPI_Group_rank");
    *rank = g->rank;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Group_rank, PMPI_Group_rank)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    MPII_CHECK_INIT(fn);
    GET_GROUP(g1, group1, "group1", fn);
    GET_GROUP(g2, group2, "group2", fn);
    if (n < 0)
        return MPII_ERRF(MPI_ERR_ARG, fn, "n %d < 0", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return MPII_ERRF(MPI_ERR_ARG, fn, "%s NULL with n %d", ranks1 ? "ranks2" : "ranks1", n);
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return MPII_ERRF(MPI_ERR_RANK, fn,
                             "ranks1[%d] = %d is not in 0..%d (group1) or MPI_PROC_NULL", i,
                             ranks1[i], g1->size - 1);
    if (n == 0)
        return MPI_SUCCESS;
    int *inv = group_inverse(g2);
    if (!inv)
        return MPII_ERR(MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = inv[g1->world[ranks1[i]]];
        ranks2[i] = r ? r - 1 : MPI_UNDEFINED;
    }
    free(inv);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Group_translate_ranks, PMPI_Group_translate_ranks)

int mpii_group_compare(const mpii_group_t *g1, const mpii_group_t *g2)
{
    if (g1->size != g2->size)
        return MPI_UNEQUAL;
    if (g1->size == 0 || memcmp(g1->world, g2->world, (size_t)g1->size * sizeof(int)) == 0)
        return MPI_IDENT;
    int *inv = group_inverse(g2);
    if (!inv)
        return -1;
    int res = MPI_SIMILAR;
    for (int i = 0; i < g1->size; i++)
        if (!inv[g1->world[i]]) {
            res = MPI_UNEQUAL;
            break;
        }
    free(inv);
    return res;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    MPII_CHECK_INIT("MPI_Group_compare");
    GET_GROUP(g1, group1, "group1", "MPI_Group_compare");
    GET_GROUP(g2, group2, "group2", "MPI_Group_compare");
    if (!result)
        return MPII_ERR_NULL(MPI_COMM_NULL, "result", "MPI_Group_compare");
    int r = mpii_group_compare(g1, g2);
    if (r < 0)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Group_compare");
    *result = r;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Group_compare, PMPI_Group_compare)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    MPII_CHECK_INIT("MPI_Comm_group");
    mpii_comm_t *c;
    int rc = mpii_comm_arg(comm, "comm", MPII_COMM_ANY, "MPI_Comm_group", &c);
    if (!c)
        return rc;
    if (!group)
        return MPII_ERR_NULL(comm, "group", "MPI_Comm_group");
    c->group->refs++;
    rc = mpii_group_handle(c->group, group);
    return rc == MPI_SUCCESS ? rc : MPII_ERR_COMM(comm, rc, "MPI_Comm_group");
}
MPII_WEAK(MPI_Comm_group, PMPI_Comm_group)

/* Set operations. which: 0 union, 1 intersection, 2 difference. */
static int group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int which,
                       const char *fn)
{
    MPII_CHECK_INIT(fn);
    GET_GROUP(g1, group1, "group1", fn);
    GET_GROUP(g2, group2, "group2", fn);
    if (!newgroup)
        return MPII_ERR_NULL(MPI_COMM_NULL, "newgroup", fn);
    int *inv = group_inverse(g1);
    if (!inv)
        return MPII_ERR(MPI_ERR_NO_MEM, fn);
    int *mark = calloc((size_t)mpii_peer_bound(), sizeof *mark);
    if (!mark) {
        free(inv);
        return MPII_ERR(MPI_ERR_NO_MEM, fn);
    }
    for (int i = 0; i < g2->size; i++)
        mark[g2->world[i]] = 1;
    int n = 0;
    if (which == 0) {
        n = g1->size;
        for (int i = 0; i < g2->size; i++)
            n += !inv[g2->world[i]];
    } else {
        for (int i = 0; i < g1->size; i++)
            n += (mark[g1->world[i]] != 0) == (which == 1);
    }
    mpii_group_t *g = mpii_group_new(n);
    if (g) {
        int k = 0;
        for (int i = 0; i < g1->size; i++)
            if (which == 0 || (mark[g1->world[i]] != 0) == (which == 1))
                g->world[k++] = g1->world[i];
        if (which == 0)
            for (int i = 0; i < g2->size; i++)
                if (!inv[g2->world[i]])
                    g->world[k++] = g2->world[i];
    }
    free(inv);
    free(mark);
    return group_out(g, newgroup, fn);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, 0, "MPI_Group_union");
}
MPII_WEAK(MPI_Group_union, PMPI_Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, 1, "MPI_Group_intersection");
}
MPII_WEAK(MPI_Group_intersection, PMPI_Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, 2, "MPI_Group_difference");
}
MPII_WEAK(MPI_Group_difference, PMPI_Group_difference)

/* Checks that ranks[0..n) are valid and distinct ranks of g, marking them in seen[]
 * (zeroed, g->size entries): MPI_SUCCESS or the error raised. */
static int check_ranks(const mpii_group_t *g, int n, const int ranks[], int *seen, const char *fn)
{
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size)
            return MPII_ERRF(MPI_ERR_RANK, fn, "ranks[%d] = %d is not in 0..%d (group)", i, r,
                             g->size - 1);
        if (seen[r])
            return MPII_ERRF(MPI_ERR_RANK, fn, "ranks[%d] = %d repeats ranks[%d]", i, r,
                             seen[r] - 1);
        seen[r] = i + 1;
    }
    return MPI_SUCCESS;
}

/* The arguments the incl / excl calls share besides the group: newgroup, and the n entries
 * of the list `name` (list: its address): MPI_SUCCESS or the error raised. */
static int list_args(int n, const void *list, const char *name, MPI_Group *newgroup, const char *fn)
{
    if (!newgroup)
        return MPII_ERR_NULL(MPI_COMM_NULL, "newgroup", fn);
    if (n < 0)
        return MPII_ERRF(MPI_ERR_ARG, fn, "n %d < 0", n);
    if (n > 0 && !list)
        return MPII_ERRF(MPI_ERR_ARG, fn, "%s NULL with n %d", name, n);
    return MPI_SUCCESS;
}

static int group_incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, int excl,
                           const char *fn)
{
    MPII_CHECK_INIT(fn);
    GET_GROUP(g, group, "group", fn);
    int rc = list_args(n, ranks, "ranks", newgroup, fn);
    if (rc)
        return rc;
    if (n > g->size)
        return MPII_ERRF(MPI_ERR_RANK, fn, "n %d > %d, the size of group", n, g->size);
    int *seen = calloc((size_t)g->size + 1, sizeof *seen);
    if (!seen)
        return MPII_ERR(MPI_ERR_NO_MEM, fn);
    rc = check_ranks(g, n, ranks, seen, fn);
    if (rc != MPI_SUCCESS) {
        free(seen);
        return rc;
    }
    mpii_group_t *ng = mpii_group_new(excl ? g->size - n : n);
    if (ng) {
        if (excl) {
            int k = 0;
            for (int i = 0; i < g->size; i++)
                if (!seen[i])
                    ng->world[k++] = g->world[i];
        } else {
            for (int i = 0; i < n; i++)
                ng->world[i] = g->world[ranks[i]];
        }
    }
    free(seen);
    return group_out(ng, newgroup, fn);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return group_incl_excl(group, n, ranks, newgroup, 0, "MPI_Group_incl");
}
MPII_WEAK(MPI_Group_incl, PMPI_Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return group_incl_excl(group, n, ranks, newgroup, 1, "MPI_Group_excl");
}
MPII_WEAK(MPI_Group_excl, PMPI_Group_excl)

/* Expands n triplets into the ranks they name (MPI-4.0 7.3.2). Each triplet needs a
 * nonzero stride, first and last valid ranks of g and first..last in the stride's
 * direction; all computed ranks must be distinct. MPI_SUCCESS with *out (malloc'ed) and
 * *count, or the error raised for fn. */
static int expand_ranges(const mpii_group_t *g, int n, int ranges[][3], int **out, int *count,
                         const char *fn)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (int e = 0; e < 2; e++)
            if (ranges[i][e] < 0 || ranges[i][e] >= g->size)
                return MPII_ERRF(MPI_ERR_RANK, fn, "ranges[%d][%d] = %d (%s) is not in 0..%d", i, e,
                                 ranges[i][e], e ? "last" : "first", g->size - 1);
        if (stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last))
            return MPII_ERRF(MPI_ERR_ARG, fn,
                             "ranges[%d] = {%d, %d, %d}: stride %d does not lead from first to "
                             "last",
                             i, first, last, stride, stride);
        total += (long)(last - first) / stride + 1;
        if (total > g->size) /* some rank would repeat */
            return MPII_ERRF(MPI_ERR_RANK, fn,
                             "ranges[0..%d] name %ld ranks, more than the %d of group", i, total,
                             g->size);
    }
    int *r = malloc((size_t)BASE_MAX(total, 1) * sizeof *r);
    int *seen = calloc((size_t)g->size + 1, sizeof *seen);
    if (!r || !seen) {
        free(r);
        free(seen);
        return MPII_ERR(MPI_ERR_NO_MEM, fn);
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        long cnt = (long)(last - first) / stride + 1;
        for (long j = 0; j < cnt; j++) {
            int x = first + (int)(j * stride);
            if (seen[x]) {
                int prev = seen[x] - 1;
                free(r);
                free(seen);
                return MPII_ERRF(MPI_ERR_RANK, fn, "rank %d is in ranges[%d] and ranges[%d]", x,
                                 prev, i);
            }
            seen[x] = i + 1;
            r[k++] = x;
        }
    }
    free(seen);
    *out = r;
    *count = k;
    return MPI_SUCCESS;
}

static int group_range(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int excl,
                       const char *fn)
{
    MPII_CHECK_INIT(fn);
    GET_GROUP(g, group, "group", fn);
    int rc = list_args(n, ranges, "ranges", newgroup, fn);
    if (rc)
        return rc;
    int *r = NULL, cnt = 0;
    rc = expand_ranges(g, n, ranges, &r, &cnt, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* ranks were checked: incl/excl with them cannot fail but for memory */
    rc = group_incl_excl(group, cnt, r, newgroup, excl, fn);
    free(r);
    return rc;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_range(group, n, ranges, newgroup, 0, "MPI_Group_range_incl");
}
MPII_WEAK(MPI_Group_range_incl, PMPI_Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_range(group, n, ranges, newgroup, 1, "MPI_Group_range_excl");
}
MPII_WEAK(MPI_Group_range_excl, PMPI_Group_range_excl)

int PMPI_Group_free(MPI_Group *group)
{
    MPII_CHECK_INIT("MPI_Group_free");
    if (!group)
        return MPII_ERR_NULL(MPI_COMM_NULL, "group", "MPI_Group_free");
    if (*group == MPI_GROUP_EMPTY) {
        *group = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }
    GET_GROUP(g, *group, "*group", "MPI_Group_free");
    mpii_handle_del(FMPL_MPI_KIND_GROUP, *group);
    mpii_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Group_free, PMPI_Group_free)
