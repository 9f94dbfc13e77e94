#include "core_reloc_types.h"

void f(struct core_reloc_mods___mod_swap x) {}
