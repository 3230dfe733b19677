/* mpi_env_session.c — MPI-4.0 sessions: process sets (names, lengths, truncation, info
 * "mpi_size"), thread level hints, groups from process sets, communicators from groups
 * (ring traffic with content checks, a reduction, disjoint subgroups created
 * concurrently with different string tags, an intercommunicator between them), session
 * error handlers (user handler called with the code; error classes), several sessions at
 * once, and the coexistence with the world model: MPI_Init while a session lives, a
 * session finalized while the world model lives, MPI_Finalize before the last session,
 * and no restart after the end. Argument "only": sessions without MPI_Init at all. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int wsize, wrank;
static int handler_calls, handler_code;
static MPI_Session handler_session;

static void session_handler(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

static int errclass(int rc)
{
    int ec = -1;
    MPI_Error_class(rc, &ec);
    return ec;
}

static MPI_Session open_session(const char *thread_level, const char *want_level)
{
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "thread_level", thread_level), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "app_hint", "42"), MPI_SUCCESS);
    MPI_Session s = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(info, MPI_ERRORS_RETURN, &s), MPI_SUCCESS);
    CHECK(s != MPI_SESSION_NULL);
    CHECK_RC(MPI_Info_free(&info), MPI_SUCCESS);
    MPI_Info used;
    CHECK_RC(MPI_Session_get_info(s, &used), MPI_SUCCESS);
    char v[64];
    int flag = 0;
    CHECK_RC(MPI_Info_get(used, "thread_level", 63, v, &flag), MPI_SUCCESS);
    CHECK(flag && strcmp(v, want_level) == 0);
    CHECK_RC(MPI_Info_get(used, "app_hint", 63, v, &flag), MPI_SUCCESS);
    CHECK(flag && strcmp(v, "42") == 0);
    CHECK_RC(MPI_Info_free(&used), MPI_SUCCESS);
    return s;
}

static void test_psets(MPI_Session s)
{
    int n = -1;
    CHECK_RC(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n), MPI_SUCCESS);
    CHECK(n == 2);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL), MPI_SUCCESS);
        char *name = malloc((size_t)len);
        CHECK(name && len > 1);
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name), MPI_SUCCESS);
        CHECK((int)strlen(name) + 1 == len);
        char small[5];
        int slen = 5;
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &slen, small), MPI_SUCCESS);
        CHECK(slen == len && strncmp(small, name, 4) == 0 && small[4] == 0);
        MPI_Info pinfo;
        CHECK_RC(MPI_Session_get_pset_info(s, name, &pinfo), MPI_SUCCESS);
        char v[32];
        int flag = 0;
        CHECK_RC(MPI_Info_get(pinfo, "mpi_size", 31, v, &flag), MPI_SUCCESS);
        CHECK(flag);
        MPI_Group g;
        CHECK_RC(MPI_Group_from_session_pset(s, name, &g), MPI_SUCCESS);
        int gs, gr;
        MPI_Group_size(g, &gs);
        MPI_Group_rank(g, &gr);
        CHECK(atoi(v) == gs);
        if (strcmp(name, "mpi://WORLD") == 0) {
            seen_world = 1;
            CHECK(gs == wsize && gr == wrank);
        } else if (strcmp(name, "mpi://SELF") == 0) {
            seen_self = 1;
            CHECK(gs == 1 && gr == 0);
        }
        CHECK_RC(MPI_Group_free(&g), MPI_SUCCESS);
        CHECK_RC(MPI_Info_free(&pinfo), MPI_SUCCESS);
        free(name);
    }
    CHECK(seen_world && seen_self);
    /* names compare without regard to case */
    MPI_Group g;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://self", &g), MPI_SUCCESS);
    CHECK_RC(MPI_Group_free(&g), MPI_SUCCESS);
}

