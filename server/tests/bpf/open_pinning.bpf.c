// libbpf 1.1 refuses a map whose `pinning` is neither LIBBPF_PIN_NONE nor
// LIBBPF_PIN_BY_NAME at open (B603).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, u64);
	__uint(pinning, 2);
} counts SEC(".maps");

SEC("kprobe/vfs_read")
int probe(void *ctx)
{
	u32 k = 0;
	u64 v = 1;
	bpf_map_update_elem(&counts, &k, &v, 0);
	return 0;
}
