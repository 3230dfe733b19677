/* win.c — one-sided windows: creation in every flavour, MPI_Win_free, attributes, names,
 * info, groups, error handlers, MPI_Win_shared_query and dynamic attach/detach (the
 * window object is described in win_impl.h).
 *
 * Creation is one allgather over the window's own duplicate of the communicator: each
 * rank sets up its control block and memory first, then publishes (control block offset,
 * size, disp_unit, data key, sync key, alignment), so every registration exists before
 * any peer can address it. Each rank then looks up direct addresses of its peers'
 * memory and control blocks (vnic_peer_ptr: ranks of this host whose memory lies in the
 * shared heap), and one AND-allreduce decides whether the whole window is `direct`
 * (every rank maps every rank's memory): that choice fixes how accumulates stay atomic
 * (win_atomic.c), so it must be the same on every rank.
 *
 * Memory by flavour:
 *   MPI_Win_create:   the user's memory, registered (direct only when it lies in the
 *                     shared heap, e.g. from MPI_Alloc_mem);
 *   MPI_Win_allocate: control block and memory in one shared-heap block (direct on this
 *                     host); a size the heap cannot hold comes from malloc, registered;
 *   MPI_Win_allocate_shared: contiguous (default): rank 0 allocates every rank's memory
 *                     in one heap block, rank i's part starting where rank i-1's ends;
 *                     alloc_shared_noncontig=true: each rank in its own heap. Every rank
 *                     must map it (MPI_ERR_RMA_SHARED otherwise: ranks on other hosts, or
 *                     FMPL_TRANSPORT=udp);
 *   MPI_Win_create_dynamic: no memory; MPI_Win_attach registers each region and
 *                     publishes (base, len, key) in the control block's table, which
 *                     origins read to resolve an address (win_rma.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/win_impl.h"

/* ---------------------------------------------------------------- lookups for others */

mpii_attr_t **mpii_win_attrs(MPI_Win h)
{
    mpii_win_t *w = mpii_win_get(h);
    return w ? &w->attrs : NULL;
}

int mpii_win_errhandler(MPI_Win h)
{
    mpii_win_t *w = mpii_win_get(h);
    return w ? w->errh : MPI_ERRHANDLER_NULL;
}

