/* mpi_tool.c — the MPI tool information interface (src/mpi/tool_*.c):
 * - MPI_T before MPI_Init, nested init/finalize, after MPI_Finalize, and
 *   MPI_T_ERR_NOT_INITIALIZED outside;
 * - control variables: exactly base's settings records (names, meanings, values, order),
 *   every setting fmpl-info lists (argv[1]: its path) and every one in the README's table
 *   (argv[2]); categories are the layers and hold every variable once; writes of a
 *   writable setting take effect (FMPL_MPI_EAGER_MAX=0: messages go by rendezvous;
 *   FMPL_MPI_BCAST_LARGE / _ALLREDUCE_LARGE: the algorithm changes), read-only ones and
 *   out-of-range values are refused;
 * - performance variables: eager and rendezvous messages and bytes, shm/udp operations,
 *   unexpected queue level, high-water mark and arrivals, collective algorithm per call,
 *   with start/stop/reset/readreset/write semantics of each class;
 * - error paths: invalid index, name, handle, session, item (events: mpi_tool_event.c).
 * Run with FMPL_COLL_GROUPS=1 so that a duplicate of MPI_COMM_WORLD runs its collectives
 * over point-to-point (the algorithms the thresholds choose between). */
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "mpi.h"
#include "test_util.h"

static int rank, size;

/* ------------------------------------------------------------------ helpers */

static int cvar_index(const char *name)
{
    int i = -1;
    CHECK_RC(MPI_T_cvar_get_index(name, &i), MPI_SUCCESS);
    return i;
}

static int cvar_read_int(const char *name)
{
    MPI_T_cvar_handle h;
    int count = 0, v = -1;
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count), MPI_SUCCESS);
    CHECK(count == 1);
    CHECK_RC(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    CHECK(h == MPI_T_CVAR_HANDLE_NULL);
    return v;
}

static int cvar_write_int(const char *name, int v)
{
    MPI_T_cvar_handle h;
    int count = 0;
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count), MPI_SUCCESS);
    int rc = MPI_T_cvar_write(h, &v);
    CHECK_RC(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    return rc;
}

static MPI_Count cvar_read_count(const char *name)
{
    MPI_T_cvar_handle h;
    int count = 0;
    MPI_Count v = -1;
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    return v;
}

static void cvar_write_count(const char *name, MPI_Count v)
{
    MPI_T_cvar_handle h;
    int count = 0;
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_write(h, &v), MPI_SUCCESS);
    MPI_Count back = -1;
    CHECK_RC(MPI_T_cvar_read(h, &back), MPI_SUCCESS);
    CHECK(back == v);
    CHECK_RC(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
}

static int pvar_index(const char *name, int cls)
{
    int i = -1;
    CHECK_RC(MPI_T_pvar_get_index(name, cls, &i), MPI_SUCCESS);
    return i;
}

static MPI_T_pvar_handle pvar_handle(MPI_T_pvar_session s, const char *name, int cls,
                                     int want_count)
{
    MPI_T_pvar_handle h;
    int count = -1;
    CHECK_RC(MPI_T_pvar_handle_alloc(s, pvar_index(name, cls), NULL, &h, &count), MPI_SUCCESS);
    CHECK(count == want_count);
    return h;
}

static unsigned long long pvar_u64(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    return v;
}

/* ------------------------------------------------------------------ control variables */

typedef struct walk {
    int i, n;
} walk_t;

