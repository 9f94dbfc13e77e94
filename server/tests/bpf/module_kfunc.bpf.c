// kfuncs of a kernel module (server/tests/bpf_check.rs): Debian builds nf_conntrack as a
// module, so `bpf_skb_ct_lookup` and `bpf_ct_release` are in nf_conntrack.ko's BTF, not in
// vmlinux's. libbpf finds them in the loaded modules' BTF; `bpf_ct_opts` is the module's
// type too, hence a local copy.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct bpf_ct_opts___local {
	s32 netns_id;
	s32 error;
	u8 l4proto;
	u8 dir;
	u8 reserved[2];
} __attribute__((preserve_access_index));

extern struct nf_conn *bpf_skb_ct_lookup(struct __sk_buff *skb, struct bpf_sock_tuple *bpf_tuple, u32 tuple__sz,
					 struct bpf_ct_opts___local *opts, u32 opts__sz) __ksym;
extern void bpf_ct_release(struct nf_conn *ct) __ksym;

SEC("tc")
int ct_lookup(struct __sk_buff *skb)
{
	struct bpf_sock_tuple tup = {};
	struct bpf_ct_opts___local opts = { .netns_id = -1, .l4proto = 6 };
	struct nf_conn *ct = bpf_skb_ct_lookup(skb, &tup, sizeof(tup.ipv4), &opts, sizeof(opts));
	if (ct)
		bpf_ct_release(ct);
	return 0;
}