int mpii_win_predef_attr(MPI_Win h, int keyval, void **val)
{
    mpii_win_t *w = mpii_win_get(h);
    static int model = MPI_WIN_UNIFIED;
    if (!w)
        return 0;
    switch (keyval) {
    case MPI_WIN_BASE: *val = w->base; return 1;
    case MPI_WIN_SIZE: *val = &w->bytes; return 1;
    case MPI_WIN_DISP_UNIT: *val = &w->disp_unit; return 1;
    case MPI_WIN_CREATE_FLAVOR: *val = &w->flavor; return 1;
    case MPI_WIN_MODEL: *val = &model; return 1;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- info */

static int info_true(MPI_Info info, const char *key)
{
    char v[32];
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return 0;
    PMPI_Info_get(info, key, (int)sizeof v - 1, v, &flag);
    return flag && !strcmp(v, "true");
}

/* w->info: the hints as given plus the defaults of the keys this implementation knows. */
static int win_info_set(mpii_win_t *w, MPI_Info info)
{
    static const char *const defaults[][2] = {
        {"no_locks", "false"},
        {"accumulate_ordering", "rar,raw,war,waw"},
        {"accumulate_ops", "same_op_no_op"},
        {"same_size", "false"},
        {"same_disp_unit", "false"},
        {"alloc_shared_noncontig", "false"},
    };
    MPI_Info ni;
    int rc = mpii_info_dup(info, &ni);
    if (rc != MPI_SUCCESS)
        return rc;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        char v[64];
        int flag = 0;
        PMPI_Info_get(ni, defaults[i][0], (int)sizeof v - 1, v, &flag);
        if (!flag)
            PMPI_Info_set(ni, defaults[i][0], defaults[i][1]);
    }
    char v[64];
    int flag = 0;
    PMPI_Info_get(ni, "accumulate_ordering", (int)sizeof v - 1, v, &flag);
    w->accumulate_ordering_none = flag && !strcmp(v, "none");
    if (w->info != MPI_INFO_NULL)
        mpii_info_free(&w->info);
    w->info = ni;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- creation */

typedef struct win_card {
    uint64_t ctrl_off;
    int64_t size;
    uint64_t base; /* the owner's address (alignment of remote atomics) */
    int32_t disp_unit;
    uint32_t data_key, sync_key;
    uint32_t am_id;      /* its window in its win_am.c registry */
    uint64_t shared_off; /* allocate_shared contiguous: rank 0's block in its heap */
} win_card_t;

mpii_win_t win_none;
mpii_win_t *win_last = &win_none;

void mpii_win_finalize(void)
{
    __atomic_store_n(&win_last, &win_none, __ATOMIC_RELAXED);
}

static void win_destroy(mpii_win_t *w)
{
    vnic_t *v = mpii.vnic;
    mpii_win_t *last = w;
    __atomic_compare_exchange_n(&win_last, &last, &win_none, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    win_am_unregister(w);
    if (w->cntr)
        vnic_cntr_close(v, w->cntr);
    if (w->sync_key != VNIC_KEY_INVALID)
        vnic_mr_dereg(v, w->sync_key);
    free(w->sync_word);
    if (w->data_key != VNIC_KEY_INVALID && w->data_key != VNIC_KEY_HEAP)
        vnic_mr_dereg(v, w->data_key);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && w->ctrl) {
        win_dyn_t *d = (win_dyn_t *)(void *)((char *)w->ctrl + win_dyn_off(w->size));
        for (int i = 0; i < WIN_DYN_MAX; i++)
            if (d[i].len)
                vnic_mr_dereg(v, (vnic_key_t)d[i].key);
    }
    if (w->mem_heap)
        vnic_mem_free(v, w->mem);
    else
        free(w->mem);
    if (w->ctrl && (void *)w->ctrl != w->mem)
        vnic_mem_free(v, w->ctrl);
    if (w->info != MPI_INFO_NULL)
        mpii_info_free(&w->info);
    if (w->errh != MPI_ERRHANDLER_NULL)
        mpii_errh_release(w->errh);
    if (w->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&w->comm);
    free(w->peer);
    free(w->start_list);
    free(w->post_list);
    free(w->touched);
    free(w);
}

/* The rest of creation once this rank's memory is known: control block, sync word,
 * exchange, direct addresses. base/size: this rank's memory (ctrl already set for
 * MPI_Win_allocate's single block). Collective; returns an error class (not raised). */
static int win_finish(mpii_win_t *w, uint64_t shared_off)
{
    vnic_t *v = mpii.vnic;
    int rc = MPI_SUCCESS;
    if (!w->ctrl) {
        w->ctrl = vnic_mem_alloc(v, w->ctrl_bytes);
        if (!w->ctrl)
            rc = MPI_ERR_NO_MEM;
        else
            memset(w->ctrl, 0, w->ctrl_bytes);
    }
    if (rc == MPI_SUCCESS) {
        w->sync_word = calloc(1, 8);
        if (!w->sync_word ||
            vnic_mr_reg(v, w->sync_word, 8, VNIC_ACC_ALL, &w->sync_key) != FMPL_SUCCESS)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS && w->data_key == VNIC_KEY_INVALID && w->bytes > 0 &&
        w->flavor != MPI_WIN_FLAVOR_DYNAMIC && w->flavor != MPI_WIN_FLAVOR_SHARED &&
        vnic_mr_reg(v, w->base, (size_t)w->bytes, VNIC_ACC_ALL, &w->data_key) != FMPL_SUCCESS)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && vnic_cntr_open(v, VNIC_CNTR_ANY, &w->cntr) != FMPL_SUCCESS)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = win_am_register(w);
    /* Agree on success first: a rank that failed sends nothing usable. */
    uint64_t ok = rc == MPI_SUCCESS ? 1 : 0;
    int rc2 = mpii_lib_allreduce_band(w->c, &ok, 1);
    if (rc2 != MPI_SUCCESS)
        return rc2;
    if (!ok)
        return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;

    win_card_t me = {.ctrl_off = vnic_mem_heap_offset(v, w->ctrl),
                     .size = w->bytes,
                     .base = (uint64_t)(uintptr_t)w->base,
                     .disp_unit = w->disp_unit,
                     .data_key = w->data_key,
                     .sync_key = w->sync_key,
                     .am_id = (uint32_t)w->am_id,
                     .shared_off = shared_off};
    win_card_t *all = malloc(sizeof *all * (size_t)w->size);
    w->peer = calloc((size_t)w->size, sizeof *w->peer);
    if (!all || !w->peer) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    rc = mpii_lib_allgather(w->c, &me, all, sizeof me);
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    int direct = w->flavor != MPI_WIN_FLAVOR_DYNAMIC;
    int contig_shared = w->flavor == MPI_WIN_FLAVOR_SHARED && all[0].shared_off != UINT64_MAX;
    char *shared_base = NULL;
    uint64_t total = 0;
    if (contig_shared) {
        for (int i = 0; i < w->size; i++)
            total += (uint64_t)all[i].size;
        shared_base = vnic_peer_ptr(v, w->c->group->world[0], VNIC_KEY_HEAP, all[0].shared_off,
                                    total ? total : 1);
    }
    uint64_t prefix = 0;
    for (int i = 0; i < w->size; i++) {
        win_peer_t *p = &w->peer[i];
        int world = w->c->group->world[i];
        p->ctrl_off = all[i].ctrl_off;
        p->size = all[i].size;
        p->disp_unit = all[i].disp_unit;
        p->data_key = all[i].data_key;
        p->sync_key = all[i].sync_key;
        p->am_id = all[i].am_id;
        p->aligned8 = (all[i].base % 8) == 0;
        p->ctrl = vnic_peer_ptr(v, world, VNIC_KEY_HEAP, p->ctrl_off, w->ctrl_bytes);
        if (contig_shared) {
            p->data = shared_base ? shared_base + prefix : NULL;
            prefix += (uint64_t)p->size;
        } else if (p->size > 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
            p->data = vnic_peer_ptr(v, world, p->data_key, win_data_off(w, p), (uint64_t)p->size);
        }
        if (!p->ctrl || (!p->data && p->size > 0) || (contig_shared && !shared_base))
            direct = 0;
    }
    free(all);
    uint64_t d = (uint64_t)direct;
    rc = mpii_lib_allreduce_band(w->c, &d, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    w->direct = (int)d;
    if (w->flavor == MPI_WIN_FLAVOR_SHARED && !w->direct)
        return MPI_ERR_RMA_SHARED;
    if (w->flavor == MPI_WIN_FLAVOR_SHARED && contig_shared)
        w->base = w->peer[w->rank].data ? w->peer[w->rank].data : w->base;
    return MPI_SUCCESS;
}

/* Validates the common arguments and makes the object with its communicator. */
static int win_begin(MPI_Comm comm, MPI_Info info, MPI_Aint size, MPI_Aint disp_unit, int flavor,
                     MPI_Win *win, const char *fname, mpii_win_t **out)
{
    MPII_CHECK_INIT(fname);
    mpii_comm_t *c = mpii_comm_get(comm);
    if (!c)
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fname);
    if (!win)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fname);
    *win = MPI_WIN_NULL;
    if (c->rgroup)
        return MPII_ERRF_COMM(comm, MPI_ERR_COMM, fname, "windows need an intracommunicator");
    if (size < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_SIZE, fname, "negative size %ld", (long)size);
    if (disp_unit <= 0 || disp_unit > INT32_MAX)
        return MPII_ERRF_COMM(comm, MPI_ERR_DISP, fname, "disp_unit %ld", (long)disp_unit);
    if (info != MPI_INFO_NULL && !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return MPII_ERR_COMM(comm, MPI_ERR_INFO, fname);
    mpii_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
    w->flavor = flavor;
    w->shared = flavor == MPI_WIN_FLAVOR_SHARED;
    w->am_id = -1;
    w->errh = MPI_ERRORS_ARE_FATAL;
    w->info = MPI_INFO_NULL;
    w->comm = MPI_COMM_NULL;
    w->bytes = size;
    w->disp_unit = (int)disp_unit;
    int rc = PMPI_Comm_dup(comm, &w->comm);
    if (rc != MPI_SUCCESS) {
        w->comm = MPI_COMM_NULL;
        win_destroy(w);
        return rc;
    }
    w->c = mpii_comm_get(w->comm);
    w->rank = w->c->rank;
    w->size = w->c->size;
    w->share_min = vnic_info(mpii.vnic)->share_min;
    w->ctrl_bytes =
        (win_dyn_off(w->size) +
         (flavor == MPI_WIN_FLAVOR_DYNAMIC ? WIN_DYN_MAX * sizeof(win_dyn_t) : 0) + 63) &
        ~(uint64_t)63;
    rc = win_info_set(w, info);
    if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return MPII_ERR_COMM(comm, rc, fname);
    }
    /* The window takes its communicator's error handler. */
    mpii_errh_ref(c->errh);
    w->errh = c->errh;
    *out = w;
    return MPI_SUCCESS;
}

