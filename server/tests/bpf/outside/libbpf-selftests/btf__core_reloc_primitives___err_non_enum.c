#include "core_reloc_types.h"

void f(struct core_reloc_primitives___err_non_enum x) {}
