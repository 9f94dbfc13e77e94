// A kprobe program whose section names no kernel function, as Debian's libbpf-tools
// `gethostlatency` writes it (`SEC("kprobe/handle_entry")`, attached to libc with
// `bpf_program__attach_uprobe()`), and a misspelt kprobe target. Checked inside tools
// (`hand_attached_tool.c`) that attach by section or not (B611).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

long hits;

SEC("kprobe/handle_entry")
int BPF_KPROBE(handle_entry)
{
	hits++;
	return 0;
}

// `vfs_read`, misspelt.
SEC("kprobe/vfs_raed")
int BPF_KPROBE(read_entry)
{
	hits++;
	return 0;
}