static int win_end(mpii_win_t *w, int rc, MPI_Comm comm, MPI_Win *win, const char *fname)
{
    if (rc == MPI_SUCCESS) {
        w->handle = mpii_handle_new(FMPL_MPI_KIND_WIN, w);
        if (w->handle == MPI_WIN_NULL)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return MPII_ERRF_COMM(comm, rc, fname, "%s",
                              rc == MPI_ERR_RMA_SHARED
                                  ? "the ranks of the communicator do not share memory"
                                  : "window creation failed");
    }
    *win = w->handle;
    return MPI_SUCCESS;
}

static int win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win, const char *fname)
{
    mpii_win_t *w = NULL;
    int rc = win_begin(comm, info, size, disp_unit, MPI_WIN_FLAVOR_CREATE, win, fname, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    w->base = size > 0 ? base : (base ? base : NULL);
    if (size > 0 && !base) {
        win_destroy(w);
        return MPII_ERRF_COMM(comm, MPI_ERR_BASE, fname, "NULL base for %ld bytes", (long)size);
    }
    return win_end(w, win_finish(w, UINT64_MAX), comm, win, fname);
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return win_create(base, size, disp_unit, info, comm, win, "MPI_Win_create");
}
MPII_WEAK(MPI_Win_create, PMPI_Win_create)

int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win)
{
    return win_create(base, size, disp_unit, info, comm, win, "MPI_Win_create_c");
}
MPII_WEAK(MPI_Win_create_c, PMPI_Win_create_c)

