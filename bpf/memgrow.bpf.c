// SPDX-License-Identifier: GPL-2.0
/*
 * Memory growth: first-touch page faults (exceptions:page_fault_user/_kernel) and anonymous
 * mapping growth (syscalls mmap, mremap, brk, net of munmap), counted by stack in the kernel.
 * docs/memory-growth.md says what each number means and what it misses.
 *
 * Tracepoint arguments are read through structs written from the format files under
 * /sys/kernel/tracing/events/{exceptions,syscalls}/.../format, not vmlinux.h types: a CO-RE
 * relocation would make libbpf parse the kernel's BTF at every load (docs/design/collectors.md).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "memgrow.h"

/* User stacks come from the DWARF unwinder (issue 7): frames in uw_stacks, ids in the keys;
 * `stacks` keeps the kernel stacks. */
#define UW_STACK_ENTRIES MG_DEFAULT_STACK_ENTRIES
#include "unwind.bpf.h"

/* filter_tgids + target_tgids, stats, seen + events (first sights) */
#define COLLECTOR_STAT_MAX MG_STAT_MAX
#define COLLECTOR_SEEN_ENTRIES MG_DEFAULT_SEEN_ENTRIES
#define COLLECTOR_EVENTS_BYTES (64 * 1024)
#define COLLECTOR_NEW_TASK struct mg_new_task
#include "collector.bpf.h"

/* CPython frames (issue 13): python_procs, python_stacks, py_stack_id() */
#include "python.bpf.h"

/* include/linux/err.h: syscall returns in [-MAX_ERRNO, -1] are errors */
#define MAX_ERRNO 4095
/* uapi mman flags */
#define PROT_NONE 0x0
#define MAP_ANONYMOUS 0x20
/* No user mapping lives below vm.mmap_min_addr (64 KiB by default): a fault there is a NULL
 * dereference about to be a signal, not memory. */
#define MIN_USER_ADDR 65536

/* exceptions/page_fault_{user,kernel}/format */
struct mg_tp_fault {
	__u64 common; /* common_type, common_flags, common_preempt_count, common_pid */
	__u64 address;
	__u64 ip;
	__u64 error_code;
};

/* syscalls/sys_enter_{mmap,munmap,mremap,brk}/format: arguments from offset 16 */
struct mg_tp_sys_enter {
	__u64 common;
	__s32 syscall_nr;
	__u32 pad;
	__u64 args[6];
};

/* syscalls/sys_exit_{mmap,munmap,mremap,brk}/format */
struct mg_tp_sys_exit {
	__u64 common;
	__s32 syscall_nr;
	__u32 pad;
	__s64 ret;
};

/* Load-time knobs (rodata). */
const volatile bool kernel_stacks = false; /* kernel stack of faults taken in kernel mode */
const volatile __u64 page_size = 4096;	   /* set from sysconf(_SC_PAGESIZE) */

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MG_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, MG_DEFAULT_STACK_ENTRIES);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct mg_key);
	__type(value, struct mg_value);
	__uint(max_entries, MG_DEFAULT_COUNT_ENTRIES);
} counts SEC(".maps");

/* Per-thread syscall arguments from enter to exit, keyed by tid. TASK_STORAGE works here too
 * (bpf_get_current_task_btf() + bpf_task_storage_get() load and run in a tracepoint program on
 * 6.18; tracing programs got task storage in 5.12, a10787e6d58c), but it would need a probe and
 * an LRU fallback for older kernels, and the state lives only from enter to exit: an LRU hash
 * is bounded, as cheap, and one code path. A thread killed inside the syscall leaves an entry
 * that the LRU recycles. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct mg_call);
	__uint(max_entries, MG_DEFAULT_THREAD_ENTRIES);
} calls SEC(".maps");

/* Program break per process (tgid), learnt from brk() return values or seeded by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, MG_DEFAULT_BRK_ENTRIES);
} brks SEC(".maps");

/* Anonymous mappings made during the capture, so munmap can be netted against their site. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct mg_mapping_key);
	__type(value, struct mg_mapping);
	__uint(max_entries, MG_DEFAULT_MAPPING_ENTRIES);
} mappings SEC(".maps");

static __always_inline bool is_target(__u32 tgid)
{
	if (tgid_wanted(tgid))
		return true;
	stat_inc(MG_STAT_FILTERED);
	return false;
}

static __always_inline __u64 page_up(__u64 n)
{
	return (n + page_size - 1) & ~(page_size - 1);
}

/* The one place stacks are taken: user stacks by the DWARF unwinder, from the registers the
 * task entered the kernel with (the fault or the syscall). */
static __always_inline void get_stacks(void *ctx, struct mg_key *key, bool kernel)
{
	key->user_stack_id = uw_user_stack_task();
	key->py_stack = py_stack_id(key->tgid);
	key->kern_stack_id = kernel ? bpf_get_stackid(ctx, &stacks, 0) : -1;
	if (stack_lost(key->user_stack_id) || stack_lost(key->kern_stack_id))
		stat_inc(MG_STAT_DROP_STACKS);
}

