/* netns_check.c — run by tests/netns_test.sh across two network namespaces joined by
 * a veth pair (fmplrun --hosts A,B): proves that the job really spans two "hosts" and
 * that the traffic between them went over the udp transport on the veth addresses.
 *
 *     netns_check NNODES PREFIX
 *
 * Every rank checks that the node map has NNODES nodes; that every rank's udp address (the
 * "vnic.udp" value the transport published, "a.b.c.d:port") starts with PREFIX (the test subnet,
 * e.g. "10.213.77.") and that ranks on different nodes have different addresses while ranks of one
 * node share one; then it puts a 64 KiB pattern into every peer, checks what it received byte for
 * byte, and checks from its udp counters that datagrams went out and came in when it has a peer on
 * another node. Prints one line per rank. */
#include "vnic_common.h"

#define KEY_IN 2u
#define LEN ((size_t)64 << 10)

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: netns_check NNODES PREFIX\n");
        return 2;
    }
    int want_nodes = atoi(argv[1]);
    const char *prefix = argv[2];
    vt_t t;
    vt_init(&t);
    const boot_nodes_t *nodes = NULL;
    CHECK_RC(boot_nodes(t.boot, &nodes), FMPL_SUCCESS);
    if (nodes->nnodes != want_nodes) {
        fprintf(stderr, "netns_check: rank %d sees %d nodes, expected %d\n", t.rank, nodes->nnodes,
                want_nodes);
        return 1;
    }

    /* Addresses: the test subnet, one per node. */
    char(*addr)[BOOT_VALUE_MAX] = calloc((size_t)t.size, sizeof *addr);
    CHECK(addr);
    int remote_peers = 0;
    for (int r = 0; r < t.size; r++) {
        CHECK_RC(boot_get(t.boot, r, "vnic.udp", addr[r]), FMPL_SUCCESS);
        addr[r][strcspn(addr[r], ":")] = 0; /* drop the port */
        if (strncmp(addr[r], prefix, strlen(prefix)) != 0) {
            fprintf(stderr, "netns_check: rank %d's udp address %s is not in %s*\n", r, addr[r],
                    prefix);
            return 1;
        }
        remote_peers += nodes->node_of[r] != nodes->my_node;
    }
    for (int r = 0; r < t.size; r++) {
        for (int q = 0; q < r; q++) {
            int same_node = nodes->node_of[r] == nodes->node_of[q];
            int same_addr = strcmp(addr[r], addr[q]) == 0;
            if (same_node != same_addr) {
                fprintf(stderr, "netns_check: ranks %d (%s, node %d) and %d (%s, node %d)\n", q,
                        addr[q], nodes->node_of[q], r, addr[r], nodes->node_of[r]);
                return 1;
            }
        }
    }

    /* Data: rank s puts LEN bytes into slot s of every peer's buffer. */
    unsigned char *in = calloc((size_t)t.size, LEN), *out = malloc(LEN * (size_t)t.size);
    CHECK(in && out);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_IN, in, LEN * (size_t)t.size, VNIC_ACC_ALL), FMPL_SUCCESS);
    vt_barrier(&t); /* every region exists */
    for (int i = 1; i < t.size; i++) {
        int peer = (t.rank + i) % t.size;
        unsigned char *src = out + (size_t)peer * LEN;
        vt_fill(src, LEN, t.rank, peer, 77);
        CHECK_RC(vnic_put(t.v, peer, src, LEN, KEY_IN, (uint64_t)t.rank * LEN), FMPL_SUCCESS);
    }
    vt_barrier(&t);
    for (int src = 0; src < t.size; src++) {
        if (src == t.rank)
            continue;
        size_t bad = vt_check(in + (size_t)src * LEN, LEN, src, t.rank, 77);
        if (bad != SIZE_MAX) {
            fprintf(stderr, "netns_check: rank %d: byte %zu from rank %d is wrong\n", t.rank, bad,
                    src);
            return 1;
        }
    }

    vnic_udp_stats_t st;
    memset(&st, 0, sizeof st);
    int rc = vnic_udp_stats(t.v, &st);
    if (remote_peers) {
        CHECK_RC(rc, FMPL_SUCCESS);
        if (st.data_sent == 0 || st.rx_packets == 0 || st.rx_bytes < LEN) {
            fprintf(stderr,
                    "netns_check: rank %d has %d peers on other nodes but its udp counters "
                    "did not move (data_sent %llu, rx_packets %llu, rx_bytes %llu)\n",
                    t.rank, remote_peers, (unsigned long long)st.data_sent,
                    (unsigned long long)st.rx_packets, (unsigned long long)st.rx_bytes);
            return 1;
        }
    }
    const char *node = getenv("FMPL_NODE");
    printf("netns_check: rank %d of %d on node %d (%s) udp %s: %d remote peers, udp tx %llu "
           "rx %llu datagrams\n",
           t.rank, t.size, nodes->my_node, node ? node : "?", addr[t.rank], remote_peers,
           (unsigned long long)st.tx_packets, (unsigned long long)st.rx_packets);
    fflush(stdout);
    CHECK_RC(vnic_mr_dereg(t.v, KEY_IN), FMPL_SUCCESS);
    vt_fini(&t);
    free(in);
    free(out);
    free(addr);
    return 0;
}
