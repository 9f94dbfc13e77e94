#include "core_reloc_types.h"

void f(struct core_reloc_ints___reverse_sign x) {}
