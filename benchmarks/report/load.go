package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A run is one line of the harness's manifest: one generator process against one server.
type run struct {
	section   string
	server    string
	command   string
	n         int
	serverCPU float64 // seconds of server CPU during the run; negative when not measured
	subsCPU   float64 // seconds of the subscribers' CPU (pubsub section); negative when none ran
	status    int     // the generator's exit status
	result    genResult
}

// genResult is the part of hotkv-benchmark's --json result the report uses.
type genResult struct {
	Ops          uint64  `json:"ops"`
	Seconds      float64 `json:"seconds"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	GeneratorCPU float64 `json:"generator_cpu_seconds"`
	Latency      struct {
		P50  float64 `json:"p50"`
		P99  float64 `json:"p99"`
		P999 float64 `json:"p99.9"`
	} `json:"latency_us"`
	Error string `json:"error"`
}

// failed tells whether the run did not measure anything usable, and why.
func (r *run) failed() (string, bool) {
	switch {
	case r.result.Error != "":
		return r.result.Error, true
	case r.status != 0:
		return fmt.Sprintf("generator exit status %d", r.status), true
	case r.result.Ops == 0:
		return "no requests completed", true
	}
	return "", false
}

// readManifest reads the tab-separated lines run.sh writes: section, server, command, run, result
// JSON path, server CPU seconds, generator exit status and, optionally, the subscribers' CPU seconds
// (negative: no subscribers ran). A missing or unreadable JSON makes that run a failure rather
// than stopping the report.
func readManifest(path string) ([]run, error) {
	return readLines(path, "manifest", parseRun)
}

// readLines parses every non-blank line of the file at path with parse; what names the file in
// errors.
func readLines[T any](path, what string, parse func(line string) (T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s: %w", what, err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		v, err := parse(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", what, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

func parseRun(line string) (run, error) {
	f := strings.Split(line, "\t")
	if len(f) != 7 && len(f) != 8 {
		return run{}, fmt.Errorf("%d fields, want 7 or 8", len(f))
	}
	r := run{section: f[0], server: f[1], command: f[2], subsCPU: -1}
	var err1, err2, err3, err4 error
	r.n, err1 = strconv.Atoi(f[3])
	r.serverCPU, err2 = strconv.ParseFloat(f[5], 64)
	r.status, err3 = strconv.Atoi(f[6])
	if len(f) == 8 {
		r.subsCPU, err4 = strconv.ParseFloat(f[7], 64)
	}
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return run{}, fmt.Errorf("bad number in %q", line)
	}
	b, err := os.ReadFile(f[4])
	if err == nil {
		err = json.Unmarshal(b, &r.result)
	}
	if err != nil && r.result.Error == "" {
		r.result.Error = "no result: " + err.Error()
	}
	return r, nil
}

// readMeta reads run.sh's key=value lines; the first value of a repeated key wins (a server restarted
// after a crash records its RSS again).
func readMeta(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the metadata: %w", err)
	}
	meta := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if _, seen := meta[k]; ok && !seen {
			meta[k] = v
		}
	}
	return meta, nil
}
