package config

import (
	"errors"
	"fmt"
	"testing"
)

// An OnApplyGroup hook runs once per CONFIG SET that changes any of its directives, sees every
// new value, and undoes the whole CONFIG SET when it fails; a file directive (flagVolatile) set
// to its current value applies again, as Redis 7.0 reloads certificates from an unchanged path.
func TestApplyGroup(t *testing.T) {
	s := Default()
	var calls []string
	s.OnApplyGroup([]string{"tls-cert-file", "tls-key-file", "tls-protocols"}, func(get func(string) string) error {
		calls = append(calls, get("tls-cert-file")+"+"+get("tls-key-file"))
		if get("tls-protocols") == "bad" {
			return errors.New("Unable to update TLS configuration. Check server logs.")
		}
		return nil
	})
	if got := setErr(s, "tls-cert-file", "c1", "tls-key-file", "k1", "timeout", "3"); got != "OK" {
		t.Fatal(got)
	}
	if got := setErr(s, "timeout", "4"); got != "OK" {
		t.Fatal(got)
	}
	if got := setErr(s, "tls-cert-file", "c1"); got != "OK" { // same value: reloads
		t.Fatal(got)
	}
	if got := setErr(s, "tls-protocols", ""); got != "OK" { // same value, not a file: nothing
		t.Fatal(got)
	}
	want := "ERR CONFIG SET failed (possibly related to argument 'tls-key-file') - Unable to update TLS configuration. Check server logs."
	if got := setErr(s, "timeout", "9", "tls-key-file", "k2", "tls-protocols", "bad"); got != want {
		t.Fatalf("got %s", got)
	}
	if got := fmt.Sprint(calls); got != "[c1+k1 c1+k1 c1+k2]" {
		t.Errorf("group calls %s", got)
	}
	if c := s.Current(); c.Timeout != 4 || s.String("tls-key-file") != "k1" || s.String("tls-protocols") != "" {
		t.Errorf("failed group apply kept: timeout %d key %q protocols %q", c.Timeout, s.String("tls-key-file"), s.String("tls-protocols"))
	}
}
