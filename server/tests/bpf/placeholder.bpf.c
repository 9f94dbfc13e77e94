// Placeholder attach targets, as bcc's libbpf-tools write them (fsdist, funclatency,
// ksnoop): the tool sets the real target at run time or switches the program off, so a
// name no kernel has is information (B611), not a missing function. Real names stay
// errors: one no kernel has, and one with `dummy` in its name that only 6.12 has.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

long hits;

// fsdist: `bpf_program__attach_kprobe(prog, false, "ext4_file_read_iter")`.
SEC("kprobe/dummy_file_read")
int BPF_KPROBE(file_read_entry)
{
	hits++;
	return 0;
}

// fsdist: `bpf_program__set_attach_target(prog, 0, "ext4_file_read_iter")`.
SEC("fentry/dummy_file_read")
int BPF_PROG(file_read_fentry)
{
	hits++;
	return 0;
}

// ksnoop: attached by name to each function the user asks for.
SEC("kretprobe/foo")
int BPF_KRETPROBE(kprobe_return)
{
	hits++;
	return 0;
}

// biotop: no target at all; attached by name.
SEC("kprobe")
int BPF_KPROBE(bare_kprobe)
{
	hits++;
	return 0;
}

// A real function with `dummy` in its name: 6.12 has it, 6.1 does not.
SEC("kprobe/alloc_netdev_dummy")
int BPF_KPROBE(netdev_dummy)
{
	hits++;
	return 0;
}

// A real name no kernel has.
SEC("fentry/fevlint_gone_function")
int BPF_PROG(gone)
{
	hits++;
	return 0;
}
