#include "core_reloc_types.h"

void f(struct core_reloc_size___err_ambiguous1 x,
       struct core_reloc_size___err_ambiguous2 y) {}
