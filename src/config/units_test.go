package config

import (
	"errors"
	"math"
	"syscall"
	"testing"
)

func TestParseLL(t *testing.T) {
	ok := map[string]int64{"0": 0, "-1": -1, "42": 42, "9223372036854775807": math.MaxInt64,
		"-9223372036854775808": math.MinInt64}
	for s, want := range ok {
		if v, good := parseLL(s); !good || v != want {
			t.Errorf("parseLL(%q) = %d %v", s, v, good)
		}
	}
	for _, s := range []string{"", "+1", " 1", "1 ", "01", "-0", "-", "1.0", "9223372036854775808", "0x1", "1k"} {
		if v, good := parseLL(s); good {
			t.Errorf("parseLL(%q) = %d, want failure", s, v)
		}
	}
}

func TestMemToULL(t *testing.T) {
	ok := map[string]uint64{
		"0": 0, "": 0, "kb": 0, "1": 1, "1b": 1, "1B": 1, "1k": 1000, "1K": 1000, "1kb": 1024,
		"1KB": 1024, "1m": 1e6, "2mb": 2 << 20, "1g": 1e9, "3Gb": 3 << 30,
		"99999999999999999999":   math.MaxUint64,        // strtoull saturates
		"18446744073709551615kb": math.MaxUint64 - 1023, // and the unit wraps around
	}
	for s, want := range ok {
		if v, good := memToULL(s); !good || v != want {
			t.Errorf("memToULL(%q) = %d %v, want %d", s, v, good, want)
		}
	}
	for _, s := range []string{"-1", "1.5gb", " 1", "1 ", "+1", "1kib", "1t", "1\u212a"} {
		if v, good := memToULL(s); good {
			t.Errorf("memToULL(%q) = %d, want failure", s, v)
		}
	}
}

func TestStrtoll(t *testing.T) {
	f := func(s string, base int, want int64, end, erange bool) {
		t.Helper()
		v, e, r := strtoll(s, base)
		if v != want || e != end || r != erange {
			t.Errorf("strtoll(%q, %d) = %d %v %v", s, base, v, e, r)
		}
	}
	f("", 10, 0, true, false)
	f(" ", 10, 0, false, false)
	f(" +12", 10, 12, true, false)
	f("-12x", 10, -12, false, false)
	f("99999999999999999999", 10, math.MaxInt64, true, true)
	f("-99999999999999999999", 10, math.MinInt64, true, true)
	f("-9223372036854775808", 10, math.MinInt64, true, false)
	f("777", 8, 511, true, false)
	f("8", 8, 0, false, false)
}

func TestFormatMemory(t *testing.T) {
	for v, want := range map[int64]string{0: "0", 1: "1", 1024: "1kb", 1536: "1536", 3 << 20: "3mb",
		2 << 30: "2gb", 1000000000: "1000000000", -1: "-1"} {
		if got := formatMemory(v); got != want {
			t.Errorf("formatMemory(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestStrerror(t *testing.T) {
	if got := strerror(syscall.ENOENT); got != "No such file or directory" {
		t.Error(got)
	}
	if got := strerror(errors.New("plain")); got != "plain" {
		t.Error(got)
	}
}

func TestParseFloat(t *testing.T) {
	for s, want := range map[string]float64{"50": 50, "99.9": 99.9, "1e1": 10, ".5": 0.5, "0x10": 16, "inf": math.Inf(1)} {
		if v, ok := parseFloat(s); !ok || v != want {
			t.Errorf("parseFloat(%q) = %v %v", s, v, ok)
		}
	}
	for _, s := range []string{"", " 1", "1 ", "nan", "1e400", "1e-400", "abc", "1_0"} {
		if v, ok := parseFloat(s); ok {
			t.Errorf("parseFloat(%q) = %v, want failure", s, v)
		}
	}
}
