// SPDX-License-Identifier: Apache-2.0
// The Java program the JVM memory and lock tests profile (tests/integration/test_jvm_memory.sh):
//   JavaMem SECONDS
// runs three threads, each in one known method, and exits after SECONDS:
//   "churner"    churnArrays(): short-lived 1 KiB arrays, about 40 MB a second, each dropped at
//                once (kept in a volatile field until the next, so the JIT cannot remove it)
//   "retainer"   retainBlocks(): 4 KiB arrays, about 1 MB a second, kept in a ring of 4096 (16
//                MiB: each is held about 16 s before the ring overwrites it)
//   "locker-N"   holdMonitor(): two threads taking turns on one monitor, each holding it 20 ms
//                (asleep inside), so the other waits to enter about as long
// Prints "ready" once its threads run.
public final class JavaMem {
	private static final Object MONITOR = new Object();
	private static final long[][] RING = new long[4096][];
	private static volatile Object last;
	private static int next;

	static void churnArrays() {
		for (int i = 0; i < 400; i++)
			last = new byte[1024];
	}

	static void retainBlocks() {
		RING[next] = new long[512];
		next = (next + 1) % RING.length;
	}

	static void holdMonitor() throws InterruptedException {
		synchronized (MONITOR) {
			Thread.sleep(20);
		}
	}

	interface Body {
		void run() throws InterruptedException;
	}

	static Thread start(String name, Body body) {
		Thread t = new Thread(() -> {
			try {
				for (;;)
					body.run();
			} catch (InterruptedException e) {
				return;
			}
		}, name);
		t.setDaemon(true);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;

		start("churner", () -> {
			churnArrays();
			Thread.sleep(10);
		});
		start("retainer", () -> {
			retainBlocks();
			Thread.sleep(4);
		});
		start("locker-1", JavaMem::holdMonitor);
		start("locker-2", JavaMem::holdMonitor);
		System.out.println("ready");
		Thread.sleep(seconds * 1000);
	}
}
