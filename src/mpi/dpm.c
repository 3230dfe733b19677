/* dpm.c — connecting two jobs (MPI-4.0 section 11.10): MPI_Open_port, MPI_Close_port,
 * MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_join, MPI_Comm_disconnect.
 *
 * A port is a TCP socket listening on this host (all addresses), named
 * "fmpl-port:IP:PORT:TOKEN" with the address this process gives other jobs (vnic_addr)
 * and 128 random bits (vnic_link_token). The roots of accept and connect meet through it
 * (join: through the caller's socket) and first agree on the link of the two jobs
 * (vnic_link_agree, src/vnic/link.c: an X25519 exchange salted with the token, which
 * both must know, and confirmed both ways; the threat model is there). Accept takes the
 * next connection when one fails the exchange (a stranger, a wrong token, junk, silence
 * for 10 s or FMPL_PORT_TIMEOUT_MS if less), so nobody can hold or spoil a port without its name;
 * connect waits FMPL_PORT_TIMEOUT_MS at most for the accept (or its info key "timeout", seconds, as
 * MPICH's; or MPICH's MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT, seconds, when only that is set). Over
 * that stream the roots then exchange the sizes and vnic addresses of both groups (each root has
 * gathered its group's), broadcast them and the link in their groups (the job's own channels), and
 * every process registers the other group's processes as vnic peers under the link (vnic_peer_add:
 * ids >= world size, served by the udp transport with keys of their own, see udp.c OTHER JOBS).
 * What follows the exchange on the stream is not secret; a tampered address or context word only
 * makes the connection fail (no process but the named one holds the keys derived for that pair).
 * The context pair of the intercommunicator is agreed like MPI_Intercomm_create's (comm.c), the
 * roots combining their groups' words through the stream. From then on the intercommunicator is an
 * ordinary one whose remote group holds those ids: point-to-point, collectives and
 * MPI_Intercomm_merge work as usual; each job's own traffic stays on its transports (shm)
 * untouched. MPI_Comm_disconnect: a barrier over the communicator (everything sent before it by
 * either side has arrived), then MPI_Comm_free. Nonblocking operations the program left
 * pending are its own to complete first.
 *
 * Errors: a port name that is not one of ours, or whose port is closed or unreachable,
 * or whose accept does not come within that wait (the message names the setting or info
 * key and its value), or whose job disagrees on
 * FMPL_UDP_AUTH -> MPI_ERR_PORT (connect; accept and close of a port not open in this
 * process) with the reason; a stream that breaks during the exchange -> MPI_ERR_PORT
 * (join: MPI_ERR_OTHER); bad arguments -> the usual classes. Errors of the root, and
 * their reason, reach every member (broadcast first). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpi/mpi_impl.h"

#define DPM_PORTS 64
#define DPM_WHY 200

static struct {
    char name[MPI_MAX_PORT_NAME];
    int fd; /* -1: free */
} dpm_port[DPM_PORTS];
static int dpm_ports_init;

int mpii_peer_bound(void)
{
    int n = vnic_npeers(mpii.vnic);
    return n > 0 ? n : 1;
}

static int io_all(int fd, void *buf, size_t len, int out)
{
    char *p = buf;
    while (len) {
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return MPI_ERR_PORT;
        p += n;
        len -= (size_t)n;
    }
    return MPI_SUCCESS;
}

int mpii_fd_exchange(int fd, const void *mine, void *theirs, size_t len)
{
    int rc = io_all(fd, (void *)(uintptr_t)mine, len, 1);
    return rc == MPI_SUCCESS ? io_all(fd, theirs, len, 0) : rc;
}

/* How much of a port name messages show: up to its token (a capability, not for logs). */
static int port_shown(const char *name)
{
    const char *t = strrchr(name, ':');
    int n = t && strncmp(name, "fmpl-port:", 10) == 0 ? (int)(t - name) : (int)strlen(name);
    return BASE_MIN(n, 120);
}

