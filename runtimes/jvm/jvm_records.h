/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_records: what one event a JVM recorded (runtimes/jvm/jfr.h) counts for in a question, and
 * how its names read. Pure; thread-safe.
 *
 *   JVM_JFR_ALLOC  allocation samples: {bytes the sample stands for, 1}
 *   JVM_JFR_HELD   old objects still held at the dump, allocated since @since_ns (the JVM's
 *                  sampler may hold older ones, of the application's own recordings): {their
 *                  size, 1}; Java 17 records no size: arrays are sized from their length and
 *                  the element's size (references as compressed, 4 bytes), other objects as 16
 *                  bytes (the smallest), and the result says JVM_REC_ESTIMATED
 *   JVM_JFR_LOCKS  monitor enters, and parks on a lock: {the wait in ns, 1}; a park on a
 *                  Condition (AbstractQueuedSynchronizer$ConditionObject) or on no blocker
 *                  waits for a signal, not for a lock, as Object.wait does: left out
 */
#ifndef SLIDEOPS_JVM_RECORDS_H
#define SLIDEOPS_JVM_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "runtimes/jvm/jfr.h"
#include "runtimes/jvm/jvm_jfrctl.h"

enum jvm_rec {
	JVM_REC_COUNT,	   /* counted, with @v */
	JVM_REC_ESTIMATED, /* counted, its size estimated */
	JVM_REC_NOT_HELD,  /* an old object allocated before the capture */
	JVM_REC_NOT_LOCK,  /* a park that waits for a signal */
	JVM_REC_OTHER,	   /* not an event of this question */
};

/* What @ev counts for in @mode; @v (two values) is written for the first two results. */
enum jvm_rec jvm_records_value(enum jvm_jfr_mode mode, const struct jfr_event *ev, int64_t since_ns,
			       int64_t v[2]);

/* The bytes of an object of class @cls ("long[]") and @elems elements (-1: not an array), when
 * the JVM does not say (see above). */
uint64_t jvm_records_estimate_size(const char *cls, int64_t elems);

/*
 * The length of @cls without a hidden class's address, as the eBPF names have it
 * (runtimes/jvm/jvm_names.h): "Foo$$Lambda/0x0000000033040210" (Java 25) and
 * "Foo$$Lambda$1+0x0000000800c01000/622488023" (Java 17) are "Foo$$Lambda" and "Foo$$Lambda$1".
 */
size_t jvm_records_class_len(const char *cls);

#endif
