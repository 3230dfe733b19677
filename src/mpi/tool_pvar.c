/* tool_pvar.c — MPI_T performance variables, their sessions and handles, and the
 * enumerations (design: tool_cvar.c).
 *
 * The variables are a fixed table (pvar_defs) over the engine's own counters:
 * - vnic: operations posted and payload bytes per transport (shm, udp; vnic_traffic);
 *   the udp transport's datagrams, retransmissions, timeouts, LOSE / STOP / GO and drops
 *   (vnic_udp_stats, what FMPL_UDP_STATS prints; zero without a udp transport);
 * - mpi: messages and bytes sent eagerly and by rendezvous, unexpected arrivals, the
 *   unexpected queue's length and high-water mark (p2p.c); per collective (barrier,
 *   bcast, gather, scatter, allgather, alltoall, reduce, allreduce,
 *   reduce_scatter_block, scan, exscan; the v/w forms and MPI_Reduce_scatter, whose
 *   count arrays the schedule cache does not key, are not counted) the calls per
 *   algorithm (an array indexed by the algorithm enumeration) and the algorithm of the
 *   latest call (tool_impl.h).
 * The engine's counters only grow (or are levels); MPI_T's semantics live in the handle:
 * - counters (MPI_T_PVAR_CLASS_COUNTER) are not continuous: a handle starts stopped at
 *   zero; start records the engine's value, stop adds what accrued since to the handle's
 *   sum, a read returns the sum plus what accrued since the start while started; reset
 *   (and write) set the sum (to zero, or the value given) from now on. So every handle,
 *   of any session, counts on its own, and nothing in the engine is reset.
 * - levels, states and the high-water mark are continuous and read-only: a read returns
 *   the engine's current value; start / stop answer MPI_T_ERR_PVAR_NO_STARTSTOP, write /
 *   reset MPI_T_ERR_PVAR_NO_WRITE.
 * Before MPI_Init and after MPI_Finalize the vnic's counters are unavailable: a read
 * then returns the last value this interface saw (so sums stay consistent), the MPI
 * layer's counters stay readable. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mpi/coll_impl.h"
#include "mpi/mpi_impl.h"
#include "mpi/tool_impl.h"
#include "vnic/vnic.h"

/* ------------------------------------------------------------------ enumerations */

static const char *const enum_bool_items[] = {"false", "true"};
struct fmpl_mpi_t_enum_s mpii_tool_enum_bool = {"boolean", 2, enum_bool_items};

static const char *const enum_alg_items[MPII_ALG_N] = {
    [MPII_ALG_NONE] = "none",
    [MPII_ALG_MAILBOX] = "mailbox",
    [MPII_ALG_NODE_AWARE] = "node_aware",
    [MPII_ALG_OFFLOAD] = "offload",
    [MPII_ALG_TREE] = "binomial_tree",
    [MPII_ALG_SCATTER_ALLGATHER] = "scatter_ring_allgather",
    [MPII_ALG_RECURSIVE_DOUBLING] = "recursive_doubling",
    [MPII_ALG_RABENSEIFNER] = "rabenseifner",
    [MPII_ALG_POINT_TO_POINT] = "point_to_point",
};
struct fmpl_mpi_t_enum_s mpii_tool_enum_alg = {"fmpl_coll_algorithm", MPII_ALG_N, enum_alg_items};

static int enum_valid(MPI_T_enum e)
{
    return e == &mpii_tool_enum_bool || e == &mpii_tool_enum_alg;
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MPII_TOOL_ENTER();
    if (!enum_valid(enumtype))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (num)
        *num = enumtype->n;
    mpii_tool_copy_str(enumtype->name, name, name_len);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_enum_get_info, PMPI_T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    MPII_TOOL_ENTER();
    if (!enum_valid(enumtype))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (indx < 0 || indx >= enumtype->n)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_ITEM);
    if (value)
        *value = indx;
    mpii_tool_copy_str(enumtype->items[indx], name, name_len);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_enum_get_item, PMPI_T_enum_get_item)

