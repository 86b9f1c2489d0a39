package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain runs hotkv-benchmark's own main instead of the tests when the test binary is started as
// the generator (runGenerator), so that exit statuses and messages are tested as a user sees them.
func TestMain(m *testing.M) {
	if os.Getenv("HOTKV_BENCHMARK_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runGenerator runs hotkv-benchmark with args against port and returns its output and exit status.
func runGenerator(t *testing.T, port int, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"--port", fmt.Sprint(port), "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "HOTKV_BENCHMARK_AS_MAIN=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit) && ctx.Err() == nil:
		return string(out), exit.ExitCode()
	}
	t.Fatalf("hotkv-benchmark %q: %v\n%s", args, err, out)
	return "", 0
}

// Against an empty redis-server a GET finds nothing: the run fails, naming the reply, where it used
// to count every nil as a request served. Once the keys are loaded the same run passes, and checks
// the values byte for byte with --expect data.
func TestGeneratorFailsOnAnEmptyServer(t *testing.T) {
	port := startRedis(t)
	out, code := runGenerator(t, port, "--command", "GET key:__key__", "--requests", "1000")
	want := "hotkv-benchmark: FAILED: unexpected reply to GET key:__key__: $-1 (nil); expected a bulk string (inferred from GET; " +
		"--expect sets another); is the data loaded (--prefill)? use --allow-misses to count misses as successes\n"
	if code != 1 || !strings.Contains(out, want) {
		t.Fatalf("GET on an empty server: exit %d, output\n%s\nwant exit 1 and\n%s", code, out, want)
	}
	if out, code := runGenerator(t, port, "--command", "GET key:__key__", "--requests", "1000", "--allow-misses"); code != 0 {
		t.Fatalf("GET with --allow-misses: exit %d\n%s", code, out)
	}
	if out, code := runGenerator(t, port, "--keys", "500", "--prefill-only"); code != 0 {
		t.Fatalf("prefill: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"--command", "GET key:__key__"},
		{"--command", "GET key:__key__", "--expect", "data"},
		{"--command", "MGET key:__key__ key:__key__ key:__key__", "--expect", "array:3:data", "--command", "SET key:__key__ __data__"},
	} {
		if out, code := runGenerator(t, port, append([]string{"--keys", "500", "--requests", "1000", "--pipeline", "8"}, args...)...); code != 0 {
			t.Fatalf("%q on the loaded server: exit %d\n%s", args, code, out)
		}
	}
	// Half the range is loaded: the misses fail the run again. Values of another size fail it too.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--keys", "1000", "--command", "MGET key:__key__ key:__key__ key:__key__ key:__key__"},
			"hotkv-benchmark: FAILED: unexpected reply to MGET key:__key__ key:__key__ key:__key__ key:__key__: element "},
		{[]string{"--keys", "500", "--data-size", "100", "--command", "GET key:__key__", "--expect", "data"},
			`hotkv-benchmark: FAILED: unexpected reply to GET key:__key__: $256 "`},
		{[]string{"--keys", "500", "--command", "SISMEMBER set:__key__ x"},
			"hotkv-benchmark: FAILED: unexpected reply to SISMEMBER set:__key__ x: :0; expected the integer 1"},
	} {
		out, code := runGenerator(t, port, append([]string{"--requests", "1000"}, c.args...)...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Fatalf("%q: exit %d, output\n%s\nwant exit 1 and %q", c.args, code, out, c.want)
		}
	}
}

func TestLinesFlag(t *testing.T) {
	if _, err := parseFlags([]string{"--command", "SISMEMBER s __line__"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--lines") {
		t.Fatalf("no --lines: %v", err)
	}
	p := filepath.Join(t.TempDir(), "ips")
	os.WriteFile(p, []byte("1.2.3.4\r\n\n  \n5.6.7.8\n"), 0o644)
	cfg, err := parseFlags([]string{"--lines", p, "--command", "SISMEMBER s __line__"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.lines) != 2 || string(cfg.lines[0]) != "1.2.3.4" || string(cfg.lines[1]) != "5.6.7.8" {
		t.Fatalf("lines %q", cfg.lines)
	}
	os.WriteFile(p, []byte("\n"), 0o644)
	if _, err := parseFlags([]string{"--lines", p, "--command", "PING"}, io.Discard); err == nil {
		t.Fatal("empty --lines accepted")
	}
}
