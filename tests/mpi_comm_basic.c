/* mpi_comm_basic: predefined communicators, names, compare, dup (with attribute copy
 * callbacks), split (colours, keys, UNDEFINED), split_type, create, create_group, free,
 * and the error classes of bad communicators and arguments. Point-to-point on every new
 * communicator checks that it works and is isolated from its parent. */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int n, me;

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* Every rank sends its rank in c to the next; checks what comes from the previous. */
static void ring(MPI_Comm c)
{
    int cn, cr, in = -1;
    MPI_Status st;
    MPI_Comm_size(c, &cn);
    MPI_Comm_rank(c, &cr);
    CHECK_RC(MPI_Sendrecv(&cr, 1, MPI_INT, (cr + 1) % cn, 7, &in, 1, MPI_INT, (cr - 1 + cn) % cn, 7,
                          c, &st),
             MPI_SUCCESS);
    CHECK(in == (cr - 1 + cn) % cn);
}

static int copies, deletes;
static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    CHECK(extra == &copies);
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int k, res, flag;
    char name[MPI_MAX_OBJECT_NAME];

    /* predefined */
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_WORLD, name, &k), MPI_SUCCESS);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && k == 14);
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_SELF, name, &k), MPI_SUCCESS);
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0);
    MPI_Comm_size(MPI_COMM_SELF, &k);
    CHECK(k == 1);
    MPI_Comm_rank(MPI_COMM_SELF, &k);
    CHECK(k == 0);
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
    CHECK_RC(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag), MPI_SUCCESS);
    CHECK(!flag);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res), MPI_SUCCESS);
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res), MPI_SUCCESS);
    CHECK(res == (n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* dup: congruent, own name (empty), own traffic, attributes copied */
    int key;
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &copies), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)(size_t)100), MPI_SUCCESS);
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);
    CHECK(copies == 1);
    void *val;
    CHECK_RC(MPI_Comm_get_attr(d, key, &val, &flag), MPI_SUCCESS);
    CHECK(flag && val == (void *)(size_t)101);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, d, &res), MPI_SUCCESS);
    CHECK(res == MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_get_name(d, name, &k), MPI_SUCCESS);
    CHECK(k == 0 && name[0] == 0);
    CHECK_RC(MPI_Comm_set_name(d, "dup of world"), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_get_name(d, name, &k), MPI_SUCCESS);
    CHECK(strcmp(name, "dup of world") == 0 && k == 12);
    CHECK_RC(MPI_Comm_get_errhandler(d, &eh), MPI_SUCCESS); /* inherited */
    CHECK(eh == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    {
        /* a message on d is not received on WORLD: post on WORLD first, send on d
         * then on WORLD; the WORLD receive must get the WORLD message */
        if (n >= 2 && me < 2) {
            int peer = 1 - me, a = 10 + me, b = 20 + me, ra = -1, rb = -1;
            MPI_Request rq[2];
            MPI_Irecv(&rb, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &rq[0]);
            MPI_Irecv(&ra, 1, MPI_INT, peer, 5, d, &rq[1]);
            MPI_Send(&a, 1, MPI_INT, peer, 5, d);
            MPI_Send(&b, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
            MPI_Status sts[2];
            MPI_Waitall(2, rq, sts);
            CHECK(ra == 10 + peer && rb == 20 + peer);
        }
    }
    ring(d);
    MPI_Comm d2;
    CHECK_RC(MPI_Comm_dup(d, &d2), MPI_SUCCESS);
    CHECK(copies == 2);
    CHECK_RC(MPI_Comm_free(&d2), MPI_SUCCESS);
    CHECK(deletes == 1);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    CHECK(d == MPI_COMM_NULL && deletes == 2);
    CHECK_RC(MPI_Comm_delete_attr(MPI_COMM_WORLD, key), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&key), MPI_SUCCESS);

    /* split: colour me % 3 (ranks with me % 3 == 2 give UNDEFINED), key -me (reversed) */
    {
        int color = me % 3 == 2 ? MPI_UNDEFINED : me % 3;
        MPI_Comm s;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, -me, &s), MPI_SUCCESS);
        if (color == MPI_UNDEFINED) {
            CHECK(s == MPI_COMM_NULL);
        } else {
            int want_size = 0, want_rank = 0;
            for (int i = 0; i < n; i++)
                if (i % 3 == color) {
                    want_size++;
                    if (i > me)
                        want_rank++;
                }
            int sz, rk;
            MPI_Comm_size(s, &sz);
            MPI_Comm_rank(s, &rk);
            CHECK(sz == want_size && rk == want_rank);
            /* translate: rank 0 of s is the largest world rank of the colour */
            MPI_Group gs, gw;
            MPI_Comm_group(s, &gs);
            MPI_Comm_group(MPI_COMM_WORLD, &gw);
            int r0 = 0, w0;
            MPI_Group_translate_ranks(gs, 1, &r0, gw, &w0);
            int top = color;
            while (top + 3 < n)
                top += 3;
            CHECK(w0 == top);
            MPI_Group_free(&gs);
            MPI_Group_free(&gw);
            ring(s);
            CHECK_RC(MPI_Comm_compare(s, MPI_COMM_WORLD, &res), MPI_SUCCESS);
            CHECK(res == (sz == n ? MPI_SIMILAR : MPI_UNEQUAL) || (n == 1 && res == MPI_CONGRUENT));
            MPI_Comm_free(&s);
        }
        /* equal keys: parent order; one colour: congruent with the parent */
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &s), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_compare(s, MPI_COMM_WORLD, &res), MPI_SUCCESS);
        CHECK(res == MPI_CONGRUENT);
        MPI_Comm_free(&s);
        CHECK(eclass(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &s)) == MPI_ERR_ARG);
    }

    /* split_type SHARED: one host here, so everyone together, ordered by key */
    {
        MPI_Comm s;
        CHECK_RC(
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, n - me, MPI_INFO_NULL, &s),
            MPI_SUCCESS);
        int sz, rk;
        MPI_Comm_size(s, &sz);
        MPI_Comm_rank(s, &rk);
        CHECK(sz == n && rk == n - 1 - me);
        ring(s);
        MPI_Comm_free(&s);
        CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &s),
                 MPI_SUCCESS);
        CHECK(s == MPI_COMM_NULL);
        /* unguided: no strict subset on one host */
        CHECK_RC(
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &s),
            MPI_SUCCESS);
        CHECK(s == MPI_COMM_NULL);
        /* guided by the shared-memory resource: the host; by anything else: none */
        MPI_Info hw;
        MPI_Info_create(&hw);
        MPI_Info_set(hw, "mpi_hw_resource_type", "mpi_shared_memory");
        CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &s),
                 MPI_SUCCESS);
        CHECK(s != MPI_COMM_NULL);
        MPI_Comm_size(s, &sz);
        CHECK(sz == n);
        MPI_Comm_free(&s);
        MPI_Info_set(hw, "mpi_hw_resource_type", "no_such_resource");
        CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &s),
                 MPI_SUCCESS);
        CHECK(s == MPI_COMM_NULL);
        MPI_Info_free(&hw);
        CHECK(eclass(MPI_Comm_split_type(MPI_COMM_WORLD, 999, 0, MPI_INFO_NULL, &s)) ==
              MPI_ERR_ARG);
    }

    /* create: the even ranks; create_group: the odd ranks in reverse */
    {
        MPI_Group gw, ge, go;
        MPI_Comm_group(MPI_COMM_WORLD, &gw);
        int r[1][3] = {{0, n - 1, 2}};
        MPI_Group_range_incl(gw, 1, r, &ge);
        MPI_Comm c;
        CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, ge, &c), MPI_SUCCESS);
        if (me % 2) {
            CHECK(c == MPI_COMM_NULL);
        } else {
            int rk;
            MPI_Comm_rank(c, &rk);
            CHECK(rk == me / 2);
            ring(c);
            MPI_Group gc;
            MPI_Comm_group(c, &gc);
            MPI_Group_compare(gc, ge, &res);
            CHECK(res == MPI_IDENT);
            MPI_Group_free(&gc);
            MPI_Comm_free(&c);
        }
        if (n >= 2) {
            int rr[1][3] = {{(n - 1) % 2 ? n - 1 : n - 2, 1, -2}};
            MPI_Group_range_incl(gw, 1, rr, &go);
            if (me % 2) {
                CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, go, 33, &c), MPI_SUCCESS);
                int rk, sz;
                MPI_Comm_rank(c, &rk);
                MPI_Comm_size(c, &sz);
                CHECK(sz == n / 2 && rk == sz - 1 - me / 2);
                ring(c);
                MPI_Comm_free(&c);
            }
            CHECK(eclass(MPI_Comm_create_group(MPI_COMM_WORLD, go, -1, &c)) == MPI_ERR_TAG);
            MPI_Group_free(&go);
        }
        CHECK(eclass(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c)) == MPI_ERR_GROUP);
        MPI_Group_free(&ge);
        MPI_Group_free(&gw);
        /* a group that is not part of the parent */
        MPI_Group gself;
        MPI_Comm_group(MPI_COMM_SELF, &gself);
        if (n >= 2) {
            MPI_Comm s2;
            MPI_Comm_split(MPI_COMM_WORLD, me == 0, 0, &s2); /* rank 0 alone */
            MPI_Group_free(&gself);
            MPI_Group g0;
            MPI_Comm_group(MPI_COMM_WORLD, &gw);
            int one = 1;
            MPI_Group_incl(gw, 1, &one, &g0);
            if (me == 0)
                CHECK(eclass(MPI_Comm_create(s2, g0, &c)) == MPI_ERR_GROUP);
            MPI_Group_free(&g0);
            MPI_Group_free(&gw);
            MPI_Comm_free(&s2);
        } else {
            MPI_Group_free(&gself);
        }
    }

    /* many dups and frees: context ids are recycled */
    for (int i = 0; i < 3000; i++) {
        MPI_Comm t;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &t), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_free(&t), MPI_SUCCESS);
    }
    for (int i = 0; i < 20; i++) {
        MPI_Comm t;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &t), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_free(&t), MPI_SUCCESS);
    }
    /* splits where some ranks give MPI_UNDEFINED, more times than there are context ids
     * (2048 pairs): a process outside every part must not keep the agreed pair */
    for (int i = 0; i < 4000; i++) {
        MPI_Comm t;
        int undefined = (i + me) % 4 != 0;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, undefined ? MPI_UNDEFINED : 1, me, &t),
                 MPI_SUCCESS);
        CHECK((t == MPI_COMM_NULL) == undefined);
        if (t != MPI_COMM_NULL)
            CHECK_RC(MPI_Comm_free(&t), MPI_SUCCESS);
    }

    /* info */
    {
        MPI_Info in, out;
        MPI_Info_create(&in);
        MPI_Info_set(in, "mpi_assert_no_any_tag", "true");
        MPI_Comm c;
        CHECK_RC(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &c), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_get_info(c, &out), MPI_SUCCESS);
        char v[16];
        int len = sizeof v;
        MPI_Info_get_string(out, "mpi_assert_no_any_tag", &len, v, &flag);
        CHECK(flag && strcmp(v, "true") == 0);
        MPI_Info_free(&out);
        MPI_Info_free(&in);
        MPI_Comm_free(&c);
    }

    /* errors */
    {
        MPI_Comm c = MPI_COMM_NULL;
        CHECK(eclass(MPI_Comm_size(MPI_COMM_NULL, &k)) == MPI_ERR_COMM);
        CHECK(eclass(MPI_Comm_rank(777, &k)) == MPI_ERR_COMM);
        CHECK(eclass(MPI_Comm_dup(MPI_COMM_NULL, &c)) == MPI_ERR_COMM);
        CHECK(eclass(MPI_Comm_free(&c)) == MPI_ERR_COMM);
        c = MPI_COMM_WORLD;
        CHECK(eclass(MPI_Comm_free(&c)) == MPI_ERR_COMM);
        CHECK(eclass(MPI_Comm_remote_size(MPI_COMM_WORLD, &k)) == MPI_ERR_COMM);
        CHECK(eclass(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res)) == MPI_ERR_COMM);
        MPI_Comm t;
        MPI_Comm_dup(MPI_COMM_WORLD, &t);
        MPI_Comm t2 = t;
        MPI_Comm_free(&t);
        CHECK(eclass(MPI_Comm_size(t2, &k)) == MPI_ERR_COMM);
    }
    /* Freeing a communicator with operations pending (MPI-4.0 6.4.3): they complete
     * normally, and a communicator created meanwhile (which may get the freed context id
     * once it is really released) does not see their messages. */
    {
        MPI_Comm a, b;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &a), MPI_SUCCESS);
        int from = (me + n - 1) % n, to = (me + 1) % n, got = -1, got2 = -1;
        MPI_Request rq[2];
        CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, from, 5, a, &rq[0]), MPI_SUCCESS);
        int val = 100 + me;
        CHECK_RC(MPI_Isend(&val, 1, MPI_INT, to, 5, a, &rq[1]), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_free(&a), MPI_SUCCESS);
        CHECK(a == MPI_COMM_NULL);
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &b), MPI_SUCCESS);
        int val2 = 200 + me;
        CHECK_RC(MPI_Sendrecv(&val2, 1, MPI_INT, to, 5, &got2, 1, MPI_INT, from, 5, b,
                              MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK(got2 == 200 + from);
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        CHECK(got == 100 + from);
        CHECK_RC(MPI_Comm_free(&b), MPI_SUCCESS);
    }
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