/* ------------------------------------------------------------------ sources */

#define PVAR_MAX_COUNT MPII_ALG_N

/* Fills out[count] with the engine's values; -1 when they cannot be read now. */
typedef int (*pvar_read_fn)(size_t arg, uint64_t *out);

static int vnic_up(void)
{
    return mpii.state == MPII_ACTIVE && mpii.vnic;
}

/* arg: transport * 3 + (0 operations, 1 bytes, 2 bytes served) */
static int read_traffic(size_t arg, uint64_t *out)
{
    vnic_traffic_t t[VNIC_TRAFFIC_N];
    if (!vnic_up() || vnic_traffic(mpii.vnic, t) != FMPL_SUCCESS)
        return -1;
    const vnic_traffic_t *x = &t[arg / 3];
    out[0] = arg % 3 == 2 ? x->served : arg % 3 ? x->bytes : x->ops;
    return 0;
}

/* arg: offset of a uint64_t field of vnic_udp_stats_t */
static int read_udp(size_t arg, uint64_t *out)
{
    if (!vnic_up())
        return -1;
    vnic_udp_stats_t st;
    if (vnic_udp_stats(mpii.vnic, &st) != FMPL_SUCCESS)
        memset(&st, 0, sizeof st); /* no udp transport: nothing happened on one */
    memcpy(out, (const char *)&st + arg, sizeof *out);
    return 0;
}

/* arg: offset of a uint64_t field of mpii_p2p_stats_t */
static int read_p2p(size_t arg, uint64_t *out)
{
    memcpy(out, (const char *)&mpii_p2p_stats + arg, sizeof *out);
    return 0;
}

/* arg: MPII_TOOL_* collective */
static int read_coll_calls(size_t arg, uint64_t *out)
{
    memcpy(out, mpii_coll_stats.calls[arg], sizeof mpii_coll_stats.calls[arg]);
    return 0;
}

static int read_coll_last(size_t arg, uint64_t *out)
{
    out[0] = (uint64_t)mpii_coll_stats.last[arg];
    return 0;
}

/* ------------------------------------------------------------------ the variables */

typedef struct pvar_def {
    const char *name, *desc;
    int cls;   /* MPI_T_PVAR_CLASS_* */
    int layer; /* index in mpii_tool_layers */
    int count;
    pvar_read_fn read;
    size_t arg;
} pvar_def_t;

enum { L_VNIC = 2, L_MPI = 6 }; /* mpii_tool_layers */

#define UDP(field, what)                                                                           \
    {                                                                                              \
        "vnic_udp_" #field, what, MPI_T_PVAR_CLASS_COUNTER, L_VNIC, 1, read_udp,                   \
            offsetof(vnic_udp_stats_t, field)                                                      \
    }
#define P2P(field, cls, what)                                                                      \
    {                                                                                              \
        "mpi_p2p_" #field, what, cls, L_MPI, 1, read_p2p, offsetof(mpii_p2p_stats_t, field)        \
    }

