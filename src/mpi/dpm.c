/* dpm.c — connecting two jobs (MPI-4.0 section 11.10): MPI_Open_port, MPI_Close_port,
 * MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_join, MPI_Comm_disconnect.
 *
 * A port is a TCP socket listening on this host (all addresses), named
 * "fmpl-port:IP:PORT" with the address this process gives other jobs (vnic_addr). The
 * roots of accept and connect meet through it (join: through the caller's socket); over
 * that stream they exchange the sizes and vnic addresses of both groups (each root has
 * gathered its group's), broadcast them in their groups, and every process registers the
 * other group's processes as vnic peers (vnic_peer_add: ids >= world size, served by the
 * udp transport, see udp.c OTHER JOBS). The context pair of the intercommunicator is
 * agreed like MPI_Intercomm_create's (comm.c), the roots combining their groups' words
 * through the stream. From then on the intercommunicator is an ordinary one whose remote
 * group holds those ids: point-to-point, collectives and MPI_Intercomm_merge work as
 * usual; each job's own traffic stays on its transports (shm) untouched.
 * MPI_Comm_disconnect: a barrier over the communicator (everything sent before it by
 * either side has arrived), then MPI_Comm_free. Nonblocking operations the program left
 * pending are its own to complete first.
 *
 * Errors: a port name that is not one of ours, or whose port is closed or unreachable ->
 * MPI_ERR_PORT (connect; accept and close of a port not open in this process); a stream
 * that breaks during the exchange -> MPI_ERR_PORT; bad arguments -> the usual classes.
 * Errors of the root reach every member (broadcast first). */
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
    snprintf(dpm_port[slot].name, sizeof dpm_port[slot].name, "fmpl-port:%s:%u", ip,
             ntohs(sa.sin_port));
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
        return MPII_ERRF(MPI_ERR_PORT, fn, "port '%.*s' is not open in this process", 200,
                         port_name);
    close(dpm_port[i].fd);
    dpm_port[i].fd = -1;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Close_port, PMPI_Close_port)

/* The common part of accept, connect and join: sock is the root's stream to the other
 * root (unused elsewhere); rc the root's error so far, which every member returns. */
static int dpm_join(mpii_comm_t *l, int root, int sock, int rc, mpii_comm_t **out)
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
    } hdr = {rc, 0};
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
    }
    free(all);
    lrc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, &hdr, sizeof hdr, root, MPII_TAG_LIBCOLL);
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
            if (vnic_peer_add(mpii.vnic, a, &rpeer[i]) != FMPL_SUCCESS)
                w = 0;
        }
        lrc = mpii_lib_allreduce_band(l, &w, 1);
        if (lrc == MPI_SUCCESS && w != 1)
            hdr.rc = MPI_ERR_PORT;
    }
    free(theirs);
    if (lrc == MPI_SUCCESS && hdr.rc == MPI_SUCCESS)
        lrc = mpii_intercomm_sock(l, root, sock, hdr.rsize, rpeer, out);
    free(rpeer);
    return lrc != MPI_SUCCESS ? lrc : hdr.rc;
}

/* Argument checks of accept and connect, MPI_SUCCESS or the class. */
static int dpm_args(mpii_comm_t *l, const char *port_name, MPI_Info info, int root,
                    MPI_Comm *newcomm, const char *fn, MPI_Comm comm)
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
    if (l->rank == root && !port_name)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn, "port_name is NULL");
    if (info != MPI_INFO_NULL && !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_INFO, fn, "info is not valid");
    return MPI_SUCCESS;
}

static int dpm_finish(mpii_comm_t *c, int rc, MPI_Comm comm, MPI_Comm *newcomm, const char *fn,
                      const char *port_name)
{
    if (rc == MPI_SUCCESS) {
        *newcomm = c->handle;
        return MPI_SUCCESS;
    }
    *newcomm = MPI_COMM_NULL;
    if (rc == MPI_ERR_PORT)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_PORT, fn,
                         "port '%.*s' is not open, or the connection through it failed", 200,
                         port_name ? port_name : "(the root's)");
    return MPII_ERR_COMM(comm, rc, fn);
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
    rc = MPI_SUCCESS;
    if (l->rank == root) {
        int i = port_find(port_name);
        if (i < 0)
            rc = MPI_ERR_PORT;
        while (rc == MPI_SUCCESS && (sock = accept4(dpm_port[i].fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
            if (errno != EINTR)
                rc = MPI_ERR_PORT;
    }
    mpii_comm_t *c = NULL;
    rc = dpm_join(l, root, sock, rc, &c);
    if (sock >= 0)
        close(sock);
    return dpm_finish(c, rc, comm, newcomm, fn, l->rank == root ? port_name : NULL);
}
MPII_WEAK(MPI_Comm_accept, PMPI_Comm_accept)

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
    if (l->rank == root) {
        char ip[64];
        unsigned port;
        struct sockaddr_in sa = {.sin_family = AF_INET};
        int n = 0;
        if (sscanf(port_name, "fmpl-port:%63[0-9.]:%u%n", ip, &port, &n) != 2 ||
            port_name[n] != 0 || port == 0 || port > 65535 || inet_aton(ip, &sa.sin_addr) == 0) {
            rc = MPI_ERR_PORT;
        } else {
            sa.sin_port = htons((uint16_t)port);
            sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            while (sock >= 0 && connect(sock, (struct sockaddr *)&sa, sizeof sa) < 0)
                if (errno != EINTR) {
                    close(sock);
                    sock = -1;
                }
            if (sock < 0)
                rc = MPI_ERR_PORT;
        }
    }
    mpii_comm_t *c = NULL;
    rc = dpm_join(l, root, sock, rc, &c);
    if (sock >= 0)
        close(sock);
    return dpm_finish(c, rc, comm, newcomm, fn, l->rank == root ? port_name : NULL);
}
MPII_WEAK(MPI_Comm_connect, PMPI_Comm_connect)

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char fn[] = "MPI_Comm_join";
    MPII_CHECK_INIT(fn);
    if (!intercomm)
        return MPII_ERRF(MPI_ERR_ARG, fn, "intercomm is NULL");
    mpii_comm_t *self = mpii_comm_get(MPI_COMM_SELF);
    mpii_comm_t *c = NULL;
    int rc = dpm_join(self, 0, fd, fd < 0 ? MPI_ERR_ARG : MPI_SUCCESS, &c);
    if (rc == MPI_SUCCESS) {
        *intercomm = c->handle;
        return MPI_SUCCESS;
    }
    *intercomm = MPI_COMM_NULL;
    if (rc == MPI_ERR_PORT)
        return MPII_ERRF(MPI_ERR_OTHER, fn, "the exchange over socket %d failed", fd);
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