static __always_inline void account(struct mg_key *key, __s64 bytes)
{
	struct mg_value *val, zero = {};

	val = count_slot(&counts, key, &zero, MG_STAT_DROP_COUNTS);
	if (!val)
		return;
	__sync_fetch_and_add(&val->bytes, bytes);
	__sync_fetch_and_add(&val->count, 1);
}

/*
 * A page fault on a user address. Not-present data faults are first touches: the kernel maps
 * a page that was not there (a new anonymous page, the zero page on a read, or a page-cache
 * page). Write faults on present pages are copy-on-write (after fork, after the zero page was
 * read, private file pages) and are counted apart. Reads of present pages (protection faults,
 * pkeys) and instruction fetches (code paged in from files) are not memory growth.
 */
static __always_inline int on_fault(struct mg_tp_fault *args, bool kernel_mode)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 addr = args->address, ec = args->error_code;
	struct mg_key key = {};
	__u32 tgid = id >> 32;

	/* a kernel-mode fault on a kernel address is not user memory */
	if (kernel_mode && (addr >> 63))
		return 0;
	if (!is_target(tgid))
		return 0;
	stat_inc(MG_STAT_FAULTS);
	if (kernel_mode)
		stat_inc(MG_STAT_FAULTS_KERNEL);
	if ((ec & MG_PF_INSTR) || addr < MIN_USER_ADDR)
		goto ignore;
	if (!(ec & MG_PF_PROT))
		key.kind = MG_KIND_FAULT;
	else if (ec & MG_PF_WRITE)
		key.kind = MG_KIND_COW;
	else
		goto ignore;

	key.tgid = tgid;
	key.tid = (__u32)id;
	key.cgroup_id = bpf_get_current_cgroup_id();
	get_stacks(args, &key, kernel_mode && kernel_stacks);
	account(&key, page_size);
	return 0;
ignore:
	stat_inc(MG_STAT_FAULTS_IGNORED);
	return 0;
}

SEC("tracepoint/exceptions/page_fault_user")
int mg_fault_user(struct mg_tp_fault *args)
{
	return on_fault(args, false);
}

/* Faults the kernel takes on user memory for a syscall (read() into a fresh buffer, ...). */
SEC("tracepoint/exceptions/page_fault_kernel")
int mg_fault_kernel(struct mg_tp_fault *args)
{
	return on_fault(args, true);
}

static __always_inline void save_call(__u32 op, __u64 addr, __u64 len, __u64 new_len)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct mg_call call = { .op = op, .addr = addr, .len = len, .new_len = new_len };
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return;
	if (bpf_map_update_elem(&calls, &tid, &call, BPF_ANY))
		stat_inc(MG_STAT_DROP_THREADS);
}

/* Takes the thread's saved arguments if they belong to @op. Returns false otherwise. */
static __always_inline bool take_call(__u32 op, struct mg_call *out)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mg_call *call;

	call = bpf_map_lookup_elem(&calls, &tid);
	if (!call)
		return false;
	if (call->op != op)
		return false;
	*out = *call;
	bpf_map_delete_elem(&calls, &tid);
	return true;
}

static __always_inline bool syscall_failed(__s64 ret)
{
	return (__u64)ret >= (__u64)-MAX_ERRNO;
}

/* Credits @bytes of new mapping at @addr to the current stack and remembers the mapping. */
static __always_inline void make_mapping(void *ctx, __u64 addr, __u64 bytes)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct mg_mapping_key mkey = {};
	struct mg_mapping m = {};
	struct mg_key key = {};

	key.tgid = id >> 32;
	key.tid = (__u32)id;
	key.cgroup_id = bpf_get_current_cgroup_id();
	key.kind = MG_KIND_MAP;
	get_stacks(ctx, &key, false);
	account(&key, bytes);

	mkey.tgid = key.tgid;
	mkey.addr = addr;
	m.bytes = bytes;
	m.tid = key.tid;
	m.user_stack_id = key.user_stack_id;
	m.cgroup_id = key.cgroup_id;
	m.py_stack = key.py_stack;
	if (bpf_map_update_elem(&mappings, &mkey, &m, BPF_ANY))
		stat_inc(MG_STAT_DROP_MAPPINGS);
}

/*
 * Releases [addr, addr + len) if a mapping made during the capture starts at @addr: the bytes
 * are charged back (negative, MG_KIND_UNMAP) to the key that was credited, so MAP + UNMAP of a
 * site is its net growth. A release that covers only the head of the mapping leaves the tail.
 */
