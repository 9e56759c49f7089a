// SPDX-License-Identifier: Apache-2.0
//
// The JVM of tests/integration/test_jvm_attach.sh: threads with names and methods of our own,
// so that a thread dump taken through the attach protocol can be checked for them.
//   slideops-compute: spins in AttachTarget.computeLoop -> AttachTarget.hotLeaf
//   slideops-sleeper: waits in AttachTarget.sleepLoop (Thread.sleep)
// It prints "ready" once both run, and exits after the number of seconds in its argument.
public final class AttachTarget {
	static volatile long sink;

	static long hotLeaf(long x) {
		return x * 31 + (x >>> 7);
	}

	static void computeLoop() {
		long x = 1;
		for (;;) {
			for (int i = 0; i < 1000000; i++)
				x = hotLeaf(x);
			sink = x;
		}
	}

	static void sleepLoop() {
		for (;;) {
			try {
				Thread.sleep(1000);
			} catch (InterruptedException e) {
				return;
			}
		}
	}

	public static void main(String[] args) throws Exception {
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
		Thread compute = new Thread(AttachTarget::computeLoop, "slideops-compute");
		Thread sleeper = new Thread(AttachTarget::sleepLoop, "slideops-sleeper");
		compute.setDaemon(true);
		sleeper.setDaemon(true);
		compute.start();
		sleeper.start();
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(seconds * 1000);
	}
}
