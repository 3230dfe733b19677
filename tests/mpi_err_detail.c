/* mpi_err_detail.c — what an error returned under MPI_ERRORS_RETURN says: the detailed
 * code names the call, the argument and its value (MPI_Error_string), its class comes
 * back from MPI_Error_class, and an old code whose message the ring has dropped still
 * gives its class's text; the same for the argument checks of the collectives, the
 * datatype constructors, the communicator, group and topology calls (whose failed
 * creations leave their output handle alone, or MPI_COMM_NULL). Also the small error
 * paths: a message that ends inside a basic element of the receive type,
 * MPI_Waitall(-1), MPI_Reduce_local on aliased buffers, and running out of context ids
 * (argument "contexts": slow, so a test of its own). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int rank, size;

/* A bogus handle of no kind the library hands out. */
#define BOGUS 0x7654321

/* The message of code, which must be of class cls and contain every one of the words. */
static void says(int code, int cls, const char *w1, const char *w2, const char *w3)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = -1, got = -1;
    CHECK_RC(MPI_Error_class(code, &got), MPI_SUCCESS);
    CHECK_RC(MPI_Error_string(code, s, &len), MPI_SUCCESS);
    CHECK(len == (int)strlen(s));
    if (got != cls || (w1 && !strstr(s, w1)) || (w2 && !strstr(s, w2)) || (w3 && !strstr(s, w3))) {
        fprintf(stderr, "rank %d: code %d (class %d, want %d) says \"%s\"; want %s, %s, %s\n", rank,
                code, got, cls, s, w1, w2, w3);
        exit(1);
    }
}

static void messages(void)
{
    int x = 0;
    char want[64];
    snprintf(want, sizeof want, "destination %d is not in 0..%d", size, size - 1);
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    says(rc, MPI_ERR_RANK, "MPI_Send", want, NULL);
    CHECK(rc != MPI_ERR_RANK); /* a detailed code, beyond the class */
    rc = MPI_Recv(&x, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    says(rc, MPI_ERR_TAG, "MPI_Recv", "tag -7", "MPI_ANY_TAG");
    rc = MPI_Send(&x, -3, MPI_INT, 0, 0, MPI_COMM_WORLD);
    says(rc, MPI_ERR_COUNT, "MPI_Send", "count -3", NULL);
    MPI_Request req;
    rc = MPI_Isend(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &req);
    says(rc, MPI_ERR_TYPE, "MPI_Isend", "datatype", NULL);
    rc = MPI_Irecv(&x, 1, MPI_INT, size + 4, 0, MPI_COMM_WORLD, &req);
    says(rc, MPI_ERR_RANK, "MPI_Irecv", "source", "MPI_ANY_SOURCE");
    /* the ring keeps the last messages: an old code falls back to its class's text */
    int old = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 200; i++)
        (void)MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    char s[MPI_MAX_ERROR_STRING], t[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_RC(MPI_Error_string(old, s, &len), MPI_SUCCESS);
    CHECK_RC(MPI_Error_string(MPI_ERR_RANK, t, &len), MPI_SUCCESS);
    CHECK(strcmp(s, t) == 0);
    says(old, MPI_ERR_RANK, NULL, NULL, NULL);
    /* the program's own codes through MPI_Comm_call_errhandler are left alone */
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_TAG), MPI_SUCCESS);
}

