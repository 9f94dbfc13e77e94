// A `.struct_ops` variable whose function pointers are struct_ops programs: libbpf 1.1
// opens and loads it (the control for open_struct_ops.bpf.c).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops/cc_init")
void BPF_PROG(cc_init, struct sock *sk)
{
}

SEC(".struct_ops")
struct tcp_congestion_ops cc = {
	.init = (void *)cc_init,
	.name = "fevlint_cc",
};