static const pvar_def_t pvar_defs[] = {
    {"vnic_shm_ops",
     "operations (puts, gets, atomics, active messages) posted to ranks of this "
     "host through the shm transport",
     MPI_T_PVAR_CLASS_COUNTER, L_VNIC, 1, read_traffic, VNIC_TRAFFIC_SHM * 3},
    {"vnic_shm_bytes", "payload bytes of the operations posted through the shm transport",
     MPI_T_PVAR_CLASS_COUNTER, L_VNIC, 1, read_traffic, VNIC_TRAFFIC_SHM * 3 + 1},
    {"vnic_shm_served",
     "bytes this rank copied for other ranks of its host while it waited in the library "
     "(their shared copies: large gets, and puts and gets on shared-heap windows)",
     MPI_T_PVAR_CLASS_COUNTER, L_VNIC, 1, read_traffic, VNIC_TRAFFIC_SHM * 3 + 2},
    {"vnic_udp_ops",
     "operations (puts, gets, atomics, active messages) posted to ranks through "
     "the udp transport",
     MPI_T_PVAR_CLASS_COUNTER, L_VNIC, 1, read_traffic, VNIC_TRAFFIC_UDP * 3},
    {"vnic_udp_bytes", "payload bytes of the operations posted through the udp transport",
     MPI_T_PVAR_CLASS_COUNTER, L_VNIC, 1, read_traffic, VNIC_TRAFFIC_UDP * 3 + 1},
    UDP(tx_packets, "udp datagrams sent, retransmissions included"),
    UDP(rx_packets, "udp datagrams received"),
    UDP(tx_bytes, "udp bytes sent"),
    UDP(rx_bytes, "udp bytes received"),
    UDP(retransmits, "udp DATA packets sent again (timeout, LOSE, GO)"),
    UDP(timeouts, "udp retransmission timer expiries"),
    UDP(lose_sent, "udp LOSE packets sent: gaps (losses) seen by this receiver"),
    UDP(lose_recv, "udp LOSE packets received: losses a receiver reported"),
    UDP(stop_sent, "udp STOP packets sent: this receiver's buffer was full"),
    UDP(stop_recv, "udp STOP packets received"),
    UDP(go_sent, "udp GO packets sent: room again after a STOP"),
    UDP(go_recv, "udp GO packets received"),
    UDP(dup_dropped, "udp DATA packets dropped as already received"),
    UDP(ooo_dropped, "udp DATA packets dropped after a gap (go-back-N)"),
    UDP(full_dropped, "udp DATA packets dropped: the receive buffer was full"),
    P2P(eager_sent, MPI_T_PVAR_CLASS_COUNTER,
        "MPI messages sent eagerly (in one active message, up to FMPL_MPI_EAGER_MAX bytes)"),
    P2P(eager_bytes, MPI_T_PVAR_CLASS_COUNTER, "bytes of the MPI messages sent eagerly"),
    P2P(rndv_sent, MPI_T_PVAR_CLASS_COUNTER,
        "MPI messages sent by rendezvous (the receiver reads the sender's buffer)"),
    P2P(rndv_bytes, MPI_T_PVAR_CLASS_COUNTER, "bytes of the MPI messages sent by rendezvous"),
    P2P(unexp_arrived, MPI_T_PVAR_CLASS_COUNTER,
        "MPI messages that arrived before a matching receive was posted"),
    P2P(unexp_len, MPI_T_PVAR_CLASS_LEVEL, "MPI messages in the unexpected queue now"),
    P2P(unexp_hwm, MPI_T_PVAR_CLASS_HIGHWATERMARK,
        "most MPI messages the unexpected queue held at once since MPI_Init"),
#define COLL(name, ck)                                                                             \
    {"mpi_coll_" name "_calls",                                                                    \
     "MPI_" name " calls (blocking and nonblocking; persistent ones at init) per algorithm: "      \
     "element i counts algorithm i of the fmpl_coll_algorithm enumeration",                        \
     MPI_T_PVAR_CLASS_COUNTER,                                                                     \
     L_MPI,                                                                                        \
     MPII_ALG_N,                                                                                   \
     read_coll_calls,                                                                              \
     MPII_TOOL_COLL(ck)},                                                                          \
    {                                                                                              \
        "mpi_coll_" name "_algorithm", "the algorithm of the latest MPI_" name " call",            \
            MPI_T_PVAR_CLASS_STATE, L_MPI, 1, read_coll_last, MPII_TOOL_COLL(ck)                   \
    }
    COLL("barrier", MPII_CK_BARRIER),
    COLL("bcast", MPII_CK_BCAST),
    COLL("gather", MPII_CK_GATHER),
    COLL("scatter", MPII_CK_SCATTER),
    COLL("allgather", MPII_CK_ALLGATHER),
    COLL("alltoall", MPII_CK_ALLTOALL),
    COLL("reduce", MPII_CK_REDUCE),
    COLL("allreduce", MPII_CK_ALLREDUCE),
    COLL("reduce_scatter_block", MPII_CK_RSB),
    COLL("scan", MPII_CK_SCAN),
    COLL("exscan", MPII_CK_EXSCAN),
};
#define NPVARS ((int)(sizeof pvar_defs / sizeof pvar_defs[0]))

