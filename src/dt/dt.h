/* dt.h — the datatype engine (layer 4).
 *
 * A datatype describes where the bytes of one "element" of a message live relative to a
 * buffer address, and in which order they form the packed stream. Every MPI type
 * constructor is expressible (contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, hindexed_block, struct, subarray, darray, resized, dup) on top of the
 * predefined basic kinds, with the MPI standard's lb/ub/extent rules (lb/ub markers set
 * by resized stick through later constructors; a struct's extent is padded to the
 * largest alignment of its basic components unless a marker is present).
 *
 * A type is a compact tree of stride blocks, never a per-element list: leaves are
 * contiguous byte runs, inner nodes are regular vectors (count, stride, child) or
 * irregular block lists (displacement, count of children). Constructors normalise as
 * they build: adjacent contiguous pieces merge, a vector of contiguous children becomes
 * one wider block, an indexed list with a constant stride becomes a vector, a vector of
 * vectors that tile evenly becomes one vector.
 *
 * Ownership: constructors return a new type with one reference owned by the caller;
 * dt_free() drops it. A derived type holds references to the types it was built from
 * (dt_get_contents returns them), and callers keep a type alive during in-flight
 * operations with dt_retain(), so a freed type stays valid until its last reference
 * drops. Predefined types (dt_basic) are immortal: dt_retain/dt_release are no-ops on
 * them and dt_free() of one is FMPL_ERR_TYPE.
 *
 * Thread safety: types are immutable once built; any thread may use, retain or release
 * them concurrently (reference counts are atomic). An iterator belongs to one thread.
 * Nothing here blocks. Counts and displacements are 64-bit (MPI large counts).
 *
 * Byte offsets into the packed stream ("off", "len") are always relative to the start of
 * the stream of `count` consecutive elements of the type at `buf` (element i at
 * buf + i * extent). The native packed stream is the concatenation of the basic elements
 * in type-map order in their host representation; the external32 stream is the same
 * sequence in MPI's external32 representation (big-endian, standard sizes).
 */
#ifndef FMPL_DT_H
#define FMPL_DT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fmpl_errors.h"

typedef struct dt dt_t;

/* ------------------------------------------------------------ basic kinds */

/* Every predefined C type of MPI (and the MINLOC/MAXLOC pairs, which are derived
 * internally as the C struct the compiler lays out, e.g. struct { float a; int b; }). */
typedef enum dt_kind {
    DT_CHAR,
    DT_SIGNED_CHAR,
    DT_UNSIGNED_CHAR,
    DT_SHORT,
    DT_UNSIGNED_SHORT,
    DT_INT,
    DT_UNSIGNED,
    DT_LONG,
    DT_UNSIGNED_LONG,
    DT_LONG_LONG,
    DT_UNSIGNED_LONG_LONG,
    DT_FLOAT,
    DT_DOUBLE,
    DT_LONG_DOUBLE,
    DT_WCHAR,
    DT_INT8,
    DT_INT16,
    DT_INT32,
    DT_INT64,
    DT_UINT8,
    DT_UINT16,
    DT_UINT32,
    DT_UINT64,
    DT_BOOL, /* C _Bool */
    DT_FLOAT_COMPLEX,
    DT_DOUBLE_COMPLEX,
    DT_LONG_DOUBLE_COMPLEX,
    DT_BYTE,
    DT_PACKED,
    DT_AINT,   /* MPI_Aint: intptr_t-sized signed */
    DT_OFFSET, /* MPI_Offset: 64-bit signed */
    DT_COUNT,  /* MPI_Count: 64-bit signed */
    /* C++ types of MPI (usable from C as handles) */
    DT_CXX_BOOL,
    DT_CXX_FLOAT_COMPLEX,
    DT_CXX_DOUBLE_COMPLEX,
    DT_CXX_LONG_DOUBLE_COMPLEX,
    /* Fortran types of MPI, with gfortran's default sizes */
    DT_F_CHARACTER,
    DT_F_LOGICAL,
    DT_F_INTEGER,
    DT_F_REAL,
    DT_F_DOUBLE_PRECISION,
    DT_F_COMPLEX,
    DT_F_DOUBLE_COMPLEX,
    DT_F_INTEGER1,
    DT_F_INTEGER2,
    DT_F_INTEGER4,
    DT_F_INTEGER8,
    DT_F_REAL4,
    DT_F_REAL8,
    DT_F_COMPLEX8,
    DT_F_COMPLEX16,
    DT_NBASIC, /* kinds below are the pair types (not basic: two basic elements each) */
    DT_FLOAT_INT = DT_NBASIC,
    DT_DOUBLE_INT,
    DT_LONG_INT,
    DT_2INT,
    DT_SHORT_INT,
    DT_LONG_DOUBLE_INT,
    DT_F_2REAL, /* Fortran MINLOC/MAXLOC pairs: two of the same */
    DT_F_2DOUBLE_PRECISION,
    DT_F_2INTEGER,
    DT_NKINDS
} dt_kind_t;