static int port_find(const char *name)
{
    for (int i = 0; i < DPM_PORTS && dpm_ports_init; i++)
        if (dpm_port[i].fd >= 0 && strcmp(dpm_port[i].name, name) == 0)
            return i;
    return -1;
}

/* The IP address part of this process's vnic address ("fmpl-udp:RANK:IP:..."). */
static int my_ip(char *ip, size_t len)
{
    char a[VNIC_ADDR_MAX];
    int rc = vnic_addr(mpii.vnic, a, sizeof a);
    if (rc)
        return rc;
    char buf[64];
    if (sscanf(a, "fmpl-udp:%*d:%63[0-9.]:", buf) != 1)
        return FMPL_ERR_INTERNAL;
    snprintf(ip, len, "%s", buf);
    return FMPL_SUCCESS;
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Open_port";
    MPII_CHECK_INIT(fn);
    if (info != MPI_INFO_NULL && !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return MPII_ERRF(MPI_ERR_INFO, fn, "info is not a valid info object");
    if (!port_name)
        return MPII_ERRF(MPI_ERR_ARG, fn, "port_name is NULL");
    if (!dpm_ports_init) {
        for (int i = 0; i < DPM_PORTS; i++)
            dpm_port[i].fd = -1;
        dpm_ports_init = 1;
    }
    int slot = -1;
    for (int i = 0; i < DPM_PORTS && slot < 0; i++)
        if (dpm_port[i].fd < 0)
            slot = i;
    if (slot < 0)
        return MPII_ERRF(MPI_ERR_NO_MEM, fn, "%d ports are open in this process already",
                         DPM_PORTS);
    char ip[64];
    int err = my_ip(ip, sizeof ip);
    if (err)
        return MPII_ERRF(mpii_err_from_fmpl(err), fn, "no address for other jobs: %s",
                         base_strerror(err));
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&sa, &sl)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return MPII_ERRF(MPI_ERR_OTHER, fn, "cannot listen on a TCP port: %s", strerror(e));
    }
    char token[VNIC_LINK_TOKEN_MAX];
    if (vnic_link_token(token) != FMPL_SUCCESS) {
        close(fd);
        return MPII_ERRF(MPI_ERR_OTHER, fn, "no random bytes for the port's token");
    }
    snprintf(dpm_port[slot].name, sizeof dpm_port[slot].name, "fmpl-port:%s:%u:%s", ip,
             ntohs(sa.sin_port), token);
    dpm_port[slot].fd = fd;
    memcpy(port_name, dpm_port[slot].name, strlen(dpm_port[slot].name) + 1);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Open_port, PMPI_Open_port)

int PMPI_Close_port(const char *port_name)
{
    static const char fn[] = "MPI_Close_port";
    MPII_CHECK_INIT(fn);
    if (!port_name)
        return MPII_ERRF(MPI_ERR_ARG, fn, "port_name is NULL");
    int i = port_find(port_name);
    if (i < 0)
        return MPII_ERRF(MPI_ERR_PORT, fn, "port '%.*s' is not open in this process",
                         port_shown(port_name), port_name);
    close(dpm_port[i].fd);
    dpm_port[i].fd = -1;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Close_port, PMPI_Close_port)

/* How long connect (and join) wait for the other side, in ms, when no info key says:
 * FMPL_PORT_TIMEOUT_MS when the environment sets it; else MPICH's
 * MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT (seconds) when set, so that programs and test
 * lists written for MPICH keep the wait they ask for; else 180 s. *source (when not NULL)
 * receives the setting in force and its value as text, e.g. "FMPL_PORT_TIMEOUT_MS=2000",
 * valid for the process. Both settings are recorded (fmpl-info, MPI_T) at the first call. */
