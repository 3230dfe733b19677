/* info.c — MPI_Info objects (MPI-4.0 section 10) and MPI_INFO_ENV.
 *
 * An info is an ordered list of (key, value) strings: keys keep the order in which they
 * were first set (MPI_Info_get_nthkey follows it), setting an existing key replaces its
 * value in place. Keys are 1 .. MPI_MAX_INFO_KEY-1 characters, values 1 ..
 * MPI_MAX_INFO_VAL-1. Info calls work before MPI_Init and after MPI_Finalize too
 * (MPI-4.0 11.4.1); MPI_INFO_ENV exists from MPI_Init on. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mpi/mpi_impl.h"

typedef struct info_obj {
    int n, cap;
    char **key, **val;
} info_obj_t;

static info_obj_t info_env; /* MPI_INFO_ENV */

static info_obj_t *info_get(MPI_Info h)
{
    return (info_obj_t *)mpii_handle_get(FMPL_MPI_KIND_INFO, h);
}

static void info_clear(info_obj_t *o)
{
    for (int i = 0; i < o->n; i++) {
        free(o->key[i]);
        free(o->val[i]);
    }
    free(o->key);
    free(o->val);
    memset(o, 0, sizeof *o);
}

static int info_find(const info_obj_t *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->key[i], key) == 0)
            return i;
    return -1;
}

