#include "core_reloc_types.h"

void f(struct core_reloc_arrays___err_bad_zero_sz_arr x) {}
