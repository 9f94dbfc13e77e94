#include "core_reloc_types.h"

void f(struct core_reloc_nesting___err_array_field x) {}
