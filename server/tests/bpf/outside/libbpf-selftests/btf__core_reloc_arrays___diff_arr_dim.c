#include "core_reloc_types.h"

void f(struct core_reloc_arrays___diff_arr_dim x) {}
