// A CO-RE read of a type no kernel has, under a `const volatile` flag the object sets to
// 0 (server/tests/bpf_check.rs): libbpf freezes `.rodata`, the verifier reads the flag as
// that constant and never reaches the poisoned read (as in the selftests' core_kern.c).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct gone___local {
	int len;
} __attribute__((preserve_access_index));

volatile const int never = 0;
long out;

SEC("tp_btf/sched_switch")
int flagged(void *ctx)
{
	if (never)
		out = ((struct gone___local *)ctx)->len;
	return 0;
}
