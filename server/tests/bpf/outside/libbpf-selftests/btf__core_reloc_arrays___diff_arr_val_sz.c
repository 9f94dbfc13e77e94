#include "core_reloc_types.h"

void f(struct core_reloc_arrays___diff_arr_val_sz x) {}
