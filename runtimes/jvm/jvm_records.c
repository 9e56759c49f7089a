// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_records.h"

#include <string.h>

uint64_t jvm_records_estimate_size(const char *cls, int64_t elems)
{
	static const struct {
		const char *name;
		unsigned int size;
	} prim[] = { { "byte[]", 1 }, { "boolean[]", 1 }, { "char[]", 2 }, { "short[]", 2 },
		     { "int[]", 4 },  { "float[]", 4 },	  { "long[]", 8 }, { "double[]", 8 } };
	size_t i, l = cls ? strlen(cls) : 0;

	if (elems < 0 || l < 3 || strcmp(cls + l - 2, "[]"))
		return 16;
	/* arrays longer than memory are not real: the smallest again */
	if (elems > (int64_t)1 << 40)
		return 16;
	for (i = 0; i < sizeof(prim) / sizeof(prim[0]); i++)
		if (!strcmp(cls, prim[i].name))
			return 16 + (uint64_t)elems * prim[i].size;
	return 16 + (uint64_t)elems * 4;
}

size_t jvm_records_class_len(const char *cls)
{
	const char *plus = strstr(cls, "+0x"), *slash = strchr(cls, '/');
	const char *cut = plus && (!slash || plus < slash) ? plus : slash;

	return cut ? (size_t)(cut - cls) : strlen(cls);
}

static enum jvm_rec held(const struct jfr_event *ev, int64_t since_ns, int64_t v[2])
{
	if (ev->kind != JFR_OLD_OBJECT && ev->kind != JFR_LIVE_OBJECT)
		return JVM_REC_OTHER;
	if (ev->alloc_ns && ev->alloc_ns < since_ns)
		return JVM_REC_NOT_HELD;
	v[1] = 1;
	if (ev->weight) {
		v[0] = ev->weight > INT64_MAX ? INT64_MAX : (int64_t)ev->weight;
		return JVM_REC_COUNT;
	}
	v[0] = (int64_t)jvm_records_estimate_size(ev->object_class, ev->array_elements);
	return JVM_REC_ESTIMATED;
}

static enum jvm_rec lock(const struct jfr_event *ev, int64_t v[2])
{
	if (ev->kind != JFR_MONITOR_ENTER && ev->kind != JFR_THREAD_PARK)
		return JVM_REC_OTHER;
	if (ev->kind == JFR_THREAD_PARK &&
	    (!ev->object_class || strstr(ev->object_class, "ConditionObject")))
		return JVM_REC_NOT_LOCK;
	v[0] = ev->duration_ns > 0 ? ev->duration_ns : 0;
	v[1] = 1;
	return JVM_REC_COUNT;
}

enum jvm_rec jvm_records_value(enum jvm_jfr_mode mode, const struct jfr_event *ev, int64_t since_ns,
			       int64_t v[2])
{
	switch (mode) {
	case JVM_JFR_ALLOC:
		if (ev->kind != JFR_ALLOC_SAMPLE && ev->kind != JFR_ALLOC_IN_TLAB &&
		    ev->kind != JFR_ALLOC_OUTSIDE)
			return JVM_REC_OTHER;
		v[0] = ev->weight > INT64_MAX ? INT64_MAX : (int64_t)ev->weight;
		v[1] = 1;
		return JVM_REC_COUNT;
	case JVM_JFR_HELD:
		return held(ev, since_ns, v);
	case JVM_JFR_LOCKS:
		return lock(ev, v);
	default:
		return JVM_REC_OTHER;
	}
}
