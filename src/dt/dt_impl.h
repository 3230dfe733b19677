/* dt_impl.h — private to src/dt: the layout tree and the type object.
 *
 * Layout tree. One instance of a node describes bytes relative to an instance address
 * `a`; its data starts at a + disp. Nodes are immutable and reference counted: types and
 * parent nodes share children.
 *   LEAF  contiguous bytes [a+disp, a+disp+size). Homogeneous (kind >= 0): nel elements
 *         of one basic kind. Mixed (kind == DT_MIXED): several kinds; `orig` describes
 *         the same bytes (walked at a + disp) with finer leaves, used only where kinds
 *         matter (external32).
 *   VEC   count instances of child at a + disp + i * stride.
 *   IDX   n blocks; block b = cnt[b] instances of kid(b) at a + disp + off[b] + j * kext(b),
 *         kid(b) = kids ? kids[b] : child (kext likewise). psum[x][b] = packed bytes before
 *         block b (x = 0 native, 1 external32).
 */
#ifndef FMPL_DT_IMPL_H
#define FMPL_DT_IMPL_H

#include <stdatomic.h>

#include "dt/dt.h"

#define DT_MIXED (-1)

enum { DT_N_LEAF, DT_N_VEC, DT_N_IDX };

typedef struct dt_node dt_node_t;
struct dt_node {
    atomic_long refs; /* < 0: immortal */
    int type;         /* DT_N_* */
    int kind;         /* LEAF: basic kind or DT_MIXED */
    int64_t disp;
    int64_t size[2]; /* packed bytes of one instance: native, external32 */
    int64_t nelem;
    uint64_t hash; /* signature hash of one instance */
    union {
        struct {
            dt_node_t *orig; /* mixed only */
        } leaf;
        struct {
            int64_t count, stride;
            dt_node_t *child;
        } vec;
        struct {
            int64_t n;
            int64_t *off, *cnt;
            int64_t *psum[2]; /* n + 1 entries each */
            dt_node_t *child; /* when kids == NULL */
            int64_t cext;     /* when kids == NULL */
            dt_node_t **kids; /* per block, or NULL */
            int64_t *kexts;   /* per block, or NULL */
        } idx;
    } u;
};

struct dt {
    atomic_long refs;
    int predef; /* 1: immortal predefined type */
    int kind;   /* basic or pair kind, -1 derived */
    int committed;
    int align;
    int lbm, ubm;    /* lb / ub come from sticky markers (resized) */
    dt_node_t *root; /* NULL when size == 0 */
    int64_t size, ext_size, nelem;
    int64_t lb, ub, true_lb, true_ub;
    uint64_t hash;
    dt_combiner_t combiner;
    int nints, naints, ntypes;
    int64_t *ints, *aints;
    dt_t **types;
};

/* Basic kind facts used by the walker (valid for k < DT_NBASIC). */
extern const dt_kind_info_t dt_kinds_[DT_NKINDS];

/* Signature hash arithmetic (mod 2^61 - 1). */
uint64_t dt_hash_concat(uint64_t h1, uint64_t h2, int64_t n2);
uint64_t dt_hash_repeat(uint64_t h, int64_t n, int64_t count);

#endif