static int win_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win, const char *fname)
{
    mpii_win_t *w = NULL;
    if (!baseptr) {
        MPII_CHECK_INIT(fname);
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fname);
    }
    int rc = win_begin(comm, info, size, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, win, fname, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    vnic_t *v = mpii.vnic;
    /* One heap block: control block, then the memory. */
    char *blk = vnic_mem_alloc(v, w->ctrl_bytes + (size_t)size);
    if (blk) {
        memset(blk, 0, w->ctrl_bytes);
        w->mem = blk;
        w->mem_heap = 1;
        w->ctrl = (uint64_t *)(void *)blk;
        w->base = blk + w->ctrl_bytes;
        w->data_key = size > 0 ? VNIC_KEY_HEAP : VNIC_KEY_INVALID;
    } else {
        void *m = NULL;
        if (posix_memalign(&m, 64, (size_t)size) == 0) {
            w->mem = m;
            w->base = m;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
    }
    if (rc == MPI_SUCCESS)
        rc = win_finish(w, UINT64_MAX);
    if (rc == MPI_SUCCESS)
        *(void **)baseptr = w->base;
    return win_end(w, rc, comm, win, fname);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    return win_allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate");
}
MPII_WEAK(MPI_Win_allocate, PMPI_Win_allocate)

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    return win_allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_c");
}
MPII_WEAK(MPI_Win_allocate_c, PMPI_Win_allocate_c)

