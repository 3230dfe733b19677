/* ops.h — reduction kernels of the native API: (fmpl_type, fmpl_op) -> coll_reduce_op_t.
 *
 * Built-in operations, for the 6 types (int32, int64, float, double, complex = 2 floats,
 * double complex = 2 doubles):
 *   FMPL_SUM   element-wise sum (complex: both parts);
 *   FMPL_MAX / FMPL_MIN  the larger / smaller value; real types only (complex numbers
 *              have no order: FMPL_ERR_OP);
 *   FMPL_AMAX / FMPL_AMIN  the element of largest / smallest absolute value, sign kept
 *              (BLACS ?AMX / ?AMN). For complex the magnitude is |re| + |im|, as BLACS
 *              uses. Ties of magnitude go to the greater value (complex: greater real
 *              part, then greater imaginary part), so the result does not depend on the
 *              order in which ranks are combined. Integer magnitudes are computed
 *              unsigned, so INT_MIN is the largest.
 * User operations (fmpl_op_create) get numbers from FMPLI_OP_USER_BASE and are treated
 * as commutative and associative, as fmpl.h requires of them.
 *
 * The kernels are plain loops over memory the caller owns; they never block. */
#ifndef FMPL_OPS_H
#define FMPL_OPS_H

#include <stddef.h>

#include "coll/coll.h"
#include "fmpl.h"

#define FMPLI_OP_USER_BASE 64
#define FMPLI_OP_USER_MAX 64 /* user operations per process */

/* Bytes per element of type; FMPL_ERR_TYPE for an unknown type. size may be NULL. */
int fmpli_type_size(fmpl_type type, size_t *size);

/* Fills *out with the kernel of (type, op). FMPL_ERR_TYPE for an unknown type,
 * FMPL_ERR_OP for an unknown op or one the type does not support (MAX/MIN on complex). */
int fmpli_op_lookup(fmpl_type type, fmpl_op op, coll_reduce_op_t *out);

/* Registers a user operation; *op receives its number. FMPL_ERR_ARG when fn or op is
 * NULL, FMPL_ERR_NOMEM when FMPLI_OP_USER_MAX operations exist already. */
int fmpli_op_user_create(void (*fn)(void *inout, const void *in, size_t count), fmpl_op *op);

#endif
