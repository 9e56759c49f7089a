// SPDX-License-Identifier: Apache-2.0
// JavaBurn: the Java workload of `make bench` (bench/jvm.sh), the counterpart of burn.c and
// pyburn.py. A deterministic integer loop (burn.c's: the same work per iteration every time) in
// hot() runs at exactly FRAMES Java frames deep (main, descend x (FRAMES - 3), spin, hot; hot is
// small and called from spin's loop, so C2 inlines it into spin's compiled loop: still its own
// frame in a profile) for WARMUP + SECONDS of wall time. The first WARMUP seconds let the JIT
// compile the loop; when they end a watcher thread takes a snapshot (iterations, time, the loop
// thread's CPU time) and prints a line "warm" on stdout: bench/jvm.sh starts the profiler then.
// At the end of the loop it prints, as burn.c does, for the SECONDS after the snapshot only,
//
//     burn iters=<N> wall=<seconds> cpu=<seconds> rate=<iterations per wall second>
//
// (cpu: the loop thread's CPU time, ThreadMXBean.getCurrentThreadCpuTime(); the JVM's own
// threads are not in it), then sleeps LINGER seconds (default 0) before it exits: a capture names
// Java frames from the JVM's memory after sampling ends, so a JVM gone by then has none.
//
// Usage: java -cp DIR JavaBurn SECONDS FRAMES [LINGER [WARMUP]]   (FRAMES >= 4, WARMUP default 3)
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;

public final class JavaBurn {
	static final int BUF_WORDS = 1024;
	static final int BATCH = 16384; // iterations between clock reads, as burn.c
	static final long[] buf = new long[BUF_WORDS];
	static final ThreadMXBean mx = ManagementFactory.getThreadMXBean();

	// written by the loop after every batch, read once by the watcher
	static volatile long done;
	// the snapshot at the end of the warm-up (written by the watcher before it prints "warm")
	static volatile boolean warm;
	static long warmIters, warmNanos, warmCpu;

	static long hot(long h, long base) {
		for (long i = base; i < base + BATCH; i++) {
			int k = (int) (i & (BUF_WORDS - 1));
			h ^= buf[k];
			h *= 0x100000001b3L;
			buf[k] = h >>> 7;
		}
		return h;
	}

	static void spin(double seconds, double warmup) {
		final long loopTid = Thread.currentThread().getId();
		final long t0 = System.nanoTime();
		final long warmEnd = t0 + (long) (warmup * 1e9);
		final long end = warmEnd + (long) (seconds * 1e9);
		Thread watcher = new Thread(() -> {
			try {
				long left;
				while ((left = warmEnd - System.nanoTime()) > 0)
					Thread.sleep(left / 1000000, (int) (left % 1000000));
			} catch (InterruptedException e) {
				return;
			}
			warmIters = done;
			warmNanos = System.nanoTime();
			warmCpu = mx.getThreadCpuTime(loopTid);
			warm = true;
			System.out.println("warm");
			System.out.flush();
		}, "warm-watcher");
		watcher.setDaemon(true);
		watcher.start();
		long h = 0xcbf29ce484222325L, iters = 0, t1;
		do {
			h = hot(h, iters);
			iters += BATCH;
			done = iters;
		} while ((t1 = System.nanoTime()) < end);
		long cpu1 = mx.getCurrentThreadCpuTime();
		long i0 = 0, n0 = t0, c0 = 0;
		if (warm) {
			i0 = warmIters;
			n0 = warmNanos;
			c0 = warmCpu;
		}
		double wall = (t1 - n0) / 1e9;
		System.out.println(String.format(Locale.ROOT, "burn iters=%d wall=%.3f cpu=%.3f rate=%.0f h=%d",
				iters - i0, wall, (cpu1 - c0) / 1e9, (iters - i0) / wall, h));
		System.out.flush();
	}

	// descend(k) makes k + 1 frames: FRAMES - 3 of them with main, spin and hot
	static void descend(int k, double seconds, double warmup) {
		if (k > 0) {
			descend(k - 1, seconds, warmup);
			return;
		}
		spin(seconds, warmup);
	}

	public static void main(String[] args) throws InterruptedException {
		if (args.length < 2 || args.length > 4 || Integer.parseInt(args[1]) < 4
				|| Double.parseDouble(args[0]) <= 0) {
			System.err.println("usage: JavaBurn SECONDS FRAMES [LINGER [WARMUP]] (FRAMES >= 4)");
			System.exit(2);
		}
		for (int i = 0; i < BUF_WORDS; i++)
			buf[i] = i * 0x9e3779b97f4a7c15L;
		double linger = args.length > 2 ? Double.parseDouble(args[2]) : 0;
		double warmup = args.length > 3 ? Double.parseDouble(args[3]) : 3;
		descend(Integer.parseInt(args[1]) - 4, Double.parseDouble(args[0]), warmup);
		Thread.sleep((long) (linger * 1000));
	}
}