static int dpm_timeout_ms(const char **source)
{
    static int ms;
    static char text[96];
    if (!ms) {
        long long fmpl_ms =
            base_env_int("FMPL_PORT_TIMEOUT_MS", 180000, 1, 86400000,
                         "milliseconds MPI_Comm_connect waits for the MPI_Comm_accept "
                         "of the port it reached (MPI_Comm_join for its other side, "
                         "MPI_Comm_accept for a connection's key exchange, 10 s at "
                         "most) before failing with MPI_ERR_PORT; the info key \"timeout\" "
                         "(seconds) of MPI_Comm_connect overrides it");
        long long mpich_sec = base_env_int(
            "MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT", 180, 1, 86400,
            "MPICH's name for that wait, in seconds: in force when FMPL_PORT_TIMEOUT_MS "
            "is not set");
        const base_setting_t *fmpl_set = base_env_find("FMPL_PORT_TIMEOUT_MS");
        const base_setting_t *mpich_set = base_env_find("MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT");
        if (fmpl_set && !fmpl_set->from_env && mpich_set && mpich_set->from_env) {
            snprintf(text, sizeof text, "MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT=%lld", mpich_sec);
            ms = (int)(mpich_sec * 1000);
        } else {
            snprintf(text, sizeof text, "FMPL_PORT_TIMEOUT_MS=%lld%s", fmpl_ms,
                     fmpl_set && fmpl_set->from_env ? "" : ", the default");
            ms = (int)fmpl_ms;
        }
    }
    if (source)
        *source = text;
    return ms;
}

/* The token of a port name "fmpl-port:IP:PORT:TOKEN" and its address; 0 when the name is
 * one of ours. */
static int port_parse(const char *name, struct sockaddr_in *sa, char token[VNIC_LINK_TOKEN_MAX])
{
    char ip[64];
    unsigned port;
    int n = 0;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    if (sscanf(name, "fmpl-port:%63[0-9.]:%u:%32[0-9a-f]%n", ip, &port, token, &n) != 3 ||
        name[n] != 0 || strlen(token) != 32 || port == 0 || port > 65535 ||
        inet_aton(ip, &sa->sin_addr) == 0)
        return -1;
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

/* The common part of accept, connect and join: sock is the root's stream to the other
 * root and link the link agreed through it (unused elsewhere); rc the root's error so far
 * and why its reason, which every member returns (why: DPM_WHY bytes, set on every member
 * on return). */
static int dpm_join(mpii_comm_t *l, int root, int sock, int rc, const vnic_link_t *link, char *why,
                    mpii_comm_t **out)
{
    int me = l->rank == root;
    char mine[VNIC_ADDR_MAX];
    memset(mine, 0, sizeof mine);
    int err = vnic_addr(mpii.vnic, mine, sizeof mine);
    int ok = err == FMPL_SUCCESS;
    char *all = malloc((size_t)l->size * VNIC_ADDR_MAX);
    if (!all)
        return MPI_ERR_NO_MEM;
    int lrc = mpii_lib_allgather(l, mine, all, VNIC_ADDR_MAX);
    if (lrc != MPI_SUCCESS) {
        free(all);
        return lrc;
    }
    struct {
        int32_t rc, rsize;
        vnic_link_t link;
        char why[DPM_WHY];
    } hdr;
    memset(&hdr, 0, sizeof hdr);
    hdr.rc = rc;
    if (me) {
        snprintf(hdr.why, sizeof hdr.why, "%s", why);
        if (link)
            hdr.link = *link;
    }
    char *theirs = NULL;
    if (me && hdr.rc == MPI_SUCCESS) {
        int32_t size = l->size;
        hdr.rc = mpii_fd_exchange(sock, &size, &hdr.rsize, sizeof size);
        if (hdr.rc == MPI_SUCCESS && (hdr.rsize < 1 || hdr.rsize > (1 << 20)))
            hdr.rc = MPI_ERR_PORT;
        if (hdr.rc == MPI_SUCCESS && !(theirs = malloc((size_t)hdr.rsize * VNIC_ADDR_MAX)))
            hdr.rc = MPI_ERR_NO_MEM;
        if (hdr.rc == MPI_SUCCESS)
            hdr.rc = io_all(sock, all, (size_t)l->size * VNIC_ADDR_MAX, 1);
        if (hdr.rc == MPI_SUCCESS)
            hdr.rc = io_all(sock, theirs, (size_t)hdr.rsize * VNIC_ADDR_MAX, 0);
        if (hdr.rc == MPI_ERR_PORT)
            snprintf(hdr.why, sizeof hdr.why, "the other side broke the connection");
    }
    free(all);
    lrc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, &hdr, sizeof hdr, root, MPII_TAG_LIBCOLL);
    snprintf(why, DPM_WHY, "%s", lrc == MPI_SUCCESS ? hdr.why : "");
    if (lrc == MPI_SUCCESS && hdr.rc == MPI_SUCCESS && !me &&
        !(theirs = malloc((size_t)hdr.rsize * VNIC_ADDR_MAX)))
        ok = 0;
    if (lrc == MPI_SUCCESS && hdr.rc == MPI_SUCCESS) {
        /* every member has its buffer before the root sends (a failed malloc: zeros) */
        uint64_t w = ok ? 1 : 0;
        lrc = mpii_lib_allreduce_band(l, &w, 1);
        if (lrc == MPI_SUCCESS && w != 1)
            hdr.rc = MPI_ERR_NO_MEM;
    }
    if (lrc == MPI_SUCCESS && hdr.rc == MPI_SUCCESS)
        lrc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, theirs,
                                 (size_t)hdr.rsize * VNIC_ADDR_MAX, root, MPII_TAG_LIBCOLL);
    int *rpeer = NULL;
    if (lrc == MPI_SUCCESS && hdr.rc == MPI_SUCCESS) {
        rpeer = malloc((size_t)hdr.rsize * sizeof *rpeer);
        uint64_t w = rpeer ? 1 : 0;
        for (int i = 0; rpeer && i < hdr.rsize && w; i++) {
            char *a = theirs + (size_t)i * VNIC_ADDR_MAX;
            a[VNIC_ADDR_MAX - 1] = 0;
            if (vnic_peer_add(mpii.vnic, a, &hdr.link, &rpeer[i]) != FMPL_SUCCESS)
                w = 0;
        }
        lrc = mpii_lib_allreduce_band(l, &w, 1);
        if (lrc == MPI_SUCCESS && w != 1) {
            hdr.rc = MPI_ERR_PORT;
            snprintf(why, DPM_WHY, "the other side sent an address that is not one");
        }
    }
    memset(&hdr.link, 0, sizeof hdr.link);
    free(theirs);
    if (lrc == MPI_SUCCESS && hdr.rc == MPI_SUCCESS)
        lrc = mpii_intercomm_sock(l, root, sock, hdr.rsize, rpeer, out);
    free(rpeer);
    return lrc != MPI_SUCCESS ? lrc : hdr.rc;
}

