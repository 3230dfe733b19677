/* tool_event.h — the MPI_T events the library raises (tool_event.c) and the hook that
 * raises them where they happen.
 *
 * The hook costs one load and one predictable branch while no registration handle for
 * the event exists: mpii_tool_event_on[ev] is 0, set by MPI_T_event_handle_alloc and
 * cleared when the event's last handle is freed. The record (the event's elements, laid
 * out as MPI_T_event_get_info's displacements say) is built only when it is set. */
#ifndef FMPL_MPI_TOOL_EVENT_H
#define FMPL_MPI_TOOL_EVENT_H

#include <stdint.h>

#include "base/base.h"

enum {
    MPII_EV_UNEXPECTED = 0, /* p2p.c: a message arrived before its receive and was queued */
    MPII_EV_RENDEZVOUS,     /* p2p.c: a send went by rendezvous (its RTS left) */
    MPII_EV_COLL_ALG,       /* coll_sched.c: a collective call ran with the algorithm noted */
    MPII_EV_IO_DONE,        /* file_async.c: a nonblocking MPI-IO transfer finished */
    MPII_EV_N
};

typedef struct mpii_ev_unexpected {
    int32_t source; /* the sender's rank in the communicator */
    int32_t tag;
    uint32_t context; /* the communicator's context id */
    uint32_t pad;
    uint64_t bytes;
} mpii_ev_unexpected_t;

typedef struct mpii_ev_rendezvous {
    int32_t dest; /* the receiver's rank in MPI_COMM_WORLD */
    int32_t tag;
    uint64_t bytes;
} mpii_ev_rendezvous_t;

typedef struct mpii_ev_coll_alg {
    int32_t collective; /* MPII_CK_* - 1: 0 barrier .. 10 exscan (pvar enumeration order) */
    int32_t algorithm;  /* MPII_ALG_* (the enumeration of the coll algorithm pvars) */
} mpii_ev_coll_alg_t;

typedef struct mpii_ev_io_done {
    int32_t write;    /* 1 write, 0 read */
    int32_t error;    /* MPI error class of the transfer */
    int64_t bytes;    /* bytes moved (in the file's representation) */
    int64_t position; /* view byte position of the access */
} mpii_ev_io_done_t;

extern unsigned char mpii_tool_event_on[MPII_EV_N];

/* Raises event ev with its record: buffered for, or delivered to, each handle. */
void mpii_tool_event_raise(int ev, const void *record);

#define MPII_EVENT_ON(ev) BASE_UNLIKELY(mpii_tool_event_on[(ev)])

/* Delivers buffered instances and dropped counts (cb_safety MPI_T_CB_REQUIRE_NONE);
 * call without the MPI_T mutex. Nothing inside a callback. */
void mpii_tool_event_deliver(void);
/* Frees every handle (the last MPI_T_finalize). */
void mpii_tool_event_finalize(void);
/* Events of category (layer) cat: how many, and their indices. */
int mpii_tool_event_count_in(int cat);
int mpii_tool_event_list(int cat, int len, int *indices);

#endif
