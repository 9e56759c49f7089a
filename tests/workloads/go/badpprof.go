// SPDX-License-Identifier: Apache-2.0
//
// badpprof: a hostile endpoint on the pprof port, for the integration tests of the pprof
// questions: a client of /debug/pprof/ must give up on it within its limits and not hang, grow
// or crash. Not built by the Makefile: a test builds it with
// `CGO_ENABLED=0 GO111MODULE=off go build -ldflags='-s -w' badpprof.go` into its temp dir.
//
// Usage: badpprof -mode MODE [-listen 127.0.0.1:6060] [-rate KIB_PER_S]
// prints "ready MODE LISTEN" once listening, then runs until killed.
//
// Modes:
//
//	endless   every request: 200, Content-Type text/plain; charset=utf-8, no Content-Length,
//	          a chunked body that never ends (-rate KiB/s, default 1024, written every 10 ms).
//	          /debug/pprof/ starts as the real index page (its head and the table rows of
//	          allocs, block, goroutine, heap, mutex, profile...) and then repeats table rows
//	          forever; every other path streams lines of "endless ...".
//	garbage   /debug/pprof/ (and /debug/pprof): the index page of Go 1.19's net/http/pprof
//	          (200, text/html, naming allocs, block, cmdline, goroutine, heap, mutex, profile,
//	          threadcreate, trace). Any other /debug/pprof/NAME: 200,
//	          application/octet-stream, 2-6 KiB of random bytes whose first byte is 0 (not the
//	          gzip magic 1f 8b, and field number 0 is not valid protobuf). Other paths: 404.
//	silent    raw TCP (net.Listen, no HTTP): accepts every connection, reads and discards what
//	          the client sends, never writes, closes only when the client does.
//	notpprof  every request: 200, text/html, "<html>hello</html>".
//	hang      /debug/pprof/: the real-looking index page of garbage; every profile request is
//	          held open and never answered (the endpoint is found, then stops answering).
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// profiles: the rows of the index page, as Go 1.19 lists them (sorted by name).
var profiles = []struct {
	name  string
	count int
	desc  string
}{
	{"allocs", 0, "A sampling of all past memory allocations"},
	{"block", 0, "Stack traces that led to blocking on synchronization primitives"},
	{"cmdline", 0, "The command line invocation of the current program"},
	{"goroutine", 4, "Stack traces of all current goroutines"},
	{"heap", 0, "A sampling of memory allocations of live objects. You can specify the gc GET parameter to run GC before taking the heap sample."},
	{"mutex", 0, "Stack traces of holders of contended mutexes"},
	{"profile", 0, "CPU profile. You can specify the duration in the seconds GET parameter. After you get the profile file, use the go tool pprof command to investigate the profile."},
	{"threadcreate", 6, "Stack traces that led to the creation of new OS threads"},
	{"trace", 0, "A trace of execution of the current program. You can specify the duration in the seconds GET parameter. After you get the trace file, use the go tool trace command to investigate the trace."},
}

const indexHead = `<html>
<head>
<title>/debug/pprof/</title>
<style>
.profile-name{
	display:inline-block;
	width:6rem;
}
</style>
</head>
<body>
/debug/pprof/<br>
<br>
Types of profiles available:
<table>
<thead><td>Count</td><td>Profile</td></thead>
`

func indexRows() string {
	var b strings.Builder
	for _, p := range profiles {
		fmt.Fprintf(&b, "<tr><td>%d</td><td><a href='%s?debug=1'>%s</a></td></tr>\n", p.count, p.name, p.name)
	}
	return b.String()
}

func indexPage() string {
	var b strings.Builder
	b.WriteString(indexHead)
	b.WriteString(indexRows())
	b.WriteString("</table>\n<a href=\"goroutine?debug=2\">full goroutine stack dump</a>\n<br>\n<p>\nProfile Descriptions:\n<ul>\n")
	for _, p := range profiles {
		fmt.Fprintf(&b, "<li><div class=profile-name>%s: </div> %s</li>\n", p.name, p.desc)
	}
	b.WriteString("</ul>\n</p>\n</body>\n</html>")
	return b.String()
}

// endless: a body that never ends, rate bytes per second.
func endless(rate int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		f, _ := w.(http.Flusher)
		var fill string
		if r.URL.Path == "/debug/pprof/" || r.URL.Path == "/debug/pprof" {
			if _, err := w.Write([]byte(indexHead + indexRows())); err != nil {
				return
			}
			fill = indexRows()
		} else {
			fill = "endless " + r.URL.Path + " endless endless endless endless endless endless\n"
		}
		per := rate / 100 // every 10 ms
		if per < 1 {
			per = 1
		}
		chunk := strings.Repeat(fill, per/len(fill)+1)[:per]
		for {
			if f != nil {
				f.Flush()
			}
			time.Sleep(10 * time.Millisecond)
			if _, err := w.Write([]byte(chunk)); err != nil {
				return // the client went away
			}
		}
	}
}

func garbage(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/debug/pprof/" || r.URL.Path == "/debug/pprof":
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(indexPage()))
	case strings.HasPrefix(r.URL.Path, "/debug/pprof/"):
		name := strings.TrimPrefix(r.URL.Path, "/debug/pprof/")
		b := make([]byte, 2048+rand.Intn(4096))
		rand.Read(b)
		b[0] = 0 // neither gzip (1f 8b) nor a protobuf tag (field 0)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

func hang(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/debug/pprof/" || r.URL.Path == "/debug/pprof" {
		garbage(w, r)
		return
	}
	<-r.Context().Done() // until the client gives up
}

func notpprof(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte("<html>hello</html>"))
}

// silent: holds every connection, never writes.
func silent(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func(c net.Conn) {
			buf := make([]byte, 4096)
			for {
				if _, err := c.Read(buf); err != nil {
					c.Close()
					return
				}
			}
		}(c)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: badpprof -mode endless|garbage|silent|notpprof|hang [-listen ADDR] [-rate KIB_PER_S]")
	flag.PrintDefaults()
	os.Exit(2)
}

func main() {
	mode := flag.String("mode", "", "endless, garbage, silent, notpprof or hang (required)")
	listen := flag.String("listen", "127.0.0.1:6060", "address to listen on")
	rate := flag.Int("rate", 1024, "endless: KiB per second of each body")
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() != 0 || *rate <= 0 {
		usage()
	}
	var h http.Handler
	switch *mode {
	case "endless":
		h = endless(*rate * 1024)
	case "garbage":
		rand.Seed(time.Now().UnixNano())
		h = http.HandlerFunc(garbage)
	case "notpprof":
		h = http.HandlerFunc(notpprof)
	case "hang":
		h = http.HandlerFunc(hang)
	case "silent":
	default:
		usage()
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "badpprof:", err)
		os.Exit(1)
	}
	fmt.Printf("ready %s %s\n", *mode, ln.Addr())
	if h == nil {
		err = silent(ln)
	} else {
		err = http.Serve(ln, h)
	}
	fmt.Fprintln(os.Stderr, "badpprof:", err)
	os.Exit(1)
}
