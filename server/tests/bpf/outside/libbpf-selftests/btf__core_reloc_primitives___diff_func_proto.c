#include "core_reloc_types.h"

void f(struct core_reloc_primitives___diff_func_proto x) {}
