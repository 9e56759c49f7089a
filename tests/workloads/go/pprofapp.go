// SPDX-License-Identifier: Apache-2.0
//
// pprofapp: a Go workload that serves net/http/pprof, for the integration tests of the pprof
// questions. Each -mode puts a known function at the top of one profile; every function named
// below is //go:noinline so it appears by name. Not built by the Makefile: a test builds it
// with `CGO_ENABLED=0 GO111MODULE=off go build -ldflags='-s -w' pprofapp.go` into its temp dir
// and runs it as pid 1 of a container with its own network namespace.
//
// Usage: pprofapp -mode MODE [-listen 127.0.0.1:6060] [mode flags]
//
// Modes (the setup is done before the line "ready MODE LISTEN" is printed on stdout, once the
// server listens; the program then runs until killed):
//
//	held        main.holdMemory builds a map of 16384 4 KiB slices (64 MiB, every page
//	            written) in a global and keeps it; then idles. heap (inuse_space): most bytes
//	            allocated by main.holdMemory. Two runtime.GC() before "ready" publish them.
//	alloc       main.allocEarly allocates 200 MiB of garbage (3200 64 KiB slices), followed by
//	            two runtime.GC(), before "ready"; -delay SECONDS (default 2) after "ready",
//	            main.allocDuring allocates 8 64 KiB slices every 10 ms (~50 MiB/s) into a
//	            16-slot ring, until killed. allocs (alloc_space) between two snapshots taken
//	            after the delay: main.allocDuring, never main.allocEarly.
//	goroutines  -n N (default 40) goroutines blocked forever on a channel receive in
//	            main.parkHere ([chan receive]) and 5 in a time.Sleep loop in main.sleepHere
//	            ([sleep]); then idles.
//	mutex       -mutexfraction F (default 1; 0 = off) and -blockrate R (default 1; 0 = off);
//	            8 goroutines in main.contend take one sync.Mutex in turn, each holding it for
//	            1 ms of busy work (main.spinFor), so contention is continuous. mutex: delay
//	            attributed to sync.(*Mutex).Unlock <- main.contend; block: sync.(*Mutex).Lock
//	            <- main.contend.
//	cpu         main.main -> main.work -> main.hotLoop burns one CPU (as hot.go).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"sync"
	"time"
)

var (
	held  map[int][]byte // the memory of mode held
	ring  [16][]byte     // the last allocations of mode alloc
	sink  uint64
	mu    sync.Mutex // the mutex of mode mutex
	count uint64     // guarded by mu
)

// holdMemory allocates 16384 slices of 4 KiB (64 MiB) and keeps them in the global map held.
// Each page is written so that it is resident.
//
//go:noinline
func holdMemory() {
	const n, size = 16384, 4096
	m := make(map[int][]byte, n)
	for i := 0; i < n; i++ {
		b := make([]byte, size)
		for j := 0; j < size; j += 512 {
			b[j] = byte(i + j)
		}
		m[i] = b
	}
	held = m
}

// allocEarly allocates 200 MiB in 64 KiB slices, each dropped by the next ones.
//
//go:noinline
func allocEarly() {
	for i := 0; i < 3200; i++ {
		b := make([]byte, 64<<10)
		b[i&(64<<10-1)] = byte(i)
		ring[i%len(ring)] = b
	}
	for i := range ring {
		ring[i] = nil
	}
}

// allocDuring allocates 8 slices of 64 KiB every 10 ms (~50 MiB/s), forever; each lives until
// it is replaced 16 allocations later.
//
//go:noinline
func allocDuring() {
	t := time.NewTicker(10 * time.Millisecond)
	i := 0
	for range t.C {
		for k := 0; k < 8; k++ {
			b := make([]byte, 64<<10)
			b[i&(64<<10-1)] = byte(i)
			ring[i%len(ring)] = b
			i++
		}
	}
}

// parkHere blocks forever on a channel nobody sends on or closes.
//
//go:noinline
func parkHere(ch chan int, started *sync.WaitGroup) {
	started.Done()
	<-ch
}

// sleepHere sleeps forever, 10 s at a time.
//
//go:noinline
func sleepHere(started *sync.WaitGroup) {
	started.Done()
	for {
		time.Sleep(10 * time.Second)
	}
}

// spinFor burns the CPU for d.
//
//go:noinline
func spinFor(d time.Duration) uint64 {
	var tab [16]uint64
	start := time.Now()
	for i := uint64(0); ; i++ {
		tab[i&15] += i*i ^ (tab[(i+7)&15] >> 3)
		if i&1023 == 0 && time.Since(start) >= d {
			return tab[i&15]
		}
	}
}

// contend takes mu, holds it for 1 ms of busy work, releases it, and again, forever.
//
//go:noinline
func contend() {
	for {
		mu.Lock()
		count += spinFor(time.Millisecond)
		mu.Unlock()
	}
}

//go:noinline
func hotLoop(iters uint64) uint64 {
	var tab [16]uint64
	for i := uint64(0); i < iters; i++ {
		tab[i&15] += i*i ^ (tab[(i+7)&15] >> 3)
	}
	return tab[iters&15]
}

//go:noinline
func work() {
	for {
		sink += hotLoop(2000000)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pprofapp -mode held|alloc|goroutines|mutex|cpu [-listen ADDR] "+
		"[-delay SECONDS] [-n N] [-mutexfraction F] [-blockrate R]")
	flag.PrintDefaults()
	os.Exit(2)
}

func main() {
	mode := flag.String("mode", "", "held, alloc, goroutines, mutex or cpu (required)")
	listen := flag.String("listen", "127.0.0.1:6060", "address of the pprof server")
	delay := flag.Int("delay", 2, "alloc: seconds between \"ready\" and the start of main.allocDuring")
	n := flag.Int("n", 40, "goroutines: goroutines parked in main.parkHere")
	fraction := flag.Int("mutexfraction", 1, "mutex: runtime.SetMutexProfileFraction (0: off)")
	blockrate := flag.Int("blockrate", 1, "mutex: runtime.SetBlockProfileRate (0: off)")
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() != 0 || *delay < 0 || *n < 0 || *fraction < 0 || *blockrate < 0 {
		usage()
	}

	switch *mode {
	case "held":
		holdMemory()
		runtime.GC() // a heap profile shows the state of two GCs ago
		runtime.GC()
	case "alloc":
		allocEarly()
		runtime.GC() // publish every allocation of allocEarly in the allocs profile
		runtime.GC()
	case "goroutines":
		var started sync.WaitGroup
		ch := make(chan int)
		started.Add(*n + 5)
		for i := 0; i < *n; i++ {
			go parkHere(ch, &started)
		}
		for i := 0; i < 5; i++ {
			go sleepHere(&started)
		}
		started.Wait()
		time.Sleep(100 * time.Millisecond) // from Done to blocked
	case "mutex":
		runtime.SetMutexProfileFraction(*fraction)
		runtime.SetBlockProfileRate(*blockrate)
		for i := 0; i < 8; i++ {
			go contend()
		}
	case "cpu":
	default:
		usage()
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pprofapp:", err)
		os.Exit(1)
	}
	go func() {
		err := http.Serve(ln, nil)
		fmt.Fprintln(os.Stderr, "pprofapp:", err)
		os.Exit(1)
	}()
	fmt.Printf("ready %s %s\n", *mode, ln.Addr())

	switch *mode {
	case "alloc":
		time.Sleep(time.Duration(*delay) * time.Second)
		allocDuring()
	case "cpu":
		work()
	}
	select {}
}
