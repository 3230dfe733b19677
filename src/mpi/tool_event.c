/* tool_event.c — MPI_T events and event sources (MPI-4.0 15.3.8).
 *
 * Events (the hook that raises them: tool_event.h), all in category "mpi":
 *   0 mpi_unexpected_message   a message arrived before its receive and was queued
 *                              {source, tag, context id, bytes};
 *   1 mpi_rendezvous_send      a send went by rendezvous {world rank of dest, tag, bytes};
 *   2 mpi_coll_algorithm       a collective call ran with an algorithm {collective,
 *                              algorithm} (the numbering of the coll algorithm pvars);
 *   3 mpi_io_done              a nonblocking MPI-IO transfer finished {write, class, bytes,
 *                              view position}.
 * None binds to an object (MPI_T_BIND_NO_OBJECT: obj_handle is ignored).
 *
 * One source, 0 "fmpl_clock": the process's monotonic clock in nanoseconds (ordered; the
 * timestamps of one process's events never decrease).
 *
 * Delivery. Events are raised inside the library, on the thread that makes the MPI call,
 * where a callback may only use the restricted MPI functions (the MPI_T_event_* calls on
 * its instance): that context is MPI_T_CB_REQUIRE_MPI_RESTRICTED. A handle's callback
 * registered for the lowest safety level that meets it (MPI_RESTRICTED, THREAD_SAFE or
 * ASYNC_SIGNAL_SAFE) is called at once. A handle that has only a callback for
 * MPI_T_CB_REQUIRE_NONE gets the instance later: it is copied into the handle's buffer
 * (capacity: the info key "fmpl_event_buffer", default 256 instances) and delivered, with
 * cb_safety MPI_T_CB_REQUIRE_NONE, when the program next calls an MPI_T event or source
 * function or MPI_T_finalize (outside any callback). An instance that finds the buffer
 * full is dropped and counted; the handle's dropped handler learns the count at the next
 * delivery, before the buffered instances. A handle without any callback ignores its
 * events. An MPI_T_event_instance is valid only inside the callback it was given to
 * (afterwards: MPI_T_ERR_INVALID_HANDLE).
 *
 * Registrations live in one list under the MPI_T mutex; the mutex is released before any
 * callback runs, so callbacks may call the MPI_T functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "mpi/tool_event.h"
#include "mpi/tool_impl.h"

unsigned char mpii_tool_event_on[MPII_EV_N];

#define MAX_ELEM 4
#define MAX_RECORD 32
#define DEFAULT_BUFFER 256
#define NSAFETY 4

typedef struct ev_def {
    const char *name, *desc;
    int nelem;
    MPI_Datatype types[MAX_ELEM];
    MPI_Aint displs[MAX_ELEM];
    int size; /* bytes of the record */
} ev_def_t;