static int win_allocate_shared(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win, const char *fname)
{
    mpii_win_t *w = NULL;
    if (!baseptr) {
        MPII_CHECK_INIT(fname);
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fname);
    }
    int rc = win_begin(comm, info, size, disp_unit, MPI_WIN_FLAVOR_SHARED, win, fname, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    vnic_t *v = mpii.vnic;
    uint64_t shared_off = UINT64_MAX;
    if (info_true(w->info, "alloc_shared_noncontig")) {
        char *blk = vnic_mem_alloc(v, w->ctrl_bytes + (size_t)size);
        if (blk) {
            memset(blk, 0, w->ctrl_bytes);
            w->mem = blk;
            w->mem_heap = 1;
            w->ctrl = (uint64_t *)(void *)blk;
            w->base = blk + w->ctrl_bytes;
            w->data_key = size > 0 ? VNIC_KEY_HEAP : VNIC_KEY_INVALID;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
    } else {
        /* Rank 0 allocates the sum of the sizes; ranks learn it by a gather of sizes. */
        int64_t *sizes = malloc(sizeof *sizes * (size_t)w->size);
        int64_t mine = size;
        if (!sizes)
            rc = MPI_ERR_NO_MEM;
        else
            rc = mpii_lib_allgather(w->c, &mine, sizes, sizeof mine);
        uint64_t total = 0;
        for (int i = 0; rc == MPI_SUCCESS && i < w->size; i++)
            total += (uint64_t)sizes[i];
        free(sizes);
        if (rc == MPI_SUCCESS && w->rank == 0) {
            w->mem = vnic_mem_alloc(v, total ? total : 1);
            w->mem_heap = w->mem != NULL;
            if (w->mem)
                shared_off = vnic_mem_heap_offset(v, w->mem);
        }
        uint64_t off = shared_off;
        if (rc == MPI_SUCCESS)
            rc = mpii_lib_bcast_tag(w->c, NULL, w->size, w->rank, &off, sizeof off, 0,
                                    MPII_TAG_LIBCOLL);
        if (rc == MPI_SUCCESS && off == UINT64_MAX)
            rc = MPI_ERR_NO_MEM;
        /* Every rank publishes rank 0's block in its card (only rank 0's is read). */
        shared_off = off;
        w->data_key = VNIC_KEY_INVALID;
    }
    if (rc == MPI_SUCCESS)
        rc = win_finish(w, shared_off);
    if (rc == MPI_SUCCESS) {
        if (!w->mem && shared_off == UINT64_MAX)
            w->base = NULL;
        *(void **)baseptr = w->base;
    }
    return win_end(w, rc, comm, win, fname);
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return win_allocate_shared(size, disp_unit, info, comm, baseptr, win,
                               "MPI_Win_allocate_shared");
}
MPII_WEAK(MPI_Win_allocate_shared, PMPI_Win_allocate_shared)

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win)
{
    return win_allocate_shared(size, disp_unit, info, comm, baseptr, win,
                               "MPI_Win_allocate_shared_c");
}
MPII_WEAK(MPI_Win_allocate_shared_c, PMPI_Win_allocate_shared_c)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    static const char fname[] = "MPI_Win_create_dynamic";
    mpii_win_t *w = NULL;
    int rc = win_begin(comm, info, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, win, fname, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    w->base = MPI_BOTTOM;
    return win_end(w, win_finish(w, UINT64_MAX), comm, win, fname);
}
MPII_WEAK(MPI_Win_create_dynamic, PMPI_Win_create_dynamic)

#define GET_WIN(w, h, fname)                                                                       \
    MPII_CHECK_INIT(fname);                                                                        \
    mpii_win_t *w = mpii_win_get(h);                                                               \
    if (!w)                                                                                        \
    return WIN_ERR(h, MPI_ERR_WIN, fname)

