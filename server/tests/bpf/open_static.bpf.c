// libbpf 1.1 refuses a `static` entry program at open (B603); `keep` is a global
// subprogram beside it.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("kprobe/vfs_read")
static int probe(void *ctx)
{
	return 0;
}

int keep(void)
{
	return 0;
}