static const ev_def_t events[MPII_EV_N] = {
    {"mpi_unexpected_message",
     "a message arrived before its receive was posted and was queued: elements source (rank "
     "in the communicator), tag, context id, bytes",
     4,
     {MPI_INT32_T, MPI_INT32_T, MPI_UINT32_T, MPI_UINT64_T},
     {offsetof(mpii_ev_unexpected_t, source), offsetof(mpii_ev_unexpected_t, tag),
      offsetof(mpii_ev_unexpected_t, context), offsetof(mpii_ev_unexpected_t, bytes)},
     sizeof(mpii_ev_unexpected_t)},
    {"mpi_rendezvous_send",
     "a send went by rendezvous (the receiver reads the data): elements destination (rank in "
     "MPI_COMM_WORLD), tag, bytes",
     3,
     {MPI_INT32_T, MPI_INT32_T, MPI_UINT64_T},
     {offsetof(mpii_ev_rendezvous_t, dest), offsetof(mpii_ev_rendezvous_t, tag),
      offsetof(mpii_ev_rendezvous_t, bytes)},
     sizeof(mpii_ev_rendezvous_t)},
    {"mpi_coll_algorithm",
     "a collective call ran: elements collective (0 barrier, 1 bcast, 2 gather, 3 scatter, 4 "
     "allgather, 5 alltoall, 6 reduce, 7 allreduce, 8 reduce_scatter_block, 9 scan, 10 exscan) "
     "and algorithm (the values of the enumeration fmpl_coll_algorithm)",
     2,
     {MPI_INT32_T, MPI_INT32_T},
     {offsetof(mpii_ev_coll_alg_t, collective), offsetof(mpii_ev_coll_alg_t, algorithm)},
     sizeof(mpii_ev_coll_alg_t)},
    {"mpi_io_done",
     "a nonblocking MPI-IO transfer (MPI_File_i*, split collective) finished: elements write "
     "(1) or read (0), MPI error class, bytes moved, view byte position",
     4,
     {MPI_INT32_T, MPI_INT32_T, MPI_INT64_T, MPI_INT64_T},
     {offsetof(mpii_ev_io_done_t, write), offsetof(mpii_ev_io_done_t, error),
      offsetof(mpii_ev_io_done_t, bytes), offsetof(mpii_ev_io_done_t, position)},
     sizeof(mpii_ev_io_done_t)},
};
#define EV_CATEGORY 6 /* "mpi" (mpii_tool_layers) */

struct fmpl_mpi_t_event_instance_s {
    int event, source;
    MPI_Count timestamp;
    _Alignas(8) unsigned char data[MAX_RECORD];
};

struct fmpl_mpi_t_event_registration_s {
    struct fmpl_mpi_t_event_registration_s *next;
    int event;
    MPI_T_event_cb_function *cb[NSAFETY];
    void *user[NSAFETY];
    MPI_T_event_dropped_cb_function *dropped_fn;
    MPI_Count dropped; /* since the last report */
    struct fmpl_mpi_t_event_instance_s *ring;
    int cap, head, n;
};
typedef struct fmpl_mpi_t_event_registration_s reg_t;
typedef struct fmpl_mpi_t_event_instance_s inst_t;

static reg_t *regs;
static int nhandles[MPII_EV_N];
/* the instance a callback on this thread was given (valid during the callback) */
static _Thread_local const inst_t *live;
static _Thread_local int in_callback;

static int reg_valid(const reg_t *r)
{
    for (const reg_t *x = regs; x; x = x->next)
        if (x == r)
            return 1;
    return 0;
}

static void run_callback(MPI_T_event_cb_function *fn, const inst_t *in, reg_t *r, int safety,
                         void *user)
{
    const inst_t *saved = live;
    live = in;
    in_callback++;
    fn((MPI_T_event_instance)(uintptr_t)in, r, (MPI_T_cb_safety)safety, user);
    in_callback--;
    live = saved;
}

/* ---------------------------------------------------------------- raising */

typedef struct pending_call {
    reg_t *r;
    MPI_T_event_cb_function *fn;
    void *user;
} pending_call_t;

void mpii_tool_event_raise(int ev, const void *record)
{
    inst_t in;
    in.event = ev;
    in.source = 0;
    in.timestamp = (MPI_Count)base_time_ns();
    memcpy(in.data, record, (size_t)events[ev].size);
    pending_call_t now[8];
    int nnow = 0;
    mpii_tool_lock();
    for (reg_t *r = regs; r; r = r->next) {
        if (r->event != ev)
            continue;
        int level = -1;
        for (int s = MPI_T_CB_REQUIRE_MPI_RESTRICTED; s < NSAFETY && level < 0; s++)
            if (r->cb[s])
                level = s;
        if (level >= 0 && nnow < (int)(sizeof now / sizeof now[0])) {
            now[nnow++] = (pending_call_t){r, r->cb[level], r->user[level]};
        } else if (level >= 0 || r->cb[MPI_T_CB_REQUIRE_NONE]) {
            if (r->n == r->cap) {
                r->dropped++;
            } else {
                r->ring[(r->head + r->n) % r->cap] = in;
                r->n++;
            }
        }
    }
    mpii_tool_unlock();
    for (int i = 0; i < nnow; i++) /* with the context's level (the callback meets it) */
        run_callback(now[i].fn, &in, now[i].r, MPI_T_CB_REQUIRE_MPI_RESTRICTED, now[i].user);
}

