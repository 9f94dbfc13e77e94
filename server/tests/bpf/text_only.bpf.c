// Code in `.text` only: one function, which libbpf 1.1 takes for a program without a
// type and refuses at load (B603).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__noinline int helper(int x)
{
	return x + 1;
}
