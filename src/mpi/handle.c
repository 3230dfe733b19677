/* handle.c — the handle tables of the MPI layer (see mpi_impl.h). */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

mpii_table_t mpii_tables[16];

static int mpii_table_grow(mpii_table_t *t, int need)
{
    if (need < t->cap)
        return 1;
    int cap = t->cap ? t->cap : FMPL_MPI_PREDEF_MAX * 2;
    while (cap <= need)
        cap *= 2;
    if (cap > FMPL_MPI_INDEX_MASK + 1)
        return 0;
    void **obj = realloc(t->obj, (size_t)cap * sizeof *obj);
    if (!obj)
        return 0;
    memset(obj + t->cap, 0, (size_t)(cap - t->cap) * sizeof *obj);
    t->obj = obj;
    t->cap = cap;
    return 1;
}

void mpii_handle_set(int kind, int index, void *obj)
{
    mpii_table_t *t = &mpii_tables[kind];
    if (!mpii_table_grow(t, index))
        base_fatal("mpi: out of memory for the handle table");
    if (!t->obj[index] && obj)
        t->live++;
    t->obj[index] = obj;
}

int mpii_handle_new_scan(int kind, void *obj)
{
    mpii_table_t *t = &mpii_tables[kind];
    int i = BASE_MAX(t->next_free, FMPL_MPI_PREDEF_MAX);
    while (i < t->cap && t->obj[i])
        i++;
    if (BASE_UNLIKELY(i >= t->cap) && !mpii_table_grow(t, i))
        return FMPL_MPI_HANDLE(kind, 0);
    t->obj[i] = obj;
    t->live++;
    t->next_free = i + 1;
    return FMPL_MPI_HANDLE(kind, i);
}

void mpii_handle_del_slow(int kind, int h)
{
    mpii_table_t *t = &mpii_tables[kind];
    int i = FMPL_MPI_HANDLE_INDEX(h);
    if (FMPL_MPI_HANDLE_KIND(h) != kind || i <= 0 || i >= t->cap || !t->obj[i])
        return;
    t->obj[i] = NULL;
    t->live--;
    if (i >= FMPL_MPI_PREDEF_MAX && i < t->next_free)
        t->next_free = i;
}

void mpii_handle_foreach(int kind, void (*fn)(int h, void *obj, void *arg), void *arg)
{
    mpii_table_t *t = &mpii_tables[kind];
    for (int i = FMPL_MPI_PREDEF_MAX; i < t->cap; i++)
        if (t->obj[i])
            fn(FMPL_MPI_HANDLE(kind, i), t->obj[i], arg);
}