/* The last values read of each variable (what a read returns while its source is down). */
static uint64_t pvar_last[NPVARS][PVAR_MAX_COUNT];

static int pvar_continuous(const pvar_def_t *d)
{
    return d->cls != MPI_T_PVAR_CLASS_COUNTER;
}

/* The engine's current values of variable i into out[count]. */
static void pvar_raw(int i, uint64_t *out)
{
    const pvar_def_t *d = &pvar_defs[i];
    if (d->read(d->arg, out) == 0)
        memcpy(pvar_last[i], out, (size_t)d->count * sizeof *out);
    else
        memcpy(out, pvar_last[i], (size_t)d->count * sizeof *out);
}

/* Contract: tool_impl.h. */
int mpii_tool_pvar_count(void)
{
    return NPVARS;
}

const char *mpii_tool_pvar_layer(int i)
{
    return i >= 0 && i < NPVARS ? mpii_tool_layers[pvar_defs[i].layer] : "";
}

int PMPI_T_pvar_get_num(int *num_pvar)
{
    MPII_TOOL_ENTER();
    if (!num_pvar)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_pvar = NPVARS;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_pvar_get_num, PMPI_T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic)
{
    MPII_TOOL_ENTER();
    if (pvar_index < 0 || pvar_index >= NPVARS)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    const pvar_def_t *d = &pvar_defs[pvar_index];
    mpii_tool_copy_str(d->name, name, name_len);
    mpii_tool_copy_str(d->desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class)
        *var_class = d->cls;
    if (datatype)
        *datatype = d->cls == MPI_T_PVAR_CLASS_STATE ? MPI_INT : MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = d->cls == MPI_T_PVAR_CLASS_STATE ? &mpii_tool_enum_alg : MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = pvar_continuous(d);
    if (continuous)
        *continuous = pvar_continuous(d);
    if (atomic)
        *atomic = 1; /* a read-reset reads the engine once: nothing falls between */
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_pvar_get_info, PMPI_T_pvar_get_info)

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPII_TOOL_ENTER();
    if (!name || !pvar_index)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    for (int i = 0; i < NPVARS; i++)
        if (pvar_defs[i].cls == var_class && strcmp(pvar_defs[i].name, name) == 0) {
            *pvar_index = i;
            MPII_TOOL_RETURN(MPI_SUCCESS);
        }
    MPII_TOOL_RETURN(MPI_T_ERR_INVALID_NAME);
}
MPII_WEAK(MPI_T_pvar_get_index, PMPI_T_pvar_get_index)

/* ------------------------------------------------------------------ sessions and handles */

struct fmpl_mpi_t_pvar_handle_s {
    struct fmpl_mpi_t_pvar_handle_s *next;
    int index, started;
    uint64_t base[PVAR_MAX_COUNT]; /* the engine's values at start / reset / write */
    uint64_t sum[PVAR_MAX_COUNT];  /* accrued while started before, and written */
};

struct fmpl_mpi_t_pvar_session_s {
    struct fmpl_mpi_t_pvar_session_s *next;
    struct fmpl_mpi_t_pvar_handle_s *handles;
};
static struct fmpl_mpi_t_pvar_session_s *sessions;