typedef struct dt_kind_info {
    const char *name; /* C spelling, e.g. "unsigned long long", "float_int" */
    int size;         /* native bytes (pairs: sizeof the C struct, i.e. the extent) */
    int align;        /* native alignment (_Alignof) */
    int ext_size;     /* bytes in the external32 representation */
} dt_kind_info_t;

/* Facts about kind k; NULL when k is out of range. Never blocks. */
const dt_kind_info_t *dt_kind_info(int k);

/* The predefined type of kind k (0 <= k < DT_NKINDS), or NULL when out of range.
 * Immortal: never freed, shared by all threads. */
dt_t *dt_basic(int k);

/* ------------------------------------------------------------ constructors
 * All constructors: `old` (or each of `types`) must be a valid type (committed or not);
 * on success *out receives a new type (one reference, owned by the caller). Errors (and
 * then *out is untouched): FMPL_ERR_ARG for a NULL pointer or a negative count,
 * blocklength or size, or a subarray/darray argument out of range; FMPL_ERR_TYPE when a
 * type argument is NULL; FMPL_ERR_NOMEM. Arrays are read during the call only.
 * Strides and displacements may be negative. Vector-type strides and indexed
 * displacements without an "h" are in multiples of old's extent, with "h" in bytes. */
int dt_contiguous(int64_t count, dt_t *old, dt_t **out);
int dt_vector(int64_t count, int64_t blocklen, int64_t stride, dt_t *old, dt_t **out);
int dt_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, dt_t *old, dt_t **out);
int dt_indexed(int64_t count, const int64_t *blocklens, const int64_t *disps, dt_t *old,
               dt_t **out);
int dt_hindexed(int64_t count, const int64_t *blocklens, const int64_t *disps_bytes, dt_t *old,
                dt_t **out);
int dt_indexed_block(int64_t count, int64_t blocklen, const int64_t *disps, dt_t *old, dt_t **out);
int dt_hindexed_block(int64_t count, int64_t blocklen, const int64_t *disps_bytes, dt_t *old,
                      dt_t **out);
int dt_struct(int64_t count, const int64_t *blocklens, const int64_t *disps_bytes,
              dt_t *const *types, dt_t **out);

enum { DT_ORDER_C = 0, DT_ORDER_FORTRAN = 1 };
/* MPI_Type_create_subarray: an ndims-dimensional sub-array (subsizes at starts) of a
 * sizes array of old, in C (row-major) or Fortran order. lb = 0, extent = prod(sizes) *
 * extent(old) (both as markers), exactly as the MPI standard's recursive definition.
 * FMPL_ERR_ARG unless ndims >= 1, sizes >= 1, 0 <= subsizes, 0 <= starts,
 * starts + subsizes <= sizes, order valid. */
int dt_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes, const int64_t *starts,
                int order, dt_t *old, dt_t **out);

enum { DT_DISTRIBUTE_BLOCK = 0, DT_DISTRIBUTE_CYCLIC = 1, DT_DISTRIBUTE_NONE = 2 };
#define DT_DISTRIBUTE_DFLT_DARG (-1)
/* MPI_Type_create_darray for process `rank` of `size` on an ndims process grid psizes
 * (row-major ranks, as MPI prescribes for both orders). Follows the standard's
 * definition with its cyclic() building block, so lb = 0 and extent = prod(gsizes) *
 * extent(old). FMPL_ERR_ARG: rank outside [0, size), prod(psizes) != size, a gsize or
 * psize < 1, an unknown distribution, NONE with psize != 1, a darg < 1 (other than
 * DT_DISTRIBUTE_DFLT_DARG), or BLOCK with darg * psize < gsize. */
int dt_darray(int size, int rank, int ndims, const int64_t *gsizes, const int *distribs,
              const int64_t *dargs, const int64_t *psizes, int order, dt_t *old, dt_t **out);

/* MPI_Type_create_resized: old's data with lb and extent set (as sticky markers). */
int dt_resized(dt_t *old, int64_t lb, int64_t extent, dt_t **out);
/* MPI_Type_dup: a new handle with the same layout (committed if old is). */
int dt_dup(dt_t *old, dt_t **out);

