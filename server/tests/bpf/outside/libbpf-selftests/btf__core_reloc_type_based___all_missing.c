#include "core_reloc_types.h"

void f(struct core_reloc_type_based___all_missing x) {}
