// SPDX-License-Identifier: Apache-2.0
//
// hot: the Go workload of tests/integration/test_go_cpu.sh. Its time goes to
// main.main -> main.work -> main.hotLoop, none of them inlined. hotLoop keeps a table on its
// stack, so it has a frame and pushes the frame pointer like its callers: frame-pointer
// unwinding from a sample in it sees every caller (a frameless leaf would hide its caller,
// whose return address is on the stack but not in the frame-pointer chain). The test builds it
// with `go build -ldflags='-s -w'` into its temp dir; the Makefile does not build it.
//
// Usage: hot [SECONDS]   runs for SECONDS of wall time, or until killed when omitted or 0.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func hotLoop(iters uint64) uint64 {
	var tab [16]uint64
	for i := uint64(0); i < iters; i++ {
		tab[i&15] += i*i ^ (tab[(i+7)&15] >> 3) // HOTLINE
	}
	return tab[iters&15]
}

//go:noinline
func work(deadline time.Time, forever bool) {
	for forever || time.Now().Before(deadline) {
		sink += hotLoop(2000000)
	}
}

func main() {
	seconds := 0
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n < 0 {
			fmt.Fprintln(os.Stderr, "usage: hot [SECONDS]")
			os.Exit(2)
		}
		seconds = n
	}
	work(time.Now().Add(time.Duration(seconds)*time.Second), seconds == 0)
}
