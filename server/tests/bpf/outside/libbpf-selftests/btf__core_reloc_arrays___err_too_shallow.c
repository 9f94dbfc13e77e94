#include "core_reloc_types.h"

void f(struct core_reloc_arrays___err_too_shallow x) {}
