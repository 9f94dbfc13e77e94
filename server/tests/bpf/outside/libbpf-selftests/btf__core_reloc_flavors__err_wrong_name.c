#include "core_reloc_types.h"

void f(struct core_reloc_flavors__err_wrong_name x) {}
