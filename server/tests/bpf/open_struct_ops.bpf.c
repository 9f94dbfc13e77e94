// libbpf 1.1 refuses a `.struct_ops` variable whose function pointer is a program of
// another type at open (B603).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops/cc_init")
void BPF_PROG(cc_init, struct sock *sk)
{
}

SEC("kprobe/vfs_read")
int BPF_KPROBE(not_ops)
{
	return 0;
}

SEC(".struct_ops")
struct tcp_congestion_ops cc = {
	.init = (void *)cc_init,
	.cong_avoid = (void *)not_ops,
	.name = "fevlint_cc",
};
