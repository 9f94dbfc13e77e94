// The strong definition that replaces subprog.bpf.c's `__weak read_version` when the two
// are linked (server/tests/bpf_kernel.rs): it reads a member every kernel has.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

__noinline int read_version(long p)
{
	struct file *f = (void *)p;
	return BPF_CORE_READ(f, f_flags);
}