/* Communicator over the WORLD pset: a ring of content-checked messages and a sum. */
static void test_world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &g), MPI_SUCCESS);
    MPI_Comm c;
    CHECK_RC(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c), MPI_SUCCESS);
    CHECK_RC(MPI_Group_free(&g), MPI_SUCCESS);
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    CHECK(r == wrank && n == wsize);
    int right = (r + 1) % n, left = (r + n - 1) % n;
    int out[3] = {r, r * 7, r * 11}, in[3] = {-1, -1, -1};
    CHECK_RC(MPI_Sendrecv(out, 3, MPI_INT, right, 5, in, 3, MPI_INT, left, 5, c, MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    CHECK(in[0] == left && in[1] == left * 7 && in[2] == left * 11);
    int sum = -1;
    CHECK_RC(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
    CHECK(sum == n * (n - 1) / 2);
    /* the errhandler given at creation is the communicator's */
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_get_errhandler(c, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_RETURN);
    CHECK(errclass(MPI_Send(out, -1, MPI_INT, right, 0, c)) == MPI_ERR_COUNT);
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
}

/* Even and odd ranks build their communicators at the same time (different string tags),
 * then an intercommunicator between them. */
static void test_subgroups(MPI_Session s)
{
    if (wsize < 2)
        return;
    MPI_Group world, even, odd;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &world), MPI_SUCCESS);
    int ne = (wsize + 1) / 2, no = wsize / 2;
    int *re = malloc(sizeof(int) * (size_t)ne), *ro = malloc(sizeof(int) * (size_t)no);
    for (int i = 0; i < ne; i++)
        re[i] = 2 * i;
    for (int i = 0; i < no; i++)
        ro[i] = 2 * i + 1;
    MPI_Group_incl(world, ne, re, &even);
    MPI_Group_incl(world, no, ro, &odd);
    int am_even = wrank % 2 == 0;
    MPI_Comm c;
    CHECK_RC(MPI_Comm_create_from_group(am_even ? even : odd, am_even ? "test.even" : "test.odd",
                                        MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
             MPI_SUCCESS);
    int r, n, sum = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    CHECK(r == wrank / 2 && n == (am_even ? ne : no));
    CHECK_RC(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
    int want = 0;
    for (int i = 0; i < wsize; i++)
        if (i % 2 == wrank % 2)
            want += i;
    CHECK(sum == want);
    /* a process outside the group gets MPI_COMM_NULL */
    MPI_Comm none;
    CHECK_RC(MPI_Comm_create_from_group(am_even ? odd : even, "test.none", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &none),
             MPI_SUCCESS);
    CHECK(none == MPI_COMM_NULL);
    /* intercommunicator: leaders are the last of each group */
    MPI_Comm ic;
    CHECK_RC(MPI_Intercomm_create_from_groups(am_even ? even : odd, am_even ? ne - 1 : no - 1,
                                              am_even ? odd : even, am_even ? no - 1 : ne - 1,
                                              "test.inter", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
             MPI_SUCCESS);
    int flag, rsize;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK(flag && rsize == (am_even ? no : ne));
    /* even rank i <-> odd rank i (when both exist) */
    if (r < (am_even ? no : ne)) {
        int out = wrank * 3, in = -1;
        CHECK_RC(MPI_Sendrecv(&out, 1, MPI_INT, r, 9, &in, 1, MPI_INT, r, 9, ic, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK(in == (am_even ? wrank + 1 : wrank - 1) * 3);
    }
    /* overlapping groups are refused */
    MPI_Comm bad = MPI_COMM_NULL;
    CHECK(errclass(MPI_Intercomm_create_from_groups(world, 0, am_even ? even : odd, 0, "test.bad",
                                                    MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad)) ==
          MPI_ERR_GROUP);
    CHECK_RC(MPI_Comm_free(&ic), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
    MPI_Group_free(&even);
    MPI_Group_free(&odd);
    MPI_Group_free(&world);
    free(re);
    free(ro);
}

static void test_self_comm(MPI_Session s)
{
    MPI_Group g;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://SELF", &g), MPI_SUCCESS);
    MPI_Comm c;
    CHECK_RC(MPI_Comm_create_from_group(g, "self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
             MPI_SUCCESS);
    MPI_Group_free(&g);
    int n;
    MPI_Comm_size(c, &n);
    CHECK(n == 1);
    MPI_Request q;
    int x = 17 + wrank, y = -1;
    CHECK_RC(MPI_Irecv(&y, 1, MPI_INT, 0, 0, c, &q), MPI_SUCCESS);
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, 0, 0, c), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(y == x);
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
}

static void test_errors(MPI_Session s)
{
    /* errors on the session go to its handler (MPI_ERRORS_RETURN) */
    int n;
    CHECK(errclass(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &n, NULL)) == MPI_ERR_ARG);
    CHECK(errclass(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &n, NULL)) == MPI_ERR_ARG);
    MPI_Group g = MPI_GROUP_NULL;
    CHECK(errclass(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g)) == MPI_ERR_ARG);
    CHECK(g == MPI_GROUP_NULL);
    MPI_Info i;
    CHECK(errclass(MPI_Session_get_pset_info(s, "nope", &i)) == MPI_ERR_ARG);
    CHECK(errclass(MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL)) == MPI_ERR_ARG);
    MPI_Comm c;
    CHECK(errclass(MPI_Comm_create_from_group(MPI_GROUP_NULL, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                              &c)) == MPI_ERR_GROUP);
    CHECK(errclass(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, NULL, MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &c)) == MPI_ERR_ARG);
    /* a user handler: created, attached, called with the code */
    MPI_Errhandler eh, got;
    CHECK_RC(MPI_Session_create_errhandler(session_handler, &eh), MPI_SUCCESS);
    CHECK_RC(MPI_Session_set_errhandler(s, eh), MPI_SUCCESS);
    CHECK_RC(MPI_Session_get_errhandler(s, &got), MPI_SUCCESS);
    CHECK(got == eh);
    CHECK_RC(MPI_Errhandler_free(&got), MPI_SUCCESS);
    handler_calls = 0;
    CHECK_RC(MPI_Session_call_errhandler(s, MPI_ERR_PENDING), MPI_SUCCESS);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_PENDING && handler_session == s);
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &n, NULL);
    CHECK(handler_calls == 2 && errclass(handler_code) == MPI_ERR_ARG);
    /* a communicator handler does not fit a session */
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    MPI_Errhandler ceh;
    CHECK_RC(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)session_handler, &ceh),
             MPI_SUCCESS);
    CHECK(errclass(MPI_Session_set_errhandler(s, ceh)) == MPI_ERR_ARG);
    CHECK_RC(MPI_Errhandler_free(&ceh), MPI_SUCCESS);
    CHECK_RC(MPI_Errhandler_free(&eh), MPI_SUCCESS);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s)) == s);
}

