/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_vmstructs: HotSpot's exported description of its own data structures, read from outside the
 * JVM. libjvm.so exports (in .dynsym, so stripping keeps them) a table of (type, field) ->
 * offset or static address, gHotSpotVMStructs, and one of type -> size, gHotSpotVMTypes, plus
 * the layout of their entries (gHotSpotVMStructEntryArrayStride, ...TypeNameOffset, ...). The
 * entries point at names in libjvm; each table ends with an entry whose type name is NULL.
 *
 * Two parts:
 * - the decoder, pure over a memory-read callback: given the layout and the tables' addresses
 *   it reads the entries and their names, bounded (JVM_VMS_MAX_ENTRIES, JVM_VMS_NAME_MAX,
 *   JVM_VMS_STRIDE_MAX, every pointer checked by the read), into a lookup;
 * - jvm_vmstructs__open(): finds libjvm.so in a process's maps, its symbols through the ELF
 *   reader, reads the layout words and decodes through process_vm_readv().
 * jvm_hotspot_extract() then picks what the frame walk needs, under the names each JDK uses.
 *
 * A jvm_vmstructs is immutable once built: concurrent lookups are safe.
 */
#ifndef SLIDEOPS_JVM_VMSTRUCTS_H
#define SLIDEOPS_JVM_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* JDK 17 exports about 2900 fields and 1300 types; JDK 25 about the same. */
#define JVM_VMS_MAX_ENTRIES 32768u
/* Longest type or field name kept ("GrowableArray<CodeHeap*>"); longer fails the table. */
#define JVM_VMS_NAME_MAX 160u
/* Largest entry stride (HotSpot's are 48 and 48 bytes) and table offset accepted. */
#define JVM_VMS_STRIDE_MAX 256u
/* Field offsets and type sizes beyond this are absurd: the table is refused. */
#define JVM_VMS_VALUE_MAX (1ull << 24)

/* The layout words and table addresses, as the gHotSpotVM* variables hold them. */
struct jvm_vms_layout {
	uint64_t structs; /* gHotSpotVMStructs: address of the first struct entry */
	uint64_t s_stride, s_type_name, s_field_name, s_is_static, s_offset, s_address;
	uint64_t s_type_string; /* the field's C type ("int16_t"): its width, see jvm_vms_field */
	uint64_t types;		/* gHotSpotVMTypes */
	uint64_t t_stride, t_type_name, t_size;
};

/*
 * Reads @n bytes at @addr of the target into @buf. Returns 0 or -errno (-EFAULT: not
 * readable); a short read is -EFAULT.
 */
typedef int (*jvm_read_fn_t)(void *ctx, uint64_t addr, void *buf, size_t n);

/* The real reader: process_vm_readv() of the process whose tgid is *(uint32_t *)@ctx. */
int jvm_read_process(void *ctx, uint64_t addr, void *buf, size_t n);

struct jvm_vms_field {
	const char *type, *name; /* borrowed from the jvm_vmstructs */
	bool is_static;
	uint64_t offset;  /* non-static: offset in the type */
	uint64_t address; /* static: the field's address in the process */
	/* The bytes of the field's value when its type string names a fixed-width integer
	 * ("int16_t", "int", "u2", "uint64_t"...); 0 for any other type or one not readable.
	 * HotSpot narrows fields between releases (CodeBlob::_frame_complete_offset: int in
	 * JDK 17, int16_t in 25): a reader must not assume a width. */
	uint8_t width;
};

struct jvm_vms_type {
	const char *name;
	uint64_t size;
};

struct jvm_vmstructs;

/*
 * Decodes the tables described by @l through @read. Returns 0 and an object the caller frees
 * with jvm_vmstructs__free(); -EINVAL (a NULL table, a stride below what its offsets need or
 * above JVM_VMS_STRIDE_MAX, an absurd offset or size), -E2BIG (no terminator within
 * JVM_VMS_MAX_ENTRIES), -ENAMETOOLONG (a name not terminated within JVM_VMS_NAME_MAX),
 * -EILSEQ (a name with a byte outside printable ASCII), -ENOMEM, or @read's -errno
 * (-EFAULT: a pointer into nothing, a table cut short).
 */
int jvm_vmstructs__decode(const struct jvm_vms_layout *l, jvm_read_fn_t read, void *ctx,
			  struct jvm_vmstructs **out);