static void session_free(struct fmpl_mpi_t_pvar_session_s *s)
{
    while (s->handles) {
        struct fmpl_mpi_t_pvar_handle_s *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
}

/* Contract: tool_impl.h. */
void mpii_tool_pvar_finalize(void)
{
    while (sessions) {
        struct fmpl_mpi_t_pvar_session_s *s = sessions;
        sessions = s->next;
        session_free(s);
    }
}

/* The live session s, unlinked when unlink; NULL when s is not one. */
static struct fmpl_mpi_t_pvar_session_s *session_find(MPI_T_pvar_session s, int unlink)
{
    for (struct fmpl_mpi_t_pvar_session_s **p = &sessions; *p; p = &(*p)->next)
        if (*p == s) {
            if (unlink)
                *p = s->next;
            return s;
        }
    return NULL;
}

/* Handle h of session s, unlinked when unlink; NULL when h is not one of s. */
static struct fmpl_mpi_t_pvar_handle_s *handle_find(struct fmpl_mpi_t_pvar_session_s *s,
                                                    MPI_T_pvar_handle h, int unlink)
{
    for (struct fmpl_mpi_t_pvar_handle_s **p = &s->handles; *p; p = &(*p)->next)
        if (*p == h) {
            if (unlink)
                *p = h->next;
            return h;
        }
    return NULL;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MPII_TOOL_ENTER();
    if (!session)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    struct fmpl_mpi_t_pvar_session_s *s = calloc(1, sizeof *s);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_MEMORY);
    s->next = sessions;
    sessions = s;
    *session = s;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_pvar_session_create, PMPI_T_pvar_session_create)

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPII_TOOL_ENTER();
    if (!session)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    struct fmpl_mpi_t_pvar_session_s *s = session_find(*session, 1);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_SESSION);
    session_free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_pvar_session_free, PMPI_T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle; /* every variable binds to no object */
    MPII_TOOL_ENTER();
    struct fmpl_mpi_t_pvar_session_s *s = session_find(session, 0);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (pvar_index < 0 || pvar_index >= NPVARS)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    struct fmpl_mpi_t_pvar_handle_s *h = calloc(1, sizeof *h);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_MEMORY);
    h->index = pvar_index;
    h->started = pvar_continuous(&pvar_defs[pvar_index]); /* continuous: always running */
    h->next = s->handles;
    s->handles = h;
    *handle = h;
    *count = pvar_defs[pvar_index].count;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_pvar_handle_alloc, PMPI_T_pvar_handle_alloc)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MPII_TOOL_ENTER();
    struct fmpl_mpi_t_pvar_session_s *s = session_find(session, 0);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (!handle)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    struct fmpl_mpi_t_pvar_handle_s *h = handle_find(s, *handle, 1);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_pvar_handle_free, PMPI_T_pvar_handle_free)

/* The handle's value (count elements) into out, given the engine's values raw. */
static void handle_value(const struct fmpl_mpi_t_pvar_handle_s *h, const uint64_t *raw,
                         uint64_t *out)
{
    const pvar_def_t *d = &pvar_defs[h->index];
    for (int k = 0; k < d->count; k++)
        out[k] = pvar_continuous(d) ? raw[k] : h->sum[k] + (h->started ? raw[k] - h->base[k] : 0);
}

/* The operations on one handle; MPI_SUCCESS or an MPI_T error. */
enum { OP_START, OP_STOP, OP_RESET };
static int handle_op(struct fmpl_mpi_t_pvar_handle_s *h, int op)
{
    const pvar_def_t *d = &pvar_defs[h->index];
    if (pvar_continuous(d))
        return op == OP_RESET ? MPI_T_ERR_PVAR_NO_WRITE : MPI_T_ERR_PVAR_NO_STARTSTOP;
    uint64_t raw[PVAR_MAX_COUNT];
    pvar_raw(h->index, raw);
    switch (op) {
    case OP_START:
        if (!h->started) {
            memcpy(h->base, raw, sizeof raw);
            h->started = 1;
        }
        break;
    case OP_STOP:
        if (h->started) {
            for (int k = 0; k < d->count; k++)
                h->sum[k] += raw[k] - h->base[k];
            h->started = 0;
        }
        break;
    default:
        memset(h->sum, 0, sizeof h->sum);
        memcpy(h->base, raw, sizeof raw);
        break;
    }
    return MPI_SUCCESS;
}

