// A `.struct_ops` of a type no kernel has: libbpf 1.1 refuses the object at load on
// every kernel (B603).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct fevlint_ops {
	int (*init)(void);
	char name[16];
};

SEC("struct_ops/init")
int BPF_PROG(ops_init)
{
	return 0;
}

SEC(".struct_ops")
struct fevlint_ops ops = {
	.init = (void *)ops_init,
	.name = "fevlint",
};
