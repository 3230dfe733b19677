# Datatype engine (src/dt): single-process unit tests against a per-element reference.
fmpl_test(dt_unit dt_unit.c RANKS 0 TIMEOUT 60)
fmpl_test(dt_random dt_random.c RANKS 0 TIMEOUT 300)
# A second random stream with more types.
fmpl_test(dt_random_seed2 dt_random.c RANKS 0 ARGS 10000 12345 TIMEOUT 300)

