// An object meant to be linked with another (`bpftool gen object`) before loading: its call
// to `count_elsewhere` stays an undefined extern, neither `__ksym` nor `__kconfig`, and
// libbpf refuses to open it (Linux's selftests `linked_funcs1.c` is built this way).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern int count_elsewhere(int n);

SEC("kprobe/vfs_read")
int read_probe(void *ctx)
{
	return count_elsewhere(1);
}

char LICENSE[] SEC("license") = "GPL";