/*
 * Finds libjvm.so in process @tgid (its maps), resolves the gHotSpotVM* symbols, reads the
 * layout words and decodes the tables from its memory. Returns 0 and the object; -ENOENT (no
 * libjvm.so mapped: not a HotSpot JVM), -ENOTSUP (a libjvm without the exported tables),
 * -EAGAIN (the layout words are still zero: the JVM is starting), -ESRCH, or the errors of
 * elf_file__open() and jvm_vmstructs__decode().
 */
int jvm_vmstructs__open(uint32_t tgid, struct jvm_vmstructs **out);

/* Accepts NULL. */
void jvm_vmstructs__free(struct jvm_vmstructs *vs);

/* The libjvm.so path as the process maps it ("" for a decoded table), and its load bias. */
const char *jvm_vmstructs__libjvm(const struct jvm_vmstructs *vs);
uint64_t jvm_vmstructs__bias(const struct jvm_vmstructs *vs);

/* The field @type::@name, or NULL. Borrowed, valid while @vs lives. */
const struct jvm_vms_field *jvm_vmstructs__field(const struct jvm_vmstructs *vs, const char *type,
						 const char *name);
/* The size of @type. Returns 0, or -ENOENT. */
int jvm_vmstructs__type_size(const struct jvm_vmstructs *vs, const char *type, uint64_t *size);

/* All entries, in the JVM's order (a dump); NULL past the end. */
size_t jvm_vmstructs__nfields(const struct jvm_vmstructs *vs);
const struct jvm_vms_field *jvm_vmstructs__field_at(const struct jvm_vmstructs *vs, size_t i);
size_t jvm_vmstructs__ntypes(const struct jvm_vmstructs *vs);
const struct jvm_vms_type *jvm_vmstructs__type_at(const struct jvm_vmstructs *vs, size_t i);

/* Most JVM flags looked at (JDK 17 has about 1300, debug builds more). */
#define JVM_VMS_MAX_FLAGS 8192u

/*
 * The value of the bool JVM flag @name ("DisableAttachMechanism") of the process @vs was read
 * from, through @read: JVMFlag::flags (an array of JVMFlag::numFlags entries of
 * sizeof(JVMFlag) bytes) and each entry's _name and _addr. Returns 0 and @value, -ENOENT (no
 * such flag), -ENOTSUP (the tables do not describe JVMFlag), -E2BIG (more than
 * JVM_VMS_MAX_FLAGS), or @read's -errno.
 */
int jvm_vmstructs__flag_bool(const struct jvm_vmstructs *vs, jvm_read_fn_t read, void *ctx,
			     const char *name, bool *value);