/* Contract: mpi_impl.h. */
int mpii_dpm_root_args(mpii_comm_t *l, int root, const MPI_Comm *newcomm, const char *fn,
                       MPI_Comm comm)
{
    if (!l)
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fn);
    if (l->rgroup)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_COMM, fn,
                         "comm is an intercommunicator");
    if (root < 0 || root >= l->size)
        return MPII_ERR_COMM(comm, MPI_ERR_RANK, fn);
    if (!newcomm)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fn);
    return MPI_SUCCESS;
}

/* Argument checks of accept and connect, MPI_SUCCESS or the class. */
static int dpm_args(mpii_comm_t *l, const char *port_name, MPI_Info info, int root,
                    MPI_Comm *newcomm, const char *fn, MPI_Comm comm)
{
    int rc = mpii_dpm_root_args(l, root, newcomm, fn, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (l->rank == root && !port_name)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn, "port_name is NULL");
    if (info != MPI_INFO_NULL && !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_INFO, fn, "info is not valid");
    return MPI_SUCCESS;
}

static int dpm_finish(mpii_comm_t *c, int rc, MPI_Comm comm, MPI_Comm *newcomm, const char *fn,
                      const char *port_name, const char *why)
{
    if (rc == MPI_SUCCESS) {
        *newcomm = c->handle;
        return MPI_SUCCESS;
    }
    *newcomm = MPI_COMM_NULL;
    if (rc == MPI_ERR_PORT)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_PORT, fn, "port '%.*s': %s",
                         port_shown(port_name ? port_name : "(the root's)"),
                         port_name ? port_name : "(the root's)",
                         why[0] ? why : "not open, or the connection through it failed");
    return MPII_ERR_COMM(comm, rc, fn);
}

