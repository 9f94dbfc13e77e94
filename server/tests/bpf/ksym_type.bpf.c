// A typed __ksym whose type is not the kernel's (`bpf_prog_active` is an int): libbpf
// refuses the object on every kernel (server/tests/bpf_kernel.rs).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";
long out;

extern const struct file bpf_prog_active __ksym;

SEC("kprobe/vfs_read")
int probe(void *ctx)
{
	out = (long)bpf_this_cpu_ptr(&bpf_prog_active);
	return 0;
}