/* Delivers the buffered instances and dropped counts (context MPI_T_CB_REQUIRE_NONE).
 * Called without the mutex, outside callbacks. */
void mpii_tool_event_deliver(void)
{
    if (in_callback)
        return;
    for (;;) {
        mpii_tool_lock();
        reg_t *r = regs;
        while (r && r->n == 0 && !(r->dropped && r->dropped_fn))
            r = r->next;
        if (!r) {
            mpii_tool_unlock();
            return;
        }
        if (r->dropped && r->dropped_fn) {
            MPI_Count d = r->dropped;
            r->dropped = 0;
            MPI_T_event_dropped_cb_function *fn = r->dropped_fn;
            void *user = r->user[MPI_T_CB_REQUIRE_NONE];
            mpii_tool_unlock();
            in_callback++;
            fn(d, r, 0, MPI_T_CB_REQUIRE_NONE, user);
            in_callback--;
            continue;
        }
        inst_t in = r->ring[r->head];
        r->head = (r->head + 1) % r->cap;
        r->n--;
        int level = -1;
        for (int s = 0; s < NSAFETY && level < 0; s++)
            if (r->cb[s])
                level = s;
        MPI_T_event_cb_function *fn = level >= 0 ? r->cb[level] : NULL;
        void *user = level >= 0 ? r->user[level] : NULL;
        mpii_tool_unlock();
        if (fn)
            run_callback(fn, &in, r, MPI_T_CB_REQUIRE_NONE, user);
    }
}

/* The entry of the event and source calls: deferred delivery, then the mutex. */
#define EVENT_ENTER()                                                                              \
    do {                                                                                           \
        mpii_tool_lock();                                                                          \
        int active_ = mpii_tool_active();                                                          \
        mpii_tool_unlock();                                                                        \
        if (!active_)                                                                              \
            return MPI_T_ERR_NOT_INITIALIZED;                                                      \
        mpii_tool_event_deliver();                                                                 \
        MPII_TOOL_ENTER();                                                                         \
    } while (0)

void mpii_tool_event_finalize(void)
{
    while (regs) {
        reg_t *r = regs;
        regs = r->next;
        free(r->ring);
        free(r);
    }
    memset(nhandles, 0, sizeof nhandles);
    memset(mpii_tool_event_on, 0, sizeof mpii_tool_event_on);
}

int mpii_tool_event_count_in(int cat)
{
    return cat == EV_CATEGORY ? MPII_EV_N : 0;
}

int mpii_tool_event_list(int cat, int len, int *indices)
{
    int n = 0;
    for (int i = 0; i < mpii_tool_event_count_in(cat) && n < len; i++)
        indices[n++] = i;
    return n;
}

/* ---------------------------------------------------------------- events */

int PMPI_T_event_get_num(int *num_events)
{
    EVENT_ENTER();
    if (!num_events)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_events = MPII_EV_N;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_get_num, PMPI_T_event_get_num)