/* Marks the type ready for communication (idempotent). The layout is normalised at
 * construction already, so this is O(1). FMPL_ERR_TYPE on NULL. */
int dt_commit(dt_t *t);
int dt_is_committed(const dt_t *t);

/* ---------------------------------------------------------- references */
/* Adds a reference (e.g. for an in-flight operation). No-op on NULL or predefined. */
void dt_retain(dt_t *t);
/* Drops a reference; frees the type (and references it holds) at the last one. No-op on
 * NULL or predefined. */
void dt_release(dt_t *t);
/* The user-facing free (MPI_Type_free): like dt_release, but FMPL_ERR_TYPE for NULL or
 * a predefined type. */
int dt_free(dt_t *t);

/* --------------------------------------------------------------- queries
 * None blocks; t must be valid (NULL gives 0 / -1 where stated). */
int64_t dt_size(const dt_t *t);   /* packed bytes of one element */
int64_t dt_extent(const dt_t *t); /* ub - lb */
int64_t dt_lb(const dt_t *t);
int64_t dt_ub(const dt_t *t);
int64_t dt_true_lb(const dt_t *t);     /* lowest byte holding data (0 when size 0) */
int64_t dt_true_extent(const dt_t *t); /* true_ub - true_lb */
int64_t dt_nelem(const dt_t *t);       /* basic elements in one element (pairs count 2) */
int64_t dt_ext32_size(const dt_t *t);  /* external32 packed bytes of one element */
int dt_align(const dt_t *t);           /* largest alignment of the basic components */
/* The kind of a predefined type, or -1 for a derived one (and for NULL). */
int dt_kind(const dt_t *t);
/* 1 when `count` elements at buf occupy exactly [buf + true_lb, + count * size) in
 * stream order, i.e. packing is one memcpy; 0 otherwise. */
int dt_is_contig(const dt_t *t, int64_t count);
/* Complete basic elements in the first nbytes of the packed stream of any number of
 * elements (MPI_Get_elements); nbytes < 0 gives -1. */
int64_t dt_elements_in(const dt_t *t, int64_t nbytes);

/* Type signature of `count` elements: equal signatures (the same sequence of basic
 * kinds) give equal summaries; different ones differ except with probability ~2^-60
 * (a composable polynomial hash over the kind sequence, computed in O(tree size)). */
typedef struct dt_sig {
    uint64_t hash;
    int64_t nelem;
    int64_t size;
} dt_sig_t;
void dt_signature(const dt_t *t, int64_t count, dt_sig_t *out);
int dt_sig_equal(const dt_sig_t *a, const dt_sig_t *b);

/* Constructor recorded for MPI_Type_get_envelope/get_contents. */
typedef enum dt_combiner {
    DT_COMBINER_NAMED,
    DT_COMBINER_DUP,
    DT_COMBINER_CONTIGUOUS,
    DT_COMBINER_VECTOR,
    DT_COMBINER_HVECTOR,
    DT_COMBINER_INDEXED,
    DT_COMBINER_HINDEXED,
    DT_COMBINER_INDEXED_BLOCK,
    DT_COMBINER_HINDEXED_BLOCK,
    DT_COMBINER_STRUCT,
    DT_COMBINER_SUBARRAY,
    DT_COMBINER_DARRAY,
    DT_COMBINER_RESIZED
} dt_combiner_t;
/* The arguments as given to the constructor, in MPI_Type_get_contents order, with every
 * integer (counts, blocklengths, non-h displacements, sizes, order, distributions ...)
 * in ints, byte displacements / strides / lb / extent in aints, and type arguments in
 * types (borrowed references, valid while t is):
 *   CONTIGUOUS  ints {count}                     types {old}
 *   VECTOR      ints {count, blocklen, stride}   types {old}
 *   HVECTOR     ints {count, blocklen}  aints {stride}
 *   INDEXED     ints {count, blens[count], disps[count]}
 *   HINDEXED    ints {count, blens[count]}  aints {disps[count]}
 *   INDEXED_BLOCK  ints {count, blocklen, disps[count]}
 *   HINDEXED_BLOCK ints {count, blocklen}  aints {disps[count]}
 *   STRUCT      ints {count, blens[count]}  aints {disps[count]}  types {types[count]}
 *   SUBARRAY    ints {ndims, sizes[], subsizes[], starts[], order}
 *   DARRAY      ints {size, rank, ndims, gsizes[], distribs[], dargs[], psizes[], order}
 *   RESIZED     aints {lb, extent}                types {old}
 *   DUP         types {old};  NAMED: nothing.
 * Any output pointer may be NULL. FMPL_ERR_TYPE on NULL t. */
