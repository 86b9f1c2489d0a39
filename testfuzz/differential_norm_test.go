package testfuzz

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"testing"
)

// normalize applies a command's comparison rule to its reply. A reply it cannot parse is returned
// unchanged, so the comparison still fails on it.
func normalize(reply []byte, norm replyNorm) []byte {
	switch norm {
	case normTTL:
		return normalizeTTL(reply)
	case normSorted:
		return sortElements(reply)
	case normShape:
		if out, err := replyShape(bufio.NewReader(bytes.NewReader(reply)), nil); err == nil {
			return out
		}
	}
	return reply
}

func normalizeTTL(reply []byte) []byte {
	if len(reply) < 4 || reply[0] != ':' {
		return reply
	}
	n, err := strconv.ParseInt(string(reply[1:len(reply)-2]), 10, 64)
	if err != nil || n <= 0 {
		return reply
	}
	return []byte(":<positive>\r\n")
}

// sortElements sorts the top-level elements of an array or set reply by their bytes.
func sortElements(reply []byte) []byte {
	if len(reply) == 0 || (reply[0] != '*' && reply[0] != '~') {
		return reply
	}
	r := bufio.NewReader(bytes.NewReader(reply))
	head, err := r.ReadSlice('\n')
	if err != nil {
		return reply
	}
	n, err := strconv.Atoi(string(head[1 : len(head)-2]))
	if err != nil || n <= 0 {
		return reply
	}
	out := append([]byte(nil), head...)
	elems := make([][]byte, n)
	for i := range elems {
		if elems[i], err = readReply(r, nil); err != nil {
			return reply
		}
	}
	slices.SortFunc(elems, bytes.Compare)
	return append(out, bytes.Join(elems, nil)...)
}

// replyShape appends one reply with its string and double payloads replaced by "?": aggregate
// headers, integers, nulls, booleans, simple strings and errors stay as they are.
func replyShape(r *bufio.Reader, dst []byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return dst, err
	}
	switch line[0] {
	case '$', '=', '!':
		// A blob's shape is its type and whether it is null.
		if string(line) == "$-1\r\n" {
			return append(dst, line...), nil
		}
		dst = append(dst, line[0], '?', '\r', '\n')
		_, err := readBlob(r, nil, string(line[1:len(line)-2]))
		return dst, err
	case ',':
		return append(dst, ",?\r\n"...), nil
	case '*', '~', '>', '%':
		dst = append(dst, line...)
		n, err := strconv.Atoi(string(line[1 : len(line)-2]))
		if err != nil {
			return dst, err
		}
		if line[0] == '%' {
			n *= 2
		}
		for i := 0; i < n && err == nil; i++ {
			dst, err = replyShape(r, dst)
		}
		return dst, err
	}
	return append(dst, line...), nil
}

func TestNormalize(t *testing.T) {
	f := func(norm replyNorm, in, want string) {
		t.Helper()
		if got := string(normalize([]byte(in), norm)); got != want {
			t.Errorf("normalize(%q, %d) = %q, want %q", in, norm, got, want)
		}
	}
	f(normTTL, ":1500\r\n", ":<positive>\r\n")
	f(normTTL, ":-2\r\n", ":-2\r\n")
	f(normSorted, "*3\r\n$1\r\nb\r\n:1\r\n$1\r\na\r\n", "*3\r\n$1\r\na\r\n$1\r\nb\r\n:1\r\n")
	f(normSorted, "~2\r\n$2\r\n10\r\n$1\r\n9\r\n", "~2\r\n$1\r\n9\r\n$2\r\n10\r\n")
	f(normSorted, "-WRONGTYPE x\r\n", "-WRONGTYPE x\r\n")
	f(normSorted, "*0\r\n", "*0\r\n")
	f(normShape, "$3\r\nabc\r\n", "$?\r\n")
	f(normShape, "$-1\r\n", "$-1\r\n")
	f(normShape, "*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$2\r\nbc\r\n,inf\r\n", "*2\r\n*2\r\n$?\r\n,?\r\n*2\r\n$?\r\n,?\r\n")
	f(normShape, "-ERR value is out of range\r\n", "-ERR value is out of range\r\n")
	f(normShape, "*1\r\n", "*1\r\n") // truncated: left as is
}