/* Sets key=value; MPI_SUCCESS or MPI_ERR_NO_MEM (o unchanged then). */
static int info_put(info_obj_t *o, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = info_find(o, key);
    if (i >= 0) {
        free(o->val[i]);
        o->val[i] = v;
        return MPI_SUCCESS;
    }
    if (o->n == o->cap) {
        int cap = o->cap ? o->cap * 2 : 8;
        char **k = realloc(o->key, (size_t)cap * sizeof *k);
        if (k)
            o->key = k;
        char **vv = k ? realloc(o->val, (size_t)cap * sizeof *vv) : NULL;
        if (!vv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        o->val = vv;
        o->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    o->key[o->n] = k;
    o->val[o->n] = v;
    o->n++;
    return MPI_SUCCESS;
}

static int info_copy(info_obj_t *dst, const info_obj_t *src)
{
    for (int i = 0; i < src->n; i++) {
        int rc = info_put(dst, src->key[i], src->val[i]);
        if (rc != MPI_SUCCESS) {
            info_clear(dst);
            return rc;
        }
    }
    return MPI_SUCCESS;
}

/* A new handle for o (owned by the handle afterwards); MPI_ERR_NO_MEM frees o. */
static int info_handle(info_obj_t *o, MPI_Info *out)
{
    int h = mpii_handle_new(FMPL_MPI_KIND_INFO, o);
    if (h == MPI_INFO_NULL) {
        info_clear(o);
        free(o);
        return MPI_ERR_NO_MEM;
    }
    *out = h;
    return MPI_SUCCESS;
}

/* MPI_ERR_INFO_KEY unless key is a valid key. */
static int key_check(const char *key)
{
    if (!key)
        return MPI_ERR_ARG;
    size_t n = strnlen(key, MPI_MAX_INFO_KEY);
    return n == 0 || n >= MPI_MAX_INFO_KEY ? MPI_ERR_INFO_KEY : MPI_SUCCESS;
}

int mpii_info_dup(MPI_Info info, MPI_Info *newinfo)
{
    info_obj_t *src = NULL;
    if (info != MPI_INFO_NULL && !(src = info_get(info)))
        return MPI_ERR_INFO;
    info_obj_t *o = calloc(1, sizeof *o);
    if (!o)
        return MPI_ERR_NO_MEM;
    if (src) {
        int rc = info_copy(o, src);
        if (rc != MPI_SUCCESS) {
            free(o);
            return rc;
        }
    }
    return info_handle(o, newinfo);
}

int mpii_info_free(MPI_Info *info)
{
    info_obj_t *o = info_get(*info);
    if (!o || o == &info_env)
        return MPI_ERR_INFO;
    mpii_handle_del(FMPL_MPI_KIND_INFO, *info);
    info_clear(o);
    free(o);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/* The number of processes the launcher started (the "maxprocs" of MPI_INFO_ENV), the
 * same before MPI_Init, while MPI runs and after MPI_Finalize: the world's size once MPI
 * has started; before, PMI_SIZE as fmplrun and other PMI-1 launchers set it, or 1 when no
 * launcher started the process (MPI_Init then makes a singleton). 0 when not known
 * before MPI_Init (a launcher that hands out only PMI_PORT / PMI_ID: the size comes
 * through the PMI handshake). */
static int launch_size(void)
{
    if (mpii.state != MPII_BEFORE && mpii.world_size > 0)
        return mpii.world_size;
    const char *size_text = getenv("PMI_SIZE");
    if (size_text) {
        char *end = NULL;
        long n = strtol(size_text, &end, 10);
        return end != size_text && *end == 0 && n > 0 && n <= INT_MAX ? (int)n : 0;
    }
    return getenv("PMI_FD") || getenv("PMI_PORT") || getenv("PMI_ID") ? 0 : 1;
}

/* Fills o with the keys MPI-4.0 lists for MPI_INFO_ENV, as far as we know it. It depends
 * only on argc/argv and the launch, so MPI_Info_create_env gives the same keys and
 * values before MPI_Init, during and after MPI_Finalize. "thread_level" is absent: it is
 * the level requested before the program started, and no FMPL launcher takes one (what
 * MPI_Init_thread provided is its own output argument). Without argv, "command" is the
 * executable's path. */
static void info_fill_env(info_obj_t *o, int argc, char **argv)
{
    if (argv && argc > 0 && argv[0]) {
        (void)info_put(o, "command", argv[0]);
    } else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0 && n < MPI_MAX_INFO_VAL) {
            exe[n] = 0;
            (void)info_put(o, "command", exe);
        }
    }
    if (argv && argc > 1) {
        size_t len = 1;
        for (int i = 1; i < argc; i++)
            len += (argv[i] ? strlen(argv[i]) : 0) + 1;
        char *s = calloc(1, len);
        if (s) {
            for (int i = 1; i < argc; i++) {
                if (i > 1)
                    strcat(s, " ");
                if (argv[i])
                    strcat(s, argv[i]);
            }
            if (*s && strlen(s) < MPI_MAX_INFO_VAL)
                (void)info_put(o, "argv", s);
            free(s);
        }
    }
    char buf[PATH_MAX];
    int size = launch_size();
    if (size > 0) {
        snprintf(buf, sizeof buf, "%d", size);
        (void)info_put(o, "maxprocs", buf);
        (void)info_put(o, "soft", buf);
    }
    if (gethostname(buf, sizeof buf - 1) == 0) {
        buf[sizeof buf - 1] = 0;
        (void)info_put(o, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0)
        (void)info_put(o, "arch", u.machine);
    if (getcwd(buf, sizeof buf) && strlen(buf) < MPI_MAX_INFO_VAL)
        (void)info_put(o, "wdir", buf);
}

int mpii_info_init(int *argc, char ***argv)
{
    info_clear(&info_env);
    info_fill_env(&info_env, argc && argv && *argv ? *argc : 0, argv ? *argv : NULL);
    mpii_handle_set(FMPL_MPI_KIND_INFO, FMPL_MPI_HANDLE_INDEX(MPI_INFO_ENV), &info_env);
    return MPI_SUCCESS;
}

void mpii_info_finalize(void)
{
    /* MPI_INFO_ENV goes; infos the program created stay usable (MPI-4.0 allows info
     * calls after MPI_Finalize). */
    mpii_handle_set(FMPL_MPI_KIND_INFO, FMPL_MPI_HANDLE_INDEX(MPI_INFO_ENV), NULL);
    info_clear(&info_env);
}

/* ---------------------------------------------------------------- MPI functions */

/* MPI_Info_create: a new empty info. */
int PMPI_Info_create(MPI_Info *info)
{
    if (!info)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_create");
    info_obj_t *o = calloc(1, sizeof *o);
    if (!o || info_handle(o, info) != MPI_SUCCESS)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Info_create");
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_create, PMPI_Info_create)

/* MPI_Info_create_env: a new info with what MPI_INFO_ENV would hold for argc/argv (may
 * be called before MPI_Init). */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    if (!info || argc < 0 || (argc > 0 && !argv))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_create_env");
    info_obj_t *o = calloc(1, sizeof *o);
    if (!o)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Info_create_env");
    info_fill_env(o, argc, argv);
    if (info_handle(o, info) != MPI_SUCCESS)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Info_create_env");
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_create_env, PMPI_Info_create_env)

/* MPI_Info_dup: an independent copy (same keys, same order). */
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    if (!info_get(info))
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_dup");
    if (!newinfo)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_dup");
    int rc = mpii_info_dup(info, newinfo);
    return rc == MPI_SUCCESS ? rc : MPII_ERR(rc, "MPI_Info_dup");
}
MPII_WEAK(MPI_Info_dup, PMPI_Info_dup)

/* MPI_Info_free: frees *info and sets it to MPI_INFO_NULL (MPI_INFO_ENV: MPI_ERR_INFO). */
int PMPI_Info_free(MPI_Info *info)
{
    if (!info)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_free");
    if (*info == MPI_INFO_ENV)
        return MPII_ERRF(MPI_ERR_INFO, "MPI_Info_free", "MPI_INFO_ENV cannot be freed");
    int rc = mpii_info_free(info);
    return rc == MPI_SUCCESS ? rc : MPII_ERR(rc, "MPI_Info_free");
}
MPII_WEAK(MPI_Info_free, PMPI_Info_free)