/* Every record is cvar i, in order, with the same name, meaning and value. */
static void record_matches(const base_setting_t *s, void *arg)
{
    walk_t *w = arg;
    char name[128], desc[1024];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum e;
    CHECK_RC(MPI_T_cvar_get_info(w->i, name, &nl, &verb, &dt, &e, desc, &dl, &bind, &scope),
             MPI_SUCCESS);
    CHECK(strcmp(name, s->name) == 0);
    CHECK(nl == (int)strlen(s->name) + 1);
    CHECK(strcmp(desc, s->what) == 0);
    CHECK(bind == MPI_T_BIND_NO_OBJECT);
    CHECK(scope == (s->apply ? (s->all_equal ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_LOCAL)
                             : MPI_T_SCOPE_READONLY));
    MPI_T_cvar_handle h;
    int count;
    CHECK_RC(MPI_T_cvar_handle_alloc(w->i, NULL, &h, &count), MPI_SUCCESS);
    char text[64];
    if (dt == MPI_CHAR) {
        CHECK(count == 64);
        char buf[64];
        CHECK_RC(MPI_T_cvar_read(h, buf), MPI_SUCCESS);
        CHECK(strcmp(buf, s->value) == 0);
    } else if (dt == MPI_INT) {
        int v;
        CHECK(count == 1);
        CHECK_RC(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
        snprintf(text, sizeof text, "%d", v);
        CHECK(strcmp(text, s->value) == 0);
        if (s->kind == BASE_SETTING_BOOL) {
            int n = 0, val = -1, il = 16;
            char item[16];
            CHECK(e != MPI_T_ENUM_NULL);
            CHECK_RC(MPI_T_enum_get_info(e, &n, NULL, NULL), MPI_SUCCESS);
            CHECK(n == 2);
            CHECK_RC(MPI_T_enum_get_item(e, v, &val, item, &il), MPI_SUCCESS);
            CHECK(val == v && strcmp(item, v ? "true" : "false") == 0);
        }
    } else {
        CHECK(dt == MPI_COUNT);
        MPI_Count v;
        CHECK_RC(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
        snprintf(text, sizeof text, "%lld", v);
        CHECK(strcmp(text, s->value) == 0);
    }
    if (!s->apply) {
        char junk[64] = "0";
        CHECK_RC(MPI_T_cvar_write(h, junk), MPI_T_ERR_CVAR_SET_NEVER);
    }
    CHECK_RC(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    /* its category is its layer */
    int cat = -1, ncat = 0;
    CHECK_RC(MPI_T_category_get_index(s->layer, &cat), MPI_SUCCESS);
    int members[256];
    CHECK_RC(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, &ncat, NULL, NULL), MPI_SUCCESS);
    CHECK(ncat > 0 && ncat <= 256);
    CHECK_RC(MPI_T_category_get_cvars(cat, ncat, members), MPI_SUCCESS);
    int found = 0;
    for (int k = 0; k < ncat; k++)
        found += members[k] == w->i;
    CHECK(found == 1);
    w->i++;
}

static void check_cvars_are_records(void)
{
    int n = -1;
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    CHECK(n == base_env_count());
    walk_t w = {0, n};
    base_env_foreach(record_matches, &w);
    CHECK(w.i == n);
}

/* Every setting fmpl-info prints is a cvar; every FMPL_ cvar is in the README's table. */
static void check_against_tools(const char *fmpl_info, const char *readme)
{
    char cmd[1024];
    /* fmpl-info runs alone (a singleton): not as a rank of this job */
    snprintf(cmd, sizeof cmd,
             "env -u PMI_FD -u PMI_RANK -u PMI_SIZE -u PMI_PORT -u PMI_ID -u FMPL_LAUNCHER "
             "-u FMPL_PMI_TOKEN %s --settings",
             fmpl_info);
    FILE *f = popen(cmd, "r");
    CHECK(f);
    char line[1024];
    int listed = 0;
    while (fgets(line, sizeof line, f)) {
        char name[128];
        if (sscanf(line, " %127s", name) == 1 && strncmp(name, "FMPL_", 5) == 0) {
            int i;
            CHECK_RC(MPI_T_cvar_get_index(name, &i), MPI_SUCCESS);
            listed++;
        }
    }
    CHECK(pclose(f) == 0);
    CHECK(listed > 20);

    f = fopen(readme, "r");
    CHECK(f);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    int n;
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    for (int i = 0; i < n; i++) {
        char name[128], row[160];
        int nl = sizeof name;
        CHECK_RC(MPI_T_cvar_get_info(i, name, &nl, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                 MPI_SUCCESS);
        snprintf(row, sizeof row, "| `%s` |", name);
        char *r = strstr(text, row);
        if (!r) {
            fprintf(stderr, "README.md: no table row for %s\n", name);
            CHECK(0);
        }
        /* the row says "MPI_T: writable" exactly when the variable is */
        char *end = strchr(r, '\n');
        CHECK(end);
        *end = '\0';
        int marked = strstr(r, "MPI_T: writable") != NULL, scope;
        *end = '\n';
        CHECK_RC(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope),
                 MPI_SUCCESS);
        if (marked != (scope != MPI_T_SCOPE_READONLY)) {
            fprintf(stderr, "README.md: %s is%s marked writable\n", name, marked ? "" : " not");
            CHECK(0);
        }
    }
}

/* ------------------------------------------------------------------ traffic */

/* rank 0 sends n messages of len bytes to every other rank; contents checked. */
static void send_round(int n, int len, int seed)
{
    char buf[4096];
    for (int m = 0; m < n; m++) {
        if (rank == 0) {
            for (int d = 1; d < size; d++) {
                for (int k = 0; k < len; k++)
                    buf[k] = (char)(seed + m * 7 + d * 3 + k);
                CHECK_RC(MPI_Send(buf, len, MPI_CHAR, d, 40 + m, MPI_COMM_WORLD), MPI_SUCCESS);
            }
        } else {
            MPI_Status st;
            memset(buf, 0, sizeof buf);
            CHECK_RC(MPI_Recv(buf, len, MPI_CHAR, 0, 40 + m, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            for (int k = 0; k < len; k++)
                CHECK(buf[k] == (char)(seed + m * 7 + rank * 3 + k));
        }
    }
}

static void check_p2p_counts(void)
{
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    MPI_T_pvar_handle eager = pvar_handle(s, "mpi_p2p_eager_sent", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle ebytes = pvar_handle(s, "mpi_p2p_eager_bytes", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle rndv = pvar_handle(s, "mpi_p2p_rndv_sent", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle rbytes = pvar_handle(s, "mpi_p2p_rndv_bytes", MPI_T_PVAR_CLASS_COUNTER, 1);
    const char *tr = strcmp(base_env_find("FMPL_TRANSPORT")->value, "udp") == 0 ? "udp" : "shm";
    char name[64];
    snprintf(name, sizeof name, "vnic_%s_ops", tr);
    MPI_T_pvar_handle ops = pvar_handle(s, name, MPI_T_PVAR_CLASS_COUNTER, 1);
    snprintf(name, sizeof name, "vnic_%s_bytes", tr);
    MPI_T_pvar_handle vbytes = pvar_handle(s, name, MPI_T_PVAR_CLASS_COUNTER, 1);

    /* a counter handle starts stopped, at zero */
    CHECK(pvar_u64(s, eager) == 0);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);

    /* FMPL_MPI_EAGER_MAX=0: every message with data goes by rendezvous */
    int old = cvar_read_int("FMPL_MPI_EAGER_MAX");
    CHECK(old > 100);
    CHECK_RC(cvar_write_int("FMPL_MPI_EAGER_MAX", 0), MPI_SUCCESS);
    CHECK(cvar_read_int("FMPL_MPI_EAGER_MAX") == 0);
    CHECK(strcmp(base_env_find("FMPL_MPI_EAGER_MAX")->value, "0") == 0);
    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    send_round(5, 100, 1);
    CHECK_RC(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    unsigned long long peers = rank == 0 ? (unsigned long long)(size - 1) : 0;
    CHECK(pvar_u64(s, rndv) == 5 * peers);
    CHECK(pvar_u64(s, rbytes) == 500 * peers);
    CHECK(pvar_u64(s, eager) == 0);
    CHECK(pvar_u64(s, ebytes) == 0);
    CHECK(pvar_u64(s, ops) >= 5 * peers);

    /* larger than at start, or negative: refused, value kept */
    CHECK_RC(cvar_write_int("FMPL_MPI_EAGER_MAX", old + 1), MPI_T_ERR_INVALID);
    CHECK_RC(cvar_write_int("FMPL_MPI_EAGER_MAX", -1), MPI_T_ERR_INVALID);
    CHECK(cvar_read_int("FMPL_MPI_EAGER_MAX") == 0);
    CHECK_RC(cvar_write_int("FMPL_MPI_EAGER_MAX", old), MPI_SUCCESS);
    CHECK(cvar_read_int("FMPL_MPI_EAGER_MAX") == old);

    /* stopped: nothing more counts */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    send_round(2, 10, 2);
    CHECK(pvar_u64(s, rndv) == 5 * peers);
    /* reset, start again: eager now, exact counts and bytes */
    CHECK_RC(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    CHECK(pvar_u64(s, rndv) == 0 && pvar_u64(s, ops) == 0 && pvar_u64(s, vbytes) == 0);
    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    send_round(4, 300, 3);
    CHECK(pvar_u64(s, eager) == 4 * peers);
    CHECK(pvar_u64(s, ebytes) == 1200 * peers);
    CHECK(pvar_u64(s, rndv) == 0);
    CHECK(pvar_u64(s, ops) >= 4 * peers);
    CHECK(pvar_u64(s, vbytes) >= 1200 * peers);
    /* readreset: the value, then zero; write: a value of our own from now on */
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_readreset(s, ebytes, &v), MPI_SUCCESS);
    CHECK(v == 1200 * peers);
    CHECK(pvar_u64(s, ebytes) == 0);
    unsigned long long w = 1000;
    CHECK_RC(MPI_T_pvar_write(s, eager, &w), MPI_SUCCESS);
    send_round(1, 8, 4);
    CHECK(pvar_u64(s, eager) == 1000 + peers);
    CHECK(pvar_u64(s, ebytes) == 8 * peers);
    /* a second session counts on its own */
    MPI_T_pvar_session s2;
    CHECK_RC(MPI_T_pvar_session_create(&s2), MPI_SUCCESS);
    MPI_T_pvar_handle e2 = pvar_handle(s2, "mpi_p2p_eager_sent", MPI_T_PVAR_CLASS_COUNTER, 1);
    CHECK_RC(MPI_T_pvar_start(s2, e2), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_start(s2, e2), MPI_SUCCESS); /* started: no change */
    send_round(3, 8, 5);
    CHECK(pvar_u64(s2, e2) == 3 * peers);
    CHECK(pvar_u64(s, eager) == 1000 + 4 * peers);
    /* a handle belongs to its session */
    CHECK_RC(MPI_T_pvar_read(s2, eager, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_session_free(&s2), MPI_SUCCESS);
    CHECK(s2 == MPI_T_PVAR_SESSION_NULL);
    CHECK_RC(MPI_T_pvar_read(s2, e2, &v), MPI_T_ERR_INVALID_SESSION);
    CHECK_RC(MPI_T_pvar_handle_free(s, &ops), MPI_SUCCESS);
    CHECK(ops == MPI_T_PVAR_HANDLE_NULL);
    CHECK_RC(MPI_T_pvar_read(s, ops, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

static void check_unexpected(void)
{
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    MPI_T_pvar_handle len = pvar_handle(s, "mpi_p2p_unexp_len", MPI_T_PVAR_CLASS_LEVEL, 1);
    MPI_T_pvar_handle hwm = pvar_handle(s, "mpi_p2p_unexp_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, 1);
    MPI_T_pvar_handle arrived =
        pvar_handle(s, "mpi_p2p_unexp_arrived", MPI_T_PVAR_CLASS_COUNTER, 1);
    /* continuous and read-only */
    CHECK_RC(MPI_T_pvar_start(s, len), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_RC(MPI_T_pvar_stop(s, hwm), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_RC(MPI_T_pvar_reset(s, len), MPI_T_ERR_PVAR_NO_WRITE);
    unsigned long long v = 5;
    CHECK_RC(MPI_T_pvar_write(s, hwm, &v), MPI_T_ERR_PVAR_NO_WRITE);
    CHECK_RC(MPI_T_pvar_readreset(s, len, &v), MPI_T_ERR_PVAR_NO_WRITE);
    CHECK(pvar_u64(s, len) == 0);
    CHECK_RC(MPI_T_pvar_start(s, arrived), MPI_SUCCESS);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    const int n = 3;
    int x[3] = {11, 22, 33};
    if (rank == 0 && size > 1)
        for (int m = 0; m < n; m++)
            CHECK_RC(MPI_Send(&x[m], 1, MPI_INT, 1, 70 + m, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    if (rank == 1) {
        /* progress until the three are queued (bounded) */
        time_t t0 = time(NULL);
        while (pvar_u64(s, len) < (unsigned long long)n) {
            int flag;
            CHECK_RC(MPI_Iprobe(0, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(!flag);
            CHECK(time(NULL) - t0 < 30);
        }
        CHECK(pvar_u64(s, len) == (unsigned long long)n);
        CHECK(pvar_u64(s, hwm) >= (unsigned long long)n);
        CHECK(pvar_u64(s, arrived) >= (unsigned long long)n);
        for (int m = n - 1; m >= 0; m--) {
            int y = 0;
            CHECK_RC(MPI_Recv(&y, 1, MPI_INT, 0, 70 + m, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
            CHECK(y == x[m]);
            CHECK(pvar_u64(s, len) == (unsigned long long)m);
        }
        CHECK(pvar_u64(s, hwm) >= (unsigned long long)n);
    }
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

/* Over udp (FMPL_TRANSPORT=udp): the transport's own counters; with injected loss
 * (FMPL_UDP_LOSS) the sender retransmits and the receiver reports gaps. */
static void check_udp(void)
{
    if (strcmp(base_env_find("FMPL_TRANSPORT")->value, "udp") != 0 || size < 2)
        return;
    const base_setting_t *loss = base_env_find("FMPL_UDP_LOSS");
    int lossy = loss && strcmp(loss->value, "0") != 0;
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    MPI_T_pvar_handle tx = pvar_handle(s, "vnic_udp_tx_packets", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle rx = pvar_handle(s, "vnic_udp_rx_packets", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle re = pvar_handle(s, "vnic_udp_retransmits", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle ops = pvar_handle(s, "vnic_udp_ops", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle shm = pvar_handle(s, "vnic_shm_ops", MPI_T_PVAR_CLASS_COUNTER, 1);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    send_round(lossy ? 1000 : 200, 64, 9);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    if (rank == 0) {
        CHECK(pvar_u64(s, ops) >= (lossy ? 1000ull : 200ull) * (size - 1));
        CHECK(pvar_u64(s, tx) > 0);   /* messages share datagrams (bundles) */
        CHECK(pvar_u64(s, shm) == 0); /* every peer is behind udp */
        if (lossy)
            CHECK(pvar_u64(s, re) > 0);
    } else {
        CHECK(pvar_u64(s, rx) > 0);
    }
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
}

/* ------------------------------------------------------------------ collectives */

enum {
    ALG_MAILBOX = 1,
    ALG_TREE = 3,
    ALG_SCAG = 4,
    ALG_RD = 5,
    ALG_RABENSEIFNER = 6,
    ALG_P2P = 7,
    ALG_OFFLOAD = 8
};
#define NALG 9

static int alg_value(const char *item)
{
    int e = pvar_index("mpi_coll_bcast_algorithm", MPI_T_PVAR_CLASS_STATE);
    MPI_T_enum en;
    MPI_Datatype dt;
    CHECK_RC(MPI_T_pvar_get_info(e, NULL, NULL, NULL, NULL, &dt, &en, NULL, NULL, NULL, NULL, NULL,
                                 NULL),
             MPI_SUCCESS);
    CHECK(dt == MPI_INT);
    int n = 0;
    CHECK_RC(MPI_T_enum_get_info(en, &n, NULL, NULL), MPI_SUCCESS);
    for (int i = 0; i < n; i++) {
        char name[64];
        int nl = sizeof name, v = -1;
        CHECK_RC(MPI_T_enum_get_item(en, i, &v, name, &nl), MPI_SUCCESS);
        if (strcmp(name, item) == 0)
            return v;
    }
    CHECK_RC(MPI_T_enum_get_item(en, n, NULL, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    CHECK(0);
    return -1;
}

/* One call of coll (0 bcast, 1 allreduce) on comm, of count ints; data checked; returns
 * the algorithm the state variable names, and checks the per-algorithm counter. */
static int coll_call(MPI_Comm comm, int coll, int count)
{
    static int buf[1 << 14], out[1 << 14];
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    const char *calls = coll ? "mpi_coll_allreduce_calls" : "mpi_coll_bcast_calls";
    const char *last = coll ? "mpi_coll_allreduce_algorithm" : "mpi_coll_bcast_algorithm";
    MPI_T_pvar_handle hc = pvar_handle(s, calls, MPI_T_PVAR_CLASS_COUNTER, NALG);
    MPI_T_pvar_handle hl = pvar_handle(s, last, MPI_T_PVAR_CLASS_STATE, 1);
    CHECK_RC(MPI_T_pvar_start(s, hc), MPI_SUCCESS);
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    if (coll == 0) {
        for (int i = 0; i < count; i++)
            buf[i] = r == p - 1 ? i * 5 + count : -1;
        CHECK_RC(MPI_Bcast(buf, count, MPI_INT, p - 1, comm), MPI_SUCCESS);
        for (int i = 0; i < count; i++)
            CHECK(buf[i] == i * 5 + count);
    } else {
        for (int i = 0; i < count; i++)
            buf[i] = i + r;
        CHECK_RC(MPI_Allreduce(buf, out, count, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        for (int i = 0; i < count; i++)
            CHECK(out[i] == p * i + p * (p - 1) / 2);
    }
    unsigned long long c[NALG];
    CHECK_RC(MPI_T_pvar_read(s, hc, c), MPI_SUCCESS);
    int alg = -1, total = 0, which = -1;
    CHECK_RC(MPI_T_pvar_read(s, hl, &alg), MPI_SUCCESS);
    for (int k = 0; k < NALG; k++) {
        total += (int)c[k];
        if (c[k])
            which = k;
    }
    CHECK(total == 1 && which == alg);
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    return alg;
}

/* One call of collective `name` on comm (data checked); returns the algorithm counted. */
static int other_call(MPI_Comm comm, const char *name)
{
    enum { N = 4 };
    static int sb[N * 64], rb[N * 64];
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    char cn[64], ln[64];
    snprintf(cn, sizeof cn, "mpi_coll_%s_calls", name);
    snprintf(ln, sizeof ln, "mpi_coll_%s_algorithm", name);
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    MPI_T_pvar_handle hc = pvar_handle(s, cn, MPI_T_PVAR_CLASS_COUNTER, NALG);
    MPI_T_pvar_handle hl = pvar_handle(s, ln, MPI_T_PVAR_CLASS_STATE, 1);
    CHECK_RC(MPI_T_pvar_start(s, hc), MPI_SUCCESS);
    for (int i = 0; i < N * p; i++)
        sb[i] = r * 1000 + i;
    if (strcmp(name, "barrier") == 0) {
        CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS);
    } else if (strcmp(name, "allgather") == 0) {
        CHECK_RC(MPI_Allgather(sb, N, MPI_INT, rb, N, MPI_INT, comm), MPI_SUCCESS);
        for (int q = 0; q < p; q++)
            for (int i = 0; i < N; i++)
                CHECK(rb[q * N + i] == q * 1000 + i);
    } else if (strcmp(name, "alltoall") == 0) {
        CHECK_RC(MPI_Alltoall(sb, N, MPI_INT, rb, N, MPI_INT, comm), MPI_SUCCESS);
        for (int q = 0; q < p; q++)
            for (int i = 0; i < N; i++)
                CHECK(rb[q * N + i] == q * 1000 + r * N + i);
    } else if (strcmp(name, "reduce") == 0) {
        CHECK_RC(MPI_Reduce(sb, rb, N, MPI_INT, MPI_SUM, 0, comm), MPI_SUCCESS);
        for (int i = 0; r == 0 && i < N; i++)
            CHECK(rb[i] == 1000 * p * (p - 1) / 2 + p * i);
    } else {
        CHECK(strcmp(name, "scan") == 0);
        CHECK_RC(MPI_Scan(sb, rb, N, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        for (int i = 0; i < N; i++)
            CHECK(rb[i] == 1000 * r * (r + 1) / 2 + (r + 1) * i);
    }
    unsigned long long c[NALG];
    int alg = -1, total = 0, which = -1;
    CHECK_RC(MPI_T_pvar_read(s, hc, c), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_read(s, hl, &alg), MPI_SUCCESS);
    for (int k = 0; k < NALG; k++) {
        total += (int)c[k];
        if (c[k])
            which = k;
    }
    CHECK(total == 1 && which == alg);
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    return alg;
}

static void check_collectives(void)
{
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    CHECK(alg_value("binomial_tree") == ALG_TREE);
    CHECK(alg_value("scatter_ring_allgather") == ALG_SCAG);
    CHECK(alg_value("mailbox") == ALG_MAILBOX);
    /* WORLD has mailboxes (FMPL_COLL_GROUPS=1: only WORLD) */
    if (size > 1) {
        CHECK(coll_call(MPI_COMM_WORLD, 0, 100) == ALG_MAILBOX);
        CHECK(coll_call(MPI_COMM_WORLD, 0, 100) == ALG_MAILBOX); /* cached: counted again */
    }
    /* the duplicate goes over point-to-point: the thresholds choose */
    MPI_Count bl = cvar_read_count("FMPL_MPI_BCAST_LARGE");
    MPI_Count al = cvar_read_count("FMPL_MPI_ALLREDUCE_LARGE");
    CHECK(bl == 64 * 1024 && al == 32 * 1024);
    CHECK(coll_call(dup, 0, 1000) == ALG_TREE);
    CHECK(coll_call(dup, 0, 1000) == ALG_TREE); /* from the schedule cache */
    CHECK(coll_call(dup, 1, 1000) == ALG_RD);
    /* every rank writes, between collectives (scope ALL_EQ) */
    cvar_write_count("FMPL_MPI_BCAST_LARGE", 1024);
    cvar_write_count("FMPL_MPI_ALLREDUCE_LARGE", 1024);
    CHECK(coll_call(dup, 0, 1000) == (size >= 3 ? ALG_SCAG : ALG_TREE));
    CHECK(coll_call(dup, 0, 100) == ALG_TREE); /* below the threshold */
    CHECK(coll_call(dup, 1, 1000) == (size >= 2 ? ALG_RABENSEIFNER : ALG_RD));
    /* the other collectives: the mailboxes on WORLD, point-to-point on the duplicate */
    const char *others[] = {"barrier", "allgather", "alltoall", "reduce", "scan"};
    for (int k = 0; k < 5; k++) {
        CHECK(other_call(dup, others[k]) == ALG_P2P);
        CHECK(other_call(dup, others[k]) == ALG_P2P); /* cached or not: counted */
    }
    if (size > 1)
        CHECK(other_call(MPI_COMM_WORLD, "barrier") == ALG_MAILBOX);
    cvar_write_count("FMPL_MPI_BCAST_LARGE", bl);
    cvar_write_count("FMPL_MPI_ALLREDUCE_LARGE", al);
    CHECK(coll_call(dup, 0, 1000) == ALG_TREE);
    CHECK(coll_call(dup, 1, 1000) == ALG_RD);
    CHECK_RC(MPI_Comm_free(&dup), MPI_SUCCESS);
}

/* ------------------------------------------------------------------ errors */

static void check_errors(void)
{
    int n, np, nc, i;
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_get_num(&np), MPI_SUCCESS);
    CHECK_RC(MPI_T_category_get_num(&nc), MPI_SUCCESS);
    CHECK(nc == 7);
    char name[64];
    int nl = sizeof name;
    CHECK_RC(MPI_T_cvar_get_info(-1, name, &nl, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_cvar_get_info(n, name, &nl, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_cvar_get_index("FMPL_NO_SUCH_SETTING", &i), MPI_T_ERR_INVALID_NAME);
    MPI_T_cvar_handle ch;
    int count;
    CHECK_RC(MPI_T_cvar_handle_alloc(n, NULL, &ch, &count), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &i), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index("FMPL_SPIN_US"), NULL, &ch, &count), MPI_SUCCESS);
    MPI_T_cvar_handle stale = ch;
    CHECK_RC(MPI_T_cvar_handle_free(&ch), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_read(stale, &i), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_cvar_write(stale, &i), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
    /* the back-off times are writable, the values read back */
    int spin = cvar_read_int("FMPL_SPIN_US");
    CHECK_RC(cvar_write_int("FMPL_SPIN_US", 123), MPI_SUCCESS);
    CHECK(cvar_read_int("FMPL_SPIN_US") == 123);
    CHECK_RC(cvar_write_int("FMPL_SLEEP_US", 5), MPI_T_ERR_INVALID); /* below its minimum 10 */
    CHECK_RC(cvar_write_int("FMPL_SPIN_US", spin), MPI_SUCCESS);
    CHECK_RC(cvar_write_int("FMPL_SHM_CELLS", 64), MPI_T_ERR_CVAR_SET_NEVER);

    CHECK_RC(MPI_T_pvar_get_info(np, name, &nl, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_pvar_get_index("mpi_p2p_eager_sent", MPI_T_PVAR_CLASS_LEVEL, &i),
             MPI_T_ERR_INVALID_NAME);
    MPI_T_pvar_session s;
    MPI_T_pvar_handle ph;
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, -1, NULL, &ph, &count), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0, NULL, &ph, &count),
             MPI_T_ERR_INVALID_SESSION);
    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_HANDLE_NULL), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_pvar_session stale_s = s;
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_free(&stale_s), MPI_T_ERR_INVALID_SESSION);

    /* categories: the layers; every variable in exactly one */
    const char *layers[] = {"base", "boot", "vnic", "dt", "coll", "fmpl", "mpi"};
    int sumc = 0, sump = 0;
    for (int c = 0; c < nc; c++) {
        int nv, npv, nsub, dl = 0, idx;
        nl = sizeof name;
        CHECK_RC(MPI_T_category_get_info(c, name, &nl, NULL, &dl, &nv, &npv, &nsub), MPI_SUCCESS);
        CHECK(strcmp(name, layers[c]) == 0 && dl > 1 && nsub == 0);
        CHECK_RC(MPI_T_category_get_index(name, &idx), MPI_SUCCESS);
        CHECK(idx == c);
        sumc += nv;
        sump += npv;
        int ne = -1;
        CHECK_RC(MPI_T_category_get_num_events(c, &ne), MPI_SUCCESS);
        CHECK(ne == (strcmp(layers[c], "mpi") == 0 ? 4 : 0)); /* events: mpi_tool_event.c */
    }
    CHECK(sumc == n && sump == np);
    CHECK_RC(MPI_T_category_get_info(nc, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_index("network", &i), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_category_get_cvars(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    int stamp = -1;
    CHECK_RC(MPI_T_category_changed(&stamp), MPI_SUCCESS);
    CHECK(stamp == n + np);

    /* events and sources: counted here, exercised by mpi_tool_event.c */
    CHECK_RC(MPI_T_event_get_num(&i), MPI_SUCCESS);
    CHECK(i == 4);
    CHECK_RC(
        MPI_T_event_get_info(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_get_index("x", &i), MPI_T_ERR_INVALID_NAME);
    MPI_T_event_registration reg;
    CHECK_RC(MPI_T_event_handle_alloc(-1, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_source_get_num(&i), MPI_SUCCESS);
    CHECK(i == 1);
    MPI_Count ts;
    CHECK_RC(MPI_T_source_get_timestamp(1, &ts), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &i, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);

    /* strings: truncated with the terminator, or only the length */
    char small[6] = "xxxxx";
    nl = 6;
    CHECK_RC(MPI_T_cvar_get_info(cvar_index("FMPL_SPIN_US"), small, &nl, NULL, NULL, NULL, NULL,
                                 NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(strcmp(small, "FMPL_") == 0 && nl == 6);
    nl = 0;
    CHECK_RC(MPI_T_cvar_get_info(cvar_index("FMPL_SPIN_US"), small, &nl, NULL, NULL, NULL, NULL,
                                 NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(nl == (int)strlen("FMPL_SPIN_US") + 1 && strcmp(small, "FMPL_") == 0);
}

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    int n = -1, provided = -1;
    /* not initialized */
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_RC(MPI_T_pvar_session_create(NULL), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_RC(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_RC(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    /* before MPI_Init, nested */
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_MULTIPLE);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    check_cvars_are_records(); /* what has been read so far (maybe nothing) */
    MPI_T_pvar_session early;
    CHECK_RC(MPI_T_pvar_session_create(&early), MPI_SUCCESS);
    MPI_T_pvar_handle early_h =
        pvar_handle(early, "mpi_p2p_eager_sent", MPI_T_PVAR_CLASS_COUNTER, 1);
    CHECK_RC(MPI_T_pvar_start(early, early_h), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS); /* still initialized once */
    int before = -1;
    CHECK_RC(MPI_T_cvar_get_num(&before), MPI_SUCCESS);

    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    CHECK(n > before && n > 30); /* the layers read their settings: indices kept */
    check_cvars_are_records();
    if (rank == 0)
        check_against_tools(argv[1], argv[2]);
    check_errors();
    check_p2p_counts();
    check_unexpected();
    check_udp();
    check_collectives();
    check_cvars_are_records(); /* the writes left the records consistent */
    /* the handle started before MPI_Init counted every eager message of this rank */
    CHECK_RC(MPI_T_pvar_stop(early, early_h), MPI_SUCCESS); /* Finalize sends too */
    unsigned long long early_v = pvar_u64(early, early_h);
    CHECK(rank != 0 || size == 1 || early_v >= (unsigned long long)(4 + 1 + 3 + 2) * (size - 1));
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);

    /* after MPI_Finalize: still there, counters keep their last values */
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    CHECK(n >= before);
    CHECK(pvar_u64(early, early_h) == early_v);
    MPI_T_pvar_handle ops = pvar_handle(early, "vnic_shm_ops", MPI_T_PVAR_CLASS_COUNTER, 1);
    CHECK_RC(MPI_T_pvar_start(early, ops), MPI_SUCCESS);
    CHECK(pvar_u64(early, ops) == 0);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_RC(MPI_T_pvar_read(early, early_h, &early_v), MPI_T_ERR_NOT_INITIALIZED);
    /* initialized again: the old session is gone */
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_read(early, early_h, &early_v), MPI_T_ERR_INVALID_SESSION);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_tool: %d ranks ok\n", size);
    return 0;
}