int main(int argc, char **argv)
{
    int only = argc > 1 && strcmp(argv[1], "only") == 0;
    int flag = 1;
    /* a session first, before (or without) the world model */
    MPI_Session s1 = open_session("MPI_THREAD_MULTIPLE", "MPI_THREAD_SERIALIZED");
    MPI_Initialized(&flag);
    CHECK(!flag);
    MPI_Group wg;
    CHECK_RC(MPI_Group_from_session_pset(s1, "mpi://WORLD", &wg), MPI_SUCCESS);
    MPI_Group_size(wg, &wsize);
    MPI_Group_rank(wg, &wrank);
    MPI_Group_free(&wg);
    test_psets(s1);
    test_world_comm(s1, "org.fmpl.test.one");
    /* a second session at the same time */
    MPI_Session s2 = open_session("MPI_THREAD_FUNNELED", "MPI_THREAD_FUNNELED");
    CHECK(s2 != s1);
    test_world_comm(s2, "org.fmpl.test.two");
    test_subgroups(s2);
    test_self_comm(s2);
    test_errors(s2);
    if (!only) {
        /* the world model joins, s1 ends while it lives, it ends before s2 */
        int provided;
        CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
        MPI_Initialized(&flag);
        CHECK(flag && provided == MPI_THREAD_SINGLE);
        int r, n;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        CHECK(r == wrank && n == wsize);
        CHECK_RC(MPI_Session_finalize(&s1), MPI_SUCCESS);
        CHECK(s1 == MPI_SESSION_NULL);
        int sum = -1;
        CHECK_RC(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK(sum == n * (n - 1) / 2);
        test_world_comm(s2, "org.fmpl.test.three");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        /* a finalized session's handle is no session any more */
        CHECK(errclass(MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &n)) == MPI_ERR_SESSION);
        CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
        MPI_Finalized(&flag);
        CHECK(flag);
        test_world_comm(s2, "org.fmpl.test.four"); /* the session still works */
    } else {
        CHECK_RC(MPI_Session_finalize(&s1), MPI_SUCCESS);
        MPI_Finalized(&flag);
        CHECK(!flag);
    }
    CHECK_RC(MPI_Session_finalize(&s2), MPI_SUCCESS);
    /* the runtime has ended: no new session */
    MPI_Session s3 = MPI_SESSION_NULL;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3) != MPI_SUCCESS);
    CHECK(s3 == MPI_SESSION_NULL);
    if (wrank == 0)
        printf("mpi_env_session: ok (%d ranks%s)\n", wsize, only ? ", sessions only" : "");
    return 0;
}
