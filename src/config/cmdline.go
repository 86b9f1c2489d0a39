package config

import "strings"

// commandLine is what redis-server's main makes of its arguments.
type commandLine struct {
	file    string // config file, "" for none
	stdin   bool   // "-": read configuration from stdin too
	options string // --name value ... as config lines
}

// parseCommandLine follows redis-server 7.0.15: a first argument not
// starting with '-' is the config file; "-" as the first or last argument
// reads stdin; "--name" starts a config line and the arguments after it,
// quoted with Repr, are its values, until the next "--name" once the line
// has a value. So "--save --port 1" gives an empty save, and "--hz" at the
// end gives a line with no value, which the loader then refuses.
func parseCommandLine(args []string) commandLine {
	var cl commandLine
	j := 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cl.file = args[0]
		j = 1
	}
	var opts strings.Builder
	handled := true // the last option line has a value
	for ; j < len(args); j++ {
		a := args[j]
		last := j == len(args)-1
		switch {
		case a == "-" && (j == 0 || last):
			cl.stdin = true
		case handled && strings.HasPrefix(a, "--"):
			if opts.Len() > 0 {
				opts.WriteString("\n")
			}
			opts.WriteString(a[2:] + " ")
			handled = false
			if words, _ := SplitArgs(a); len(words) != 1 {
				handled = true // "--port 6380" as one argument
				break
			}
			nextIsOption := !last && strings.HasPrefix(args[j+1], "--")
			if asciiLower(a) == "--save" && (nextIsOption || last) {
				// "--save" with no value means `save ""`, as before 7.0.
				opts.WriteString(`""`)
				handled = nextIsOption
			} else if asciiLower(a) == "--sentinel" && nextIsOption {
				handled = true
			}
		default:
			opts.WriteString(Repr(a) + " ")
			handled = true
		}
	}
	cl.options = opts.String()
	return cl
}

// Usage is the --help text, as redis-server's with prog for its name.
func Usage(prog string) string {
	return "Usage: " + prog + " [/path/to/hotkv.conf] [options] [-]\n" +
		"       " + prog + " - (read config from stdin)\n" +
		"       " + prog + " -v or --version\n" +
		"       " + prog + " -h or --help\n\n" +
		"Examples:\n" +
		"       " + prog + " (run the server with default conf)\n" +
		"       echo 'maxmemory 128mb' | " + prog + " -\n" +
		"       " + prog + " /etc/hotkv/6379.conf\n" +
		"       " + prog + " --port 7777\n" +
		"       " + prog + " --port 7777 --replicaof 127.0.0.1 8888\n" +
		"       " + prog + " /etc/myhotkv.conf --loglevel verbose -\n" +
		"       " + prog + " /etc/myhotkv.conf --loglevel verbose\n"
}
