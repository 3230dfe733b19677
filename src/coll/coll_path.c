/* coll_path.c — path records (contract: coll.h, "Path records"): which carrier each
 * member of a group took for a blocking collective, so that members that disagree on a
 * call's size across the mailbox / point-to-point boundary can be told apart from
 * members that are merely slow.
 *
 * Record of tag t: word t % COLL_PATH_RING of the member's ring (coll_impl.h, after the
 * board), holding (t as 32 bits) << 8 | path, stored with release; 0 is "none" (path 0
 * is never noted). A reader compares the tag: an older or newer call in the same word
 * reads as unknown. */
#include "coll/coll_impl.h"

static uint64_t path_word(int tag, int path)
{
    return (uint64_t)(uint32_t)tag << 8 | (uint64_t)path;
}

static size_t path_off(const coll_group_t *g, int tag)
{
    return coll_path_off(g->st) + (size_t)((uint32_t)tag % COLL_PATH_RING) * sizeof(uint64_t);
}

void coll_path_note(coll_group_t *g, int tag, int path)
{
    __atomic_store_n((uint64_t *)(void *)(g->area + path_off(g, tag)), path_word(tag, path),
                     __ATOMIC_RELEASE);
}

int coll_path_of(coll_group_t *g, int member, int tag)
{
    if (member < 0 || member >= g->size)
        return 0;
    size_t off = path_off(g, tag);
    uint64_t w = 0;
    char *slot = coll_peer_slot(g, member);
    if (slot)
        w = __atomic_load_n((const uint64_t *)(const void *)(slot + off), __ATOMIC_ACQUIRE);
    else if (vnic_get(g->v, g->members[member], &w, sizeof w, COLL_KEY, g->area_off + off) !=
             FMPL_SUCCESS)
        return 0;
    return w >> 8 == (uint32_t)tag ? (int)(w & 0xff) : 0;
}

void coll_path_clear(coll_group_t *g)
{
    memset(g->area + coll_path_off(g->st), 0, COLL_PATH_RING * sizeof(uint64_t));
}
