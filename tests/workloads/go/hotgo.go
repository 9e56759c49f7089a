// SPDX-License-Identifier: Apache-2.0
//
// hotgo: a Go workload with one hot function, main.hotLoop, for the integration tests. Not
// built by the Makefile: a test builds it with `go build` (unstripped) and
// `go build -ldflags='-s -w'` (stripped) into its temp dir.
//
// Usage: hotgo [SECONDS]   runs for SECONDS of wall time, or until killed when omitted or 0.
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
	var s uint64
	for i := uint64(0); i < iters; i++ {
		s += i*i ^ (s >> 3)
	}
	return s
}

func main() {
	seconds := 0
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n < 0 {
			fmt.Fprintln(os.Stderr, "usage: hotgo [SECONDS]")
			os.Exit(2)
		}
		seconds = n
	}
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	for seconds == 0 || time.Now().Before(deadline) {
		sink += hotLoop(2000000)
	}
}