static int win_shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr, const char *fname)
{
    GET_WIN(w, win, fname);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return WIN_ERRF(win, MPI_ERR_RMA_FLAVOR, fname, "the window is not a shared window");
    if (!size || !disp_unit || !baseptr)
        return WIN_ERR(win, MPI_ERR_ARG, fname);
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        for (int i = 0; i < w->size; i++)
            if (w->peer[i].size > 0) {
                rank = i;
                break;
            }
    } else if (rank < 0 || rank >= w->size) {
        return WIN_ERR(win, MPI_ERR_RANK, fname);
    }
    *size = w->peer[rank].size;
    *disp_unit = w->peer[rank].disp_unit;
    *(void **)baseptr = w->peer[rank].data;
    return MPI_SUCCESS;
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    MPI_Aint du = 0;
    int rc =
        win_shared_query(win, rank, size, disp_unit ? &du : NULL, baseptr, "MPI_Win_shared_query");
    if (rc == MPI_SUCCESS)
        *disp_unit = (int)du;
    return rc;
}
MPII_WEAK(MPI_Win_shared_query, PMPI_Win_shared_query)

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    return win_shared_query(win, rank, size, disp_unit, baseptr, "MPI_Win_shared_query_c");
}
MPII_WEAK(MPI_Win_shared_query_c, PMPI_Win_shared_query_c)

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char fname[] = "MPI_Win_attach";
    GET_WIN(w, win, fname);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return WIN_ERRF(win, MPI_ERR_RMA_FLAVOR, fname, "the window is not dynamic");
    if (size < 0)
        return WIN_ERR(win, MPI_ERR_SIZE, fname);
    if (!base && size > 0)
        return WIN_ERR(win, MPI_ERR_BASE, fname);
    if (size == 0)
        return MPI_SUCCESS;
    win_dyn_t *d = (win_dyn_t *)(void *)((char *)w->ctrl + win_dyn_off(w->size));
    win_ctrl_t *ctl = (win_ctrl_t *)(void *)w->ctrl;
    int slot = -1, used = (int)ctl->dyn_used;
    uint64_t lo = (uint64_t)(uintptr_t)base, hi = lo + (uint64_t)size;
    for (int i = 0; i < used; i++) {
        if (!d[i].len) {
            if (slot < 0)
                slot = i;
        } else if (lo < d[i].base + d[i].len && d[i].base < hi) {
            return WIN_ERRF(win, MPI_ERR_RMA_ATTACH, fname,
                            "the region overlaps one already attached");
        }
    }
    if (slot < 0 && used < WIN_DYN_MAX)
        slot = used;
    if (slot < 0)
        return WIN_ERRF(win, MPI_ERR_RMA_ATTACH, fname, "more than %d regions attached",
                        WIN_DYN_MAX);
    vnic_key_t key;
    if (vnic_mr_reg(mpii.vnic, base, (size_t)size, VNIC_ACC_ALL, &key) != FMPL_SUCCESS)
        return WIN_ERRF(win, MPI_ERR_RMA_ATTACH, fname, "no registration left");
    d[slot].base = lo;
    d[slot].key = key;
    __atomic_store_n(&d[slot].len, (uint64_t)size, __ATOMIC_RELEASE);
    if (slot == used)
        __atomic_store_n(&ctl->dyn_used, (uint64_t)used + 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&ctl->dyn_gen, 1, __ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_attach, PMPI_Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    static const char fname[] = "MPI_Win_detach";
    GET_WIN(w, win, fname);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return WIN_ERRF(win, MPI_ERR_RMA_FLAVOR, fname, "the window is not dynamic");
    win_dyn_t *d = (win_dyn_t *)(void *)((char *)w->ctrl + win_dyn_off(w->size));
    int used = (int)((win_ctrl_t *)(void *)w->ctrl)->dyn_used;
    for (int i = 0; i < used; i++)
        if (d[i].len && d[i].base == (uint64_t)(uintptr_t)base) {
            __atomic_store_n(&d[i].len, 0, __ATOMIC_RELEASE);
            __atomic_fetch_add(&((win_ctrl_t *)(void *)w->ctrl)->dyn_gen, 1, __ATOMIC_SEQ_CST);
            vnic_mr_dereg(mpii.vnic, (vnic_key_t)d[i].key);
            return MPI_SUCCESS;
        }
    return WIN_ERRF(win, MPI_ERR_RMA_ATTACH, fname, "no region attached at %p", base);
}
MPII_WEAK(MPI_Win_detach, PMPI_Win_detach)

