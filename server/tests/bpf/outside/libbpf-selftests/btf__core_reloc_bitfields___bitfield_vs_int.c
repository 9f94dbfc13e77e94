#include "core_reloc_types.h"

void f(struct core_reloc_bitfields___bitfield_vs_int x) {}
