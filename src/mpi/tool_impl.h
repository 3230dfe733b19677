/* tool_impl.h — the MPI layer's counters that the tool interface (MPI_T, tool_pvar.c)
 * shows as performance variables, and the contract between the tool_*.c files.
 *
 * The counters are plain per-process integers, incremented where the engine decides
 * (p2p.c: eager or rendezvous, the unexpected queue; the collective builders: the
 * algorithm), with no atomics and no branch on whether a tool listens: one add on a line
 * the engine writes anyway. With several threads inside MPI at once a count may miss an
 * increment; MPI_T_pvar_get_info reports them as not atomic. */
#ifndef FMPL_MPI_TOOL_IMPL_H
#define FMPL_MPI_TOOL_IMPL_H

#include <stdint.h>

#include "mpi.h"
#include "mpi/tool_event.h"

/* ---- point-to-point (p2p.c) ---- */
typedef struct mpii_p2p_stats {
    uint64_t eager_sent, eager_bytes; /* messages sent eagerly (one active message) */
    uint64_t rndv_sent, rndv_bytes;   /* messages sent by rendezvous (the receiver reads) */
    uint64_t unexp_arrived;           /* messages that arrived before their receive */
    uint64_t unexp_len, unexp_hwm;    /* unexpected messages queued now; most queued */
} mpii_p2p_stats_t;
extern mpii_p2p_stats_t mpii_p2p_stats;

static inline void mpii_stats_unexp_push(void)
{
    if (++mpii_p2p_stats.unexp_len > mpii_p2p_stats.unexp_hwm)
        mpii_p2p_stats.unexp_hwm = mpii_p2p_stats.unexp_len;
    mpii_p2p_stats.unexp_arrived++;
}

/* ---- collectives: the algorithm chosen per call ----
 * A collective's schedule is built once per call shape (and cached, coll_sched.c). The
 * entry's path notes what it chose before the builder runs (coll_impl.h's MPII_BUILD_RUN*
 * macros: the mailboxes, node-aware, or the layer's point-to-point schedule), a builder
 * that chooses further among point-to-point algorithms notes its choice (bcast,
 * allreduce), the run counts the note, and the schedule cache keeps it with the
 * schedule, so a call served from the cache counts the same algorithm again. The
 * collectives are numbered by their schedule-cache kind (MPII_CK_*, coll_impl.h) - 1. */
enum {
    MPII_ALG_NONE = 0,
    MPII_ALG_MAILBOX,            /* the communicator's mailboxes (coll layer's group schedules) */
    MPII_ALG_NODE_AWARE,         /* intra-host steps to one leader per host, leaders between */
    MPII_ALG_TREE,               /* binomial tree (bcast) */
    MPII_ALG_SCATTER_ALLGATHER,  /* binomial scatter + ring allgather (large bcast) */
    MPII_ALG_RECURSIVE_DOUBLING, /* allreduce */
    MPII_ALG_RABENSEIFNER,       /* reduce-scatter + allgather (large commutative allreduce) */
    MPII_ALG_POINT_TO_POINT,     /* the collective's one point-to-point schedule (coll_*.c) */
    MPII_ALG_OFFLOAD,            /* the offload board: done without busy members (coll.h) */
    MPII_ALG_N
};
/* Collectives followed: MPII_CK_BARRIER .. MPII_CK_EXSCAN, as indices 0 .. 10. */
#define MPII_TOOL_NCOLL 11
#define MPII_TOOL_COLL(ck) ((ck)-1)
typedef struct mpii_coll_stats {
    uint64_t calls[MPII_TOOL_NCOLL][MPII_ALG_N]; /* calls per algorithm */
    int last[MPII_TOOL_NCOLL];                   /* the algorithm of the latest call */
    int noted;                                   /* (coll, alg) of the schedule being built */
} mpii_coll_stats_t;
extern mpii_coll_stats_t mpii_coll_stats;

/* Encodes a (collective, algorithm) note; 0: none. */
#define MPII_COLL_NOTE(coll, alg) (((coll) + 1) << 8 | (alg))

/* Counts one call of the noted (collective, algorithm); note 0 counts nothing. */
static inline void mpii_coll_count(int note)
{
    if (note) {
        int coll = (note >> 8) - 1, alg = note & 0xff;
        mpii_coll_stats.calls[coll][alg]++;
        mpii_coll_stats.last[coll] = alg;
        if (MPII_EVENT_ON(MPII_EV_COLL_ALG)) {
            mpii_ev_coll_alg_t e = {coll, alg};
            mpii_tool_event_raise(MPII_EV_COLL_ALG, &e);
        }
    }
}
/* A builder chose alg for coll: the schedule being built runs it. */
static inline void mpii_coll_note(int coll, int alg)
{
    mpii_coll_stats.noted = MPII_COLL_NOTE(coll, alg);
}
/* The note of the schedule just built (taken: the next build starts clean). */
static inline int mpii_coll_take_note(void)
{
    int n = mpii_coll_stats.noted;
    mpii_coll_stats.noted = 0;
    return n;
}

/* ---- between the tool_*.c files ---- */
/* 1 between MPI_T_init_thread and the matching MPI_T_finalize (tool_cvar.c). */
int mpii_tool_active(void);
/* The layers, in order: the categories (tool_category.c). */
#define MPII_TOOL_NLAYERS 7
extern const char *const mpii_tool_layers[MPII_TOOL_NLAYERS];
int mpii_tool_layer_index(const char *layer); /* -1: unknown */
/* Performance variables (tool_pvar.c): how many, and the layer of number i. */
int mpii_tool_pvar_count(void);
const char *mpii_tool_pvar_layer(int i);
/* MPI_T's one mutex (every entry point holds it). */
void mpii_tool_lock(void);
void mpii_tool_unlock(void);
/* The prologue and return of an MPI_T call: the mutex, MPI_T_ERR_NOT_INITIALIZED. */
#define MPII_TOOL_ENTER()                                                                          \
    do {                                                                                           \
        mpii_tool_lock();                                                                          \
        if (!mpii_tool_active()) {                                                                 \
            mpii_tool_unlock();                                                                    \
            return MPI_T_ERR_NOT_INITIALIZED;                                                      \
        }                                                                                          \
    } while (0)
#define MPII_TOOL_RETURN(rc)                                                                       \
    do {                                                                                           \
        int rc_ = (rc);                                                                            \
        mpii_tool_unlock();                                                                        \
        return rc_;                                                                                \
    } while (0)
/* Frees the pvar sessions and handles (the last MPI_T_finalize). */
void mpii_tool_pvar_finalize(void);
/* Control variables are base's settings records (tool_cvar.c). */
int mpii_tool_cvar_count(void);
const char *mpii_tool_cvar_layer(int i);
/* Copies text into buf (*len bytes, NUL included) as MPI_T does for names and
 * descriptions: *len becomes the length written + 1; buf or len NULL / *len 0: only
 * *len is set (to the full length + 1, when len is not NULL). */
void mpii_tool_copy_str(const char *text, char *buf, int *len);

/* Enumerations (tool_pvar.c): MPI_T_enum handles are pointers to these. */
struct fmpl_mpi_t_enum_s {
    const char *name;
    int n;
    const char *const *items; /* item i has value i */
};
extern struct fmpl_mpi_t_enum_s mpii_tool_enum_bool, mpii_tool_enum_alg;

#endif