/* Collectives: every rank makes the same erroneous call, so every rank fails at once. */
static void collectives(void)
{
    int x = 1, y = 0;
    char want[64];
    snprintf(want, sizeof want, "root %d is not in 0..%d", size + 2, size - 1);
    says(MPI_Bcast(&x, 1, MPI_INT, size + 2, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast", want,
         NULL);
    says(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Reduce",
         "root -1", NULL);
    says(MPI_Allreduce(&x, &y, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
         "MPI_Allreduce", "count -2 < 0", NULL);
    says(MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Bcast",
         "datatype", "not a valid");
    says(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP,
         "MPI_Allreduce", "not a reduction operation", NULL);
    int *rb = calloc((size_t)size + 1, sizeof *rb), *cnt = calloc((size_t)size, sizeof *cnt),
        *dsp = calloc((size_t)size, sizeof *dsp);
    CHECK(rb && cnt && dsp);
    /* the send block overlaps the receive buffer without being any rank's slot */
    says(MPI_Allgather(rb + (size > 1), 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
         "MPI_Allgather", "share memory", NULL);
    for (int i = 0; i < size; i++)
        cnt[i] = 1, dsp[i] = i;
    cnt[size - 1] = -1;
    snprintf(want, sizeof want, "counts[%d] = -1 < 0", size - 1);
    says(MPI_Allgatherv(&x, 1, MPI_INT, rb, cnt, dsp, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
         "MPI_Allgatherv", want, NULL);
    says(MPI_Allgatherv(&x, 1, MPI_INT, rb, NULL, dsp, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG,
         "MPI_Allgatherv", "counts array NULL", NULL);
    free(rb);
    free(cnt);
    free(dsp);
    /* the communicator still works, and a later error of another kind says its own words */
    CHECK_RC(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(y == size);
    says(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Barrier", NULL, NULL);
}

/* Datatype constructors: the argument and its value. */
static void datatypes(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    says(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_contiguous", "count -1 < 0",
         NULL);
    says(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, "MPI_Type_contiguous",
         "oldtype is MPI_DATATYPE_NULL", NULL);
    says(MPI_Type_contiguous(2, (MPI_Datatype)BOGUS, &t), MPI_ERR_TYPE, "MPI_Type_contiguous",
         "oldtype 0x7654321 is not a datatype", NULL);
    says(MPI_Type_vector(2, -3, 4, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_vector",
         "blocklength -3 < 0", NULL);
    int bl[2] = {1, -2}, disp[2] = {0, 4};
    says(MPI_Type_indexed(2, bl, disp, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_indexed",
         "blocklengths[1] = -2 < 0", NULL);
    says(MPI_Type_indexed(-4, bl, disp, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_indexed",
         "count -4 < 0", NULL);
    says(MPI_Type_indexed(2, NULL, disp, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_indexed",
         "blocklengths NULL with count 2", NULL);
    MPI_Aint adisp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DATATYPE_NULL};
    bl[1] = 1;
    says(MPI_Type_create_struct(2, bl, adisp, types, &t), MPI_ERR_TYPE, "MPI_Type_create_struct",
         "array_of_types[1] is MPI_DATATYPE_NULL", NULL);
    says(MPI_Type_create_struct(2, bl, adisp, NULL, &t), MPI_ERR_ARG, "MPI_Type_create_struct",
         "array_of_types NULL with count 2", NULL);
    /* subarray: each of sizes, subsizes, starts and order */
    int sz[2] = {4, 4}, sub[2] = {5, 2}, st[2] = {0, 3};
    says(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_subarray", "subsizes[0] = 5 > sizes[0] = 4", NULL);
    sub[0] = 2;
    says(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_subarray", "starts[1] = 3 + subsizes[1] = 2 > sizes[1] = 4", NULL);
    st[1] = 0;
    says(MPI_Type_create_subarray(2, sz, sub, st, 99, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_subarray", "order 99 is not MPI_ORDER_C or MPI_ORDER_FORTRAN", NULL);
    says(MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_subarray", "ndims 0 < 1", NULL);
    /* darray: rank, the process grid, a block too short, NONE over several processes */
    int gs[2] = {4, 4}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
        darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 1}, ps[2] = {2, 3};
    says(MPI_Type_create_darray(4, 4, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_darray", "rank 4 is not in 0..3", NULL);
    says(MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_darray", "dargs[1] = 1 * psizes[1] = 3 < gsizes[1] = 4", NULL);
    darg[1] = MPI_DISTRIBUTE_DFLT_DARG;
    says(MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_darray", "the product of psizes exceeds size 4", NULL);
    dist[0] = MPI_DISTRIBUTE_NONE;
    says(MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
         "MPI_Type_create_darray", "psizes[0] = 2 with distribs[0] MPI_DISTRIBUTE_NONE", NULL);
    says(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 8, &t), MPI_ERR_TYPE,
         "MPI_Type_create_resized", "oldtype is MPI_DATATYPE_NULL", NULL);
    says(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG,
         "MPI_Type_create_f90_real", "p and r are both MPI_UNDEFINED", NULL);
    CHECK(t == MPI_DATATYPE_NULL);
    /* queries, commit and free on bad or predefined handles */
    int ni, na, nd, comb, ints[4];
    says(MPI_Type_get_envelope((MPI_Datatype)BOGUS, &ni, &na, &nd, &comb), MPI_ERR_TYPE,
         "MPI_Type_get_envelope", "datatype 0x7654321 is not a datatype", NULL);
    says(MPI_Type_get_contents(MPI_INT, 4, 0, 0, ints, NULL, NULL), MPI_ERR_TYPE,
         "MPI_Type_get_contents", "is predefined: it has no contents", NULL);
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &t), MPI_SUCCESS);
    says(MPI_Type_get_contents(t, 1, 0, 1, ints, NULL, types), MPI_ERR_ARG, "MPI_Type_get_contents",
         "max_integers 1 < 3", NULL);
    CHECK_RC(MPI_Type_free(&t), MPI_SUCCESS);
    says(MPI_Type_commit(&t), MPI_ERR_TYPE, "MPI_Type_commit", "*datatype is MPI_DATATYPE_NULL",
         NULL);
    MPI_Datatype pre = MPI_INT;
    says(MPI_Type_free(&pre), MPI_ERR_TYPE, "MPI_Type_free", "is a predefined datatype", NULL);
    CHECK(pre == MPI_INT);
    /* a correct call still works after them */
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_free(&t), MPI_SUCCESS);
}

/* Communicators: bad handles, NULL outputs, bad colors, tags and leaders; nothing is
 * created. */
static void communicators(void)
{
    char want[96];
    int n = -1;
    MPI_Comm nc = MPI_COMM_NULL, wc = MPI_COMM_WORLD;
    says(MPI_Comm_size(MPI_COMM_NULL, &n), MPI_ERR_COMM, "MPI_Comm_size", "comm is MPI_COMM_NULL",
         NULL);
    says(MPI_Comm_rank((MPI_Comm)BOGUS, &n), MPI_ERR_COMM, "MPI_Comm_rank", "comm 0x7654321",
         "is not a communicator");
    CHECK(n == -1);
    says(MPI_Comm_compare(wc, MPI_COMM_NULL, &n), MPI_ERR_COMM, "MPI_Comm_compare",
         "comm2 is MPI_COMM_NULL", NULL);
    says(MPI_Comm_size(wc, NULL), MPI_ERR_ARG, "MPI_Comm_size", "size NULL", NULL);
    says(MPI_Comm_dup(wc, NULL), MPI_ERR_ARG, "MPI_Comm_dup", "newcomm NULL", NULL);
    says(MPI_Comm_dup_with_info(wc, (MPI_Info)BOGUS, &nc), MPI_ERR_INFO, "MPI_Comm_dup_with_info",
         "info 0x7654321 is not an info object", NULL);
    says(MPI_Comm_split(wc, -5, 0, &nc), MPI_ERR_ARG, "MPI_Comm_split", "color -5 < 0", NULL);
    says(MPI_Comm_split_type(wc, 12345, 0, MPI_INFO_NULL, &nc), MPI_ERR_ARG, "MPI_Comm_split_type",
         "split_type 12345 is not", NULL);
    says(MPI_Comm_create(wc, MPI_GROUP_NULL, &nc), MPI_ERR_GROUP, "MPI_Comm_create",
         "group is MPI_GROUP_NULL", NULL);
    MPI_Group wg;
    CHECK_RC(MPI_Comm_group(wc, &wg), MPI_SUCCESS);
    if (size > 1) { /* the world's group is no subgroup of MPI_COMM_SELF's */
        snprintf(want, sizeof want, "rank %d of group (world rank %d) is not in the group of comm",
                 rank == 0, rank == 0);
        says(MPI_Comm_create(MPI_COMM_SELF, wg, &nc), MPI_ERR_GROUP, "MPI_Comm_create", want, NULL);
    }
    says(MPI_Comm_create_group(wc, wg, -3, &nc), MPI_ERR_TAG, "MPI_Comm_create_group",
         "tag -3 is not in 0..", NULL);
    says(MPI_Comm_create_from_group(MPI_GROUP_NULL, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc),
         MPI_ERR_GROUP, "MPI_Comm_create_from_group", "group is MPI_GROUP_NULL", NULL);
    says(MPI_Comm_create_from_group(wg, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc), MPI_ERR_ARG,
         "MPI_Comm_create_from_group", "stringtag NULL", NULL);
    CHECK_RC(MPI_Group_free(&wg), MPI_SUCCESS);
    snprintf(want, sizeof want, "local_leader %d is not in 0..%d", size, size - 1);
    says(MPI_Intercomm_create(wc, size, wc, 0, 0, &nc), MPI_ERR_RANK, "MPI_Intercomm_create", want,
         NULL);
    says(MPI_Intercomm_merge(wc, 0, &nc), MPI_ERR_COMM, "MPI_Intercomm_merge", "intercomm 0x",
         "is not an intercommunicator");
    says(MPI_Comm_remote_size(wc, &n), MPI_ERR_COMM, "MPI_Comm_remote_size",
         "is not an intercommunicator", NULL);
    CHECK(nc == MPI_COMM_NULL);
    says(MPI_Comm_free(&wc), MPI_ERR_COMM, "MPI_Comm_free", "MPI_COMM_WORLD, a predefined", NULL);
    CHECK(wc == MPI_COMM_WORLD);
    says(MPI_Comm_free(&nc), MPI_ERR_COMM, "MPI_Comm_free", "*comm is MPI_COMM_NULL", NULL);
    says(MPI_Comm_free(NULL), MPI_ERR_ARG, "MPI_Comm_free", "comm NULL", NULL);
}

/* Groups: bad ranks, repeated ranks, bad ranges, bad handles; no group is created. */
static void groups(void)
{
    char want[96];
    MPI_Group wg, ng = MPI_GROUP_NULL;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg), MPI_SUCCESS);
    int r[2] = {0, size};
    snprintf(want, sizeof want, "ranks[1] = %d is not in 0..%d", size, size - 1);
    says(MPI_Group_incl(wg, 2, r, &ng), MPI_ERR_RANK, "MPI_Group_incl",
         size > 1 ? want : "n 2 > 1, the size of group", NULL);
    r[1] = 0;
    says(MPI_Group_excl(wg, 2, r, &ng), MPI_ERR_RANK, "MPI_Group_excl",
         size > 1 ? "ranks[1] = 0 repeats ranks[0]" : "n 2 > 1", NULL);
    says(MPI_Group_excl(wg, -1, r, &ng), MPI_ERR_ARG, "MPI_Group_excl", "n -1 < 0", NULL);
    says(MPI_Group_incl(wg, 1, NULL, &ng), MPI_ERR_ARG, "MPI_Group_incl", "ranks NULL with n 1",
         NULL);
    int ranges[2][3] = {{0, size, 1}, {0, 0, 1}};
    snprintf(want, sizeof want, "ranges[0][1] = %d (last) is not in 0..%d", size, size - 1);
    says(MPI_Group_range_incl(wg, 1, ranges, &ng), MPI_ERR_RANK, "MPI_Group_range_incl", want,
         NULL);
    ranges[0][1] = 0;
    ranges[0][2] = 0;
    says(MPI_Group_range_excl(wg, 1, ranges, &ng), MPI_ERR_ARG, "MPI_Group_range_excl",
         "ranges[0] = {0, 0, 0}: stride 0", NULL);
    ranges[0][2] = 1;
    says(MPI_Group_range_incl(wg, 2, ranges, &ng), MPI_ERR_RANK, "MPI_Group_range_incl",
         size > 1 ? "rank 0 is in ranges[0] and ranges[1]" : "name 2 ranks, more than the 1", NULL);
    r[0] = size + 3;
    int out[1] = {-7};
    snprintf(want, sizeof want, "ranks1[0] = %d is not in 0..%d (group1)", size + 3, size - 1);
    says(MPI_Group_translate_ranks(wg, 1, r, wg, out), MPI_ERR_RANK, "MPI_Group_translate_ranks",
         want, NULL);
    CHECK(out[0] == -7);
    int res;
    says(MPI_Group_compare(MPI_GROUP_NULL, wg, &res), MPI_ERR_GROUP, "MPI_Group_compare",
         "group1 is MPI_GROUP_NULL", NULL);
    says(MPI_Group_union(wg, (MPI_Group)BOGUS, &ng), MPI_ERR_GROUP, "MPI_Group_union",
         "group2 0x7654321 is not a group", NULL);
    says(MPI_Group_difference(wg, wg, NULL), MPI_ERR_ARG, "MPI_Group_difference", "newgroup NULL",
         NULL);
    CHECK(ng == MPI_GROUP_NULL);
    says(MPI_Group_free(&ng), MPI_ERR_GROUP, "MPI_Group_free", "*group is MPI_GROUP_NULL", NULL);
    CHECK_RC(MPI_Group_free(&wg), MPI_SUCCESS);
}

/* Topologies: dims, coordinates, ranks, directions, graphs; failed creations leave
 * MPI_COMM_NULL. */
static void topologies(void)
{
    char want[128];
    MPI_Comm wc = MPI_COMM_WORLD, cart = MPI_COMM_WORLD, nc = MPI_COMM_NULL;
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0}, n = -1;
    snprintf(want, sizeof want, "dims[0] = %d: the product %d exceeds the %d ranks of comm_old",
             size + 1, size + 1, size);
    says(MPI_Cart_create(wc, 2, dims, periods, 0, &cart), MPI_ERR_TOPOLOGY, "MPI_Cart_create", want,
         NULL);
    CHECK(cart == MPI_COMM_NULL);
    says(MPI_Cart_create(wc, -1, dims, periods, 0, &cart), MPI_ERR_DIMS, "MPI_Cart_create",
         "ndims -1 < 0", NULL);
    dims[0] = 1;
    dims[1] = 0;
    says(MPI_Cart_create(wc, 2, dims, periods, 0, &cart), MPI_ERR_DIMS, "MPI_Cart_create",
         "dims[1] = 0 is not positive", NULL);
    says(MPI_Cart_map(wc, 2, NULL, periods, &n), MPI_ERR_ARG, "MPI_Cart_map",
         "dims NULL with ndims 2", NULL);
    CHECK(cart == MPI_COMM_NULL);
    says(MPI_Cartdim_get(wc, &n), MPI_ERR_TOPOLOGY, "MPI_Cartdim_get", "has no Cartesian topology",
         NULL);
    dims[0] = size;
    CHECK_RC(MPI_Cart_create(wc, 1, dims, periods, 0, &cart), MPI_SUCCESS);
    int co[1] = {size};
    snprintf(want, sizeof want, "coords[0] = %d is not in 0..%d", size, size - 1);
    says(MPI_Cart_rank(cart, co, &n), MPI_ERR_ARG, "MPI_Cart_rank", want, NULL);
    snprintf(want, sizeof want, "rank %d is not in 0..%d", size + 1, size - 1);
    says(MPI_Cart_coords(cart, size + 1, 1, co), MPI_ERR_RANK, "MPI_Cart_coords", want, NULL);
    says(MPI_Cart_coords(cart, 0, 0, co), MPI_ERR_ARG, "MPI_Cart_coords", "maxdims 0 < 1", NULL);
    says(MPI_Cart_shift(cart, 1, 1, &n, &n), MPI_ERR_ARG, "MPI_Cart_shift",
         "direction 1 is not in 0..0", NULL);
    says(MPI_Cart_sub(cart, NULL, &nc), MPI_ERR_ARG, "MPI_Cart_sub", "remain_dims NULL", NULL);
    CHECK_RC(MPI_Comm_free(&cart), MPI_SUCCESS);
    /* MPI_Dims_create with dims that cannot be met */
    int d2[2] = {4, 0};
    says(MPI_Dims_create(6, 2, d2), MPI_ERR_DIMS, "MPI_Dims_create",
         "dims[0] = 4: the fixed dims' product 4 does not divide nnodes 6", NULL);
    d2[1] = 2;
    says(MPI_Dims_create(6, 2, d2), MPI_ERR_DIMS, "MPI_Dims_create",
         "dims[0] = 4: the fixed dims' product 4", NULL);
    d2[0] = 2;
    says(MPI_Dims_create(8, 2, d2), MPI_ERR_DIMS, "MPI_Dims_create",
         "the product of dims, 4, is not nnodes 8", NULL);
    /* graphs */
    int index[2] = {2, 1}, edges[2] = {0, 5};
    says(MPI_Graph_create(wc, 1, index, edges, 0, &nc), MPI_ERR_ARG, "MPI_Graph_create",
         "edges[1] = 5 is not a node (0..0)", NULL);
    if (size > 1)
        says(MPI_Graph_create(wc, 2, index, edges, 0, &nc), MPI_ERR_ARG, "MPI_Graph_create",
             "index[1] = 1 is below the previous entry", NULL);
    says(MPI_Graph_neighbors_count(wc, 0, &n), MPI_ERR_TOPOLOGY, "MPI_Graph_neighbors_count",
         "has no graph topology", NULL);
    int src[1] = {size}, deg[1] = {-1};
    snprintf(want, sizeof want, "sources[0] = %d is not a rank (0..%d)", size, size - 1);
    says(MPI_Dist_graph_create_adjacent(wc, 1, src, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                        MPI_INFO_NULL, 0, &nc),
         MPI_ERR_ARG, "MPI_Dist_graph_create_adjacent", want, NULL);
    src[0] = 0;
    says(MPI_Dist_graph_create(wc, 1, src, deg, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nc),
         MPI_ERR_ARG, "MPI_Dist_graph_create", "negative degrees[0] = -1", NULL);
    CHECK(nc == MPI_COMM_NULL);
}

static void small_paths(void)
{
    /* MPI_Waitall with a negative count */
    MPI_Request r = MPI_REQUEST_NULL;
    says(MPI_Waitall(-1, &r, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "MPI_Waitall", "count -1 < 0",
         NULL);
    says(MPI_Testall(-2, &r, &(int){0}, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "MPI_Testall",
         "count -2 < 0", NULL);
    MPI_Request bad[2] = {MPI_REQUEST_NULL, (MPI_Request)0x7654321};
    says(MPI_Waitall(2, bad, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "MPI_Waitall", "requests[1]",
         "is not a request");
    /* MPI_Reduce_local on aliased buffers */
    int a[4] = {1, 2, 3, 4};
    says(MPI_Reduce_local(a, a, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, "MPI_Reduce_local",
         "inbuf and inoutbuf overlap", NULL);
    says(MPI_Reduce_local(a, a + 1, 3, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, "MPI_Reduce_local",
         "overlap", NULL);
    CHECK_RC(MPI_Reduce_local(a, a + 2, 2, MPI_INT, MPI_SUM), MPI_SUCCESS);
    CHECK(a[2] == 4 && a[3] == 6);
}

/* 3 chars received as ints: the message ends inside an int (MPICH's truncmsg2). */
static void split_element(void)
{
    if (size < 2)
        return;
    char src[16] = "abcdefghijklmno";
    int dst[4] = {0};
    if (rank == 1) {
        CHECK_RC(MPI_Send(src, 3, MPI_CHAR, 0, 5, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_RC(MPI_Send(src, 8, MPI_CHAR, 0, 6, MPI_COMM_WORLD), MPI_SUCCESS);
    } else if (rank == 0) {
        MPI_Status st;
        int rc = MPI_Recv(dst, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &st);
        says(rc, MPI_ERR_TYPE, "MPI_Recv", NULL, NULL);
        /* whole ints are fine, shorter than the buffer */
        CHECK_RC(MPI_Recv(dst, 4, MPI_INT, 1, 6, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        int n = -1;
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &n), MPI_SUCCESS);
        CHECK(n == 2 && memcmp(dst, src, 8) == 0);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

/* Communicators until the context ids run out: the error says so, with the count; then
 * freeing them makes room again. */
static void contexts(void)
{
    enum { MAXC = 4096 };
    MPI_Comm *c = malloc(MAXC * sizeof *c);
    int n = 0, rc = MPI_SUCCESS;
    while (n < MAXC && (rc = MPI_Comm_dup(MPI_COMM_WORLD, &c[n])) == MPI_SUCCESS)
        n++;
    CHECK(n < MAXC && n > 1000);
    says(rc, MPI_ERR_OTHER, "MPI_Comm_dup", "no context id is free", "of its 2048");
    for (int i = 0; i < n; i++)
        CHECK_RC(MPI_Comm_free(&c[i]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&c[0]), MPI_SUCCESS);
    free(c);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), MPI_SUCCESS);
    if (argc > 1 && strcmp(argv[1], "contexts") == 0) {
        contexts();
    } else {
        messages();
        collectives();
        datatypes();
        communicators();
        groups();
        topologies();
        small_paths();
        split_element();
    }
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
