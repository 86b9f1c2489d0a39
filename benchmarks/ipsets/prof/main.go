// Command prof is the HotKV server with a CPU profile and an execution trace of a window of its
// run, for finding where a benchmark part's time goes (bench.sh runs it as HOTKV_BIN):
//
//	PROF_AFTER=2s PROF_FOR=20s PROF_CPU=/tmp/cpu.prof PROF_TRACE=/tmp/trace.out prof --port 24101 ...
//
// The window starts PROF_AFTER after the server starts (default 0) and lasts PROF_FOR (default
// 30s); either file may be left out. The arguments are the server's.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/hotkv/hotkv/src/server"
)

func main() {
	after, _ := time.ParseDuration(os.Getenv("PROF_AFTER"))
	span, err := time.ParseDuration(os.Getenv("PROF_FOR"))
	if err != nil {
		span = 30 * time.Second
	}
	go func() {
		time.Sleep(after)
		stop := start(os.Getenv("PROF_CPU"), os.Getenv("PROF_TRACE"))
		time.Sleep(span)
		stop()
	}()
	if err := server.Run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// start begins the profile and the trace it is given files for; the func it returns ends them.
func start(cpu, tr string) func() {
	var files []*os.File
	create := func(name string) *os.File {
		f, err := os.Create(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "prof:", err)
			os.Exit(1)
		}
		files = append(files, f)
		return f
	}
	if cpu != "" {
		if err := pprof.StartCPUProfile(create(cpu)); err != nil {
			fmt.Fprintln(os.Stderr, "prof:", err)
			os.Exit(1)
		}
	}
	if tr != "" {
		if err := trace.Start(create(tr)); err != nil {
			fmt.Fprintln(os.Stderr, "prof:", err)
			os.Exit(1)
		}
	}
	return func() {
		if cpu != "" {
			pprof.StopCPUProfile()
		}
		if tr != "" {
			trace.Stop()
		}
		for _, f := range files {
			f.Close()
		}
		fmt.Fprintln(os.Stderr, "prof: written", cpu, tr)
	}
}