/* start, stop or reset of one handle, or of every handle of the session where the
 * operation applies (MPI_T_PVAR_ALL_HANDLES: continuous / read-only ones are skipped). */
static int pvar_apply(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int op)
{
    MPII_TOOL_ENTER();
    struct fmpl_mpi_t_pvar_session_s *s = session_find(session, 0);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (struct fmpl_mpi_t_pvar_handle_s *h = s->handles; h; h = h->next)
            if (!pvar_continuous(&pvar_defs[h->index]))
                handle_op(h, op);
        MPII_TOOL_RETURN(MPI_SUCCESS);
    }
    struct fmpl_mpi_t_pvar_handle_s *h = handle_find(s, handle, 0);
    MPII_TOOL_RETURN(h ? handle_op(h, op) : MPI_T_ERR_INVALID_HANDLE);
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_apply(session, handle, OP_START);
}
MPII_WEAK(MPI_T_pvar_start, PMPI_T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_apply(session, handle, OP_STOP);
}
MPII_WEAK(MPI_T_pvar_stop, PMPI_T_pvar_stop)

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_apply(session, handle, OP_RESET);
}
MPII_WEAK(MPI_T_pvar_reset, PMPI_T_pvar_reset)

/* Read (into buf, when not NULL), then reset when reset. */
static int pvar_read_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf,
                           int reset)
{
    MPII_TOOL_ENTER();
    struct fmpl_mpi_t_pvar_session_s *s = session_find(session, 0);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_SESSION);
    struct fmpl_mpi_t_pvar_handle_s *h =
        handle == MPI_T_PVAR_ALL_HANDLES ? NULL : handle_find(s, handle, 0);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!buf)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    const pvar_def_t *d = &pvar_defs[h->index];
    if (reset && pvar_continuous(d))
        MPII_TOOL_RETURN(MPI_T_ERR_PVAR_NO_WRITE);
    uint64_t raw[PVAR_MAX_COUNT], v[PVAR_MAX_COUNT];
    pvar_raw(h->index, raw);
    handle_value(h, raw, v);
    if (d->cls == MPI_T_PVAR_CLASS_STATE)
        for (int k = 0; k < d->count; k++)
            ((int *)buf)[k] = (int)v[k];
    else
        for (int k = 0; k < d->count; k++)
            ((unsigned long long *)buf)[k] = v[k];
    if (reset) {
        memset(h->sum, 0, sizeof h->sum);
        memcpy(h->base, raw, sizeof raw);
    }
    MPII_TOOL_RETURN(MPI_SUCCESS);
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_read_reset(session, handle, buf, 0);
}
MPII_WEAK(MPI_T_pvar_read, PMPI_T_pvar_read)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_read_reset(session, handle, buf, 1);
}
MPII_WEAK(MPI_T_pvar_readreset, PMPI_T_pvar_readreset)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    MPII_TOOL_ENTER();
    struct fmpl_mpi_t_pvar_session_s *s = session_find(session, 0);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_SESSION);
    struct fmpl_mpi_t_pvar_handle_s *h =
        handle == MPI_T_PVAR_ALL_HANDLES ? NULL : handle_find(s, handle, 0);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!buf)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    const pvar_def_t *d = &pvar_defs[h->index];
    if (pvar_continuous(d))
        MPII_TOOL_RETURN(MPI_T_ERR_PVAR_NO_WRITE);
    /* the handle's value becomes buf's from now on */
    uint64_t raw[PVAR_MAX_COUNT];
    pvar_raw(h->index, raw);
    for (int k = 0; k < d->count; k++)
        h->sum[k] = ((const unsigned long long *)buf)[k];
    memcpy(h->base, raw, sizeof raw);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_pvar_write, PMPI_T_pvar_write)
