#include "core_reloc_types.h"

void f(struct core_reloc_enum64val x) {}
