package resp

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestRandomMatchesRedis sends randomly built and randomly damaged request streams to the real server
// and to Parse, and compares the answers byte for byte. Streams stay small (under one 16KB read of
// Redis) so that how Redis happens to split its reads cannot matter. A stream whose parse reaches a
// command other than PING/ECHO is not compared: pingEcho cannot answer it.
func TestRandomMatchesRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits for the server on every case")
	}
	addr := redisAddr(t, false)
	rng := rand.New(rand.NewPCG(42, 7))
	var cases []wireCase
	for i := 0; len(cases) < 300 && i < 3000; i++ {
		in := mutate(rng, randomStream(rng))
		out, closed := serve([]byte(in), DefaultLimits(), pingEcho)
		if strings.Contains(out, "<test input") {
			continue
		}
		cases = append(cases, wireCase{name: "random " + strconv.Quote(in), in: in, want: out, closed: closed})
	}
	checkRedis(t, addr, cases)
}

// randomStream builds a few PING/ECHO requests, multibulk and inline, with awkward argument bytes.
func randomStream(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(4) {
		switch rng.IntN(5) {
		case 0:
			b.Write(command("ECHO", randomText(rng)))
		case 1:
			b.Write(command("PING"))
		case 2:
			b.WriteString("ECHO " + randomText(rng) + "\r\n")
		case 3:
			b.WriteString([]string{"*0\r\n", "*-1\r\n", "\r\n", " \n", "PING\n", "*1\r\n$4\r\nping\r\n"}[rng.IntN(6)])
		default:
			b.WriteString("PING " + randomText(rng) + "\n")
		}
	}
	return b.String()
}

func randomText(rng *rand.Rand) string {
	const alphabet = "ab\"'\\x4Fgnrt \t\v\f\r\n\x00\xff$*"
	n := rng.IntN(10)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// mutate deletes, inserts or replaces up to two bytes.
func mutate(rng *rand.Rand, s string) string {
	const alphabet = "\r\n\x00 \"'\\$*-0123456789x"
	b := []byte(s)
	for range rng.IntN(3) {
		if len(b) == 0 {
			break
		}
		i := rng.IntN(len(b))
		c := alphabet[rng.IntN(len(alphabet))]
		switch rng.IntN(3) {
		case 0:
			b = append(b[:i], b[i+1:]...)
		case 1:
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		default:
			b[i] = c
		}
	}
	return string(b)
}
