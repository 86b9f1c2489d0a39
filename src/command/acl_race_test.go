package command

import (
	"strings"
	"sync"
	"testing"
)

// Rules changing while other connections run commands as the user: every command sees one
// version of the rules or the other (never a mix), and under -race no data race.
func TestACLRulesChangeUnderLoad(t *testing.T) {
	e := newTestEngine()
	admin := newTestConn(t, e)
	admin.do("ACL", "SETUSER", "w", "on", ">pw", "~a*", "-@all", "+get", "+set")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		tc := newTestConn(t, e)
		if got := tc.do("AUTH", "w", "pw"); got != "+OK\r\n" {
			t.Fatalf("AUTH: %q", got)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"a1", "b1"}[g%2]
			for {
				select {
				case <-stop:
					return
				default:
				}
				got := tc.do("SET", key, "v")
				// version 1: ~a* +set; version 2: ~b* +get only. SET a1 passes only in v1, SET b1 never.
				if got != "+OK\r\n" && !strings.HasPrefix(got, "-NOPERM") {
					t.Errorf("SET %s: %q", key, got)
					return
				}
				if key == "b1" && got == "+OK\r\n" {
					t.Errorf("SET b1 allowed: the rules of two versions were mixed")
					return
				}
			}
		}()
	}
	for i := range 2000 {
		if i%2 == 0 {
			admin.do("ACL", "SETUSER", "w", "resetkeys", "~b*", "-set")
		} else {
			admin.do("ACL", "SETUSER", "w", "resetkeys", "~a*", "+set")
		}
	}
	close(stop)
	wg.Wait()
}
