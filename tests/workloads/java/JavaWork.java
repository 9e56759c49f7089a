// SPDX-License-Identifier: Apache-2.0
// The Java programs the JVM frame tests profile (tests/integration/test_jvm_*.sh).
//   JavaWork cpu SECONDS    one thread spends its time in mixStep(), small enough for C1 and C2
//                           to inline it into its caller spinLoop(). Its loop runs a number of
//                           rounds that depends on the data, so the compilers keep its
//                           safepoint poll: that poll's debug information is what names the
//                           inlined method at the pcs around it (HotSpot records it only at
//                           safepoints and calls without -XX:+DebugNonSafepoints)
//   JavaWork late SECONDS   as cpu, its thread in lateForever() instead of computeForever() (a JVM
//                           started during a capture, told apart by its stacks)
//   JavaWork grow SECONDS   one thread, "grower", keeps the 64 KiB direct buffers it allocates
//                           in growHeap() every 10 ms, up to 48 MiB: fresh pages faulted in
//   JavaWork mixed SECONDS  three named threads: "compute" (spinLoop), "sleeper"
//                           (Thread.sleep in napLoop) and two "contender-N" that take turns on
//                           one lock in holdLock()
// Prints "ready" once its threads run, then exits after SECONDS.
public final class JavaWork {
	private static final Object LOCK = new Object();
	private static volatile long sink;

	static long mixStep(long x) {
		long v = x | 1;
		while ((v & 0xff) != 0xff) {
			v = v * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L;
			v ^= v >>> 29;
			v = v * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL;
			v ^= v >>> 31;
			v = v * 0xD6E8FEB86659FD93L;
			v ^= v >>> 32;
		}
		return v;
	}

	static long spinLoop(long rounds) {
		long acc = 1;
		for (long i = 0; i < rounds; i++)
			acc += mixStep(acc ^ i);
		return acc;
	}

	static void computeForever() {
		for (;;)
			sink = spinLoop(100_000);
	}

	static void lateForever() {
		for (;;)
			sink = spinLoop(100_000);
	}

	static final java.util.ArrayList<java.nio.ByteBuffer> KEPT = new java.util.ArrayList<>();

	// Direct buffers: native memory the JVM zeroes as it allocates it, never moved by the
	// collector, so every page this faults in is new and under growHeap.
	static void growHeap() {
		KEPT.add(java.nio.ByteBuffer.allocateDirect(64 << 10));
	}

	static void growForever() {
		for (;;) {
			if (KEPT.size() < 768)
				growHeap();
			try {
				Thread.sleep(10);
			} catch (InterruptedException e) {
				return;
			}
		}
	}

	static void napLoop() {
		for (;;) {
			try {
				Thread.sleep(50);
			} catch (InterruptedException e) {
				return;
			}
		}
	}

	static void holdLock() {
		synchronized (LOCK) {
			sink = spinLoop(200_000);
		}
	}

	static void contendForever() {
		for (;;)
			holdLock();
	}

	static Thread start(String name, Runnable r) {
		Thread t = new Thread(r, name);
		t.setDaemon(true);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		String mode = args.length > 0 ? args[0] : "cpu";
		long seconds = args.length > 1 ? Long.parseLong(args[1]) : 60;
		if (mode.equals("late"))
			start("late", JavaWork::lateForever);
		else if (mode.equals("grow"))
			start("grower", JavaWork::growForever);
		else
			start("compute", JavaWork::computeForever);
		if (mode.equals("mixed")) {
			start("sleeper", JavaWork::napLoop);
			start("contender-1", JavaWork::contendForever);
			start("contender-2", JavaWork::contendForever);
		}
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(seconds * 1000);
	}
}