/* What the frame walk of HotSpot code needs (docs/jvm.md). */
enum jvm_hs {
	JVM_HS_CODECACHE_HEAPS, /* static: address of GrowableArray<CodeHeap*>* */
	JVM_HS_CODECACHE_LOW,	/* static: address of the code cache's low bound */
	JVM_HS_CODECACHE_HIGH,
	JVM_HS_CODEHEAP_MEMORY, /* VirtualSpace, inline */
	JVM_HS_CODEHEAP_SEGMAP, /* VirtualSpace, inline */
	JVM_HS_CODEHEAP_LOG2_SEGMENT,
	JVM_HS_VIRTUALSPACE_LOW,  /* _low_boundary */
	JVM_HS_VIRTUALSPACE_HIGH, /* _high_boundary */
	JVM_HS_GROWABLE_DATA,	  /* GrowableArray<int>::_data */
	JVM_HS_GROWABLE_LEN,	  /* GenericGrowableArray/GrowableArrayBase::_len */
	JVM_HS_HEAPBLOCK_SIZE,	  /* sizeof(HeapBlock): a blob follows its header */
	JVM_HS_CODEBLOB_NAME,
	JVM_HS_CODEBLOB_FRAME_SIZE,
	JVM_HS_CODEBLOB_CODE, /* _code_begin (a pointer, JDK 17) or _code_offset */
	JVM_HS_CODEBLOB_SIZE,
	JVM_HS_CODEBLOB_FRAME_COMPLETE,
	JVM_HS_NMETHOD_METHOD,
	JVM_HS_NMETHOD_COMPILE_ID,
	JVM_HS_NMETHOD_SCOPES_DATA, /* _scopes_data_begin (JDK 17) or _scopes_data_offset */
	JVM_HS_NMETHOD_SCOPES_PCS,  /* _scopes_pcs_offset */
	JVM_HS_METHOD_CONSTMETHOD,
	JVM_HS_CONSTMETHOD_CONSTANTS,
	JVM_HS_CONSTMETHOD_NAME_INDEX,
	JVM_HS_CONSTMETHOD_SIGNATURE_INDEX,
	JVM_HS_CONSTMETHOD_CODE_SIZE,
	JVM_HS_CONSTMETHOD_SIZE, /* sizeof(ConstMethod): the bytecodes follow it */
	JVM_HS_CONSTANTPOOL_HOLDER,
	JVM_HS_CONSTANTPOOL_SIZE, /* sizeof(ConstantPool): the slots follow it */
	JVM_HS_KLASS_NAME,
	JVM_HS_SYMBOL_LENGTH, /* _length (u16) */
	JVM_HS_SYMBOL_BODY,
	JVM_HS_JAVATHREAD_ANCHOR,
	JVM_HS_JAVATHREAD_OSTHREAD,
	JVM_HS_JAVATHREAD_THREADOBJ,
	JVM_HS_OSTHREAD_THREAD_ID,
	JVM_HS_ANCHOR_LAST_SP,
	JVM_HS_ANCHOR_LAST_PC,
	JVM_HS_ANCHOR_LAST_FP,
	JVM_HS_VM_RELEASE, /* static: address of Abstract_VM_Version::_s_vm_release */
	/* for the names (runtimes/jvm/jvm_names.h); the optional ones exist in some JDKs only */
	JVM_HS_CONSTMETHOD_FLAGS,	 /* _flags (u2, JDK 17) or _flags._flags (u4, 21+) */
	JVM_HS_CONSTMETHOD_TOTAL,	 /* _constMethod_size (int, words) */
	JVM_HS_CONSTANTPOOL_SOURCE_FILE, /* _source_file_name_index (u2) */
	JVM_HS_NMETHOD_METADATA_OFFSET,	 /* optional (JDK 17): nmethod::_metadata_offset */
	JVM_HS_NMETHOD_DEPENDENCIES,	 /* optional (JDK 17): _dependencies_offset */
	JVM_HS_NMETHOD_IMMUTABLE,	 /* optional (JDK 23+): _immutable_data */
	JVM_HS_NMETHOD_IMMUTABLE_SIZE,	 /* optional (JDK 23+): _immutable_data_size */
	JVM_HS_CODEBLOB_MUTABLE,	 /* optional (JDK 25+): _mutable_data */
	JVM_HS_CODEBLOB_RELOCATION_SIZE, /* optional (JDK 25+): _relocation_size */
	JVM_HS_CODEBLOB_MUTABLE_SIZE,	 /* optional (JDK 25+): _mutable_data_size */
	JVM_HS_COUNT
};
_Static_assert(JVM_HS_COUNT <= 64, "jvm_hotspot's bit masks hold 64 entries");

struct jvm_hotspot {
	uint64_t val[JVM_HS_COUNT]; /* offset, static address or size */
	/* The names found ("CodeBlob", "_code_offset"; field NULL for a size), or NULL;
	 * borrowed from the jvm_vmstructs */
	const char *type[JVM_HS_COUNT], *field[JVM_HS_COUNT];
	uint64_t found; /* bit i: val[i] was found */
	/* bit i: the name found holds an offset from the blob where others held a pointer
	 * (CodeBlob::_code_offset for _code_begin, nmethod::_scopes_data_offset) */
	uint64_t is_offset;
	uint8_t width[JVM_HS_COUNT]; /* a field's jvm_vms_field width: 0 unknown */
};

/* True for an entry only some JDKs have (not counted as missing by jvm_hotspot_extract()). */
bool jvm_hotspot_optional(enum jvm_hs id);

/* "CodeBlob::_frame_size" (the first name tried) for @id. Static. */
const char *jvm_hotspot_label(enum jvm_hs id);

/*
 * Picks every JVM_HS_* from @vs, trying each name the JDKs used for it (their renames between
 * JDK 17 and 25). Returns the number of entries not found that every JDK has (0: all; the
 * optional ones are in hs->found or not), @hs filled either way.
 * JVM_HS_COUNT is at most 64 (the bit masks).
 */
int jvm_hotspot_extract(const struct jvm_vmstructs *vs, struct jvm_hotspot *hs);

#endif