int dt_get_contents(const dt_t *t, dt_combiner_t *combiner, int *nints, const int64_t **ints,
                    int *naints, const int64_t **aints, int *ntypes, dt_t *const **types);

/* ---------------------------------------------------------- data movement
 * Bytes [off, off + len) of the packed stream of `count` elements of t at buf. The
 * stream side is a plain pointer to where byte `off` goes/comes from, so packing can
 * be done in pieces of any size at any offset. FMPL_ERR_TYPE on NULL t; FMPL_ERR_ARG
 * for count/off/len negative, off + len beyond count * size, or a NULL stream with
 * len > 0. The typed buffer may be NULL: with absolute displacements (MPI_BOTTOM) the
 * type's offsets are the addresses. Buffers must not overlap. */
int dt_pack(const dt_t *t, int64_t count, const void *buf, int64_t off, int64_t len, void *stream);
int dt_unpack(const dt_t *t, int64_t count, void *buf, int64_t off, int64_t len,
              const void *stream);
/* The same on the external32 stream (offsets and lengths in external32 bytes; total
 * count * dt_ext32_size(t)). Pieces may split an element anywhere. */
int dt_pack_external(const dt_t *t, int64_t count, const void *buf, int64_t off, int64_t len,
                     void *stream);
int dt_unpack_external(const dt_t *t, int64_t count, void *buf, int64_t off, int64_t len,
                       const void *stream);
/* Typed copy: bytes [off, off + len) of the send stream (scount of st at sbuf) land at
 * the same bytes of the receive stream (rcount of rt at rbuf), without an intermediate
 * buffer: both layouts are walked together (a shared-memory receive). The caller
 * decides about signatures (dt_signature) and truncation. FMPL_ERR_ARG when
 * [off, off+len) exceeds either stream. */
int dt_copy(const dt_t *st, int64_t scount, const void *sbuf, const dt_t *rt, int64_t rcount,
            void *rbuf, int64_t off, int64_t len);

/* --------------------------------------------------------- segment iterator
 * Streams the (address, length) pieces of `count` elements at buf in packed-stream
 * order, in chunks, resumable at any packed offset (after a partial transfer, or to
 * pipeline). The caller owns the struct (no allocation); it borrows t, which must stay
 * alive (dt_retain) while the iterator is used. */
typedef struct dt_iter {
    const dt_t *t;
    int64_t count;
    char *buf;
    int64_t pos; /* next packed byte to produce */
    int64_t end; /* count * size */
} dt_iter_t;

/* A regular strided piece: count blocks of blocklen bytes at addr + i * stride (stride
 * may be negative). count == 1 is a plain contiguous piece. What a VNIC_DESC_STRIDED
 * descriptor will carry. */
typedef struct dt_strided {
    char *addr;
    int64_t blocklen;
    int64_t stride;
    int64_t count;
} dt_strided_t;

/* Starts at packed offset off (0 <= off <= count * size). FMPL_ERR_TYPE / FMPL_ERR_ARG. */
int dt_iter_init(dt_iter_t *it, const dt_t *t, int64_t count, const void *buf, int64_t off);
/* Moves to packed offset off (0 <= off <= end), e.g. to resume after a partial transfer.
 * FMPL_ERR_ARG when out of range. */
int dt_iter_seek(dt_iter_t *it, int64_t off);
static inline int dt_iter_done(const dt_iter_t *it)
{
    return it->pos >= it->end;
}
/* Fills segs[0 .. *nsegs) with at most maxsegs pieces covering at most maxbytes of the
 * stream from the current position (adjacent pieces are merged), sets *nbytes to the
 * bytes covered and advances. *nsegs == 0 only at the end. FMPL_ERR_ARG for maxsegs < 1
 * or maxbytes < 1 or NULL pointers. */
int dt_iter_next(dt_iter_t *it, struct iovec *segs, int maxsegs, int64_t maxbytes, int *nsegs,
                 int64_t *nbytes);
/* The same as strided pieces: each regular vector run of the layout is one descriptor
 * (a vector of doubles is a single descriptor, however long). */
int dt_iter_next_strided(dt_iter_t *it, dt_strided_t *d, int maxd, int64_t maxbytes, int *nd,
                         int64_t *nbytes);
/* 1 when the whole stream of `count` elements at buf is one strided piece (which is
 * stored in *out), 0 otherwise (then *out is untouched). */
int dt_get_strided(const dt_t *t, int64_t count, const void *buf, dt_strided_t *out);

#endif