static __always_inline void release_range(__u64 addr, __u64 len)
{
	struct mg_mapping_key mkey = {};
	struct mg_mapping *mp, m;
	struct mg_key key = {};
	__u64 take;

	mkey.tgid = bpf_get_current_pid_tgid() >> 32;
	mkey.addr = addr;
	mp = bpf_map_lookup_elem(&mappings, &mkey);
	if (!mp) {
		stat_inc(MG_STAT_UNMAP_UNKNOWN);
		return;
	}
	m = *mp;
	bpf_map_delete_elem(&mappings, &mkey);
	len = page_up(len);
	take = len < m.bytes ? len : m.bytes;
	if (take < m.bytes) {
		struct mg_mapping tail = m;

		tail.bytes = m.bytes - take;
		mkey.addr = addr + take;
		if (bpf_map_update_elem(&mappings, &mkey, &tail, BPF_ANY))
			stat_inc(MG_STAT_DROP_MAPPINGS);
	}
	key.tgid = mkey.tgid;
	key.tid = m.tid;
	key.cgroup_id = m.cgroup_id;
	key.user_stack_id = m.user_stack_id;
	key.py_stack = m.py_stack;
	key.kern_stack_id = -1;
	key.kind = MG_KIND_UNMAP;
	account(&key, -(__s64)take);
}

SEC("tracepoint/syscalls/sys_enter_mmap")
int mg_enter_mmap(struct mg_tp_sys_enter *args)
{
	__u64 len = args->args[1], prot = args->args[2], flags = args->args[3];

	/* Anonymous memory only (private or shared); PROT_NONE is a reservation (glibc arenas,
	 * guard pages) that mprotect() may open later: not counted. */
	if (!(flags & MAP_ANONYMOUS) || prot == PROT_NONE)
		return 0;
	save_call(MG_OP_MMAP, 0, len, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int mg_exit_mmap(struct mg_tp_sys_exit *args)
{
	struct mg_call call;

	if (!take_call(MG_OP_MMAP, &call) || syscall_failed(args->ret))
		return 0;
	make_mapping(args, (__u64)args->ret, page_up(call.len));
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_munmap")
int mg_enter_munmap(struct mg_tp_sys_enter *args)
{
	save_call(MG_OP_MUNMAP, args->args[0], args->args[1], 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int mg_exit_munmap(struct mg_tp_sys_exit *args)
{
	struct mg_call call;

	if (!take_call(MG_OP_MUNMAP, &call) || args->ret != 0)
		return 0;
	release_range(call.addr, call.len);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mremap")
int mg_enter_mremap(struct mg_tp_sys_enter *args)
{
	save_call(MG_OP_MREMAP, args->args[0], args->args[1], args->args[2]);
	return 0;
}

/* A resized mapping (glibc realloc of an mmap'd chunk) is released at its old site and made
 * anew at the resizing stack, so each site's net stays exact. Unknown mappings are skipped: they
 * may be file mappings. */
SEC("tracepoint/syscalls/sys_exit_mremap")
int mg_exit_mremap(struct mg_tp_sys_exit *args)
{
	struct mg_mapping_key mkey = {};
	struct mg_call call;

	if (!take_call(MG_OP_MREMAP, &call) || syscall_failed(args->ret))
		return 0;
	mkey.tgid = bpf_get_current_pid_tgid() >> 32;
	mkey.addr = call.addr;
	if (!bpf_map_lookup_elem(&mappings, &mkey)) {
		stat_inc(MG_STAT_UNMAP_UNKNOWN);
		return 0;
	}
	release_range(call.addr, call.len);
	make_mapping(args, (__u64)args->ret, page_up(call.new_len));
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_brk")
int mg_enter_brk(struct mg_tp_sys_enter *args)
{
	save_call(MG_OP_BRK, args->args[0], 0, 0);
	return 0;
}

/*
 * brk() returns the break in force afterwards, whether the request succeeded or not. A query
 * (brk(0), how every process starts and how the break is learnt after exec) or a failed request
 * only records it; a successful move is growth (or a trim) of the page-aligned heap, charged
 * to the current stack. The old break of a process first seen moving it is unknown unless user
 * space seeded it (memgrow__add_tgid): that move is counted in MG_STAT_BRK_UNKNOWN only.
 */
SEC("tracepoint/syscalls/sys_exit_brk")
int mg_exit_brk(struct mg_tp_sys_exit *args)
{
	__u64 id = bpf_get_current_pid_tgid(), now = (__u64)args->ret, *old;
	struct mg_key key = {};
	struct mg_call call;
	__u32 tgid = id >> 32;
	__s64 delta;

	if (!take_call(MG_OP_BRK, &call))
		return 0;
	old = bpf_map_lookup_elem(&brks, &tgid);
	if (call.addr == 0 || now != call.addr || !old) {
		if (!old && call.addr != 0 && now == call.addr)
			stat_inc(MG_STAT_BRK_UNKNOWN);
		bpf_map_update_elem(&brks, &tgid, &now, BPF_ANY);
		return 0;
	}
	delta = (__s64)page_up(now) - (__s64)page_up(*old);
	*old = now;
	if (!delta)
		return 0;
	key.tgid = tgid;
	key.tid = (__u32)id;
	key.cgroup_id = bpf_get_current_cgroup_id();
	key.kind = delta > 0 ? MG_KIND_MAP : MG_KIND_UNMAP;
	get_stacks(args, &key, false);
	account(&key, delta);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
