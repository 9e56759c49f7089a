// SPDX-License-Identifier: Apache-2.0
//
// nopprof: a Go workload that listens on a port but is not a pprof endpoint, for the
// integration tests of the pprof questions. main.main -> main.work -> main.hotLoop burns one
// CPU (as hot.go, every function //go:noinline); a plain net/http server (net/http/pprof is
// not imported) answers 200 "hello" on / and 404 on every other path (/debug/pprof/ included).
// Not built by the Makefile: a test builds it with
// `CGO_ENABLED=0 GO111MODULE=off go build -ldflags='-s -w' nopprof.go` into its temp dir.
//
// Usage: nopprof [-listen 127.0.0.1:8080]   prints "ready nopprof LISTEN" once listening, then
// runs until killed.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
)

var sink uint64

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

func hello(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "hello")
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address of the HTTP server")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: nopprof [-listen ADDR]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nopprof:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", hello)
	go func() {
		err := http.Serve(ln, mux)
		fmt.Fprintln(os.Stderr, "nopprof:", err)
		os.Exit(1)
	}()
	fmt.Printf("ready nopprof %s\n", ln.Addr())
	work()
}
