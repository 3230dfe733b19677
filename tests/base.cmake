fmpl_test(base_unit base_unit.c RANKS 0)
