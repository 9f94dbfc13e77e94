// A program in a section libbpf 1.1 does not know (`tc/ingress`, libbpf 1.3's tcx): it has
// no program type, and libbpf 1.1 refuses to load the object.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("kprobe/vfs_read")
int read_probe(void *ctx)
{
	return 0;
}

SEC("tc/ingress")
int ingress(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