/* The root of accept: the next connection to port i that completes the key exchange
 * (the others are closed, and said so, see the header). */
static int dpm_accept_root(int i, int *sock, vnic_link_t *link, char *why)
{
    char token[VNIC_LINK_TOKEN_MAX];
    struct sockaddr_in sa;
    if (port_parse(dpm_port[i].name, &sa, token) != 0)
        return MPI_ERR_INTERN;
    int ms = BASE_MIN(dpm_timeout_ms(NULL), 10000);
    for (;;) {
        int fd = accept4(dpm_port[i].fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            snprintf(why, DPM_WHY, "accept failed: %s", strerror(errno));
            return MPI_ERR_PORT;
        }
        char w[DPM_WHY];
        int err = vnic_link_agree(mpii.vnic, fd, token, ms, link, w, sizeof w);
        if (err == FMPL_SUCCESS) {
            *sock = fd;
            return MPI_SUCCESS;
        }
        close(fd);
        if (err != FMPL_ERR_PEER && err != FMPL_ERR_TIMEOUT && err != FMPL_ERR_MISMATCH) {
            snprintf(why, DPM_WHY, "%s", w);
            return MPI_ERR_OTHER;
        }
        base_log("MPI_Comm_accept: refused a connection to port '%.*s': %s",
                 port_shown(dpm_port[i].name), dpm_port[i].name, w);
    }
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_accept";
    MPII_CHECK_INIT(fn);
    mpii_comm_t *l = mpii_comm_get(comm);
    int rc = dpm_args(l, port_name, info, root, newcomm, fn, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int sock = -1;
    vnic_link_t link;
    char why[DPM_WHY] = "";
    memset(&link, 0, sizeof link);
    if (l->rank == root) {
        int i = port_find(port_name);
        if (i < 0) {
            rc = MPI_ERR_PORT;
            snprintf(why, sizeof why, "not open in this process");
        } else {
            rc = dpm_accept_root(i, &sock, &link, why);
        }
    }
    mpii_comm_t *c = NULL;
    rc = dpm_join(l, root, sock, rc, &link, why, &c);
    memset(&link, 0, sizeof link);
    if (sock >= 0)
        close(sock);
    return dpm_finish(c, rc, comm, newcomm, fn, l->rank == root ? port_name : NULL, why);
}
MPII_WEAK(MPI_Comm_accept, PMPI_Comm_accept)

/* The root of connect: its stream to the port's accepting root, with the link; waits
 * timeout_ms at most for the accept, then fails with MPI_ERR_PORT, and why names the wait
 * and timeout_from (the setting or info key that set it, with its value). */
static int dpm_connect_root(const char *port_name, int timeout_ms, const char *timeout_from,
                            int *sock, vnic_link_t *link, char *why)
{
    char token[VNIC_LINK_TOKEN_MAX];
    struct sockaddr_in sa;
    if (port_parse(port_name, &sa, token) != 0) {
        snprintf(why, DPM_WHY, "not the name of a port (fmpl-port:IP:PORT:TOKEN)");
        return MPI_ERR_PORT;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int e = fd < 0 ? errno : 0;
    while (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        if (errno != EINTR) {
            e = errno;
            close(fd);
            fd = -1;
        }
    if (fd < 0) {
        snprintf(why, DPM_WHY, "cannot connect: %s (is the port open?)", strerror(e));
        return MPI_ERR_PORT;
    }
    int err = vnic_link_agree(mpii.vnic, fd, token, timeout_ms, link, why, DPM_WHY);
    if (err != FMPL_SUCCESS) {
        close(fd);
        if (err == FMPL_ERR_TIMEOUT)
            snprintf(why, DPM_WHY, "no MPI_Comm_accept on it within %d ms (%s)", timeout_ms,
                     timeout_from);
        return MPI_ERR_PORT;
    }
    *sock = fd;
    return MPI_SUCCESS;
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_connect";
    MPII_CHECK_INIT(fn);
    mpii_comm_t *l = mpii_comm_get(comm);
    int rc = dpm_args(l, port_name, info, root, newcomm, fn, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int sock = -1;
    vnic_link_t link;
    char why[DPM_WHY] = "";
    memset(&link, 0, sizeof link);
    if (l->rank == root) {
        /* info key "timeout" (seconds, as MPICH's): the wait for the accept, else the
         * setting's (dpm_timeout_ms) */
        const char *from;
        int ms = dpm_timeout_ms(&from), flag = 0;
        char val[32], from_info[64];
        if (info != MPI_INFO_NULL &&
            PMPI_Info_get(info, "timeout", (int)sizeof val - 1, val, &flag) == MPI_SUCCESS &&
            flag) {
            char *end;
            long sec = strtol(val, &end, 10);
            if (end != val && *end == 0 && sec > 0 && sec <= 86400) {
                ms = (int)sec * 1000;
                snprintf(from_info, sizeof from_info, "the info key timeout=%ld", sec);
                from = from_info;
            }
        }
        rc = dpm_connect_root(port_name, ms, from, &sock, &link, why);
    }
    mpii_comm_t *c = NULL;
    rc = dpm_join(l, root, sock, rc, &link, why, &c);
    memset(&link, 0, sizeof link);
    if (sock >= 0)
        close(sock);
    return dpm_finish(c, rc, comm, newcomm, fn, l->rank == root ? port_name : NULL, why);
}
MPII_WEAK(MPI_Comm_connect, PMPI_Comm_connect)

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char fn[] = "MPI_Comm_join";
    MPII_CHECK_INIT(fn);
    if (!intercomm)
        return MPII_ERRF(MPI_ERR_ARG, fn, "intercomm is NULL");
    *intercomm = MPI_COMM_NULL;
    if (fd < 0)
        return MPII_ERRF(MPI_ERR_ARG, fn, "fd is %d, not a socket", fd);
    vnic_link_t link;
    char why[DPM_WHY] = "";
    int err = vnic_link_agree(mpii.vnic, fd, NULL, dpm_timeout_ms(NULL), &link, why, sizeof why);
    if (err != FMPL_SUCCESS)
        return MPII_ERRF(err == FMPL_ERR_MISMATCH ? MPI_ERR_OTHER : mpii_err_from_fmpl(err), fn,
                         "the key exchange over socket %d failed: %s", fd, why);
    mpii_comm_t *self = mpii_comm_get(MPI_COMM_SELF);
    mpii_comm_t *c = NULL;
    int rc = dpm_join(self, 0, fd, MPI_SUCCESS, &link, why, &c);
    memset(&link, 0, sizeof link);
    if (rc == MPI_SUCCESS) {
        *intercomm = c->handle;
        return MPI_SUCCESS;
    }
    if (rc == MPI_ERR_PORT)
        return MPII_ERRF(MPI_ERR_OTHER, fn, "the exchange over socket %d failed: %s", fd,
                         why[0] ? why : "the connection broke");
    return MPII_ERRF(rc, fn, "cannot join over socket %d", fd);
}
MPII_WEAK(MPI_Comm_join, PMPI_Comm_join)

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_disconnect";
    MPII_CHECK_INIT(fn);
    if (!comm)
        return MPII_ERRF(MPI_ERR_ARG, fn, "comm is NULL");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpii_errf(FMPL_MPI_KIND_COMM, *comm, MPI_ERR_COMM, fn, "predefined communicator");
    if (!mpii_comm_get(*comm))
        return MPII_ERR_COMM(*comm, MPI_ERR_COMM, fn);
    int rc = PMPI_Barrier(*comm);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_free(comm);
}
MPII_WEAK(MPI_Comm_disconnect, PMPI_Comm_disconnect)
