#include "core_reloc_types.h"

void f(struct core_reloc_size___diff_sz x) {}
