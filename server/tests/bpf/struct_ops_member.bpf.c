// A `.struct_ops` of `struct bpf_dummy_ops` as 6.12 has it (built against 6.12's
// vmlinux.h): 6.1's has no `test_sleepable`, and libbpf 1.1 refuses the object there at
// load (B603); 6.12 loads it.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops/test_1")
int BPF_PROG(dummy_test_1, struct bpf_dummy_ops_state *state)
{
	return 0;
}

SEC(".struct_ops")
struct bpf_dummy_ops dummy = {
	.test_1 = (void *)dummy_test_1,
};
