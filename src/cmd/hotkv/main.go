// Command hotkv is the HotKV server: hotkv [/path/to/hotkv.conf] [--directive value ...].
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/config"
	"github.com/hotkv/hotkv/src/server"
)

// Version is HotKV's own version.
const Version = "0.1.0"

func main() {
	args := os.Args[1:]
	if len(args) == 1 {
		switch args[0] {
		case "-v", "--version":
			fmt.Printf("HotKV server v=%s (Redis %s compatible)\n", Version, command.RedisVersion)
			return
		case "-h", "--help":
			fmt.Print(usage)
			return
		}
	}
	if err := server.Run(args); err != nil {
		var le *config.LoadError
		if errors.As(err, &le) {
			fmt.Fprint(os.Stderr, le.Report())
		} else {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
}

const usage = `Usage: hotkv [/path/to/hotkv.conf] [options] [-]
       hotkv -v or --version
       hotkv -h or --help

Any configuration directive can be given as --name value, after the optional config file, which
uses redis.conf syntax. With no arguments HotKV serves on 127.0.0.1:6379 with built-in defaults.

Examples:
       hotkv (run the server with default conf)
       hotkv /etc/hotkv/6379.conf
       hotkv --port 7777
       hotkv /etc/myhotkv.conf --loglevel verbose --requirepass secret
`