/* An empty info object when MPI is initialized (the caller frees it), else MPI_INFO_NULL. */
static MPI_Info empty_info(void)
{
    MPI_Info info = MPI_INFO_NULL;
    int up = 0, down = 0;
    PMPI_Initialized(&up);
    PMPI_Finalized(&down);
    if (up && !down && PMPI_Info_create(&info) != MPI_SUCCESS)
        info = MPI_INFO_NULL;
    return info;
}

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    EVENT_ENTER();
    if (event_index < 0 || event_index >= MPII_EV_N)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    const ev_def_t *d = &events[event_index];
    mpii_tool_copy_str(d->name, name, name_len);
    mpii_tool_copy_str(d->desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (num_elements) {
        /* the arrays hold *num_elements entries (MPI-4.0: filled up to that many) */
        int room = *num_elements;
        for (int i = 0; i < d->nelem && i < room; i++) {
            if (array_of_datatypes)
                array_of_datatypes[i] = d->types[i];
            if (array_of_displacements)
                array_of_displacements[i] = d->displs[i];
        }
        *num_elements = d->nelem;
    }
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    mpii_tool_unlock();
    if (info)
        *info = empty_info();
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_T_event_get_info, PMPI_T_event_get_info)

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    EVENT_ENTER();
    if (!name || !event_index)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    for (int i = 0; i < MPII_EV_N; i++)
        if (strcmp(events[i].name, name) == 0) {
            *event_index = i;
            MPII_TOOL_RETURN(MPI_SUCCESS);
        }
    MPII_TOOL_RETURN(MPI_T_ERR_INVALID_NAME);
}
MPII_WEAK(MPI_T_event_get_index, PMPI_T_event_get_index)

/* The buffer capacity info asks for (key fmpl_event_buffer), or dflt. */
static int info_capacity(MPI_Info info, int dflt)
{
    if (info == MPI_INFO_NULL)
        return dflt;
    char v[32];
    int flag = 0;
    if (PMPI_Info_get(info, "fmpl_event_buffer", (int)sizeof v - 1, v, &flag) != MPI_SUCCESS ||
        !flag)
        return dflt;
    long n = strtol(v, NULL, 10);
    return n >= 1 && n <= (1 << 20) ? (int)n : dflt;
}

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    (void)obj_handle; /* no event binds to an object */
    EVENT_ENTER();
    if (event_index < 0 || event_index >= MPII_EV_N)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!event_registration)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    mpii_tool_unlock();
    int cap = info_capacity(info, DEFAULT_BUFFER);
    reg_t *r = calloc(1, sizeof *r);
    inst_t *ring = malloc((size_t)cap * sizeof *ring);
    if (!r || !ring) {
        free(r);
        free(ring);
        return MPI_T_ERR_OUT_OF_HANDLES;
    }
    r->event = event_index;
    r->ring = ring;
    r->cap = cap;
    mpii_tool_lock();
    r->next = regs;
    regs = r;
    nhandles[event_index]++;
    mpii_tool_event_on[event_index] = 1;
    *event_registration = r;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_handle_alloc, PMPI_T_event_handle_alloc)

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    EVENT_ENTER();
    reg_t *r = event_registration;
    if (!reg_valid(r))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    int cap = r->cap;
    mpii_tool_unlock();
    cap = info_capacity(info, cap);
    mpii_tool_lock();
    if (reg_valid(r) && cap != r->cap) {
        inst_t *ring = malloc((size_t)cap * sizeof *ring);
        if (!ring)
            MPII_TOOL_RETURN(MPI_T_ERR_OUT_OF_HANDLES);
        int keep = BASE_MIN(r->n, cap); /* the newest instances */
        r->dropped += r->n - keep;
        for (int i = 0; i < keep; i++)
            ring[i] = r->ring[(r->head + r->n - keep + i) % r->cap];
        free(r->ring);
        r->ring = ring;
        r->cap = cap;
        r->head = 0;
        r->n = keep;
    }
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_handle_set_info, PMPI_T_event_handle_set_info)

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    EVENT_ENTER();
    reg_t *r = event_registration;
    if (!reg_valid(r))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!info_used)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    int cap = r->cap;
    mpii_tool_unlock();
    *info_used = empty_info();
    if (*info_used != MPI_INFO_NULL) {
        char v[32];
        snprintf(v, sizeof v, "%d", cap);
        PMPI_Info_set(*info_used, "fmpl_event_buffer", v);
    }
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_T_event_handle_get_info, PMPI_T_event_handle_get_info)

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function *event_cb_function)
{
    (void)info; /* no keys */
    EVENT_ENTER();
    reg_t *r = event_registration;
    if (!reg_valid(r))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if ((int)cb_safety < 0 || (int)cb_safety >= NSAFETY)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    r->cb[cb_safety] = event_cb_function; /* NULL: removes it */
    r->user[cb_safety] = user_data;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_register_callback, PMPI_T_event_register_callback)

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)info; /* no keys */
    EVENT_ENTER();
    if (!reg_valid(event_registration))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if ((int)cb_safety < 0 || (int)cb_safety >= NSAFETY)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_callback_set_info, PMPI_T_event_callback_set_info)

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    EVENT_ENTER();
    if (!reg_valid(event_registration))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if ((int)cb_safety < 0 || (int)cb_safety >= NSAFETY || !info_used)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    mpii_tool_unlock();
    *info_used = empty_info();
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_T_event_callback_get_info, PMPI_T_event_callback_get_info)

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function *free_cb_function)
{
    EVENT_ENTER(); /* delivers what the handle buffered first */
    reg_t *r = event_registration;
    if (!reg_valid(r))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    for (reg_t **p = &regs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    if (--nhandles[r->event] == 0)
        mpii_tool_event_on[r->event] = 0;
    mpii_tool_unlock();
    if (free_cb_function) {
        in_callback++;
        free_cb_function(r, MPI_T_CB_REQUIRE_NONE, user_data);
        in_callback--;
    }
    free(r->ring);
    free(r);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_T_event_handle_free, PMPI_T_event_handle_free)

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function *dropped_cb_function)
{
    EVENT_ENTER();
    reg_t *r = event_registration;
    if (!reg_valid(r))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    r->dropped_fn = dropped_cb_function;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_set_dropped_handler, PMPI_T_event_set_dropped_handler)