int PMPI_Win_free(MPI_Win *win)
{
    static const char fname[] = "MPI_Win_free";
    MPII_CHECK_INIT(fname);
    if (!win)
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_win_t *w = mpii_win_get(*win);
    if (!w)
        return WIN_ERR(*win, MPI_ERR_WIN, fname);
    if (w->started || w->posted || win_nlocked(w) || w->lock_all)
        return WIN_ERRF(*win, MPI_ERR_RMA_SYNC, fname, "an epoch is still open on the window");
    int rc = win_wait_local(w);
    if (rc != MPI_SUCCESS)
        return WIN_ERR(*win, rc, fname);
    rc = mpii_attr_delete_all(FMPL_MPI_KIND_WIN, *win, &w->attrs);
    if (rc != MPI_SUCCESS)
        return WIN_ERR(*win, rc, fname);
    /* Nobody may still be reaching this rank's memory or control block. */
    rc = PMPI_Barrier(w->comm);
    if (rc != MPI_SUCCESS)
        return WIN_ERR(*win, rc, fname);
    mpii_handle_del(FMPL_MPI_KIND_WIN, *win);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_free, PMPI_Win_free)

/* ---------------------------------------------------------------- properties */

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    GET_WIN(w, win, "MPI_Win_get_group");
    if (!group)
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Win_get_group");
    w->c->group->refs++;
    int rc = mpii_group_handle(w->c->group, group);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, "MPI_Win_get_group");
}
MPII_WEAK(MPI_Win_get_group, PMPI_Win_get_group)

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    GET_WIN(w, win, "MPI_Win_set_name");
    if (!win_name)
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Win_set_name");
    snprintf(w->name, sizeof w->name, "%s", win_name);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_set_name, PMPI_Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    GET_WIN(w, win, "MPI_Win_get_name");
    if (!win_name || !resultlen)
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Win_get_name");
    size_t n = strlen(w->name);
    memcpy(win_name, w->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_get_name, PMPI_Win_get_name)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    GET_WIN(w, win, "MPI_Win_set_info");
    if (info == MPI_INFO_NULL || !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return WIN_ERR(win, MPI_ERR_INFO, "MPI_Win_set_info");
    /* The new values replace the old ones key by key (the others stay). Keys that fix the
     * window's memory (alloc_shared_noncontig, same_size...) are reported as set; the window
     * keeps what it was created with. */
    int nkeys = 0;
    PMPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        PMPI_Info_get_nthkey(info, i, key);
        PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
        if (flag)
            PMPI_Info_set(w->info, key, val);
    }
    char v[64];
    int flag = 0;
    PMPI_Info_get(w->info, "accumulate_ordering", (int)sizeof v - 1, v, &flag);
    w->accumulate_ordering_none = flag && !strcmp(v, "none");
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_set_info, PMPI_Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    GET_WIN(w, win, "MPI_Win_get_info");
    if (!info_used)
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Win_get_info");
    int rc = mpii_info_dup(w->info, info_used);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, "MPI_Win_get_info");
}
MPII_WEAK(MPI_Win_get_info, PMPI_Win_get_info)

/* ---------------------------------------------------------------- error handlers */

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    GET_WIN(w, win, "MPI_Win_set_errhandler");
    if (mpii_errh_check(errhandler, FMPL_MPI_KIND_WIN) != MPI_SUCCESS)
        return WIN_ERRF(win, MPI_ERR_ARG, "MPI_Win_set_errhandler", "invalid error handler");
    mpii_errh_ref(errhandler);
    mpii_errh_release(w->errh);
    w->errh = errhandler;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_set_errhandler, PMPI_Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    GET_WIN(w, win, "MPI_Win_get_errhandler");
    if (!errhandler)
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Win_get_errhandler");
    mpii_errh_ref(w->errh);
    *errhandler = w->errh;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_get_errhandler, PMPI_Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    GET_WIN(w, win, "MPI_Win_call_errhandler");
    (void)w;
    (void)mpii_err_call(FMPL_MPI_KIND_WIN, win, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_call_errhandler, PMPI_Win_call_errhandler)
