// Command pprofserver is the HotKV server with net/http/pprof on a second address, for profiling
// a benchmark's server side (benchmarks/vector-net/profile.sh):
//
//	pprofserver -pprof 127.0.0.1:6060 [-mutexfrac 100] [-blockrate 100000] [--directive value ...]
//
// -mutexfrac is runtime.SetMutexProfileFraction's and -blockrate runtime.SetBlockProfileRate's
// (ns); the remaining arguments are hotkv's.
package main

import (
	"flag"
	"fmt"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"

	"github.com/hotkv/hotkv/src/server"
)

func main() {
	addr := flag.String("pprof", "127.0.0.1:6060", "pprof HTTP address")
	mutexFrac := flag.Int("mutexfrac", 0, "mutex profile fraction (0: off)")
	blockRate := flag.Int("blockrate", 0, "block profile rate in ns (0: off)")
	flag.Parse()
	runtime.SetMutexProfileFraction(*mutexFrac)
	runtime.SetBlockProfileRate(*blockRate)
	go func() {
		if err := http.ListenAndServe(*addr, nil); err != nil {
			fmt.Fprintln(os.Stderr, "pprof:", err)
		}
	}()
	if err := server.Run(flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
