// Code in `.text` only: two functions, both subprograms, so libbpf 1.1 loads nothing and
// succeeds (the control for text_only.bpf.c).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__noinline int helper(int x)
{
	return x + 1;
}

__noinline int helper2(int x)
{
	return helper(x) + 2;
}