/* MPI_Info_set: adds key=value or replaces key's value. */
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    info_obj_t *o = info_get(info);
    if (!o)
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_set");
    int rc = key_check(key);
    if (rc != MPI_SUCCESS)
        return MPII_ERR(rc, "MPI_Info_set");
    if (!value)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_set");
    size_t n = strnlen(value, MPI_MAX_INFO_VAL);
    if (n == 0 || n >= MPI_MAX_INFO_VAL)
        return MPII_ERR(MPI_ERR_INFO_VALUE, "MPI_Info_set");
    rc = info_put(o, key, value);
    return rc == MPI_SUCCESS ? rc : MPII_ERR(rc, "MPI_Info_set");
}
MPII_WEAK(MPI_Info_set, PMPI_Info_set)

/* MPI_Info_delete: removes key (MPI_ERR_INFO_NOKEY when absent). */
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    info_obj_t *o = info_get(info);
    if (!o)
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_delete");
    int rc = key_check(key);
    if (rc != MPI_SUCCESS)
        return MPII_ERR(rc, "MPI_Info_delete");
    int i = info_find(o, key);
    if (i < 0)
        return MPII_ERR(MPI_ERR_INFO_NOKEY, "MPI_Info_delete");
    free(o->key[i]);
    free(o->val[i]);
    memmove(o->key + i, o->key + i + 1, (size_t)(o->n - i - 1) * sizeof *o->key);
    memmove(o->val + i, o->val + i + 1, (size_t)(o->n - i - 1) * sizeof *o->val);
    o->n--;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_delete, PMPI_Info_delete)

/* MPI_Info_get (deprecated in MPI-4.0): copies at most valuelen characters of key's value
 * and a NUL (value needs valuelen + 1 bytes); *flag 0 when key is absent. */
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    info_obj_t *o = info_get(info);
    if (!o)
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_get");
    int rc = key_check(key);
    if (rc != MPI_SUCCESS)
        return MPII_ERR(rc, "MPI_Info_get");
    if (valuelen < 0 || !flag || (!value && valuelen > 0))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_get");
    int i = info_find(o, key);
    *flag = i >= 0;
    if (i >= 0 && value) {
        size_t n = BASE_MIN(strlen(o->val[i]), (size_t)valuelen);
        memcpy(value, o->val[i], n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_get, PMPI_Info_get)

/* MPI_Info_get_string: *buflen in: the room in value; out: the value's length + 1. The
 * value is copied (truncated, NUL-terminated) when *buflen > 0. */
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    info_obj_t *o = info_get(info);
    if (!o)
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_get_string");
    int rc = key_check(key);
    if (rc != MPI_SUCCESS)
        return MPII_ERR(rc, "MPI_Info_get_string");
    if (!buflen || *buflen < 0 || !flag || (!value && *buflen > 0))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_get_string");
    int i = info_find(o, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    size_t len = strlen(o->val[i]);
    if (*buflen > 0) {
        size_t n = BASE_MIN(len, (size_t)*buflen - 1);
        memcpy(value, o->val[i], n);
        value[n] = 0;
    }
    *buflen = (int)len + 1;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_get_string, PMPI_Info_get_string)

/* MPI_Info_get_valuelen (deprecated in MPI-4.0): the value's length without the NUL. */
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    info_obj_t *o = info_get(info);
    if (!o)
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_get_valuelen");
    int rc = key_check(key);
    if (rc != MPI_SUCCESS)
        return MPII_ERR(rc, "MPI_Info_get_valuelen");
    if (!valuelen || !flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_get_valuelen");
    int i = info_find(o, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(o->val[i]);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_get_valuelen, PMPI_Info_get_valuelen)

/* MPI_Info_get_nkeys: the number of keys. */
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    info_obj_t *o = info_get(info);
    if (!o)
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_get_nkeys");
    if (!nkeys)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_get_nkeys");
    *nkeys = o->n;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_get_nkeys, PMPI_Info_get_nkeys)

/* MPI_Info_get_nthkey: the n-th key (0-based, in the order keys were first set); key
 * needs MPI_MAX_INFO_KEY bytes. MPI_ERR_ARG for n outside [0, nkeys). */
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    info_obj_t *o = info_get(info);
    if (!o)
        return MPII_ERR(MPI_ERR_INFO, "MPI_Info_get_nthkey");
    if (!key)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Info_get_nthkey");
    if (n < 0 || n >= o->n)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Info_get_nthkey", "key index %d not in [0, %d)", n,
                         o->n);
    strcpy(key, o->key[n]);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Info_get_nthkey, PMPI_Info_get_nthkey)