/* ---------------------------------------------------------------- instances */

/* The instance behind h when it is the one a callback on this thread holds. */
static const inst_t *instance_of(MPI_T_event_instance h)
{
    const inst_t *in = (const inst_t *)(uintptr_t)h;
    return in && in == live ? in : NULL;
}

/* The instance calls are "restricted" ones: callable inside callbacks, no delivery. */
#define INSTANCE_ENTER(in, h)                                                                      \
    MPII_TOOL_ENTER();                                                                             \
    const inst_t *in = instance_of(h);                                                             \
    if (!in)                                                                                       \
    MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE)

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    INSTANCE_ENTER(in, event_instance);
    const ev_def_t *d = &events[in->event];
    if (element_index < 0 || element_index >= d->nelem)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!buffer)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    memcpy(buffer, in->data + d->displs[element_index],
           (size_t)FMPL_MPI_DT_SIZE(d->types[element_index]));
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_read, PMPI_T_event_read)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    INSTANCE_ENTER(in, event_instance);
    if (!buffer)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    memcpy(buffer, in->data, (size_t)events[in->event].size);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_copy, PMPI_T_event_copy)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    INSTANCE_ENTER(in, event_instance);
    if (!event_timestamp)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *event_timestamp = in->timestamp;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_get_timestamp, PMPI_T_event_get_timestamp)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    INSTANCE_ENTER(in, event_instance);
    if (!source_index)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *source_index = in->source;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_get_source, PMPI_T_event_get_source)

/* ---------------------------------------------------------------- sources */

int PMPI_T_source_get_num(int *num_sources)
{
    EVENT_ENTER();
    if (!num_sources)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_sources = 1;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_source_get_num, PMPI_T_source_get_num)

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    EVENT_ENTER();
    if (source_index != 0)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    mpii_tool_copy_str("fmpl_clock", name, name_len);
    mpii_tool_copy_str("this process's monotonic clock (CLOCK_MONOTONIC), in nanoseconds: every "
                       "FMPL event's timestamp",
                       desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    mpii_tool_unlock();
    if (info)
        *info = empty_info();
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_T_source_get_info, PMPI_T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    EVENT_ENTER();
    if (source_index != 0)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!timestamp)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *timestamp = (MPI_Count)base_time_ns();
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_source_get_timestamp, PMPI_T_source_get_timestamp)
